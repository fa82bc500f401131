// frontend/lower_builtins.cpp — the builtin functions of .tile source (docs/language.md,
// "Builtin functions"): one table of names, what each takes and the Lowering member that lowers
// it. lower_call checks what every call has in common (a known name, keywords, the axis, the
// argument count) from the row; the handlers check the operands. Adding a function is a row and,
// unless an existing handler fits (a one-operand elementwise op needs only the row), a handler.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/lowering.h"
#include "ir/fold.h"

namespace tilec::frontend::detail {

// A builtin function: f(x, ...) or, where `axis` is set, f(x, axis = k).
struct Builtin {
  std::string_view name;
  size_t arguments;  // how many it takes; 0: the handler checks (reductions; max and min take 1 or 2)
  bool axis;         // takes `axis = k`
  OpKind kind;       // the op it makes (reductions: the first; mean and argmax make several)
  Operand (Lowering::*lower)(const Expr& e, const Builtin& builtin, const Expr* axis);
  bool folds = false;  // on numbers it gives a number: a `const` may call it
};

namespace {

// "unknown function 'tanhh'; did you mean 'tanh'? (known: sum, max, ...)".
std::string unknown_function(const std::string& name, std::span<const Builtin> builtins) {
  for (std::string_view constructor : {"zeros", "full", "iota"})
    if (name == constructor)
      return fmt::format("{}() is a tile constructor: write {}<R, C, f32>({})", name, name,
                         name == "zeros" ? "" : name == "full" ? "value" : "axis");
  if (name == "reshape") return "reshape() takes the new shape first: write reshape<R, C>(x)";
  if (std::string_view written = constructor_elsewhere(name); !written.empty())
    return fmt::format("unknown function '{}': write {}", name, written);
  // What other languages spell a conversion or a matrix product.
  static constexpr std::pair<std::string_view, std::string_view> kElsewhere[] = {
      {"float", "cast(x, f32)"}, {"int", "cast(x, i32)"},  {"f32", "cast(x, f32)"},
      {"f16", "cast(x, f16)"},   {"bf16", "cast(x, bf16)"}, {"i32", "cast(x, i32)"},
      {"to", "cast(x, f32)"},    {"astype", "cast(x, f32)"}, {"dot", "mma(a, b, acc)"},
      {"matmul", "mma(a, b, acc)"}, {"bit_cast", "bitcast(x, i32)"}, {"view", "bitcast(x, i32)"},
      {"reinterpret", "bitcast(x, i32)"}};
  for (const auto& [spelled, written] : kElsewhere)
    if (name == spelled)
      return fmt::format("unknown function '{}': write {}{}", name, written,
                         written.starts_with("cast")      ? " (cast converts to any element type)"
                         : written.starts_with("bitcast") ? " (the bits read as another type of the same width)"
                                                          : " (the product of two tiles added to an accumulator)");
  std::string known, nearest;
  size_t best = 3;  // suggest only a name within two edits
  for (const Builtin& builtin : builtins) {
    known += fmt::format("{}{}", known.empty() ? "" : ", ", builtin.name);
    if (size_t distance = edit_distance(name, builtin.name); distance < best) {
      best = distance;
      nearest = builtin.name;
    }
  }
  return fmt::format("unknown function '{}'{} (known: {}; the tile constructors zeros<...>(), full<...>(v) and "
                     "iota<...>(axis))",
                     name, nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest), known);
}

}  // namespace

std::span<const Builtin> Lowering::builtin_table() {
  // In the order the "unknown function" message lists them. The one-operand elementwise functions
  // whose op is kFloatsOnly convert an integer constant to f32 and refuse integer values.
  static constexpr Builtin kBuiltins[] = {
      {"sum", 0, true, OpKind::reduce_sum, &Lowering::lower_reduction},
      {"max", 0, true, OpKind::max, &Lowering::lower_extremum, true},
      {"min", 0, true, OpKind::min, &Lowering::lower_extremum, true},
      {"mean", 0, true, OpKind::reduce_sum, &Lowering::lower_reduction},
      {"argmax", 0, true, OpKind::reduce_max, &Lowering::lower_reduction},
      {"argmin", 0, true, OpKind::reduce_min, &Lowering::lower_reduction},
      {"cdiv", 2, false, OpKind::cdiv, &Lowering::lower_binary_function, true},
      {"pow", 2, false, OpKind::pow, &Lowering::lower_pow, true},
      {"exp", 1, false, OpKind::exp, &Lowering::lower_unary_function},
      {"exp2", 1, false, OpKind::exp2, &Lowering::lower_unary_function},
      {"fma", 3, false, OpKind::fma, &Lowering::lower_fma},
      {"clamp", 3, false, OpKind::min, &Lowering::lower_clamp, true},
      {"sqrt", 1, false, OpKind::sqrt, &Lowering::lower_unary_function},
      {"rsqrt", 1, false, OpKind::rsqrt, &Lowering::lower_unary_function},
      {"relu", 1, false, OpKind::relu, &Lowering::lower_unary_function},
      {"tanh", 1, false, OpKind::tanh, &Lowering::lower_unary_function},
      {"erf", 1, false, OpKind::erf, &Lowering::lower_unary_function},
      {"log", 1, false, OpKind::log, &Lowering::lower_unary_function},
      {"log2", 1, false, OpKind::log2, &Lowering::lower_unary_function},
      {"log1p", 1, false, OpKind::log1p, &Lowering::lower_unary_function},
      {"expm1", 1, false, OpKind::expm1, &Lowering::lower_unary_function},
      {"sin", 1, false, OpKind::sin, &Lowering::lower_unary_function},
      {"cos", 1, false, OpKind::cos, &Lowering::lower_unary_function},
      {"tan", 1, false, OpKind::tan, &Lowering::lower_unary_function},
      {"atan", 1, false, OpKind::atan, &Lowering::lower_unary_function},
      {"asin", 1, false, OpKind::asin, &Lowering::lower_unary_function},
      {"acos", 1, false, OpKind::acos, &Lowering::lower_unary_function},
      {"sinh", 1, false, OpKind::sinh, &Lowering::lower_unary_function},
      {"cosh", 1, false, OpKind::cosh, &Lowering::lower_unary_function},
      {"atan2", 2, false, OpKind::atan2, &Lowering::lower_atan2},
      {"sigmoid", 1, false, OpKind::sigmoid, &Lowering::lower_unary_function},
      {"abs", 1, false, OpKind::abs, &Lowering::lower_unary_function},
      {"sign", 1, false, OpKind::select, &Lowering::lower_sign},
      {"isnan", 1, false, OpKind::cmp, &Lowering::lower_float_class},
      {"isinf", 1, false, OpKind::cmp, &Lowering::lower_float_class},
      {"isfinite", 1, false, OpKind::cmp, &Lowering::lower_float_class},
      {"floor", 1, false, OpKind::floor, &Lowering::lower_unary_function},
      {"ceil", 1, false, OpKind::ceil, &Lowering::lower_unary_function},
      {"round", 1, false, OpKind::round, &Lowering::lower_unary_function},
      {"trunc", 1, false, OpKind::trunc, &Lowering::lower_unary_function},
      {"rand", 2, false, OpKind::randint, &Lowering::lower_random},
      {"randn", 2, false, OpKind::randint, &Lowering::lower_random},
      {"randint", 2, false, OpKind::randint, &Lowering::lower_random},
      {"transpose", 1, false, OpKind::transpose, &Lowering::lower_transpose},
      {"permute", 0, false, OpKind::transpose, &Lowering::lower_permute},
      {"concat", 0, true, OpKind::concat, &Lowering::lower_concat},
      {"interleave", 0, true, OpKind::interleave, &Lowering::lower_interleave},
      {"cumsum", 1, true, OpKind::scan_sum, &Lowering::lower_scan},
      {"cumprod", 1, true, OpKind::scan_prod, &Lowering::lower_scan},
      {"cummax", 1, true, OpKind::scan_max, &Lowering::lower_scan},
      {"cummin", 1, true, OpKind::scan_min, &Lowering::lower_scan},
      {"sort", 1, true, OpKind::sort, &Lowering::lower_sort},
      {"item", 1, false, OpKind::item, &Lowering::lower_item},
      {"cast", 2, false, OpKind::cast, &Lowering::lower_cast},
      {"bitcast", 2, false, OpKind::bitcast, &Lowering::lower_bitcast},
      {"where", 3, false, OpKind::select, &Lowering::lower_where},
      {"mma", 3, false, OpKind::mma, &Lowering::lower_mma},
  };
  return kBuiltins;
}

