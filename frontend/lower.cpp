// frontend/lower.cpp — AST → tile IR (see lower.h).
//
// Phases per kernel:
//   1. parameters become the kernel region's arguments; each distinct symbolic tensor dim gets
//      one `dim` op (a dim named like an integer `const` is static instead);
//   2. the grid's extents are lowered, then `grid_ids` binds the tile coordinates;
//   3. statements are lowered in order through a stack of scopes (kernel, for, if frames):
//      a `for` carries exactly the names in its carry list, an `if` yields every outer name
//      assigned in either branch;
//   4. loads whose every use is an `mma` operand become `tma_load`s into shared memory
//      (frontend/promote_mma_operands.cpp).
// Compile-time constants stay folded (`Const`, frontend/constant_value.h) until an op needs
// them as values, and then take the element type of the other operand. Cost: linear in the size of the program.
#include "frontend/lower.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <unordered_map>

#include "frontend/constant_value.h"
#include "frontend/promote_mma_operands.h"
#include "ir/builder.h"
#include "ir/ir.h"
#include "ir/verifier.h"  // kMaxPipelineStages

namespace tilec::frontend {

namespace {

using Const = ConstantValue;

// The result of lowering an expression: a folded constant or an IR value; neither after an
// error (already reported).
struct Operand {
  Value* value = nullptr;
  std::optional<Const> constant;
  bool ok() const { return value || constant; }
};

struct Frame {
  enum Kind { kernel, loop, branch } kind;
  std::unordered_map<std::string, Operand> vars;
  std::vector<std::string> updated;  // branch frames: outer names assigned here, in order
};

// The elementwise functions of one operand, spelled f(x) in .tile source. Those whose op is
// kFloatsOnly convert an integer constant to f32 and refuse integer values.
struct UnaryFunction {
  std::string_view name;
  OpKind kind;
};
constexpr UnaryFunction kUnaryFunctions[] = {
    {"exp", OpKind::exp},   {"sqrt", OpKind::sqrt}, {"rsqrt", OpKind::rsqrt},     {"relu", OpKind::relu},
    {"tanh", OpKind::tanh}, {"erf", OpKind::erf},   {"log", OpKind::log},         {"sigmoid", OpKind::sigmoid},
    {"abs", OpKind::abs},
};

// Every function lower_call knows, for the "unknown function" message.
constexpr std::string_view kKnownFunctions =
    "sum, max, min, mean (with axis = k, or over the whole tile), max, min, pow, cdiv (two operands), "
    "exp, sqrt, rsqrt, relu, tanh, erf, log, sigmoid, abs, cast, where, mma, zeros, full, iota";

class Lowering {
 public:
  Lowering(const LowerOptions& options, DiagnosticEngine& diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  std::unique_ptr<Module> lower(const Program& program) {
    auto module = std::make_unique<Module>();
    module->attributes()["source"] = Attribute(options_.source_name);
    module->attributes()["passes"] = Attribute(Attribute::Array{Attribute("parse")});
    lower_constants(program);
    std::set<std::string> names;
    for (const Kernel& kernel : program.kernels) {
      if (!names.insert(kernel.name).second) {
        error(kernel.location, fmt::format("kernel '{}' is defined twice", kernel.name));
        continue;
      }
      module->kernels().push_back(lower_kernel(kernel));
    }
    if (program.kernels.empty() && !diagnostics_.has_errors())
      error({1, 1}, "the program defines no kernel");
    if (diagnostics_.has_errors()) return nullptr;
    return module;
  }

 private:
  void error(Location location, std::string message) { diagnostics_.error(location, std::move(message)); }

  // ---- constants --------------------------------------------------------------------------
  void lower_constants(const Program& program) {
    std::set<std::string> declared;
    for (const ConstDecl& decl : program.constants) {
      if (!declared.insert(decl.name).second) {
        error(decl.location, fmt::format("constant '{}' is defined twice", decl.name));
        continue;
      }
      std::optional<Const> value;
      auto define = options_.defines.find(decl.name);
      if (define != options_.defines.end()) {
        value = parse_define(define->first, define->second);
      } else {
        frames_.push_back({Frame::kernel, constants_, {}});
        Operand operand = lower_expr(*decl.value);
        frames_.clear();
        if (operand.value) error(decl.location, fmt::format("constant '{}' must be computable at compile time", decl.name));
        value = operand.constant;
      }
      if (value) constants_[decl.name] = Operand{nullptr, value};
    }
    for (const auto& [name, _] : options_.defines)
      if (!declared.count(name))
        error({}, fmt::format("-D {}: the program declares no constant named '{}'", name, name));
  }
  std::optional<Const> parse_define(const std::string& name, const std::string& text) {
    auto value = parse_constant_value(text);
    if (!value) error({}, fmt::format("-D {}={}: the value is not a number", name, text));
    return value;
  }

  // ---- scopes -----------------------------------------------------------------------------
  Operand* lookup(const std::string& name) {
    for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame) {
      auto it = frame->vars.find(name);
      if (it != frame->vars.end()) return &it->second;
    }
    return nullptr;
  }
  // Binds `name` to `operand`, following the carry rules of loops and branches.
  void assign(const std::string& name, Operand operand, Location location) {
    if (constants_.count(name)) {
      error(location, fmt::format("'{}' is a constant and cannot be assigned", name));
      return;
    }
    size_t found = frames_.size();
    for (size_t i = frames_.size(); i-- > 0;)
      if (frames_[i].vars.count(name)) {
        found = i;
        break;
      }
    if (found == frames_.size() || found == frames_.size() - 1) {
      frames_.back().vars[name] = operand;
      return;
    }
    for (size_t i = frames_.size() - 1; i > found; --i) {
      if (frames_[i].kind == Frame::loop) {
        error(location, fmt::format("'{}' is defined outside the loop; to update it in the loop, "
                                    "list it in the loop's carry(...)", name));
        return;
      }
      if (frames_[i].kind == Frame::branch) {
        Frame& branch = frames_[i];
        if (std::find(branch.updated.begin(), branch.updated.end(), name) == branch.updated.end())
          branch.updated.push_back(name);
        branch.vars[name] = operand;
        return;
      }
    }
    frames_[found].vars[name] = operand;
  }

