// frontend/lower_expressions.cpp — lowering of expressions: names, numbers, operators, tile
// constructors and loads (the class is in frontend/lowering.h; the builtin functions are in
// frontend/lower_builtins.cpp). Numbers stay folded constants (`Const`) until an
// op needs them, then take the element type of the other operand.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <string_view>

#include "frontend/lowering.h"

namespace tilec::frontend::detail {

Operand Lowering::lower_expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::integer: return Operand{nullptr, Const{false, e.integer, 0}};
    case ExprKind::floating: return Operand{nullptr, Const{true, 0, e.floating}};
    case ExprKind::name: {
      if (failed_.count(e.name) || refused_constants_.count(e.name)) return {};  // its error was reported
      Operand* found = lookup(e.name);
      if (!found) {
        auto note = out_of_scope_.find(e.name);
        auto later = declared_constants_.find(e.name);  // not yet known: a constant reads only earlier ones
        if (note != out_of_scope_.end())
          error(e.location, fmt::format("unknown name '{}': {}", e.name, note->second));
        else if (later != declared_constants_.end())
          error(e.location, fmt::format("unknown name '{0}': the constant '{0}' is declared at {1}:{2}, after this "
                                        "one, and a constant reads only earlier ones: move it up",
                                        e.name, later->second.line, later->second.column));
        else
          error(e.location, fmt::format("unknown name '{}'", e.name));
        return {};
      }
      if (found->value && found->value->type().is_tensor()) {
        error(e.location, fmt::format("'{}' is a tensor; read a tile of it with load {}[...] : <...>", e.name, e.name));
        return {};
      }
      return *found;
    }
    case ExprKind::unary: return lower_unary(e);
    case ExprKind::binary: return lower_binary(e);
    case ExprKind::call: return lower_call(e);  // which refuses, in a `const`, a function that does not fold
    case ExprKind::tile_new: return builder_ ? lower_tile_new(e) : not_a_constant(e, "a tile");
    case ExprKind::load: return builder_ ? lower_load(e) : not_a_constant(e, "a load");
    case ExprKind::subscript: return builder_ ? lower_subscript(e) : not_a_constant(e, "a subscript of a tile");
  }
  return {};
}

// Outside a kernel (a `const`), only what folds to a number: a tile or a load needs a kernel.
Operand Lowering::not_a_constant(const Expr& e, const std::string& what) {
  error(e.location, fmt::format("{} is not computed at compile time: a constant is a number, from numbers and "
                                "earlier constants", what));
  return {};
}