bool Lowering::folds_on_numbers(const std::string& function) {
  for (const Builtin& row : builtin_table())
    if (row.name == function) return row.folds;
  return false;
}

Operand Lowering::lower_call(const Expr& e) {
  const std::string& f = e.name;
  const Builtin* builtin = nullptr;
  for (const Builtin& row : builtin_table())
    if (row.name == f) builtin = &row;
  if (!builtin) {
    error(e.location, unknown_function(f, builtin_table()));
    return {};
  }
  if (!builder_ && !builtin->folds) {  // a `const`: only what folds to a number
    std::vector<std::string_view> folding;
    for (const Builtin& row : builtin_table())
      if (row.folds) folding.push_back(row.name);
    error(e.location, fmt::format("{}() is not computed at compile time: a constant is numbers and earlier constants "
                                  "under + - * / % ** & | ^ ~ << >> and {}",
                                  f, fmt::join(folding, ", ")));
    return {};
  }
  const Expr* axis = nullptr;
  for (const auto& [k, v] : e.keywords) {
    if (k == "descending" && builtin->kind == OpKind::sort) continue;  // lower_sort reads it
    if (k != "axis") {
      error(v->location, fmt::format("{}() takes no keyword '{}'{}", f, k,
                                     builtin->axis && (k == "dim" || k == "axes" || k == "keepdim" || k == "keepdims")
                                         ? k == "dim" || k == "axes"
                                               ? "; write axis = ..."
                                               : " (along an axis the reduced dimension is kept, as extent 1; a "
                                                 "whole-tile reduction gives one value)"
                                         : ""));
      return {};
    }
    if (!axis) axis = v.get();
  }
  if (axis && !builtin->axis) {
    error(axis->location, fmt::format("{}() takes no axis", f));
    return {};
  }
  if (builtin->arguments != 0 && !arity(e, builtin->arguments)) return {};
  return (this->*builtin->lower)(e, *builtin, axis);
}

bool Lowering::arity(const Expr& e, size_t n) {
  if (e.args.size() == n) return true;
  error(e.location, fmt::format("{}() takes {} argument{}, got {}", e.name, n, n == 1 ? "" : "s", e.args.size()));
  return false;
}

// max(x) and min(x) reduce one tile (along `axis = k`, or over the whole tile); max(a, b) and
// min(a, b) are elementwise.
Operand Lowering::lower_extremum(const Expr& e, const Builtin& builtin, const Expr* axis) {
  const std::string& f = e.name;
  if (e.args.size() == 1) return lower_reduction(e, builtin, axis);
  if (axis) {
    error(axis->location, fmt::format("{}() along an axis takes one tile: {}(x, axis = 1)", f, f));
    return {};
  }
  if (!arity(e, 2)) return {};
  return lower_binary_function(e, builtin, nullptr);
}

