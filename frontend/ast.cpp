// frontend/ast.cpp — the indented text form of the syntax tree (`--emit ast`).
#include "frontend/ast.h"

#include <fmt/core.h>

#include <algorithm>

namespace tilec::frontend {

namespace {

class AstPrinter {
 public:
  std::string print(const Program& program) {
    // Each top-level assert after the constants declared before it.
    size_t next_assertion = 0;
    auto assertions_after = [&](size_t constants) {
      for (; next_assertion < program.assertions.size() &&
             program.assertions[next_assertion].after_constants <= constants; ++next_assertion) {
        const Assertion& a = program.assertions[next_assertion];
        line(0, fmt::format("assert {}", at(a.location)));
        expr(1, *a.condition);
      }
    };
    for (size_t i = 0; i < program.constants.size(); ++i) {
      assertions_after(i);
      const ConstDecl& c = program.constants[i];
      line(0, fmt::format("const {} {}", c.name, at(c.location)));
      expr(1, *c.value);
    }
    assertions_after(program.constants.size());
    for (const auto& k : program.kernels) kernel(k);
    return std::move(out_);
  }

 private:
  void line(int depth, const std::string& text) {
    out_ += std::string(2 * static_cast<size_t>(depth), ' ') + text + "\n";
  }
  static std::string at(Location l) { return fmt::format("@{}:{}", l.line, l.column); }

  void kernel(const Kernel& k) {
    line(0, fmt::format("kernel {} {}", k.name, at(k.location)));
    for (const auto& p : k.params) {
      std::string dims;
      for (const auto& [d, _] : p.dims) dims += d + ", ";
      line(1, p.is_tensor ? fmt::format("param {}: tensor<{}{}>", p.name, dims, p.element)
                          : fmt::format("param {}: {}", p.name, p.element));
    }
    std::string coords;
    for (const auto& [c, _] : k.grid.coordinates) coords += (coords.empty() ? "" : ", ") + c;
    line(1, fmt::format("grid {} as ({}) {}", k.grid.kind, coords, at(k.grid.location)));
    for (const auto& e : k.grid.extents) expr(2, *e);
    for (const auto& [key, _, e] : k.grid.options) {
      line(2, key + " =");
      expr(3, *e);
    }
    block(1, k.body);
  }

  void block(int depth, const Block& b) {
    for (const auto& s : b) stmt(depth, *s);
  }

  void annotations(int depth, const Stmt& s) {
    for (const auto& a : s.annotations) {
      line(depth, fmt::format("@{} {}", a.name, at(a.location)));
      for (const auto& e : a.args) expr(depth + 1, *e);
      for (const auto& [key, e] : a.keywords) {
        line(depth + 1, key + " =");
        expr(depth + 2, *e);
      }
    }
  }

  void stmt(int depth, const Stmt& s) {
    annotations(depth, s);
    switch (s.kind) {
      case StmtKind::assign:
        line(depth, fmt::format("assign {} {}", s.name, at(s.location)));
        expr(depth + 1, *s.value);
        break;
      case StmtKind::store:
        line(depth, fmt::format("store {}{} {}", s.name, s.combine == StoreCombine::none ? "" : std::string(" ") + store_combine_spelling(s.combine), at(s.location)));
        for (const auto& i : s.indices) expr(depth + 1, *i);
        expr(depth + 1, *s.value);
        break;
      case StmtKind::for_loop: {
        std::string carried;
        for (const auto& [c, _] : s.carried) carried += (carried.empty() ? "" : ", ") + c;
        line(depth, fmt::format("for {} carry ({}) {}", s.name, carried, at(s.location)));
        expr(depth + 1, *s.lower);
        expr(depth + 1, *s.upper);
        if (s.pipeline) {
          line(depth + 1, "pipeline");
          expr(depth + 2, *s.pipeline);
        }
        block(depth + 1, s.body);
        break;
      }
      case StmtKind::assert_:
        line(depth, fmt::format("assert {}", at(s.location)));
        expr(depth + 1, *s.value);
        break;
      case StmtKind::if_else:
        line(depth, fmt::format("if {}", at(s.location)));
        expr(depth + 1, *s.value);
        line(depth, "then");
        block(depth + 1, s.body);
        if (!s.else_body.empty()) {
          line(depth, "else");
          block(depth + 1, s.else_body);
        }
        break;
    }
  }

  void expr(int depth, const Expr& e) {
    switch (e.kind) {
      case ExprKind::integer: line(depth, fmt::format("int {}", e.integer)); return;
      case ExprKind::floating: line(depth, fmt::format("float {}", e.floating)); return;
      case ExprKind::name: line(depth, fmt::format("name {}", e.name)); return;
      case ExprKind::unary: line(depth, fmt::format("unary {}", e.op)); break;
      case ExprKind::binary: line(depth, fmt::format("binary {}", e.op)); break;
      case ExprKind::call: line(depth, fmt::format("call {}", e.name)); break;
      case ExprKind::tile_new: line(depth, fmt::format("{} <{}>", e.name, e.element)); break;
      case ExprKind::load: line(depth, fmt::format("load {}", e.name)); break;
      case ExprKind::subscript: line(depth, "subscript"); break;
    }
    for (const auto& a : e.args) expr(depth + 1, *a);
    for (const auto& [key, a] : e.keywords) {
      line(depth + 1, key + " =");
      expr(depth + 2, *a);
    }
    if (!e.shape.empty()) {
      line(depth + 1, "shape");
      for (const auto& s : e.shape) expr(depth + 2, *s);
    }
    for (const Range& r : e.ranges) {
      line(depth + 1, r.range ? "range" : "index");
      for (const auto* part : {&r.start, &r.stop, &r.step}) {
        if (*part) expr(depth + 2, **part);
        else if (r.range) line(depth + 2, "-");
      }
    }
  }

  std::string out_;
};

}  // namespace

std::string print_ast(const Program& program) { return AstPrinter().print(program); }


std::string_view constructor_elsewhere(std::string_view name) {
  if (name == "ones") return "full<shape, type>(1) (full fills a tile with one value)";
  if (name == "empty") return "zeros<shape, type>()";
  if (name == "arange") return "iota<n, i32>(0)";
  return "";
}

}  // namespace tilec::frontend