  // Why `name` is unknown after the block that defined it (reported with "unknown name").
  void note_out_of_scope(const std::string& name, std::string why) {
    out_of_scope_[name] = std::move(why);
  }

  // ---- types and values -------------------------------------------------------------------
  Value* materialize(const Operand& operand, ScalarKind element, Location location) {
    if (operand.value) return operand.value;
    const Const& c = *operand.constant;
    builder_->set_location(location);
    if (is_float(element))
      return builder_->constant(Attribute(c.as_double()), Type::scalar(element));
    if (c.is_float) {
      error(location, fmt::format("the number {} is not an integer ({} is expected here)", c.floating, to_string(element)));
      return builder_->constant(Attribute(int64_t{0}), Type::scalar(element));
    }
    return builder_->constant(Attribute(c.integer), Type::scalar(element));
  }
  // A value with no typing context: integers become index, floats f32.
  Value* materialize(const Operand& operand, Location location) {
    if (operand.value) return operand.value;
    return materialize(operand, operand.constant->is_float ? ScalarKind::f32 : ScalarKind::index, location);
  }
  Value* index_value(const Expr& expr, const char* what) {
    Operand operand = lower_expr(expr);
    if (!operand.ok()) return nullptr;
    Value* value = materialize(operand, ScalarKind::index, expr.location);
    if (!value->type().is_index()) {
      error(expr.location, fmt::format("{} must be an index, not {}", what, value->type().to_string()));
      return nullptr;
    }
    return value;
  }
  std::optional<int64_t> const_int(const Expr& expr, const char* what, int64_t minimum) {
    Operand operand = lower_expr(expr);
    if (!operand.ok()) return std::nullopt;
    if (!operand.constant || operand.constant->is_float) {
      error(expr.location, fmt::format("{} must be an integer known at compile time", what));
      return std::nullopt;
    }
    if (operand.constant->integer < minimum) {
      error(expr.location, fmt::format("{} must be at least {}, got {}", what, minimum, operand.constant->integer));
      return std::nullopt;
    }
    return operand.constant->integer;
  }
  std::optional<ScalarKind> element_type(const std::string& name, Location location) {
    auto kind = parse_scalar_kind(name);
    if (!kind || *kind == ScalarKind::index || *kind == ScalarKind::i1) {
      error(location, fmt::format("unknown element type '{}' (expected f32, f16, bf16, f8e4m3, f8e5m2, i32 or i64)", name));
      return std::nullopt;
    }
    return kind;
  }
  Value* create(OpKind kind, std::vector<Value*> operands, Type result, Location location,
                std::vector<std::pair<std::string, Attribute>> attributes = {}) {
    builder_->set_location(location);
    return builder_->create(kind, operands, {std::move(result)}, std::move(attributes))->result();
  }
  std::optional<std::vector<int64_t>> tile_shape(const std::vector<ExprPtr>& dims) {
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (const auto& d : dims) {
      auto extent = const_int(*d, "a tile dimension", 1);
      if (!extent) return std::nullopt;
      if (*extent > (int64_t{1} << 24) || elements > (int64_t{1} << 30) / *extent) {
        error(d->location, fmt::format("tile of more than 2^30 elements (dimension {})", *extent));
        return std::nullopt;
      }
      elements *= *extent;
      shape.push_back(*extent);
    }
    return shape;
  }

  // ---- expressions ------------------------------------------------------------------------
  Operand lower_expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::integer: return Operand{nullptr, Const{false, e.integer, 0}};
      case ExprKind::floating: return Operand{nullptr, Const{true, 0, e.floating}};
      case ExprKind::name: {
        Operand* found = lookup(e.name);
        if (!found) {
          auto note = out_of_scope_.find(e.name);
          error(e.location, note != out_of_scope_.end() ? fmt::format("unknown name '{}': {}", e.name, note->second)
                                                        : fmt::format("unknown name '{}'", e.name));
          return {};
        }
        if (found->value && found->value->type().is_tensor()) {
          error(e.location, fmt::format("'{}' is a tensor; read a tile of it with load {}[...] : <...>", e.name, e.name));
          return {};
        }
        return *found;
      }
      case ExprKind::unary: {
        Operand x = lower_expr(*e.args[0]);
        if (!x.ok()) return {};
        if (e.op == "!") {
          if (!x.value || x.value->type().element() != ScalarKind::i1) {
            error(e.location, "'!' negates a mask (a comparison such as x < n), not a number");
            return {};
          }
          return Operand{create(OpKind::not_, {x.value}, x.value->type().is_tile() ? x.value->type().with_space(MemorySpace::reg) : x.value->type(), e.location)};
        }
        if (x.constant) {
          Const c = *x.constant;
          if (c.is_float) c.floating = -c.floating;
          else c.integer = -c.integer;
          return Operand{nullptr, c};
        }
        return Operand{create(OpKind::neg, {x.value}, x.value->type().is_tile() ? x.value->type().with_space(MemorySpace::reg) : x.value->type(), e.location)};
      }
      case ExprKind::binary: return lower_binary(e);
      case ExprKind::call: return lower_call(e);
      case ExprKind::tile_new: return lower_tile_new(e);
      case ExprKind::load: return lower_load(e);
    }
    return {};
  }

  std::optional<Const> fold(const std::string& op, Const a, Const b, Location location) {
    std::string message;
    auto folded = fold_constants(op, a, b, message);
    if (!folded) error(location, message);
    return folded;
  }