// max(a, b), min(a, b), cdiv(a, b): folded on two numbers, else one elementwise op.
Operand Lowering::lower_binary_function(const Expr& e, const Builtin& builtin, const Expr*) {
  const std::string& f = e.name;
  Operand a = lower_expr(*e.args[0]), b = lower_expr(*e.args[1]);
  if (!a.ok() || !b.ok()) return {};
  if (a.constant && b.constant && f == "cdiv") {
    const Const &x = *a.constant, &y = *b.constant;
    if (x.is_float || y.is_float || y.integer <= 0 || x.integer < 0) {
      error(e.location, fmt::format("cdiv() needs a non-negative integer and a positive integer; these are {} and "
                                    "{}{}",
                                    x.is_float ? fmt::format("{}", x.floating) : std::to_string(x.integer),
                                    y.is_float ? fmt::format("{}", y.floating) : std::to_string(y.integer),
                                    defines_in({e.args[0].get(), e.args[1].get()})));
      return {};
    }
    return Operand{nullptr, Const{false, *fold_integer(OpKind::cdiv, x.integer, y.integer), 0}};  // ir/fold.h
  }
  if (f != "cdiv") return extremum(builtin.kind, a, b, e.args[0].get(), e.args[1].get(), e.location);
  // A float operand would first be refused as a number to convert, with advice (cast the other
  // operand to f32) that cdiv() then refuses too.
  for (size_t i = 0; i < 2; ++i) {
    const Operand& operand = i == 0 ? a : b;
    const std::string text = operand_text(e.args[i].get(), i == 0 ? "first" : "second");
    if (operand.constant && operand.constant->is_float) {  // const B = 32.0, or -D B=32.0
      const double number = operand.constant->floating;
      const bool whole = std::abs(number) < 1e15 && number == std::trunc(number);  // 32.0: write 32
      error(e.location, fmt::format("cdiv() takes integers (an index or an integer type), and {} is the number {}{}: "
                                    "write an integer{}",
                                    text, float_text(number),
                                    defines_in({e.args[i].get()}),
                                    whole ? fmt::format(" ({})", static_cast<int64_t>(number)) : ""));
      return {};
    }
    if (operand.value && is_float(operand.value->type().element())) {
      error(e.location, fmt::format("cdiv() takes integers (an index or an integer type), and {} is {}: convert it "
                                    "first, e.g. cast({}, i32) (which truncates toward zero)",
                                    text, operand.value->type().to_source_string(),
                                    text.find(' ') == std::string::npos ? text : "..."));
      return {};
    }
  }
  Value *va = nullptr, *vb = nullptr;
  auto result = unify(a, b, va, vb, e.location, e.args[0].get(), e.args[1].get());
  if (!result) return {};
  if (!is_integer(result->element())) {
    error(e.location, "cdiv() needs integer operands");
    return {};
  }
  return Operand{create(builtin.kind, {va, vb}, *result, e.location)};
}

// max(a, b) or min(a, b) (`kind`) of two operands: the number itself for two numbers.
Operand Lowering::extremum(OpKind kind, Operand a, Operand b, const Expr* ea, const Expr* eb, Location location) {
  if (a.constant && b.constant) {
    bool first = (a.constant->as_double() > b.constant->as_double()) == (kind == OpKind::max);
    return first ? a : b;
  }
  Value *va = nullptr, *vb = nullptr;
  auto result = unify(a, b, va, vb, location, ea, eb);
  if (!result) return {};
  return Operand{create(kind, {va, vb}, *result, location)};
}

// clamp(x, lo, hi) is min(max(x, lo), hi), as torch.clamp, but for NaN: max ignores a NaN x, so
// clamp(NaN, lo, hi) is lo (docs/language.md).
Operand Lowering::lower_clamp(const Expr& e, const Builtin&, const Expr*) {
  Operand x = lower_expr(*e.args[0]), lo = lower_expr(*e.args[1]), hi = lower_expr(*e.args[2]);
  if (!x.ok() || !lo.ok() || !hi.ok()) return {};
  Operand low = extremum(OpKind::max, x, lo, e.args[0].get(), e.args[1].get(), e.location);
  if (!low.ok()) return {};
  return extremum(OpKind::min, low, hi, e.args[0].get(), e.args[2].get(), e.location);
}

// pow(a, b) is a ** b.
Operand Lowering::lower_pow(const Expr& e, const Builtin&, const Expr*) {
  return lower_binary("**", *e.args[0], *e.args[1], e.location);
}

// exp(x), sqrt(x), ...: one elementwise op of the row's kind.
Operand Lowering::lower_unary_function(const Expr& e, const Builtin& builtin, const Expr*) {
  const std::string& f = e.name;
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  bool floats_only = op_info(builtin.kind).has(kFloatsOnly);
  Value* v = floats_only ? materialize(x, ScalarKind::f32, e.location) : materialize(x, e.location);
  ScalarKind element = v->type().element();
  if ((floats_only && !is_float(element)) || element == ScalarKind::i1) {
    error(e.location, fmt::format("{}() needs a {} operand, not {}{}", f, floats_only ? "floating-point" : "numeric",
                                  v->type().to_source_string(),
                                  floats_only ? convert_hint(f, operand_text(e.args[0].get(), "first")) : ""));
    return {};
  }
  return Operand{create(builtin.kind, {v}, in_registers(v->type()), e.location)};
}

// atan2(y, x): the angle of the point (x, y) in radians, -pi..pi, elementwise; the two broadcast
// together and share one float type (a number takes the other's).
Operand Lowering::lower_atan2(const Expr& e, const Builtin&, const Expr*) {
  Operand y = lower_expr(*e.args[0]), x = lower_expr(*e.args[1]);
  if (!y.ok() || !x.ok()) return {};
  if (y.constant && x.constant) y = Operand{materialize(y, ScalarKind::f32, e.location)};  // two numbers: f32
  Value *vy = nullptr, *vx = nullptr;
  auto result = unify(y, x, vy, vx, e.location, e.args[0].get(), e.args[1].get());
  if (!result) return {};
  if (!is_float(result->element())) {
    error(e.location, fmt::format("atan2() takes floats, not {}; convert the operands: atan2(cast(y, f32), "
                                  "cast(x, f32))",
                                  to_string(result->element())));
    return {};
  }
  return Operand{create(OpKind::atan2, {vy, vx}, *result, e.location)};
}

