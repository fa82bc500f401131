// frontend/lower_expressions.cpp — lowering of expressions: names, numbers, operators, the
// builtin functions (one table for the elementwise ones), reductions, tile constructors and
// loads (the class is in frontend/lowering.h). Numbers stay folded constants (`Const`) until an
// op needs them, then take the element type of the other operand.
#include <fmt/core.h>

#include <algorithm>
#include <string_view>

#include "frontend/lowering.h"

namespace tilec::frontend::detail {

namespace {

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
    "sum, max, min, mean (with axis = k, or over the whole tile), argmax, argmin (with axis = k), max, min, pow, "
    "cdiv (two operands), "
    "exp, sqrt, rsqrt, relu, tanh, erf, log, sigmoid, abs, transpose, cast, where, mma, zeros, full, iota";

}  // namespace

Operand Lowering::lower_expr(const Expr& e) {
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

std::optional<Const> Lowering::fold(const std::string& op, Const a, Const b, Location location) {
  std::string message;
  auto folded = fold_constants(op, a, b, message);
  if (!folded) error(location, message);
  return folded;
}

std::string Lowering::operand_text(const Expr* e, const char* position) {
  if (e && e->kind == ExprKind::name) return e->name;
  if (e && e->kind == ExprKind::call && e->args.size() == 1 && e->keywords.empty() && e->args[0]->kind == ExprKind::name)
    return e->name + "(" + e->args[0]->name + ")";
  return fmt::format("the {} operand", position);
}

std::optional<Type> Lowering::unify(Operand& a, Operand& b, Value*& va, Value*& vb, Location location,
                          const Expr* ea, const Expr* eb) {
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

Operand Lowering::lower_binary(const std::string& op, const Expr& left, const Expr& right, Location location) {
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

Operand Lowering::lower_reduction(const Expr& e, const Expr* axis) {
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
  } else if (f == "argmax" || f == "argmin") {
    error(e.location, fmt::format("{}() needs an axis: {}(x, axis = 1)", f, f));
    return {};
  } else {
    for (int64_t a = static_cast<int64_t>(type.rank()); a-- > 0;) axes.push_back(a);
  }
  if (f == "argmax" || f == "argmin") return lower_arg_extremum(e, x.value, axes.front());
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

// argmax / argmin along `axis`: the i32 index of the first element equal to the row's maximum
// (minimum), built from ops every backend has:
//   m = reduce_max(x); i = iota(axis); r = reduce_min(select(x == m, i, extent));
// NaNs are skipped as max/min skip them; a row of NaNs gives 0.
Operand Lowering::lower_arg_extremum(const Expr& e, Value* x, int64_t axis) {
  const Type& type = x->type();
  Location at = e.location;
  bool maximum = e.name == "argmax";
  std::vector<int64_t> reduced = type.shape();
  int64_t extent = reduced[static_cast<size_t>(axis)];
  reduced[static_cast<size_t>(axis)] = 1;
  std::vector<std::pair<std::string, Attribute>> along = {{"axis", Attribute(axis)}};
  Value* extreme = create(maximum ? OpKind::reduce_max : OpKind::reduce_min, {x}, Type::tile(reduced, type.element()), at, along);
  Value* hit = create(OpKind::cmp, {x, extreme}, type.with_element(ScalarKind::i1).with_space(MemorySpace::reg), at,
                      {{"predicate", Attribute("eq")}});
  Type indices = Type::tile(type.shape(), ScalarKind::i32);
  Value* index = create(OpKind::iota, {}, indices, at, along);
  Value* past = materialize(Operand{nullptr, Const{false, extent, 0}}, ScalarKind::i32, at);
  Value* candidates = create(OpKind::select, {hit, index, past}, indices, at);
  Value* first = create(OpKind::reduce_min, {candidates}, Type::tile(reduced, ScalarKind::i32), at, along);
  Value* none = create(OpKind::cmp, {first, past}, Type::tile(reduced, ScalarKind::i1), at, {{"predicate", Attribute("eq")}});
  Value* zero = materialize(Operand{nullptr, Const{false, 0, 0}}, ScalarKind::i32, at);
  return Operand{create(OpKind::select, {none, zero, first}, Type::tile(reduced, ScalarKind::i32), at)};
}

Operand Lowering::lower_call(const Expr& e) {
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
  bool reduction = f == "sum" || f == "mean" || f == "argmax" || f == "argmin" ||
                   ((f == "max" || f == "min") && e.args.size() == 1);
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
  if (f == "transpose") {
    if (!arity(1)) return {};
    Operand x = lower_expr(*e.args[0]);
    if (!x.ok()) return {};
    if (!x.value || !x.value->type().is_tile() || x.value->type().rank() != 2) {
      error(e.args[0]->location, fmt::format("transpose() swaps the rows and columns of a 2-D tile, not {}",
                                             x.value ? x.value->type().to_string() : "a number"));
      return {};
    }
    const Type& type = x.value->type();
    return Operand{create(OpKind::transpose, {x.value}, Type::tile({type.shape()[1], type.shape()[0]}, type.element()),
                          e.location)};
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
    if (!mma_operands_combine(ta.element(), tb.element())) {
      error(e.location, fmt::format("mma operands differ in element type: {} and {} (they may differ only as two 8-bit "
                                    "floats, f8e4m3 and f8e5m2)", to_string(ta.element()), to_string(tb.element())));
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

Operand Lowering::lower_tile_new(const Expr& e) {
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

Value* Lowering::tensor_named(const std::string& name, Location location) {
  Operand* found = lookup(name);
  if (!found || !found->value || !found->value->type().is_tensor()) {
    error(location, found ? fmt::format("'{}' is not a tensor parameter", name)
                          : fmt::format("unknown tensor '{}'", name));
    return nullptr;
  }
  return found->value;
}

bool Lowering::coordinates(const std::vector<ExprPtr>& indices, const Type& tensor, Location location,
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

Operand Lowering::lower_load(const Expr& e) {
  Value* tensor = tensor_named(e.name, e.location);
  if (!tensor) return {};
  std::vector<Value*> operands{tensor};
  if (!coordinates(e.args, tensor->type(), e.location, operands)) return {};
  auto shape = tile_shape(e.shape);
  if (!shape) return {};
  if (shape->size() > tensor->type().rank()) {
    error(e.location, fmt::format("the tile shape has {} dimensions, more than the rank-{} tensor '{}' (a tile "
                                  "may have fewer: the leading coordinates then pick a slice)",
                                  shape->size(), tensor->type().rank(), e.name));
    return {};
  }
  std::vector<std::pair<std::string, Attribute>> attributes;
  if (e.op == "at") attributes.push_back({"elements", Attribute()});  // the coordinates are element indices
  return Operand{create(OpKind::load, operands, Type::tile(*shape, tensor->type().element()), e.location, attributes)};
}

}  // namespace tilec::frontend::detail
