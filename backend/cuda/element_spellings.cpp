// backend/cuda/element_spellings.cpp — the rows of element_spellings.h.
#include "backend/cuda/element_spellings.h"

#include <fmt/core.h>

#include <stdexcept>

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
    {.kind = OpKind::log1p, .f32 = "log1p_f32({a})"},
    {.kind = OpKind::expm1, .f32 = "expm1_f32({a})"},
    {.kind = OpKind::tan, .f32 = "tan_f32({a})"},
    {.kind = OpKind::atan, .f32 = "atan_f32({a})"},
    {.kind = OpKind::asin, .f32 = "asin_f32({a})"},
    {.kind = OpKind::acos, .f32 = "acos_f32({a})"},
    {.kind = OpKind::sinh, .f32 = "sinh_f32({a})"},
    {.kind = OpKind::cosh, .f32 = "cosh_f32({a})"},
    {.kind = OpKind::sin, .f32 = "sin_f32({a})"},
    {.kind = OpKind::cos, .f32 = "cos_f32({a})"},
    {.kind = OpKind::sigmoid, .f32 = "sigmoid_f32({a})"},
    {.kind = OpKind::pow, .f32 = "pow_f32({a}, {b})"},
    {.kind = OpKind::atan2, .f32 = "atan2_f32({a}, {b})"},
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
    {.kind = OpKind::randint, .integer = "tilec_randint({a}, {b})"},  // random_prelude
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

std::string atomic_combine_statement(StoreCombine combine, ScalarKind element, std::string_view address,
                                     std::string_view value) {
  if (combine == StoreCombine::add && element == ScalarKind::i64)
    return fmt::format("atomicAdd(reinterpret_cast<unsigned long long*>({}), static_cast<unsigned long long>({}));",
                       address, value);
  if (combine == StoreCombine::add) return fmt::format("atomicAdd({}, {});", address, value);
  if (is_bitwise(combine)) {
    // Integers only (combines_atomically): the bits of an i64 as CUDA's unsigned long long.
    const char* function = combine == StoreCombine::and_ ? "atomicAnd" : combine == StoreCombine::or_ ? "atomicOr"
                                                                                                        : "atomicXor";
    if (element == ScalarKind::i64)
      return fmt::format("{}(reinterpret_cast<unsigned long long*>({}), static_cast<unsigned long long>({}));", function,
                         address, value);
    return fmt::format("{}({}, {});", function, address, value);
  }
  if (combine != StoreCombine::max && combine != StoreCombine::min)
    throw std::logic_error("atomic_combine_statement: a store that overwrites combines nothing");
  const bool max = combine == StoreCombine::max;
  if (is_float(element)) return fmt::format("tilec_atomic_{}({}, {});", max ? "max" : "min", address, value);
  const char* function = max ? "atomicMax" : "atomicMin";
  if (element == ScalarKind::i64)
    return fmt::format("{}(reinterpret_cast<long long*>({}), static_cast<long long>({}));", function, address, value);
  return fmt::format("{}({}, {});", function, address, value);
}

std::string_view atomic_extremum_prelude() {
  return R"(
// Atomic max and min of a floating-point element (`store T[i] max= tile`, `min=`; CUDA's atomicMax
// and atomicMin take integers only): a compare-and-swap loop on the element's bits, combining in f32
// with max_f32 / min_f32 as the elementwise max and min do (a NaN operand is ignored). The first
// compare expects the identity (-inf for max, +inf for min) instead of reading the element, so
// every access to it is atomic; it always swaps (an element holding NaN becomes the value, even
// the identity), and once the element is read, a result equal to it needs no swap.
template <typename T> struct TilecAtomicWord { using type = unsigned short; };  // __half, __nv_bfloat16
template <> struct TilecAtomicWord<float> { using type = unsigned int; };
template <typename T>
__device__ inline void tilec_atomic_extremum(T* address, T value, bool max) {
  using Word = typename TilecAtomicWord<T>::type;
  static_assert(sizeof(T) == sizeof(Word), "f32, f16 or bf16 elements");
  Word* word = reinterpret_cast<Word*>(address);
  const T identity = from_f32<T>(max ? -INFINITY : INFINITY);
  Word seen;
  memcpy(&seen, &identity, sizeof seen);
  for (bool guessed = true;; guessed = false) {
    T before;
    memcpy(&before, &seen, sizeof before);
    const T after = from_f32<T>(max ? max_f32(to_f32(before), to_f32(value)) : min_f32(to_f32(before), to_f32(value)));
    Word wanted;
    memcpy(&wanted, &after, sizeof wanted);
    if (!guessed && wanted == seen) return;
    const Word found = atomicCAS(word, seen, wanted);
    if (found == seen) return;
    seen = found;
  }
}
template <typename T> __device__ inline void tilec_atomic_max(T* address, T value) { tilec_atomic_extremum(address, value, true); }
template <typename T> __device__ inline void tilec_atomic_min(T* address, T value) { tilec_atomic_extremum(address, value, false); }
)";
}

}  // namespace tilec::cuda