// rand(seed, offset), randn(seed, offset), randint(seed, offset): counter-based random numbers,
// the u32 words of Philox4x32-10 keyed by the seed at the counter `offset` (randint ops). The same
// seed and offset give the same number in every backend and launch, so a backward pass recomputes
// a dropout mask instead of storing it. The two are integers of any types (numbers, index values,
// integer tiles), each read as its 64-bit value, and broadcast together. randint is the word itself; rand its top
// 24 bits scaled to [0, 1), every value a multiple of 2^-24; randn a standard normal by
// Box-Muller from the words of the seed ^ 2^61 (its radius, from (0, 1]) and of the seed ^ 2^62
// (its angle).
Operand Lowering::lower_random(const Expr& e, const Builtin&, const Expr*) {
  const std::string& f = e.name;
  Value* words[2] = {nullptr, nullptr};
  for (size_t i = 0; i < 2; ++i) {
    Operand x = lower_expr(*e.args[i]);
    if (!x.ok()) return {};
    const std::string text = e.args[i]->kind == ExprKind::name ? e.args[i]->name : i == 0 ? "the seed" : "the offset";
    if (x.constant && x.constant->is_float) {
      error(e.args[i]->location, fmt::format("{}() takes an integer seed and offset, and {} is the number {}{}", f, text,
                                    float_text(x.constant->floating), defines_in({e.args[i].get()})));
      return {};
    }
    Value* v = materialize(x, ScalarKind::i64, e.location);
    const ScalarKind element = v->type().element();
    if (!is_integer(element) || element == ScalarKind::i1) {
      error(e.args[i]->location, fmt::format("{}() takes an integer seed and offset (any integer type, or an index), and {} is "
                                    "{}{}",
                                    f, text, v->type().to_source_string(),
                                    is_float(element) ? fmt::format("; a float's bits are bitcast({}, {})",
                                                                    text.find(' ') == std::string::npos ? text : "x",
                                                                    byte_size(element) == 4   ? "i32"
                                                                    : byte_size(element) == 2 ? "i16"
                                                                                              : "i8")
                                                      : "; cast(mask, i32) makes a mask 0 or 1"));
      return {};
    }
    words[i] = v;
  }
  // Of any two integer types: each is read as its value (randint's operands need not agree).
  const size_t rank = std::max(words[0]->type().rank(), words[1]->type().rank());
  Value* vs = with_rank(words[0], rank, e.location);
  Value* vo = with_rank(words[1], rank, e.location);
  const Type shape = broadcast_type(vs->type().with_element(ScalarKind::u32), vo->type().with_element(ScalarKind::u32));
  if (shape.is_none()) {
    error(e.location, fmt::format("{}()'s seed {} and offset {} do not broadcast", f, vs->type().to_source_string(),
                                  vo->type().to_source_string()));
    return {};
  }
  const Type u32 = in_registers(shape), f32 = u32.with_element(ScalarKind::f32);
  auto number = [&](double n, ScalarKind element) {
    return materialize(is_float(element) ? Operand{nullptr, Const{true, 0, n}}
                                         : Operand{nullptr, Const{false, static_cast<int64_t>(n), 0}},
                       element, e.location);
  };
  // A word's top 24 bits times 2^-24, plus `low` (0: [0, 1); 1 ulp: (0, 1]), exact in f32.
  auto uniform = [&](Value* key, double low) {
    Value* word = create(OpKind::randint, {key, vo}, u32, e.location);
    Value* top = create(OpKind::shr, {word, number(8, ScalarKind::u32)}, u32, e.location);
    Value* unit = create(OpKind::mul, {create(OpKind::cast, {top}, f32, e.location), number(0x1p-24, ScalarKind::f32)},
                         f32, e.location);
    return low == 0 ? unit : create(OpKind::add, {unit, number(low, ScalarKind::f32)}, f32, e.location);
  };
  if (f == "randint") return Operand{create(OpKind::randint, {vs, vo}, u32, e.location)};
  if (f == "rand") return Operand{uniform(vs, 0)};
  // randn's two words come from keys of their own, the seed with bit 61 or bit 62 flipped (the
  // seed a scalar as a rule: cheap to widen), so a normal drawn where rand draws is independent
  // of it (dropout plus noise at one seed and offset: with rand's word as its radius, the kept
  // elements' noise had variance 0.31, a hunt).
  Value* wide_seed = vs->type().element() == ScalarKind::i64
                         ? vs
                         : create(OpKind::cast, {vs}, in_registers(vs->type().with_element(ScalarKind::i64)), e.location);
  auto flipped = [&](double bit) {
    return create(OpKind::xor_, {wide_seed, number(bit, ScalarKind::i64)}, wide_seed->type(), e.location);
  };
  Value* radius_draw = uniform(flipped(0x1p61), 0x1p-24);
  Value* angle = create(OpKind::mul, {uniform(flipped(0x1p62), 0), number(6.2831853071795864769, ScalarKind::f32)}, f32,
                        e.location);
  Value* radius = create(OpKind::sqrt,
                         {create(OpKind::mul, {create(OpKind::log, {radius_draw}, f32, e.location),
                                               number(-2, ScalarKind::f32)},
                                 f32, e.location)},
                         f32, e.location);
  return Operand{create(OpKind::mul, {radius, create(OpKind::cos, {angle}, f32, e.location)}, f32, e.location)};
}

// sign(x): 1 where x > 0, -1 where x < 0, else x itself (0, -0.0 and NaN stay), in x's type, as
// torch.sign: two comparisons and two selects.
Operand Lowering::lower_sign(const Expr& e, const Builtin&, const Expr*) {
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  Value* v = materialize(x, e.location);
  const ScalarKind element = v->type().element();
  if (element == ScalarKind::i1) {
    error(e.location, fmt::format("sign() needs a numeric operand, not {}", v->type().to_source_string()));
    return {};
  }
  const Type type = in_registers(v->type());
  const Type mask = type.with_element(ScalarKind::i1);
  auto number = [&](int64_t n) {
    return materialize(is_float(element) ? Operand{nullptr, Const{true, 0, static_cast<double>(n)}}
                                         : Operand{nullptr, Const{false, n, 0}},
                       element, e.location);
  };
  Value* zero = number(0);
  Value* negative = create(OpKind::cmp, {v, zero}, mask, e.location, {{"predicate", Attribute("lt")}});
  Value* positive = create(OpKind::cmp, {v, zero}, mask, e.location, {{"predicate", Attribute("gt")}});
  // Values of a type whose range starts at 0 (u8, u16, u32) are never below it: their sign is 1
  // or 0 (`number(-1)` would not fit).
  const std::optional<IntegerRange> range = integer_range(element);
  Value* rest = range && range->lowest == 0 ? v : create(OpKind::select, {negative, number(-1), v}, type, e.location);
  return Operand{create(OpKind::select, {positive, number(1), rest}, type, e.location)};
}