  // How a message names an operand: its variable, or a description of its position.
  static std::string operand_text(const Expr* e, const char* position) {
    if (e && e->kind == ExprKind::name) return e->name;
    return fmt::format("<the {} operand>", position);
  }

  // Gives both operands values of one element type; the result type of the elementwise op.
  // `ea` and `eb` (may be null) are the operands' expressions, for messages.
  std::optional<Type> unify(Operand& a, Operand& b, Value*& va, Value*& vb, Location location,
                            const Expr* ea = nullptr, const Expr* eb = nullptr) {
    ScalarKind element = a.value ? a.value->type().element() : b.value->type().element();
    va = materialize(a, element, location);
    vb = materialize(b, element, location);
    Type result = broadcast_type(va->type(), vb->type());
    if (result.is_none()) {
      const Type &ta = va->type(), &tb = vb->type();
      if (!(ta.is_scalar() || ta.is_tile()) || !(tb.is_scalar() || tb.is_tile()))
        error(location, fmt::format("cannot combine {} and {}", ta.to_string(), tb.to_string()));
      else if (ta.element() != tb.element())
        error(location, fmt::format("element types differ: {} is {} and {} is {}; convert one, e.g. cast({}, {})",
                                    operand_text(ea, "left"), to_string(ta.element()), operand_text(eb, "right"),
                                    to_string(tb.element()), operand_text(eb, "right"), to_string(ta.element())));
      else
        error(location, fmt::format("tile shapes do not broadcast: {} and {}", ta.to_string(), tb.to_string()));
      return std::nullopt;
    }
    return result;
  }

  Operand lower_binary(const Expr& e) { return lower_binary(e.op, *e.args[0], *e.args[1], e.location); }
  // `left op right` for a binary operator (or pow(left, right) as "**").
  Operand lower_binary(const std::string& op, const Expr& left, const Expr& right, Location location) {
    Operand a = lower_expr(left);
    Operand b = lower_expr(right);
    if (!a.ok() || !b.ok()) return {};
    if (a.constant && b.constant) {
      auto folded = fold(op, *a.constant, *b.constant, location);
      return folded ? Operand{nullptr, folded} : Operand{};
    }
    if (op == "&&" || op == "||") {
      for (const Operand* o : {&a, &b})
        if (!o->value || o->value->type().element() != ScalarKind::i1) {
          error(location, fmt::format("'{}' combines masks (comparisons such as x < n), not numbers", op));
          return {};
        }
    }
    Value *va = nullptr, *vb = nullptr;
    auto result = unify(a, b, va, vb, location, &left, &right);
    if (!result) return {};
    if (op == "&&" || op == "||")
      return Operand{create(op == "&&" ? OpKind::and_ : OpKind::or_, {va, vb}, *result, location)};
    if (op == "**") {
      if (!is_float(result->element())) {
        error(location, fmt::format("'**' raises floats; convert the base: cast({}, f32) ** ...",
                                      operand_text(&left, "left")));
        return {};
      }
      return Operand{create(OpKind::pow, {va, vb}, *result, location)};
    }
    static const std::unordered_map<std::string, std::string> predicates = {
        {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}};
    if (auto p = predicates.find(op); p != predicates.end())
      return Operand{create(OpKind::cmp, {va, vb}, result->with_element(ScalarKind::i1), location,
                            {{"predicate", Attribute(p->second)}})};
    OpKind kind = op == "+" ? OpKind::add : op == "-" ? OpKind::sub : op == "*" ? OpKind::mul
                : op == "/" ? OpKind::div : OpKind::rem;
    if (kind == OpKind::rem && is_float(result->element())) {
      error(location, "'%' needs integer operands");
      return {};
    }
    return Operand{create(kind, {va, vb}, *result, location)};
  }

  // sum / mean / max / min of one tile: along `axis = k` (kept with extent 1), or with no axis
  // over the whole tile (each axis in turn, from the last; the result has extent 1 in every
  // axis). mean is the sum divided by the count of elements reduced.
  Operand lower_reduction(const Expr& e, const Expr* axis) {
    const std::string& f = e.name;
    if (e.args.size() != 1) {
      error(e.location, fmt::format("{}() reduces one tile: {}(x) or {}(x, axis = 1), got {} arguments", f, f, f, e.args.size()));
      return {};
    }
    Operand x = lower_expr(*e.args[0]);
    if (!x.ok()) return {};
    if (!x.value || !x.value->type().is_tile()) {
      error(e.args[0]->location, fmt::format("{}() reduces a tile", f));
      return {};
    }
    const Type& type = x.value->type();
    ScalarKind element = type.element();
    if (element == ScalarKind::i1 || (f == "mean" && !is_float(element))) {
      error(e.args[0]->location, fmt::format("{}() of a {} tile; convert it first: {}(cast({}, {}))", f,
                                             to_string(element), f, operand_text(e.args[0].get(), "first"),
                                             f == "mean" ? "f32" : "i32"));
      return {};
    }
    std::vector<int64_t> axes;
    if (axis) {
      auto k = const_int(*axis, "the axis", -static_cast<int64_t>(type.rank()));
      if (!k) return {};
      int64_t a = *k < 0 ? *k + static_cast<int64_t>(type.rank()) : *k;
      if (a >= static_cast<int64_t>(type.rank())) {
        error(axis->location, fmt::format("axis {} is out of range for {}", *k, type.to_string()));
        return {};
      }
      axes.push_back(a);
    } else {
      for (int64_t a = static_cast<int64_t>(type.rank()); a-- > 0;) axes.push_back(a);
    }
    OpKind kind = f == "max" ? OpKind::reduce_max : f == "min" ? OpKind::reduce_min : OpKind::reduce_sum;
    Value* value = x.value;
    int64_t count = 1;
    for (int64_t a : axes) {
      std::vector<int64_t> shape = value->type().shape();
      count *= shape[static_cast<size_t>(a)];
      shape[static_cast<size_t>(a)] = 1;
      value = create(kind, {value}, Type::tile(shape, element), e.location, {{"axis", Attribute(a)}});
    }
    if (f == "mean") {
      Value* n = materialize(Operand{nullptr, Const{true, 0, static_cast<double>(count)}}, element, e.location);
      value = create(OpKind::div, {value, n}, value->type(), e.location);
    }
    return Operand{value};
  }

