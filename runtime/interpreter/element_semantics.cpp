// runtime/interpreter/element_semantics.cpp — the rows of element_semantics.h.
#include "runtime/interpreter/element_semantics.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tilec::runtime {
namespace {

int64_t wrapping(uint64_t value) { return static_cast<int64_t>(value); }
uint64_t bits(int64_t value) { return static_cast<uint64_t>(value); }

// Division by zero is defined rather than an error, because lanes of a tile outside the tensor
// load zeros and their results are dropped: x / 0 and cdiv(x, 0) give -1 (all ones) and x % 0
// gives x, as on RISC-V; INT64_MIN / -1 wraps.
int64_t divide(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (b == -1) return wrapping(0 - bits(a));
  return a / b;
}
int64_t remainder(int64_t a, int64_t b) { return b == 0 ? a : b == -1 ? 0 : a % b; }
int64_t ceiling_divide(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return divide(a, b);  // exact, or defined as divide defines it
  return a / b + ((a % b != 0 && ((a > 0) == (b > 0))) ? 1 : 0);
}

constexpr ElementSemantics kRows[] = {
    {.kind = OpKind::add, .f32_binary = [](float a, float b) { return a + b; },
     .integer_binary = [](int64_t a, int64_t b) { return wrapping(bits(a) + bits(b)); }},
    {.kind = OpKind::sub, .f32_binary = [](float a, float b) { return a - b; },
     .integer_binary = [](int64_t a, int64_t b) { return wrapping(bits(a) - bits(b)); }},
    {.kind = OpKind::mul, .f32_binary = [](float a, float b) { return a * b; },
     .integer_binary = [](int64_t a, int64_t b) { return wrapping(bits(a) * bits(b)); }},
    {.kind = OpKind::div, .f32_binary = [](float a, float b) { return a / b; }, .integer_binary = divide},
    {.kind = OpKind::rem, .integer_binary = remainder},
    {.kind = OpKind::cdiv, .integer_binary = ceiling_divide},
    {.kind = OpKind::max, .f32_binary = float_max,
     .integer_binary = [](int64_t a, int64_t b) { return std::max(a, b); }},
    {.kind = OpKind::min, .f32_binary = float_min,
     .integer_binary = [](int64_t a, int64_t b) { return std::min(a, b); }},
    {.kind = OpKind::pow, .f32_binary = [](float a, float b) { return std::pow(a, b); }},
    {.kind = OpKind::atan2, .f32_binary = [](float y, float x) { return std::atan2(y, x); }},
    {.kind = OpKind::fma, .f32_ternary = [](float a, float b, float c) { return std::fma(a, b, c); }},
    {.kind = OpKind::neg, .f32_unary = [](float x) { return -x; },
     .integer_unary = [](int64_t x) { return wrapping(0 - bits(x)); }},
    {.kind = OpKind::abs, .f32_unary = [](float x) { return std::fabs(x); },
     .integer_unary = [](int64_t x) { return x < 0 ? wrapping(0 - bits(x)) : x; }},  // abs(INT64_MIN) wraps
    {.kind = OpKind::relu, .f32_unary = [](float x) { return float_max(x, 0.0f); },
     .integer_unary = [](int64_t x) { return std::max<int64_t>(x, 0); }},
    {.kind = OpKind::exp, .f32_unary = [](float x) { return std::exp(x); }},
    {.kind = OpKind::exp2, .f32_unary = [](float x) { return std::exp2(x); }},
    {.kind = OpKind::sqrt, .f32_unary = [](float x) { return std::sqrt(x); }},
    {.kind = OpKind::rsqrt, .f32_unary = [](float x) { return 1.0f / std::sqrt(x); }},
    {.kind = OpKind::tanh, .f32_unary = [](float x) { return std::tanh(x); }},
    {.kind = OpKind::erf, .f32_unary = [](float x) { return std::erf(x); }},
    {.kind = OpKind::log, .f32_unary = [](float x) { return std::log(x); }},
    {.kind = OpKind::log2, .f32_unary = [](float x) { return std::log2(x); }},
    {.kind = OpKind::log1p, .f32_unary = [](float x) { return std::log1p(x); }},
    {.kind = OpKind::expm1, .f32_unary = [](float x) { return std::expm1(x); }},
    {.kind = OpKind::tan, .f32_unary = [](float x) { return std::tan(x); }},
    {.kind = OpKind::atan, .f32_unary = [](float x) { return std::atan(x); }},
    {.kind = OpKind::asin, .f32_unary = [](float x) { return std::asin(x); }},
    {.kind = OpKind::acos, .f32_unary = [](float x) { return std::acos(x); }},
    {.kind = OpKind::sinh, .f32_unary = [](float x) { return std::sinh(x); }},
    {.kind = OpKind::cosh, .f32_unary = [](float x) { return std::cosh(x); }},
    {.kind = OpKind::sin, .f32_unary = [](float x) { return std::sin(x); }},
    {.kind = OpKind::cos, .f32_unary = [](float x) { return std::cos(x); }},
    {.kind = OpKind::sigmoid, .f32_unary = [](float x) { return 1.0f / (1.0f + std::exp(-x)); }},
    {.kind = OpKind::floor, .f32_unary = [](float x) { return std::floor(x); }},
    {.kind = OpKind::ceil, .f32_unary = [](float x) { return std::ceil(x); }},
    {.kind = OpKind::round, .f32_unary = [](float x) { return std::nearbyint(x); }},  // halves to even
    {.kind = OpKind::trunc, .f32_unary = [](float x) { return std::trunc(x); }},
    // Bitwise; on i1 masks (0 and 1, wrapped to one bit by the caller) they are logical.
    {.kind = OpKind::and_, .integer_binary = [](int64_t a, int64_t b) -> int64_t { return a & b; }},
    {.kind = OpKind::or_, .integer_binary = [](int64_t a, int64_t b) -> int64_t { return a | b; }},
    {.kind = OpKind::xor_, .integer_binary = [](int64_t a, int64_t b) -> int64_t { return a ^ b; }},
    {.kind = OpKind::not_, .integer_unary = [](int64_t x) -> int64_t { return ~x; }},
    // In 64 bits, then wrapped to the type: an amount of 0..63 shifts as C++ does on int64_t (a
    // narrower value shifted past its width wraps to 0, or keeps only its sign, as PTX clamps);
    // an amount outside 0..63 shifts everything out.
    {.kind = OpKind::shl, .integer_binary = [](int64_t a, int64_t n) -> int64_t {
       return n < 0 || n > 63 ? 0 : wrapping(bits(a) << n);
     }},
    {.kind = OpKind::shr, .integer_binary = [](int64_t a, int64_t n) -> int64_t {
       return n < 0 || n > 63 ? (a < 0 ? -1 : 0) : a >> n;
     }},
    // The caller wraps to the result's u32 (tile_arithmetic.cpp): word 0 of the block.
    {.kind = OpKind::randint, .integer_binary = [](int64_t seed, int64_t offset) -> int64_t {
       return philox_randint(seed, offset);
     }},
};

}  // namespace

// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011): ten rounds, each two 32x32 -> 64-bit products of counter words by the multipliers,
// their halves crossed with the other words and the key, then the key bumped by the Weyl
// constants (the golden ratio's and sqrt(3) - 1's bits).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
  constexpr uint64_t kMultiplier0 = 0xD2511F53, kMultiplier1 = 0xCD9E8D57;
  constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = kMultiplier0 * counter[0], product1 = kMultiplier1 * counter[2];
    const auto high = [](uint64_t product) { return static_cast<uint32_t>(product >> 32); };
    const auto low = [](uint64_t product) { return static_cast<uint32_t>(product); };
    counter = {high(product1) ^ counter[1] ^ key[0], low(product1), high(product0) ^ counter[3] ^ key[1],
               low(product0)};
    key = {key[0] + kWeyl0, key[1] + kWeyl1};
  }
  return counter;
}

uint32_t philox_randint(int64_t seed, int64_t offset) {
  const auto word = [](int64_t value, int half) { return static_cast<uint32_t>(bits(value) >> (32 * half)); };
  return philox4x32_10({word(offset, 0), word(offset, 1), 0, 0}, {word(seed, 0), word(seed, 1)})[0];
}

float float_max(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

float float_min(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

const ElementSemantics& element_semantics(OpKind kind) {
  for (const ElementSemantics& row : kRows)
    if (row.kind == kind) return row;
  throw std::logic_error(fmt::format("interpreter: '{}' has no row in runtime/interpreter/element_semantics.cpp",
                                     op_info(kind).name));
}

std::span<const ElementSemantics> all_element_semantics() { return kRows; }

}  // namespace tilec::runtime
