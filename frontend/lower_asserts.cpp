// frontend/lower_asserts.cpp — `assert COND;` (docs/language.md, "Asserts"): at the top level
// of the file, checked when compiling from the constants before it; at the top level of a
// kernel's body, checked when compiling if it reads only constants, else lowered before the grid
// to an `assert` op (docs/ir.md) the interpreter and the CUDA launcher check at every launch.
// It may read constants, dims and scalar parameters: nothing a tile computes, no grid
// coordinate, no load.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontend/lowering.h"

namespace tilec::frontend::detail {

namespace {

// The names the first `count` statements of a block assign or loop over, at any depth.
void names_defined(const Block& block, std::set<std::string>& names, size_t count = SIZE_MAX) {
  for (size_t i = 0; i < block.size() && i < count; ++i) {
    const Stmt& s = *block[i];
    if (s.kind == StmtKind::assign || s.kind == StmtKind::for_loop) names.insert(s.name);
    names_defined(s.body, names);
    names_defined(s.else_body, names);
  }
}

}  // namespace

std::optional<bool> Lowering::constant_condition(const Expr& e) {
  bool constants_only = true;
  visit_expressions(e, [&](const Expr& x) {
    if (x.kind == ExprKind::name && !constants_.count(x.name)) constants_only = false;
    if ((x.kind == ExprKind::call && !folds_on_numbers(x.name)) || x.kind == ExprKind::tile_new ||
        x.kind == ExprKind::load || x.kind == ExprKind::subscript)
      constants_only = false;
  });
  if (!constants_only) return std::nullopt;
  if (e.kind == ExprKind::unary && e.op == "!") {
    auto a = constant_condition(*e.args[0]);
    return a ? std::optional<bool>(!*a) : std::nullopt;
  }
  if (e.kind != ExprKind::binary) return std::nullopt;
  if (e.op == "&&" || e.op == "||") {
    auto a = constant_condition(*e.args[0]);
    auto b = constant_condition(*e.args[1]);
    if (!a || !b) return std::nullopt;
    return e.op == "&&" ? *a && *b : *a || *b;
  }
  static const std::set<std::string> comparisons = {"<", "<=", ">", ">=", "==", "!="};
  if (!comparisons.count(e.op)) return std::nullopt;
  Operand a = lower_expr(*e.args[0]);
  Operand b = lower_expr(*e.args[1]);
  if (!a.constant || !b.constant) return std::nullopt;
  auto compare = [&](auto x, auto y) {
    if (e.op == "<") return x < y;
    if (e.op == "<=") return x <= y;
    if (e.op == ">") return x > y;
    if (e.op == ">=") return x >= y;
    if (e.op == "==") return x == y;
    return x != y;
  };
  if (a.constant->is_float || b.constant->is_float) return compare(a.constant->as_double(), b.constant->as_double());
  return compare(a.constant->integer, b.constant->integer);
}

void Lowering::lower_assertion(const Expr& condition, const std::string& text, Location location,
                               const Kernel* kernel, size_t position) {
  bool reads_memory = false;
  std::vector<std::string> names;
  visit_expressions(condition, [&](const Expr& x) {
    reads_memory |= x.kind == ExprKind::load || x.kind == ExprKind::tile_new;
    if (x.kind == ExprKind::name && std::find(names.begin(), names.end(), x.name) == names.end())
      names.push_back(x.name);
  });
  if (reads_memory) {
    error(location, "an assert is checked once, on the host, when the kernel is launched: it cannot load a tensor or "
                    "make a tile; it may read constants, dims and scalar parameters");
    return;
  }
  int errors = diagnostics_.error_count();
  if (!kernel) frames_.push_back({Frame::kernel, constants_, {}});
  std::optional<bool> holds = constant_condition(condition);
  if (!kernel) frames_.clear();
  if (diagnostics_.error_count() > errors) return;
  if (holds) {
    if (*holds) return;
    std::vector<std::string> values;
    for (const std::string& name : names) {
      const Const& value = *constants_.at(name).constant;
      auto define = options_.defines.find(name);
      values.push_back(fmt::format("{} = {}{}", name,
                                   value.is_float ? fmt::format("{}", value.floating) : std::to_string(value.integer),
                                   define == options_.defines.end() ? "" : " from -D"));
    }
    error(location,
          fmt::format("assert {} fails{}", text, values.empty() ? "" : fmt::format(" ({})", fmt::join(values, ", "))));
    return;
  }
  if (!kernel) {
    std::string why = fmt::format("`{}` is not a condition (a comparison, or comparisons joined by && and ||)", text);
    for (const std::string& name : names)
      if (!constants_.count(name)) {
        why = declared_constants_.count(name) ? fmt::format("'{}' is declared after this assert", name)
                                              : fmt::format("'{}' is not a constant", name);
        break;
      }
    error(location, fmt::format("a top-level assert is checked when compiling, from the constants before it: {}; "
                                "an assert about dims or scalar parameters goes at the top of a kernel's body",
                                why));
    return;
  }
  // In a kernel: the grid's coordinates and the body's values do not exist at launch.
  const std::string why = "an assert is checked once, when the kernel is launched, before any tile runs: it may read "
                          "constants, dims and scalar parameters";
  std::set<std::string> defined;
  names_defined(kernel->body, defined);
  std::map<std::string, std::string> notes;
  for (const auto& [name, _] : kernel->grid.coordinates)
    notes[name] = fmt::format("{}, and '{}' is a grid coordinate", why, name);
  for (const std::string& name : defined)
    if (!notes.count(name)) notes[name] = fmt::format("{}, and '{}' is computed by the kernel", why, name);
  // A scalar parameter the statements before the assert assign: it would read the launch value,
  // not the one they give.
  std::set<std::string> defined_before;
  names_defined(kernel->body, defined_before, position);
  for (const std::string& name : names)
    if (defined_before.count(name) && kernel_names_.count(name)) {
      error(location, fmt::format("the assert reads '{}' as the kernel is launched with it, but the kernel assigns "
                                  "'{}': name the computed value differently",
                                  name, name));
      return;
    }
  for (const auto& [name, note] : notes) out_of_scope_[name] = note;
  Operand value = lower_expr(condition);
  for (const auto& [name, _] : notes) out_of_scope_.erase(name);
  if (!value.ok()) return;
  if (!value.value || !value.value->type().is_scalar() || value.value->type().element() != ScalarKind::i1) {
    error(condition.location, fmt::format("an assert takes a condition (a comparison, or comparisons joined by && "
                                          "and ||); `{}` is not one", text));
    return;
  }
  builder_->set_location(location);
  builder_->create(OpKind::assert_, {value.value}, {}, {{"text", Attribute(text)}});
}

}  // namespace tilec::frontend::detail