// isnan(x), isinf(x), isfinite(x): i1 masks of a float's class, from comparisons every backend
// has: x != x holds only for NaN; |x| above the type's largest finite value only for ±inf; |x|
// at most it for every finite x (NaN compares false). f8e4m3 has no infinity: isinf is false.
// f8e5m2's magnitude is taken in f32: its arithmetic saturates, so abs(inf) would be finite.
Operand Lowering::lower_float_class(const Expr& e, const Builtin&, const Expr*) {
  const std::string& f = e.name;
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  Value* v = materialize(x, ScalarKind::f32, e.location);
  const ScalarKind element = v->type().element();
  if (!is_float(element)) {
    error(e.location, fmt::format("{}() needs a floating-point operand, not {}{}", f, v->type().to_source_string(),
                                  element == ScalarKind::i1 ? "" : " (integers are always finite)"));
    return {};
  }
  const Type type = in_registers(v->type());
  const Type mask = type.with_element(ScalarKind::i1);
  if (f == "isnan") return Operand{create(OpKind::cmp, {v, v}, mask, e.location, {{"predicate", Attribute("ne")}})};
  // An f8e5m2 result saturates (abs(inf) would be its largest finite value): its magnitude is an f32.
  const ScalarKind measured = element == ScalarKind::f8e5m2 ? ScalarKind::f32 : element;
  Value* magnitude = create(OpKind::abs, {measured == element ? v : create(OpKind::cast, {v}, type.with_element(measured), e.location)},
                            type.with_element(measured), e.location);
  Value* largest = materialize(Operand{nullptr, Const{true, 0, largest_finite_number(element)}}, measured, e.location);
  return Operand{create(OpKind::cmp, {magnitude, largest}, mask, e.location,
                        {{"predicate", Attribute(f == "isinf" ? "gt" : "le")}})};
}

// fma(a, b, c): a·b + c rounded once, elementwise; the three operands broadcast together and
// share one float element type (numbers take it).
Operand Lowering::lower_fma(const Expr& e, const Builtin&, const Expr*) {
  Operand a = lower_expr(*e.args[0]), b = lower_expr(*e.args[1]), c = lower_expr(*e.args[2]);
  if (!a.ok() || !b.ok() || !c.ok()) return {};
  // Numbers take the element type of the operands that have one (f32 when all three are numbers).
  const Value* typed = a.value ? a.value : b.value ? b.value : c.value;
  const ScalarKind element = typed ? typed->type().element() : ScalarKind::f32;
  // Two numbers in the product: the first becomes a value of that type. (A number times a tile
  // is unify's to convert: the guard below once returned nothing for `fma(2.0, x, x)`, which
  // dropped its store without a word; found by a helper running random kernels.)
  if (!a.value && !b.value) {
    a = Operand{materialize(a, element, e.location, operand_text(e.args[1].get(), "other"))};
    if (!a.value) return {};
  }
  Value *va = nullptr, *vb = nullptr, *vab = nullptr, *vc = nullptr;
  auto product = unify(a, b, va, vb, e.location, e.args[0].get(), e.args[1].get());
  if (!product) return {};
  Operand left{va};
  auto sum = unify(left, c, vab, vc, e.location, e.args[0].get(), e.args[2].get());
  if (!sum) return {};
  const size_t rank = std::max({va->type().rank(), vb->type().rank(), vc->type().rank()});
  va = with_rank(va, rank, e.location);
  vb = with_rank(vb, rank, e.location);
  vc = with_rank(vc, rank, e.location);
  Type type = broadcast_type(broadcast_type(va->type(), vb->type()), vc->type());
  if (type.is_none()) {
    error(e.location, fmt::format("fma(): the shapes of a·b ({}) and c ({}) do not broadcast", product->to_string(),
                                  vc->type().to_source_string()));
    return {};
  }
  if (!is_float(type.element())) {
    error(e.location, fmt::format("fma() needs floating-point operands, not {}; convert them: fma(cast({}, f32), ...)",
                                  type.to_source_string(), operand_text(e.args[0].get(), "first")));
    return {};
  }
  if (type.is_tile()) type = type.with_space(MemorySpace::reg);
  return Operand{create(OpKind::fma, {va, vb, vc}, type, e.location)};
}

// transpose(x): a 2-D tile with its rows and columns swapped.
Operand Lowering::lower_transpose(const Expr& e, const Builtin&, const Expr*) {
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  if (!x.value || !x.value->type().is_tile() || x.value->type().rank() != 2) {
    error(e.args[0]->location, fmt::format("transpose() swaps the rows and columns of a 2-D tile, not {}",
                                           x.value ? x.value->type().to_source_string() : "a number"));
    return {};
  }
  const Type& type = x.value->type();
  return Operand{create(OpKind::transpose, {x.value}, Type::tile({type.shape()[1], type.shape()[0]}, type.element()),
                        e.location)};
}

// permute(x, d0, d1, ...): the tile with its dimensions reordered, result dimension i being x's
// dimension d_i, as PyTorch's x.permute(d0, d1, ...) and NumPy's transpose(x, axes). A
// transpose op with `dims` (none when the order is unchanged; none either for the swap of a 2-D
// tile, which is transpose(x)).
Operand Lowering::lower_permute(const Expr& e, const Builtin&, const Expr*) {
  if (e.args.empty()) {
    error(e.location, "permute() takes a tile and its dimensions in their new order, e.g. permute(x, 2, 0, 1)");
    return {};
  }
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  if (!x.value || !x.value->type().is_tile()) {
    error(e.args[0]->location, fmt::format("permute() reorders the dimensions of a tile, not {}",
                                           x.value ? x.value->type().to_source_string() : "a number"));
    return {};
  }
  const Type& type = x.value->type();
  const int64_t rank = static_cast<int64_t>(type.rank());
  if (static_cast<int64_t>(e.args.size()) != rank + 1) {
    error(e.location, fmt::format("permute() of {} takes its {} dimension{} in their new order, got {}",
                                  type.to_source_string(), rank, rank == 1 ? "" : "s", e.args.size() - 1));
    return {};
  }
  std::vector<int64_t> dims;
  for (size_t i = 1; i < e.args.size(); ++i) {
    auto d = const_int(*e.args[i], "a dimension", 0);
    if (!d) return {};
    if (*d >= rank || std::find(dims.begin(), dims.end(), *d) != dims.end()) {
      error(e.args[i]->location, fmt::format("permute() takes each dimension of {} once (0 to {}); {} is {}",
                                             type.to_source_string(), rank - 1, *d,
                                             *d >= rank ? "not one of them" : "named twice"));
      return {};
    }
    dims.push_back(*d);
  }
  bool identity = true;
  for (int64_t d = 0; d < rank; ++d) identity = identity && dims[static_cast<size_t>(d)] == d;
  if (identity) return x;
  std::vector<std::pair<std::string, Attribute>> attributes;
  if (rank != 2) {
    Attribute::Array array;
    for (int64_t d : dims) array.push_back(Attribute(d));
    attributes.push_back({"dims", Attribute(std::move(array))});
  }
  return Operand{create(OpKind::transpose, {x.value}, Type::tile(permuted_shape(type.shape(), dims), type.element()),
                        e.location, std::move(attributes))};
}