  Operand lower_call(const Expr& e) {
    const std::string& f = e.name;
    auto keyword = [&](const char* key) -> const Expr* {
      for (const auto& [k, v] : e.keywords)
        if (k == key) return v.get();
      return nullptr;
    };
    for (const auto& [k, v] : e.keywords)
      if (k != "axis") {
        error(v->location, fmt::format("{}() takes no keyword '{}'", f, k));
        return {};
      }
    auto arity = [&](size_t n) {
      if (e.args.size() == n) return true;
      error(e.location, fmt::format("{}() takes {} argument{}, got {}", f, n, n == 1 ? "" : "s", e.args.size()));
      return false;
    };
    const Expr* axis = keyword("axis");
    bool reduction = f == "sum" || f == "mean" || ((f == "max" || f == "min") && e.args.size() == 1);
    if (axis && !reduction) {
      error(axis->location, f == "max" || f == "min"
                                ? fmt::format("{}() along an axis takes one tile: {}(x, axis = 1)", f, f)
                                : fmt::format("{}() takes no axis", f));
      return {};
    }
    if (reduction) return lower_reduction(e, axis);
    if (f == "max" || f == "min" || f == "cdiv") {
      if (!arity(2)) return {};
      Operand a = lower_expr(*e.args[0]), b = lower_expr(*e.args[1]);
      if (!a.ok() || !b.ok()) return {};
      if (a.constant && b.constant) {
        const Const &x = *a.constant, &y = *b.constant;
        if (f == "cdiv") {
          if (x.is_float || y.is_float || y.integer <= 0 || x.integer < 0) {
            error(e.location, "cdiv() needs a non-negative integer and a positive integer");
            return {};
          }
          return Operand{nullptr, Const{false, (x.integer + y.integer - 1) / y.integer, 0}};
        }
        bool first = (x.as_double() > y.as_double()) == (f == "max");
        return Operand{nullptr, first ? x : y};
      }
      Value *va = nullptr, *vb = nullptr;
      auto result = unify(a, b, va, vb, e.location, e.args[0].get(), e.args[1].get());
      if (!result) return {};
      if (f == "cdiv" && !is_integer(result->element())) {
        error(e.location, "cdiv() needs integer operands");
        return {};
      }
      OpKind kind = f == "max" ? OpKind::max : f == "min" ? OpKind::min : OpKind::cdiv;
      return Operand{create(kind, {va, vb}, *result, e.location)};
    }
    if (f == "pow") {
      if (!arity(2)) return {};
      return lower_binary("**", *e.args[0], *e.args[1], e.location);  // pow(a, b) is a ** b
    }
    for (const UnaryFunction& function : kUnaryFunctions) {
      if (f != function.name) continue;
      if (!arity(1)) return {};
      Operand x = lower_expr(*e.args[0]);
      if (!x.ok()) return {};
      bool floats_only = op_info(function.kind).has(kFloatsOnly);
      Value* v = floats_only ? materialize(x, ScalarKind::f32, e.location) : materialize(x, e.location);
      ScalarKind element = v->type().element();
      if ((floats_only && !is_float(element)) || element == ScalarKind::i1) {
        error(e.location, fmt::format("{}() needs a {} operand, not {}{}", f, floats_only ? "floating-point" : "numeric",
                                      v->type().to_string(),
                                      floats_only ? fmt::format("; convert it: {}(cast({}, f32))", f, operand_text(e.args[0].get(), "first"))
                                                  : ""));
        return {};
      }
      Type type = v->type().is_tile() ? v->type().with_space(MemorySpace::reg) : v->type();
      return Operand{create(function.kind, {v}, type, e.location)};
    }
    if (f == "where") {
      // where(condition, a, b): a where the i1 condition holds, else b, broadcasting all three.
      if (!arity(3)) return {};
      Operand c = lower_expr(*e.args[0]), a = lower_expr(*e.args[1]), b = lower_expr(*e.args[2]);
      if (!c.ok() || !a.ok() || !b.ok()) return {};
      if (!c.value || c.value->type().element() != ScalarKind::i1) {
        error(e.args[0]->location, "where() takes a comparison (i1) as its first argument: where(x < n, x, 0)");
        return {};
      }
      Value *va = nullptr, *vb = nullptr;
      std::optional<Type> values;
      if (!a.value && !b.value) {  // two numbers: f32 if either is a float, else i32
        ScalarKind element = a.constant->is_float || b.constant->is_float ? ScalarKind::f32 : ScalarKind::i32;
        va = materialize(a, element, e.location);
        vb = materialize(b, element, e.location);
        values = Type::scalar(element);
      } else {
        values = unify(a, b, va, vb, e.location, e.args[1].get(), e.args[2].get());
      }
      if (!values) return {};
      Type type = broadcast_type(c.value->type(), values->with_element(ScalarKind::i1));
      if (type.is_none()) {
        error(e.location, fmt::format("where(): the condition {} does not broadcast with {}", c.value->type().to_string(),
                                      values->to_string()));
        return {};
      }
      type = type.with_element(values->element());
      if (type.is_tile()) type = type.with_space(MemorySpace::reg);
      return Operand{create(OpKind::select, {c.value, va, vb}, type, e.location)};
    }
    if (f == "cast") {
      if (!arity(2)) return {};
      if (e.args[1]->kind != ExprKind::name) {
        error(e.args[1]->location, "cast() takes an element type as its second argument: cast(x, bf16)");
        return {};
      }
      auto element = element_type(e.args[1]->name, e.args[1]->location);
      Operand x = lower_expr(*e.args[0]);
      if (!element || !x.ok()) return {};
      Value* v = materialize(x, *element, e.location);
      Type type = v->type().with_element(*element);
      if (type.is_tile()) type = type.with_space(MemorySpace::reg);
      if (v->type() == type) return Operand{v};
      return Operand{create(OpKind::cast, {v}, type, e.location)};
    }
    if (f == "mma") {
      if (!arity(3)) return {};
      Operand a = lower_expr(*e.args[0]), b = lower_expr(*e.args[1]), acc = lower_expr(*e.args[2]);
      if (!a.ok() || !b.ok() || !acc.ok()) return {};
      for (const Operand* o : {&a, &b, &acc})
        if (!o->value || !o->value->type().is_tile() || o->value->type().rank() != 2) {
          error(e.location, "mma() takes three 2-D tiles: mma(a, b, acc)");
          return {};
        }
      const Type &ta = a.value->type(), &tb = b.value->type(), &tc = acc.value->type();
      // mma(a, b, acc) with a [M, K], b [K, N], acc [M, N]: name the first dimension that disagrees.
      std::string mismatch;
      if (ta.shape()[1] != tb.shape()[0])
        mismatch = fmt::format("K differs: {} has {} columns but {} has {} rows", operand_text(e.args[0].get(), "first"),
                               ta.shape()[1], operand_text(e.args[1].get(), "second"), tb.shape()[0]);
      else if (tc.shape()[0] != ta.shape()[0])
        mismatch = fmt::format("M differs: {} has {} rows but the accumulator {} has {}", operand_text(e.args[0].get(), "first"),
                               ta.shape()[0], operand_text(e.args[2].get(), "third"), tc.shape()[0]);
      else if (tc.shape()[1] != tb.shape()[1])
        mismatch = fmt::format("N differs: {} has {} columns but the accumulator {} has {}", operand_text(e.args[1].get(), "second"),
                               tb.shape()[1], operand_text(e.args[2].get(), "third"), tc.shape()[1]);
      if (!mismatch.empty()) {
        error(e.location, fmt::format("mma shapes do not match ({} · {} + {}): {}; mma(a, b, acc) takes a [M, K], b [K, N] "
                                      "and acc [M, N]", ta.to_string(), tb.to_string(), tc.to_string(), mismatch));
        return {};
      }
      if (ta.element() != tb.element()) {
        error(e.location, fmt::format("mma operands differ in element type: {} and {}", to_string(ta.element()), to_string(tb.element())));
        return {};
      }
      if (tc.element() != ScalarKind::f32) {
        error(e.args[2]->location, "the mma accumulator must be f32");
        return {};
      }
      return Operand{create(OpKind::mma, {a.value, b.value, acc.value}, tc, e.location)};
    }
    error(e.location, fmt::format("unknown function '{}' (known: {})", f, kKnownFunctions));
    return {};
  }