// -x, !mask, ~x. Out of lower_expr, so that its locals do not weigh on every frame of the
// recursion through long operator chains (a flat sum of 2000 terms, Parser tests).
Operand Lowering::lower_unary(const Expr& e) {
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  if (x.constant && e.op != "!") {
    Const c = *x.constant;
    if (e.op == "~" && c.is_float) {
      error(e.location, "'~' flips the bits of an integer, not of a float");
      return {};
    }
    if (!c.is_float && e.op == "-" && c.integer == std::numeric_limits<int64_t>::min()) {
      error(e.location, fmt::format("integer overflow in the constant expression -({})", c.integer));
      return {};
    }
    if (e.op == "~") c.integer = ~c.integer;
    else if (c.is_float) c.floating = -c.floating;
    else c.integer = -c.integer;
    return Operand{nullptr, c};
  }
  const ScalarKind element = x.value ? x.value->type().element() : ScalarKind::f32;
  if (e.op == "!" && (!x.value || element != ScalarKind::i1)) {
    error(e.location, "'!' negates a mask (a comparison such as x < n), not a number");
    return {};
  }
  if (e.op == "~" && is_float(element)) {
    error(e.location,
          fmt::format("'~' flips the bits of an integer (or negates a mask), not of {}", to_string(element)));
    return {};
  }
  return Operand{create(e.op == "-" ? OpKind::neg : OpKind::not_, {x.value}, in_registers(x.value->type()), e.location)};
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

// NumPy's rule for tiles of different rank: the shorter shape gains leading 1s (a reshape), then
// the tiles broadcast at equal rank: <BN> with <BM, BN> is a row of BN.
Value* Lowering::with_rank(Value* value, size_t rank, Location location) {
  const Type& type = value->type();
  if (!type.is_tile() || type.rank() >= rank) return value;
  std::vector<int64_t> shape(rank - type.rank(), 1);
  for (int64_t extent : type.shape()) shape.push_back(extent);
  return create(OpKind::reshape, {value}, Type::tile(shape, type.element()), location);
}

bool Lowering::leading_ones(const Type& type, size_t rank) {
  return type.is_tile() && type.rank() > rank &&
         std::all_of(type.shape().begin(), type.shape().end() - static_cast<std::ptrdiff_t>(rank),
                     [](int64_t extent) { return extent == 1; });
}

Value* Lowering::without_leading_ones(Value* value, size_t rank, Location location) {
  const Type& type = value->type();
  std::vector<int64_t> shape(type.shape().end() - static_cast<std::ptrdiff_t>(rank), type.shape().end());
  return create(OpKind::reshape, {value}, Type::tile(shape, type.element()), location);
}

std::optional<Type> Lowering::unify(Operand& a, Operand& b, Value*& va, Value*& vb, Location location,
                          const Expr* ea, const Expr* eb, std::pair<const char*, const char*> positions) {
  ScalarKind element = a.value ? a.value->type().element() : b.value->type().element();
  const int errors = diagnostics_.error_count();
  va = materialize(a, element, location, operand_text(eb, "other"));
  vb = materialize(b, element, location, operand_text(ea, "other"));
  if (diagnostics_.error_count() > errors) return std::nullopt;  // a number that does not fit, said once
  const Type ta = va->type(), tb = vb->type();  // as written, for the messages
  if (va->type().is_tile() && vb->type().is_tile() && va->type().element() == vb->type().element()) {
    const size_t rank = std::max(va->type().rank(), vb->type().rank());
    va = with_rank(va, rank, location);
    vb = with_rank(vb, rank, location);
  }
  Type result = broadcast_type(va->type(), vb->type());
  if (result.is_none()) {
    if (!(ta.is_scalar() || ta.is_tile()) || !(tb.is_scalar() || tb.is_tile()))
      error(location, fmt::format("cannot combine {} and {}", ta.to_source_string(), tb.to_source_string()));
    else if (ta.element() != tb.element() && (ta.element() == ScalarKind::index || tb.element() == ScalarKind::index)) {
      // Tiles have no index elements: convert the index, or an integer scalar to one.
      const bool left = ta.element() == ScalarKind::index;
      const std::string index = operand_text(left ? ea : eb, left ? positions.first : positions.second);
      const std::string other(to_string(left ? tb.element() : ta.element()));
      const Type& other_type = left ? tb : ta;
      const std::string other_text = operand_text(left ? eb : ea, left ? positions.second : positions.first);
      const bool named = index.find(' ') == std::string::npos;
      std::string also;
      if (other_type.is_scalar() && is_integer(other_type.element()))
        also = other_text.find(' ') == std::string::npos
                   ? fmt::format(", or {0} to an index: cast({0}, index)", other_text)
                   : fmt::format(", or the {} to an index: cast(..., index)", other);
      error(location, fmt::format("element types differ: {} is an index (tile coordinates, loop variables and dims "
                                  "are) and {} is {}; convert the index: {}{}",
                                  index, other_text, other,
                                  named ? fmt::format("cast({}, {})", index, other)
                                        : fmt::format("cast(..., {}) around {}", other, index), also));
    } else if (ta.element() != tb.element() && (ta.element() == ScalarKind::i1 || tb.element() == ScalarKind::i1)) {
      // Converting a number to a mask is never what was meant: convert the mask.
      const bool left = ta.element() == ScalarKind::i1;
      const std::string mask = operand_text(left ? ea : eb, left ? positions.first : positions.second);
      const std::string other(to_string(left ? tb.element() : ta.element()));
      error(location, fmt::format("element types differ: {} is a mask (i1) and {} is {}; convert the mask: {} is 1 "
                                  "where it holds and 0 elsewhere (or choose with where(mask, a, b))",
                                  mask, operand_text(left ? eb : ea, left ? positions.second : positions.first), other,
                                  mask.find(' ') == std::string::npos ? fmt::format("cast({}, {})", mask, other)
                                                                       : fmt::format("cast(..., {})", other)));
    } else if (ta.element() != tb.element()) {
      const std::string first = operand_text(ea, positions.first), second = operand_text(eb, positions.second);
      const std::string target(to_string(ta.element()));
      error(location, fmt::format("element types differ: {} is {} and {} is {}; convert one, e.g. {}", first,
                                  to_string(ta.element()), second, to_string(tb.element()),
                                  second.find(' ') == std::string::npos
                                      ? fmt::format("cast({}, {})", second, target)
                                      : fmt::format("cast(..., {}) around {}", target, second)));
    } else {
      // A vector of one value per row (a per-channel scale of an [N, K] weight) beside a matrix
      // lines up with its columns; NumPy's fix is the vector as a column, s[:, None].
      std::string hint;
      const Type& vector = ta.rank() == 1 ? ta : tb;
      const Type& matrix = ta.rank() == 1 ? tb : ta;
      if (vector.is_tile() && matrix.is_tile() && vector.rank() == 1 && matrix.rank() == 2 &&
          vector.shape()[0] == matrix.shape()[0]) {
        const std::string text =
            ta.rank() == 1 ? operand_text(ea, positions.first) : operand_text(eb, positions.second);
        hint = fmt::format("; for one value per row, make {} a column: reshape<{}, 1>({})", text, vector.shape()[0],
                           text.find(' ') == std::string::npos ? text : "...");
      }
      error(location, fmt::format("tile shapes do not broadcast: {} and {} (aligned at their last dimension, as in "
                                  "NumPy, each dimension must be equal or 1){}",
                                  ta.to_source_string(), tb.to_source_string(), hint));
    }
    return std::nullopt;
  }
  return result;
}

Operand Lowering::lower_binary(const std::string& op, const Expr& left, const Expr& right, Location location) {
  Operand a = lower_expr(left);
  Operand b = lower_expr(right);
  if (!a.ok() || !b.ok()) return {};
  return combine(op, a, b, left, right, location);
}

// Out of lower_binary for the same reason as lower_unary: a left-deep chain recurses through
// lower_binary once per operator, and only this frame's locals are not on that path.
Operand Lowering::combine(const std::string& op, Operand a, Operand b, const Expr& left, const Expr& right,
                          Location location) {
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
  const std::optional<OpKind> kind = binary_operator_op(op);  // + - * / % & | ^ << >>
  const bool shift = kind == OpKind::shl || kind == OpKind::shr;
  if (kind && (shift || op_info(*kind).has(kBitwise))) {
    if (is_float(result->element()) || (shift && result->element() == ScalarKind::i1)) {
      error(location, shift ? fmt::format("'{}' shifts integers, not {}", op, to_string(result->element()))
                            : fmt::format("'{}' works on integers (bitwise) and masks (logical), not {}", op,
                                          to_string(result->element())));
      return {};
    }
    return Operand{create(*kind, {va, vb}, *result, location)};
  }
  if (op == "**") {
    if (!is_float(result->element())) {
      const std::string base = operand_text(&left, "left");
      error(location, fmt::format("'**' raises floats, and {} is {}; convert the base: {}", base,
                                  to_string(result->element()),
                                  base.find(' ') == std::string::npos
                                      ? fmt::format("cast({}, f32) ** ...", base)
                                      : fmt::format("cast(..., f32) around {}", base)));
      return {};
    }
    return Operand{create(OpKind::pow, {va, vb}, *result, location)};
  }
  static const std::unordered_map<std::string, std::string> predicates = {
      {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}};
  if (auto p = predicates.find(op); p != predicates.end())
    return Operand{create(OpKind::cmp, {va, vb}, result->with_element(ScalarKind::i1), location,
                          {{"predicate", Attribute(p->second)}})};
  const OpKind arithmetic = kind.value();  // + - * / %: every other operator returned above
  if (arithmetic == OpKind::rem && is_float(result->element())) {
    error(location, fmt::format("'%' takes integers, not {}; for floats write x - trunc(x / y) * y (C's fmod, "
                                "the dividend's sign) or x - floor(x / y) * y (Python's %, the divisor's sign)",
                                to_string(result->element())));
    return {};
  }
  return Operand{create(arithmetic, {va, vb}, *result, location)};
}

Operand Lowering::lower_tile_new(const Expr& e) {
  if (e.name == "reshape") return lower_reshape(e);
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
      error(e.location, fmt::format("iota<...> gives integers (an integer element type such as i32), not {}",
                                    to_string(*element)));
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
    const int64_t last = (*shape)[static_cast<size_t>(*axis)] - 1;
    if (auto range = integer_range(*element); range && last > range->highest) {
      error(e.location, fmt::format("this iota counts to {} along axis {}, past {}'s largest value {}: give it a "
                                    "wider element type (i32)", last, *axis, to_string(*element), range->highest));
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
    const Type& given = fill->type();
    std::string what = operand_text(e.args[0].get(), "");
    const bool named = what.find(' ') == std::string::npos;
    if (!named) what = "the fill value";
    if (given.is_scalar())
      error(e.args[0]->location,
            fmt::format("the fill value must be {} scalar, and {} is {}{}; convert it: {}", with_article(*element), what,
                        given.element() == ScalarKind::index ? "an index" : with_article(given.element()),
                        given.element() == ScalarKind::index ? " (tile coordinates, loop variables and dims are)" : "",
                        named ? fmt::format("cast({}, {})", what, to_string(*element))
                              : fmt::format("cast(..., {})", to_string(*element))));
    else
      error(e.args[0]->location, fmt::format("the fill value must be {} scalar, not {}", with_article(*element),
                                             given.to_source_string()));
    return {};
  }
  return Operand{create(OpKind::full, {fill}, type, e.location)};
}

// reshape<R, C>(x): x's elements in row-major order under another shape of as many (NumPy's
// x.reshape, e.g. a vector <BM> as the column <BM, 1>).
Operand Lowering::lower_reshape(const Expr& e) {
  auto shape = tile_shape(e.shape);
  if (!shape) return {};
  if (e.args.size() != 1) {
    error(e.location, "reshape<...>(x) takes one tile");
    return {};
  }
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  Type type = Type::tile(*shape, x.value ? x.value->type().element() : ScalarKind::f32);
  if (!x.value || !x.value->type().is_tile()) {
    const std::string ones = fmt::format("{}", fmt::join(std::vector<int64_t>(shape->size(), 1), ", "));
    error(e.location, fmt::format("reshape<...>() takes a tile, not {}; a tile of one value is full<{}, {}>(x)",
                                  x.value ? x.value->type().to_source_string() : "a number", ones,
                                  to_string(type.element())));
    return {};
  }
  if (x.value->type().element_count() != type.element_count()) {
    error(e.location, fmt::format("reshape<...>() keeps the number of elements: {} has {}, not {}",
                                  x.value->type().to_source_string(), x.value->type().element_count(), type.element_count()));
    return {};
  }
  return Operand{create(OpKind::reshape, {x.value}, type, e.location)};
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
                           bool elements, std::vector<Value*>& out) {
  const char* kind = elements ? "element" : "tile";
  if (indices.size() != tensor.rank()) {
    error(location, fmt::format("{} {} coordinates given for a rank-{} tensor", indices.size(), kind, tensor.rank()));
    return false;
  }
  for (const auto& index : indices) {
    Value* v = index_value(*index, elements ? "an element coordinate" : "a tile coordinate");
    if (!v) return false;
    out.push_back(v);
  }
  return true;
}

Operand Lowering::lower_load(const Expr& e) {
  Value* tensor = tensor_named(e.name, e.name_location);
  if (!tensor) return {};
  std::vector<Value*> operands{tensor};
  if (!coordinates(e.args, tensor->type(), e.name_location, e.op == "at", operands)) return {};
  auto shape = tile_shape(e.shape);
  if (!shape) return {};
  // NumPy-style: dims of extent 1 in front of the tensor's rank (a bias row <1, BN> of a vector)
  // load the tile without them and gain them through a reshape.
  const size_t rank = tensor->type().rank(), requested = shape->size();
  if (leading_ones(Type::tile(*shape, tensor->type().element()), rank))
    shape->erase(shape->begin(), shape->end() - static_cast<std::ptrdiff_t>(rank));
  if (shape->size() > rank) {
    error(e.location, fmt::format("the tile shape has {} dimensions, more than the rank-{} tensor '{}' (a tile "
                                  "may have fewer: the leading coordinates then pick a slice; or more of extent 1 "
                                  "in front)",
                                  shape->size(), tensor->type().rank(), e.name));
    return {};
  }
  if (e.op != "at") warn_coordinate_per_element(e.args, e.name, tensor->type(), *shape, e.location, "load reads");
  std::vector<std::pair<std::string, Attribute>> attributes;
  if (e.op == "at") attributes.push_back({"elements", Attribute()});  // the coordinates are element indices
  Value* loaded = create(OpKind::load, operands, Type::tile(*shape, tensor->type().element()), e.location, attributes);
  return Operand{with_rank(loaded, requested, e.location)};
}

// x[a:b, c:d:s]: NumPy's basic slicing of a tile, with constant bounds. A part left out is the
// dimension's start, end or step 1; a negative start or stop counts from the end; dimensions not
// written are taken whole. The slice must lie inside the tile and hold at least one element: a
// bound past the extent is an error here, not clipped as NumPy clips it. The result keeps the
// rank (a lone index, which NumPy would drop a dimension for, is refused with the range to write).
Operand Lowering::lower_subscript(const Expr& e) {
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  if (!x.value || !x.value->type().is_tile()) {
    error(e.location, fmt::format("a subscript x[a:b] slices a tile, not {}",
                                  x.value ? x.value->type().to_source_string() : "a number"));
    return {};
  }
  const Type& type = x.value->type();
  if (e.ranges.size() > type.rank()) {
    error(e.location, fmt::format("{} ranges for the rank-{} {}", e.ranges.size(), type.rank(), type.to_source_string()));
    return {};
  }
  std::vector<int64_t> starts, steps, shape;
  bool whole = true;
  for (size_t d = 0; d < type.rank(); ++d) {
    const int64_t extent = type.shape()[d];
    int64_t start = 0, stop = extent, step = 1;
    if (d < e.ranges.size()) {
      const Range& r = e.ranges[d];
      if (!r.range) {
        auto index = const_int(*r.start, "a tile index", -extent);
        if (!index) return {};
        const int64_t at = *index < 0 ? *index + extent : *index;
        error(r.location, fmt::format("a subscript keeps every dimension: write {}:{} for element {} of dimension {} "
                                      "(a tile of extent 1 there; reshape<...> drops it)",
                                      at, at + 1, at, d));
        return {};
      }
      auto bound = [&](const ExprPtr& part, int64_t fallback, const char* what) -> std::optional<int64_t> {
        if (!part) return fallback;
        auto value = const_int(*part, what, -extent);
        if (!value) return std::nullopt;
        return *value < 0 ? *value + extent : *value;
      };
      auto a = bound(r.start, 0, "a slice's start"), b = bound(r.stop, extent, "a slice's stop");
      if (!a || !b) return {};
      if (r.step) {
        auto s = const_int(*r.step, "a slice's step", 1);
        if (!s) return {};
        step = *s;
      }
      start = *a;
      stop = *b;
      if (stop > extent || start >= stop) {
        error(r.location, fmt::format("the range {}:{} of dimension {} (extent {}) {}", start, stop, d, extent,
                                      stop > extent ? "goes past its end" : "holds no element"));
        return {};
      }
    }
    starts.push_back(start);
    steps.push_back(step);
    shape.push_back((stop - start + step - 1) / step);
    whole = whole && start == 0 && step == 1 && shape.back() == extent;
  }
  if (whole) return x;
  auto array = [](const std::vector<int64_t>& values) {
    Attribute::Array items;
    for (int64_t value : values) items.push_back(Attribute(value));
    return Attribute(std::move(items));
  };
  std::vector<std::pair<std::string, Attribute>> attributes{{"starts", array(starts)}};
  if (std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s != 1; })) attributes.push_back({"steps", array(steps)});
  return Operand{create(OpKind::slice, {x.value}, Type::tile(shape, type.element()), e.location, attributes)};
}

}  // namespace tilec::frontend::detail