// The tiles concat() or interleave() (`name`) joins, of one rank (lower ranks gain leading 1s,
// as operands do) and one element type; empty after an error.
std::vector<Value*> Lowering::joined_tiles(const Expr& e, std::string_view name) {
  if (e.args.size() < 2) {
    error(e.location, fmt::format("{0}() joins two tiles or more: {0}(a, b, axis = 1)", name));
    return {};
  }
  std::vector<Value*> parts;
  size_t rank = 0;
  for (const auto& arg : e.args) {
    Operand part = lower_expr(*arg);
    if (!part.ok()) return {};
    if (!part.value || !part.value->type().is_tile()) {
      error(arg->location, fmt::format("{}() joins tiles, not {} (make one with full<...>(value))", name,
                                       part.value ? part.value->type().to_source_string() : "a number"));
      return {};
    }
    parts.push_back(part.value);
    rank = std::max(rank, part.value->type().rank());
  }
  for (Value*& part : parts) part = with_rank(part, rank, e.location);
  const Type& first = parts.front()->type();
  for (size_t i = 1; i < parts.size(); ++i)
    if (parts[i]->type().element() != first.element()) {
      error(e.args[i]->location,
            fmt::format("{}() joins tiles of one element type: {} and {} (convert one with cast)", name,
                        first.to_source_string(), parts[i]->type().to_source_string()));
      return {};
    }
  return parts;
}

// concat(a, b, ..., axis = k): the tiles one after another along axis k (0 when not given, as
// torch.cat's dim), equal in every other dimension.
Operand Lowering::lower_concat(const Expr& e, const Builtin&, const Expr* axis) {
  std::vector<Value*> parts = joined_tiles(e, "concat");
  if (parts.empty()) return {};
  const Type& first = parts.front()->type();
  int64_t k = 0;
  if (axis) {
    auto named = axis_of(*axis, first);
    if (!named) return {};
    k = *named;
  }
  std::vector<int64_t> shape = first.shape();
  shape[static_cast<size_t>(k)] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Type& t = parts[i]->type();
    for (size_t d = 0; d < first.rank(); ++d)
      if (d != static_cast<size_t>(k) && t.shape()[d] != first.shape()[d]) {
        error(e.args[i]->location, fmt::format("concat() along axis {} joins tiles equal in every other dimension: "
                                               "{} and {} differ in dimension {}",
                                               k, first.to_source_string(), t.to_source_string(), d));
        return {};
      }
    shape[static_cast<size_t>(k)] += t.shape()[static_cast<size_t>(k)];
  }
  return Operand{create(OpKind::concat, parts, Type::tile(shape, first.element()), e.location,
                        {{"axis", Attribute(k)}})};
}

// interleave(a, b, ..., axis = k): the tiles' elements in turn along axis k (the last when not
// given, as Triton's tl.interleave): element i along it is tile i % n's element i / n. The tiles
// have one shape. The inverse of the stepped slices x[:, 0::n], ..., x[:, n-1::n]; so two int4
// weights packed in a byte, low half first, unpack to interleave(w & 15, w >> 4).
Operand Lowering::lower_interleave(const Expr& e, const Builtin&, const Expr* axis) {
  std::vector<Value*> parts = joined_tiles(e, "interleave");
  if (parts.empty()) return {};
  const Type& first = parts.front()->type();
  int64_t k = static_cast<int64_t>(first.rank()) - 1;
  if (axis) {
    auto named = axis_of(*axis, first);
    if (!named) return {};
    k = *named;
  }
  for (size_t i = 1; i < parts.size(); ++i)
    if (parts[i]->type().shape() != first.shape()) {
      error(e.args[i]->location, fmt::format("interleave() takes tiles of one shape: {} and {} (slice or broadcast "
                                             "one to the other's)",
                                             first.to_source_string(), parts[i]->type().to_source_string()));
      return {};
    }
  std::vector<int64_t> shape = first.shape();
  shape[static_cast<size_t>(k)] *= static_cast<int64_t>(parts.size());
  return Operand{create(OpKind::interleave, parts, Type::tile(shape, first.element()), e.location,
                        {{"axis", Attribute(k)}})};
}

// The axis `axis = k` names in `type` (negative: counted from the end), or nullopt after an error.
std::optional<int64_t> Lowering::axis_of(const Expr& axis, const Type& type) {
  const int64_t rank = static_cast<int64_t>(type.rank());
  auto k = const_int(axis, "the axis", -rank);
  if (!k) return std::nullopt;
  if (*k >= rank) {
    error(axis.location,
          fmt::format("axis {} is out of range for the rank-{} {}: its axes are {} (or, from the end, {})", *k, rank,
                      type.to_source_string(), rank == 1 ? "0" : fmt::format("0 to {}", rank - 1),
                      rank == 1 ? "-1" : fmt::format("-{} to -1", rank)));
    return std::nullopt;
  }
  return *k < 0 ? *k + rank : *k;
}

// f(x, axis = k) of a tile of numbers, keeping its shape, line by line along axis k (a rank-1
// tile's axis is 0): the scans and sort. `does` says what f does to a tile ("scans"), `per_row`
// to each row ("scans along each row"); `attributes` go on the op beside the axis.
Operand Lowering::lower_line_op(const Expr& e, const Builtin& builtin, const Expr* axis, std::string_view does,
                                std::string_view per_row, std::vector<std::pair<std::string, Attribute>> attributes) {
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  if (!x.value || !x.value->type().is_tile() || x.value->type().element() == ScalarKind::i1) {
    error(e.args[0]->location, fmt::format("{}() {} a tile of numbers, not {}", builtin.name, does,
                                           x.value ? x.value->type().to_source_string() : "a number"));
    return {};
  }
  const Type& type = x.value->type();
  int64_t along = 0;
  if (axis) {
    auto k = axis_of(*axis, type);
    if (!k) return {};
    along = *k;
  } else if (type.rank() != 1) {
    error(e.location, fmt::format("{0}() of {1} needs an axis: {0}(x, axis = 1) {2}", builtin.name,
                                  type.to_source_string(), per_row));
    return {};
  }
  attributes.insert(attributes.begin(), {"axis", Attribute(along)});
  return Operand{create(builtin.kind, {x.value}, type.with_space(MemorySpace::reg), e.location, std::move(attributes))};
}