  Operand lower_tile_new(const Expr& e) {
    auto element = element_type(e.element, e.location);
    auto shape = tile_shape(e.shape);
    if (!element || !shape) return {};
    Type type = Type::tile(*shape, *element);
    if (e.name == "zeros") {
      if (!e.args.empty()) error(e.location, "zeros<...>() takes no argument");
      return Operand{create(OpKind::zeros, {}, type, e.location)};
    }
    if (e.name == "iota") {
      // iota<R, C, i32>(axis): each element's index along `axis` (a constant within the rank).
      if (!is_integer(*element) || *element == ScalarKind::index) {
        error(e.location, fmt::format("iota<...> gives integers (i32 or i64), not {}", to_string(*element)));
        return {};
      }
      std::optional<int64_t> axis;
      if (e.args.size() == 1) {
        Operand a = lower_expr(*e.args[0]);
        if (a.ok() && a.constant && !a.constant->is_float) axis = a.constant->integer;
      }
      if (!axis || *axis < 0 || *axis >= static_cast<int64_t>(shape->size())) {
        error(e.location, fmt::format("iota<...>(axis) takes a constant axis from 0 to {}", shape->size() - 1));
        return {};
      }
      return Operand{create(OpKind::iota, {}, type, e.location, {{"axis", Attribute(*axis)}})};
    }
    if (e.args.size() != 1) {
      error(e.location, "full<...>(value) takes one argument");
      return {};
    }
    Operand v = lower_expr(*e.args[0]);
    if (!v.ok()) return {};
    Value* fill = materialize(v, *element, e.location);
    if (!(fill->type() == Type::scalar(*element))) {
      error(e.args[0]->location, fmt::format("the fill value must be a {} scalar", to_string(*element)));
      return {};
    }
    return Operand{create(OpKind::full, {fill}, type, e.location)};
  }

  Value* tensor_named(const std::string& name, Location location) {
    Operand* found = lookup(name);
    if (!found || !found->value || !found->value->type().is_tensor()) {
      error(location, found ? fmt::format("'{}' is not a tensor parameter", name)
                            : fmt::format("unknown tensor '{}'", name));
      return nullptr;
    }
    return found->value;
  }
  bool coordinates(const std::vector<ExprPtr>& indices, const Type& tensor, Location location,
                   std::vector<Value*>& out) {
    if (indices.size() != tensor.rank()) {
      error(location, fmt::format("{} tile coordinates given for a rank-{} tensor", indices.size(), tensor.rank()));
      return false;
    }
    for (const auto& index : indices) {
      Value* v = index_value(*index, "a tile coordinate");
      if (!v) return false;
      out.push_back(v);
    }
    return true;
  }

