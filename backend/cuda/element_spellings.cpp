// backend/cuda/element_spellings.cpp — the rows of element_spellings.h.
#include "backend/cuda/element_spellings.h"

#include <fmt/core.h>

namespace tilec::cuda {
namespace {

constexpr ElementSpelling kSpellings[] = {
    {.kind = OpKind::add, .f32 = "add_f32({a}, {b})", .integer = "{a} + {b}", .wrapping = "add_i64({a}, {b})"},
    {.kind = OpKind::sub, .f32 = "sub_f32({a}, {b})", .integer = "{a} - {b}", .wrapping = "sub_i64({a}, {b})"},
    {.kind = OpKind::mul, .f32 = "mul_f32({a}, {b})", .integer = "{a} * {b}", .wrapping = "mul_i64({a}, {b})"},
    // x / 0, x % 0 and INT64_MIN / -1 are defined (docs/ir.md): the helpers give their results.
    {.kind = OpKind::div, .f32 = "div_f32({a}, {b})", .integer = "div_i64({a}, {b})", .safe_divisor = "{a} / {b}"},
    {.kind = OpKind::rem, .integer = "rem_i64({a}, {b})", .safe_divisor = "{a} % {b}"},
    {.kind = OpKind::cdiv, .integer = "cdiv_{int}({a}, {b})"},
    {.kind = OpKind::max, .f32 = "max_f32({a}, {b})", .integer = "max_{int}({a}, {b})"},
    {.kind = OpKind::min, .f32 = "min_f32({a}, {b})", .integer = "min_{int}({a}, {b})"},
    {.kind = OpKind::neg, .f32 = "-{a}", .integer = "-{a}", .wrapping = "sub_i64(0, {a})"},
    {.kind = OpKind::exp, .f32 = "exp_f32({a})"},
    {.kind = OpKind::exp2, .f32 = "exp2_f32({a})"},
    {.kind = OpKind::fma, .f32 = "fma_f32({a}, {b}, {c})"},
    {.kind = OpKind::sqrt, .f32 = "sqrt_f32({a})"},
    {.kind = OpKind::rsqrt, .f32 = "rsqrt_f32({a})"},
    {.kind = OpKind::relu, .f32 = "relu_f32({a})", .integer = "max_{int}({a}, 0)"},
    {.kind = OpKind::tanh, .f32 = "tanh_f32({a})"},
    {.kind = OpKind::erf, .f32 = "erf_f32({a})"},
    {.kind = OpKind::log, .f32 = "log_f32({a})"},
    {.kind = OpKind::log2, .f32 = "log2_f32({a})"},
    {.kind = OpKind::sin, .f32 = "sin_f32({a})"},
    {.kind = OpKind::cos, .f32 = "cos_f32({a})"},
    {.kind = OpKind::sigmoid, .f32 = "sigmoid_f32({a})"},
    {.kind = OpKind::pow, .f32 = "pow_f32({a}, {b})"},
    {.kind = OpKind::abs, .f32 = "abs_f32({a})", .integer = "abs_i64({a})"},
    {.kind = OpKind::floor, .f32 = "floor_f32({a})"},
    {.kind = OpKind::ceil, .f32 = "ceil_f32({a})"},
    {.kind = OpKind::round, .f32 = "round_f32({a})"},
    {.kind = OpKind::trunc, .f32 = "trunc_f32({a})"},
    {.kind = OpKind::and_, .integer = "({a} & {b})", .mask = "({a} && {b})"},
    {.kind = OpKind::or_, .integer = "({a} | {b})", .mask = "({a} || {b})"},
    {.kind = OpKind::xor_, .integer = "({a} ^ {b})", .mask = "({a} != {b})"},
    {.kind = OpKind::not_, .integer = "(~{a})", .mask = "(!{a})"},
    // An amount outside 0..63 shifts everything out (docs/ir.md): the helpers say so.
    {.kind = OpKind::shl, .integer = "shl_i64({a}, {b})"},
    {.kind = OpKind::shr, .integer = "shr_i64({a}, {b})"},
};

}  // namespace

const ElementSpelling* element_spelling(OpKind kind) {
  for (const ElementSpelling& row : kSpellings)
    if (row.kind == kind) return &row;
  return nullptr;
}

std::span<const ElementSpelling> element_spellings() { return kSpellings; }

bool may_overflow_int64(OpKind kind, ScalarKind element) {
  const bool wrapping = element_spelling(kind) && !element_spelling(kind)->wrapping.empty();
  return wrapping && (element == ScalarKind::i64 || (element == ScalarKind::u32 && kind == OpKind::mul));
}

std::string combining_expression(OpKind kind, bool floating, std::string_view acc, std::string_view next) {
  // The combining op's own spelling: on floats its f32 one, on integers (int64_t) the one that
  // wraps where there is one (add, mul), else its integer one with the 64-bit helpers.
  const ElementSpelling& row = *element_spelling(combining_op(kind));
  const std::string_view pattern = floating ? row.f32 : !row.wrapping.empty() ? row.wrapping : row.integer;
  return fmt::format(fmt::runtime(pattern), fmt::arg("a", acc), fmt::arg("b", next), fmt::arg("int", "i64"));
}

std::string atomic_add_statement(ScalarKind element, std::string_view address, std::string_view value) {
  if (element == ScalarKind::i64)
    return fmt::format("atomicAdd(reinterpret_cast<unsigned long long*>({}), static_cast<unsigned long long>({}));",
                       address, value);
  return fmt::format("atomicAdd({}, {});", address, value);
}

}  // namespace tilec::cuda