// cumsum / cumprod / cummax / cummin(x, axis = k): the inclusive prefix sums, products, maxima
// or minima along axis k.
Operand Lowering::lower_scan(const Expr& e, const Builtin& builtin, const Expr* axis) {
  return lower_line_op(e, builtin, axis, "scans", "scans along each row", {});
}

// sort(x, axis = k, descending = 1): every line along the axis in order, ascending unless
// descending = 1. NaNs come after every number (before, descending) and -0.0 before +0.0, so the
// order is the same on the GPU.
Operand Lowering::lower_sort(const Expr& e, const Builtin& builtin, const Expr* axis) {
  int64_t descending = 0;
  for (const auto& [k, v] : e.keywords) {
    if (k != "descending") continue;
    std::optional<int64_t> given = const_int(*v, "sort()'s descending", 0);
    if (!given) return {};
    if (*given > 1) {
      error(v->location, fmt::format("sort()'s descending is 0 (ascending, the default) or 1, got {}", *given));
      return {};
    }
    descending = *given;
  }
  return lower_line_op(e, builtin, axis, "sorts", "sorts each row", {{"descending", Attribute(descending)}});
}

// where(condition, a, b): a where the i1 condition holds, else b, broadcasting all three.
Operand Lowering::lower_where(const Expr& e, const Builtin&, const Expr*) {
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
    values = unify(a, b, va, vb, e.location, e.args[1].get(), e.args[2].get(), {"second", "third"});
  }
  if (!values) return {};
  const size_t rank = std::max({c.value->type().rank(), va->type().rank(), vb->type().rank()});
  Value* condition = with_rank(c.value, rank, e.location);
  va = with_rank(va, rank, e.location);
  vb = with_rank(vb, rank, e.location);
  Type type = broadcast_type(condition->type(), broadcast_type(va->type(), vb->type()).with_element(ScalarKind::i1));
  if (type.is_none()) {
    error(e.location, fmt::format("where(): the condition {} does not broadcast with {}", c.value->type().to_source_string(),
                                  values->to_string()));
    return {};
  }
  type = type.with_element(values->element());
  if (type.is_tile()) type = type.with_space(MemorySpace::reg);
  return Operand{create(OpKind::select, {condition, va, vb}, type, e.location)};
}

// item(x): the one element of a tile of one element as a scalar, e.g. a token id to load at.
Operand Lowering::lower_item(const Expr& e, const Builtin&, const Expr*) {
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  if (!x.value || !x.value->type().is_tile() || x.value->type().element_count() != 1) {
    error(e.location, fmt::format("item() takes a tile of one element (every extent 1), not {}; reduce it first, "
                                  "e.g. item(sum(x))",
                                  x.value ? x.value->type().to_source_string() : "a number"));
    return {};
  }
  return Operand{create(OpKind::item, {x.value}, Type::scalar(x.value->type().element()), e.location)};
}

// "; convert it: tanh(cast(x, f32))", or, where the operand has no name to repeat, "; convert it
// to f32 first: tanh(cast(..., f32))".
std::string Lowering::convert_hint(const std::string& f, const std::string& operand) {
  if (operand.find(' ') == std::string::npos) return fmt::format("; convert it: {}(cast({}, f32))", f, operand);
  return fmt::format("; convert {} to f32 first: {}(cast(..., f32))", operand, f);
}

// cast(x, bf16): the element type conversion (none when x has that type already).
Operand Lowering::lower_cast(const Expr& e, const Builtin&, const Expr*) {
  if (e.args[1]->kind != ExprKind::name) {
    error(e.args[1]->location, "cast() takes an element type as its second argument: cast(x, bf16)");
    return {};
  }
  if (e.args[1]->name == "index") return lower_index_cast(e);
  auto element = element_type(e.args[1]->name, e.args[1]->location);
  Operand x = lower_expr(*e.args[0]);
  if (!element || !x.ok()) return {};
  // A number converts as a value of its own type would (docs/language.md): a float one to an
  // integer truncates and saturates (cast(-1.0, u8) is 0), an integer one wraps (cast(-1, u8)
  // is 255). Only a number the integer type holds becomes a constant of that type directly.
  if (x.constant && !is_float(*element)) {
    auto range = integer_range(*element);
    if (x.constant->is_float)
      x = Operand{materialize(x, ScalarKind::f32, e.location)};
    else if (range && (x.constant->integer < range->lowest || x.constant->integer > range->highest))
      x = Operand{materialize(x, ScalarKind::i64, e.location)};
  }
  Value* v = materialize(x, *element, e.location);
  Type type = v->type().with_element(*element);
  if (type.is_tile()) type = type.with_space(MemorySpace::reg);
  if (v->type() == type) return Operand{v};
  return Operand{create(OpKind::cast, {v}, type, e.location)};
}

// bitcast(x, i32): each element's bits read as another element type of the same width (f32 as
// i32 or u32, bf16 as i16, e4m3 as u8, ...). A number is an f32 or the integer type of the
// target's width (unsigned where it is past the signed range: bitcast(0xff800000, f32) is -inf).
Operand Lowering::lower_bitcast(const Expr& e, const Builtin&, const Expr*) {
  if (e.args[1]->kind != ExprKind::name) {
    error(e.args[1]->location, "bitcast() takes an element type as its second argument: bitcast(x, i32)");
    return {};
  }
  auto element = element_type(e.args[1]->name, e.args[1]->location);
  Operand x = lower_expr(*e.args[0]);
  if (!element || !x.ok()) return {};
  ScalarKind number_type = ScalarKind::f32;
  if (x.constant && !x.constant->is_float) {
    // {signed, unsigned} integer of 8, 16, 32 and 64 bits.
    static constexpr std::pair<ScalarKind, ScalarKind> kIntegers[] = {
        {ScalarKind::i8, ScalarKind::u8}, {ScalarKind::i16, ScalarKind::u16},
        {ScalarKind::i32, ScalarKind::u32}, {ScalarKind::i64, ScalarKind::i64}};
    const int bits = bitcast_width(*element);
    const auto [signed_type, unsigned_type] = kIntegers[bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3];
    auto range = integer_range(signed_type);
    number_type = range && x.constant->integer > range->highest ? unsigned_type : signed_type;
  }
  Value* v = materialize(x, number_type, e.location);
  if (!v) return {};
  const ScalarKind from = v->type().element();
  if (bitcast_width(from) != bitcast_width(*element)) {
    const std::string from_width = bitcast_width(from)      ? fmt::format("{} bits", bitcast_width(from))
                                   : from == ScalarKind::i1 ? std::string("a mask")
                                                            : std::string("no fixed width");
    error(e.location, fmt::format("bitcast({}) reads the bits of {} ({}) as {} ({} bits): bitcast keeps the width; "
                                  "cast(x, {}) converts the value",
                                  e.args[1]->name, with_article(from), from_width, with_article(*element),
                                  bitcast_width(*element), e.args[1]->name));
    return {};
  }
  Type type = v->type().with_element(*element);
  if (type.is_tile()) type = type.with_space(MemorySpace::reg);
  if (v->type() == type) return Operand{v};
  return Operand{create(OpKind::bitcast, {v}, type, e.location)};
}