  Operand lower_load(const Expr& e) {
    Value* tensor = tensor_named(e.name, e.location);
    if (!tensor) return {};
    std::vector<Value*> operands{tensor};
    if (!coordinates(e.args, tensor->type(), e.location, operands)) return {};
    auto shape = tile_shape(e.shape);
    if (!shape) return {};
    if (shape->size() != tensor->type().rank()) {
      error(e.location, fmt::format("the tile shape has {} dimensions, the tensor {}", shape->size(), tensor->type().rank()));
      return {};
    }
    return Operand{create(OpKind::load, operands, Type::tile(*shape, tensor->type().element()), e.location)};
  }

  // ---- statements -------------------------------------------------------------------------
  void lower_block(const Block& block) {
    for (const auto& stmt : block) lower_stmt(*stmt);
  }

  void lower_stmt(const Stmt& s) {
    Operation* anchor = nullptr;
    switch (s.kind) {
      case StmtKind::assign: {
        size_t before = builder_->region()->operations().size();
        Operand value = lower_expr(*s.value);
        if (!value.ok()) return;
        if (value.value && value.value->defining_op() && value.value->name_hint().empty() &&
            builder_->region()->operations().size() > before)
          value.value->set_name_hint(s.name);
        if (value.value && value.value->defining_op() && builder_->region()->operations().size() > before)
          anchor = value.value->defining_op();
        if (lookup(s.name) && lookup(s.name)->value && lookup(s.name)->value->type().is_tensor()) {
          error(s.location, fmt::format("'{}' is a tensor parameter and cannot be assigned", s.name));
          return;
        }
        assign(s.name, value, s.location);
        break;
      }
      case StmtKind::store: anchor = lower_store(s); break;
      case StmtKind::for_loop: anchor = lower_for(s); break;
      case StmtKind::if_else: anchor = lower_if(s); break;
    }
    apply_annotations(s, anchor);
  }

  void apply_annotations(const Stmt& s, Operation* op) {
    for (const Annotation& a : s.annotations) {
      auto positional = [&](size_t n, const char* usage) {
        if (a.args.size() == n) return true;
        error(a.location, fmt::format("@{} takes {}", a.name, usage));
        return false;
      };
      if (a.name != "group" && a.name != "max_depth" && a.name != "serial") {
        error(a.location, fmt::format("unknown annotation '@{}' (expected @group, @max_depth or @serial)", a.name));
        continue;
      }
      for (const auto& [key, value] : a.keywords)
        if (!(a.name == "group" && key == "leader"))
          error(value->location, fmt::format("@{} takes no keyword '{}'", a.name, key));
      if (!op) {
        error(a.location, fmt::format("@{} needs a statement that creates an operation", a.name));
        continue;
      }
      if (a.name == "serial") {
        if (positional(0, "no arguments")) op->set_attr("tileas.schedule.constraint.force_serial_execution", UnitAttr{});
      } else if (a.name == "max_depth") {
        if (!positional(1, "one argument: @max_depth(depth)")) continue;
        if (auto d = const_int(*a.args[0], "the max depth", 1))
          op->set_attr("tileas.schedule.constraint.max_depth", Attribute(*d));
      } else {
        if (!positional(1, "a group id: @group(id) or @group(id, leader = id)")) continue;
        if (auto g = const_int(*a.args[0], "the group id", 0))
          op->set_attr("tileas.schedule.constraint.gid", Attribute(*g));
        for (const auto& [key, value] : a.keywords)
          if (key == "leader")
            if (auto l = const_int(*value, "the leader group id", 0))
              op->set_attr("tileas.schedule.constraint.leader_gid", Attribute(*l));
      }
    }
  }

  Operation* lower_store(const Stmt& s) {
    Value* tensor = tensor_named(s.name, s.location);
    if (!tensor) return nullptr;
    std::vector<Value*> operands{tensor};
    if (!coordinates(s.indices, tensor->type(), s.location, operands)) return nullptr;
    Operand value = lower_expr(*s.value);
    if (!value.ok()) return nullptr;
    const Type& t = tensor->type();
    if (!value.value || !value.value->type().is_tile()) {
      error(s.value->location, "store writes a tile; make one with full<...>(value)");
      return nullptr;
    }
    const Type& tile = value.value->type();
    if (tile.rank() != t.rank()) {
      error(s.value->location, fmt::format("storing a rank-{} tile into a rank-{} tensor", tile.rank(), t.rank()));
      return nullptr;
    }
    if (tile.element() != t.element()) {
      error(s.value->location, fmt::format("storing a {} tile into the {} tensor '{}' (convert with cast({}, {}))",
                                           to_string(tile.element()), to_string(t.element()), s.name,
                                           s.value->kind == ExprKind::name ? s.value->name : "...", to_string(t.element())));
      return nullptr;
    }
    operands.push_back(value.value);
    builder_->set_location(s.location);
    return builder_->create(OpKind::store, operands, {});
  }

  Operation* lower_for(const Stmt& s) {
    Value* lower = index_value(*s.lower, "a loop bound");
    Value* upper = index_value(*s.upper, "a loop bound");
    std::optional<int64_t> stages;
    if (s.pipeline) stages = const_int(*s.pipeline, "the pipeline stage count", 1);
    if (stages && *stages > kMaxPipelineStages) {
      error(s.pipeline->location, fmt::format("the pipeline stage count is {}; at most {} stages are supported",
                                              *stages, kMaxPipelineStages));
      stages.reset();
    }
    std::vector<Value*> inits;
    bool ok = lower && upper && (!s.pipeline || stages);
    for (const auto& [name, location] : s.carried) {
      Operand* found = lookup(name);
      if (!found) {
        error(location, fmt::format("carried variable '{}' is not defined before the loop", name));
        ok = false;
        continue;
      }
      inits.push_back(materialize(*found, location));
    }
    if (!ok) return nullptr;
    builder_->set_location(s.location);
    Value* step = builder_->constant_index(1);
    std::vector<Value*> operands{lower, upper, step};
    std::vector<Type> types;
    for (Value* init : inits) {
      operands.push_back(init);
      types.push_back(init->type());
    }
    std::vector<std::pair<std::string, Attribute>> attributes;
    if (stages) attributes.push_back({"pipeline", Attribute(*stages)});
    Operation* loop = builder_->create(OpKind::for_, operands, types, attributes);
    Region& body = loop->region();
    Frame frame{Frame::loop, {}, {}};
    frame.vars[s.name] = Operand{body.add_argument(Type::scalar(ScalarKind::index), s.name)};
    for (size_t i = 0; i < s.carried.size(); ++i)
      frame.vars[s.carried[i].first] = Operand{body.add_argument(inits[i]->type(), s.carried[i].first)};
    Builder* outer = builder_;
    Builder inner(&body);
    builder_ = &inner;
    frames_.push_back(std::move(frame));
    lower_block(s.body);
    std::vector<Value*> yielded;
    for (size_t i = 0; i < s.carried.size(); ++i) {
      const auto& [name, location] = s.carried[i];
      Value* v = materialize(frames_.back().vars[name], inits[i]->type().element(), location);
      if (!(v->type() == inits[i]->type()))
        error(location, fmt::format("carried '{}' changes type in the loop: {} before, {} at the end of the body",
                                    name, inits[i]->type().to_string(), v->type().to_string()));
      yielded.push_back(v);
    }
    inner.set_location(s.location);
    inner.create(OpKind::yield, yielded, {});
    Frame finished = std::move(frames_.back());
    frames_.pop_back();
    for (const auto& [name, _] : finished.vars)
      if (!lookup(name) && name != s.name)
        note_out_of_scope(name, fmt::format("it is defined inside the loop at {}:{}; to use it after the loop, give it a "
                                            "value before the loop and list it in carry({})", s.location.line, s.location.column, name));
    builder_ = outer;
    for (size_t i = 0; i < s.carried.size(); ++i) {
      loop->result(i)->set_name_hint(s.carried[i].first);
      assign(s.carried[i].first, Operand{loop->result(i)}, s.carried[i].second);
    }
    return loop;
  }

  Operation* lower_if(const Stmt& s) {
    Operand cond = lower_expr(*s.value);
    if (!cond.ok()) return nullptr;
    if (!cond.value || !(cond.value->type() == Type::scalar(ScalarKind::i1))) {
      error(s.value->location, "the condition of 'if' must be a scalar comparison");
      return nullptr;
    }
    builder_->set_location(s.location);
    Operation* branch = builder_->create(OpKind::if_, {cond.value}, {});
    std::vector<Frame> frames;
    Builder* outer = builder_;
    for (size_t r = 0; r < 2; ++r) {
      Builder inner(&branch->region(r));
      builder_ = &inner;
      frames_.push_back({Frame::branch, {}, {}});
      lower_block(r == 0 ? s.body : s.else_body);
      frames.push_back(std::move(frames_.back()));
      frames_.pop_back();
    }
    builder_ = outer;
    // Every outer name assigned in either branch becomes a result of the if, and so does a new
    // name both branches define; a name only one defines is noted for the "unknown name" error.
    std::vector<std::string> names = frames[0].updated;
    for (const auto& name : frames[1].updated)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    std::vector<std::string> locals;  // sorted: the order of results must not depend on hashing
    for (const auto& [name, _] : frames[0].vars)
      if (!lookup(name)) locals.push_back(name);
    std::sort(locals.begin(), locals.end());
    for (const auto& name : locals)
      if (frames[1].vars.count(name)) names.push_back(name);
      else note_out_of_scope(name, fmt::format("it is defined only in the then-branch of the if at {}:{}; give it a value before the if, or in both branches", s.location.line, s.location.column));
    for (const auto& [name, _] : frames[1].vars)
      if (!lookup(name) && !frames[0].vars.count(name))
        note_out_of_scope(name, fmt::format("it is defined only in the else-branch of the if at {}:{}; give it a value before the if, or in both branches", s.location.line, s.location.column));
    std::vector<std::vector<Value*>> yields(2);
    bool ok = true;
    for (const auto& name : names) {
      Operand* before = lookup(name);
      Value* values[2];
      for (size_t r = 0; r < 2; ++r) {
        Builder inner(&branch->region(r));
        builder_ = &inner;
        auto it = frames[r].vars.find(name);
        const Operand& operand = it != frames[r].vars.end() ? it->second : *before;
        ScalarKind element = before && before->value ? before->value->type().element()
                             : operand.value ? operand.value->type().element()
                             : (operand.constant->is_float ? ScalarKind::f32 : ScalarKind::index);
        values[r] = materialize(operand, element, s.location);
      }
      builder_ = outer;
      if (!(values[0]->type() == values[1]->type())) {
        error(s.location, fmt::format("'{}' has type {} after the then-branch but {} after the else-branch",
                                      name, values[0]->type().to_string(), values[1]->type().to_string()));
        ok = false;
      }
      yields[0].push_back(values[0]);
      yields[1].push_back(values[1]);
    }
    for (size_t r = 0; r < 2; ++r) {
      Builder inner(&branch->region(r));
      inner.set_location(s.location);
      inner.create(OpKind::yield, yields[r], {});
    }
    if (!ok) return branch;
    for (size_t i = 0; i < names.size(); ++i) {
      Value* result = branch->add_result(yields[0][i]->type());
      result->set_name_hint(names[i]);
      assign(names[i], Operand{result}, s.location);
    }
    return branch;
  }