// cast(x, index): an integer scalar (an item(), a parameter) as an index, the type of dims and
// loop variables, so that it mixes with them (`cdiv(cast(item(load Len[b] : <1>), index), BK)`).
// Tiles have element types only.
Operand Lowering::lower_index_cast(const Expr& e) {
  Operand x = lower_expr(*e.args[0]);
  if (!x.ok()) return {};
  const bool integer_scalar = x.value ? x.value->type().is_scalar() && is_integer(x.value->type().element())
                                      : x.constant && !x.constant->is_float;
  if (!integer_scalar) {
    error(e.location, fmt::format("cast(x, index) takes an integer scalar (an item(), an i32 parameter), not {}; "
                                  "tiles hold element types (f32, ..., i64)",
                                  x.value ? x.value->type().to_source_string() : "a float number"));
    return {};
  }
  Value* v = materialize(x, ScalarKind::index, e.location);
  if (v->type().element() == ScalarKind::index) return Operand{v};
  return Operand{create(OpKind::cast, {v}, Type::scalar(ScalarKind::index), e.location)};
}

// mma(a, b, acc) = acc + a·b with a [M, K], b [K, N] and acc [M, N]: f32 for float operands, i32
// for 8-bit integer ones.
Operand Lowering::lower_mma(const Expr& e, const Builtin&, const Expr*) {
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
                                  "and acc [M, N]", ta.to_source_string(), tb.to_source_string(), tc.to_source_string(), mismatch));
    return {};
  }
  const std::optional<ScalarKind> accumulator = mma_accumulator(ta.element());
  if (!accumulator || !mma_accumulator(tb.element())) {
    error(e.location, fmt::format("mma takes bf16, f16, f8e4m3, f8e5m2 or f32 operands (into an f32 accumulator) or i8 "
                                  "and u8 operands (into an i32 accumulator), not {} and {}; convert them, e.g. "
                                  "cast(a, bf16)", to_string(ta.element()), to_string(tb.element())));
    return {};
  }
  if (!mma_operands_combine(ta.element(), tb.element())) {
    error(e.location, fmt::format("mma operands differ in element type: {} and {} (they may differ only as two 8-bit "
                                  "floats, f8e4m3 and f8e5m2, or as two 8-bit integers, i8 and u8)",
                                  to_string(ta.element()), to_string(tb.element())));
    return {};
  }
  if (tc.element() != *accumulator) {
    error(e.args[2]->location, fmt::format("the accumulator of an mma of {} operands must be {}, not {} (e.g. zeros<{}, "
                                           "{}, {}>())", to_string(ta.element()), to_string(*accumulator),
                                           to_string(tc.element()), tc.shape()[0], tc.shape()[1], to_string(*accumulator)));
    return {};
  }
  return Operand{create(OpKind::mma, {a.value, b.value, acc.value}, tc, e.location)};
}

Operand Lowering::lower_reduction(const Expr& e, const Builtin&, const Expr* axis) {
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
    std::string operand = operand_text(e.args[0].get(), "first");
    if (operand.rfind("the ", 0) == 0) operand = element == ScalarKind::i1 ? "mask" : "x";  // an expression
    // The advice keeps the axis: without it, sum(cast(mask, i32)) sums the whole tile, which the
    // kernel then takes as the per-row count it asked for (a hunt followed it).
    std::string along;
    if (axis) {
      const std::optional<int64_t> a = axis_of(*axis, type);
      if (!a) return {};
      along = fmt::format(", axis = {}", *a);
    }
    error(e.args[0]->location, fmt::format("{}() of {} tile; convert it first: {}(cast({}, {}){})", f,
                                           with_article(element), f, operand, f == "mean" ? "f32" : "i32", along));
    return {};
  }
  std::vector<int64_t> axes;
  if (axis) {
    auto a = axis_of(*axis, type);
    if (!a) return {};
    axes.push_back(*a);
  } else if ((f == "argmax" || f == "argmin") && type.rank() == 1) {
    axes.push_back(0);  // a row has one axis
  } else if (f == "argmax" || f == "argmin") {
    error(e.location, fmt::format("{0}() of {1} needs an axis: {0}(x, axis = {2}) along the last axis (each row), "
                                  "axis = 0 along the first",
                                  f, type.to_source_string(), type.rank() - 1));
    return {};
  } else {
    for (int64_t a = static_cast<int64_t>(type.rank()); a-- > 0;) axes.push_back(a);
  }
  if (f == "argmax" || f == "argmin") return lower_arg_extremum(e, x.value, axes.front());
  OpKind kind = f == "max" ? OpKind::reduce_max : f == "min" ? OpKind::reduce_min : OpKind::reduce_sum;
  Value* value = x.value;
  // A mean of a narrower float is taken in f32 and rounded once: its sum may overflow the type
  // (64 f16 2000s), and its element count may not be one (257 is a bf16 256).
  const bool widened = f == "mean" && element != ScalarKind::f32;
  if (widened) value = create(OpKind::cast, {value}, type.with_element(ScalarKind::f32), e.location);
  int64_t count = 1;
  for (int64_t a : axes) {
    std::vector<int64_t> shape = value->type().shape();
    count *= shape[static_cast<size_t>(a)];
    shape[static_cast<size_t>(a)] = 1;
    value = create(kind, {value}, Type::tile(shape, value->type().element()), e.location, {{"axis", Attribute(a)}});
  }
  if (f == "mean") {
    Value* n = materialize(Operand{nullptr, Const{true, 0, static_cast<double>(count)}}, value->type().element(),
                           e.location);
    value = create(OpKind::div, {value, n}, value->type(), e.location);
    if (widened) value = create(OpKind::cast, {value}, value->type().with_element(element), e.location);
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

}  // namespace tilec::frontend::detail