  // ---- kernels ----------------------------------------------------------------------------
  std::unique_ptr<Operation> lower_kernel(const Kernel& k) {
    auto kernel = std::make_unique<Operation>(OpKind::kernel, k.location);
    kernel->set_attr("sym_name", k.name);
    Region& body = kernel->add_region();
    Builder builder(&body);
    builder_ = &builder;
    frames_.clear();
    frames_.push_back({Frame::kernel, constants_, {}});
    kernel_names_.clear();
    out_of_scope_.clear();

    // 1. parameters and symbolic dims
    std::vector<std::tuple<std::string, Value*, int64_t, Location>> symbols;
    std::set<std::string> seen_symbols;
    for (const Param& p : k.params) {
      if (!kernel_names_.insert(p.name).second) {
        error(p.location, fmt::format("parameter '{}' is declared twice", p.name));
        continue;
      }
      auto element = element_type(p.element, p.element_location);
      if (!element) continue;
      if (!p.is_tensor) {
        frames_.back().vars[p.name] = Operand{body.add_argument(Type::scalar(*element), p.name)};
        continue;
      }
      std::vector<Dim> dims;
      std::vector<std::pair<std::string, size_t>> named;
      for (size_t axis = 0; axis < p.dims.size(); ++axis) {
        const auto& [text, location] = p.dims[axis];
        if (std::isdigit(static_cast<unsigned char>(text[0]))) {
          int64_t n = 0;
          auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
          if (ec != std::errc() || n <= 0) error(location, fmt::format("bad tensor dimension '{}'", text));
          dims.push_back(Dim::fixed(n));
        } else if (auto c = constants_.find(text); c != constants_.end()) {
          if (c->second.constant->is_float || c->second.constant->integer <= 0)
            error(location, fmt::format("dimension '{}' names a constant that is not a positive integer", text));
          dims.push_back(Dim::fixed(c->second.constant->integer));
        } else {
          dims.push_back(Dim::named(text));
          named.push_back({text, axis});
        }
      }
      Value* tensor = body.add_argument(Type::tensor(dims, *element), p.name);
      frames_.back().vars[p.name] = Operand{tensor};
      for (const auto& [symbol, axis] : named)
        if (seen_symbols.insert(symbol).second)
          symbols.push_back({symbol, tensor, static_cast<int64_t>(axis), p.dims[axis].second});
    }
    for (const auto& [symbol, tensor, axis, location] : symbols) {
      if (kernel_names_.count(symbol)) error(location, fmt::format("'{}' names both a parameter and a dimension", symbol));
      builder.set_location(location);
      Value* extent = builder.create(OpKind::dim, {tensor}, {Type::scalar(ScalarKind::index)}, {{"axis", Attribute(axis)}})->result();
      extent->set_name_hint(symbol);
      frames_.back().vars[symbol] = Operand{extent};
      kernel_names_.insert(symbol);
    }

    // 2. the grid
    const Grid& grid = k.grid;
    std::vector<Value*> extents;
    for (const auto& e : grid.extents)
      if (Value* v = index_value(*e, "a grid extent")) extents.push_back(v);
    if (grid.extents.size() != grid.coordinates.size())
      error(grid.location, fmt::format("the grid has {} extents but names {} coordinates", grid.extents.size(), grid.coordinates.size()));
    if (grid.extents.size() > 3) error(grid.location, "a grid has at most 3 dimensions");
    std::vector<std::pair<std::string, Attribute>> attributes{{"schedule", Attribute(grid.kind)}};
    for (const auto& [key, value] : grid.options) {
      if (grid.kind != "persistent") {
        error(value->location, fmt::format("'{}' is an option of persistent grids", key));
        continue;
      }
      if (key == "order") {
        if (value->kind != ExprKind::name || (value->name != "row" && value->name != "column"))
          error(value->location, "order is 'row' or 'column'");
        else attributes.push_back({key, Attribute(value->name)});
      } else if (key == "swizzle" || key == "cluster" || key == "workers") {
        const char* what = key == "swizzle" ? "the swizzle panel width" : key == "cluster" ? "the cluster size" : "the worker count";
        if (auto n = const_int(*value, what, 1))
          attributes.push_back({key, Attribute(*n)});
      } else {
        error(value->location, fmt::format("unknown grid option '{}' (swizzle, cluster, order, workers)", key));
      }
    }
    if (extents.size() == grid.extents.size() && extents.size() == grid.coordinates.size() && !extents.empty()) {
      builder.set_location(grid.location);
      std::vector<Type> index_types(extents.size(), Type::scalar(ScalarKind::index));
      Operation* ids = builder.create(OpKind::grid_ids, extents, index_types, attributes);
      for (size_t i = 0; i < grid.coordinates.size(); ++i) {
        const auto& [name, location] = grid.coordinates[i];
        if (!kernel_names_.insert(name).second) error(location, fmt::format("'{}' is already defined", name));
        ids->result(i)->set_name_hint(name);
        frames_.back().vars[name] = Operand{ids->result(i)};
      }
    }

    // 3. statements
    lower_block(k.body);
    builder.set_location({});
    builder.create(OpKind::return_, {}, {});

    // 4. tile operands of mma come through shared memory
    promote_mma_operands(body);
    builder_ = nullptr;
    return kernel;
  }

  const LowerOptions& options_;
  DiagnosticEngine& diagnostics_;
  std::unordered_map<std::string, Operand> constants_;
  std::set<std::string> kernel_names_;
  std::unordered_map<std::string, std::string> out_of_scope_;  // name → why it is unknown here
  std::vector<Frame> frames_;
  Builder* builder_ = nullptr;
};

}  // namespace

std::unique_ptr<Module> lower_program(const Program& program, const LowerOptions& options,
                                      DiagnosticEngine& diagnostics) {
  return Lowering(options, diagnostics).lower(program);
}

}  // namespace tilec::frontend
