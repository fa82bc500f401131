// runtime/interpreter/float_formats.cpp — float format encoding and decoding (table in the header).
//
// One generic encoder serves every format: a finite nonzero magnitude is written exactly as
// `significand × 2^exponent` (64-bit significand), then
//   1. find the value's binary exponent u (position of the leading one);
//   2. pick the quantum: 2^(u − M) for normals, 2^(emin − M) below the normal range (M mantissa
//      bits, emin = 1 − bias), so subnormals fall out of the same arithmetic;
//   3. divide by the quantum with round-to-nearest-even on the exact remainder (128-bit);
//   4. assemble exponent field and mantissa; a carry out of the mantissa lands in the exponent
//      field by plain addition; an encoding above the largest finite overflows (inf or
//      saturation, per format).
// Because both f32 values and 64-bit integers enter exactly, nothing is ever rounded twice.
#include "runtime/interpreter/float_formats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace tilec::runtime {

namespace {

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_infinity;   // IEEE-style: exponent all ones is inf (mantissa 0) or NaN
  bool saturates;      // overflow (and inf) gives the largest finite value
  uint32_t largest_finite;  // encoding of the largest finite magnitude
  uint32_t nan;             // encoding of the canonical positive quiet NaN
};

constexpr FloatFormat kF32 = {8, 23, 127, true, false, 0x7F7FFFFFu, 0x7FC00000u};
constexpr FloatFormat kBF16 = {8, 7, 127, true, false, 0x7F7Fu, 0x7FC0u};
constexpr FloatFormat kF16 = {5, 10, 15, true, false, 0x7BFFu, 0x7E00u};
constexpr FloatFormat kF8E5M2 = {5, 2, 15, true, true, 0x7Bu, 0x7Eu};
constexpr FloatFormat kF8E4M3 = {4, 3, 7, false, true, 0x7Eu, 0x7Fu};

const FloatFormat& format_of(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::bf16: return kBF16;
    case ScalarKind::f16: return kF16;
    case ScalarKind::f8e5m2: return kF8E5M2;
    case ScalarKind::f8e4m3: return kF8E4M3;
    default: return kF32;
  }
}

uint32_t sign_bit(const FloatFormat& format) {
  return 1u << (format.exponent_bits + format.mantissa_bits);
}

uint32_t infinity_or_saturated(const FloatFormat& format) {
  if (format.saturates || !format.has_infinity) return format.largest_finite;
  return static_cast<uint32_t>(((1u << format.exponent_bits) - 1) << format.mantissa_bits);
}

// Encodes the magnitude significand × 2^exponent (significand > 0), without the sign.
uint32_t encode_magnitude(const FloatFormat& format, uint64_t significand, int exponent) {
  const int mantissa_bits = format.mantissa_bits;
  const int minimum_exponent = 1 - format.bias;
  int leading = 63 - std::countl_zero(significand);
  int value_exponent = exponent + leading;
  bool subnormal = value_exponent < minimum_exponent;
  int quantum_exponent = (subnormal ? minimum_exponent : value_exponent) - mantissa_bits;
  int shift = quantum_exponent - exponent;
  uint64_t quotient;
  if (shift <= 0) {
    quotient = significand << -shift;  // exact: fewer significant bits than the format holds
  } else if (shift > 64) {
    quotient = 0;  // below half the smallest quantum
  } else {
    unsigned __int128 wide = significand;
    unsigned __int128 whole = wide >> shift;
    unsigned __int128 remainder = wide - (whole << shift);
    unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    if (remainder > half || (remainder == half && (whole & 1))) ++whole;
    quotient = static_cast<uint64_t>(whole);
  }
  int64_t encoding;
  if (subnormal)
    encoding = static_cast<int64_t>(quotient);  // a carry into 2^M is the smallest normal
  else
    encoding = (static_cast<int64_t>(value_exponent + format.bias) << mantissa_bits) +
               static_cast<int64_t>(quotient) - (int64_t{1} << mantissa_bits);
  if (encoding > static_cast<int64_t>(format.largest_finite)) return infinity_or_saturated(format);
  return static_cast<uint32_t>(encoding);
}

uint32_t encode_nan(const FloatFormat& format, bool negative, uint32_t f32_payload) {
  uint32_t bits = format.nan;
  if (format.has_infinity) {
    int drop = 23 - format.mantissa_bits;
    bits |= f32_payload >> drop;  // the quiet bit is already in `nan`
  }
  return negative ? bits | sign_bit(format) : bits;
}

uint32_t encode_f32_bits(const FloatFormat& format, uint32_t bits) {
  bool negative = (bits >> 31) != 0;
  uint32_t field = (bits >> 23) & 0xFF;
  uint32_t mantissa = bits & 0x7FFFFF;
  uint32_t sign = negative ? sign_bit(format) : 0;
  if (field == 0xFF) {
    if (mantissa != 0) return encode_nan(format, negative, mantissa);
    return sign | infinity_or_saturated(format);
  }
  uint64_t significand = field == 0 ? mantissa : (mantissa | (1u << 23));
  if (significand == 0) return sign;
  int exponent = field == 0 ? -149 : static_cast<int>(field) - 150;
  return sign | encode_magnitude(format, significand, exponent);
}

}  // namespace

float decode_float(ScalarKind kind, uint32_t bits) {
  if (kind == ScalarKind::f32) return std::bit_cast<float>(bits);
  if (kind == ScalarKind::bf16) return std::bit_cast<float>(bits << 16);  // the top half of an f32
  const FloatFormat& format = format_of(kind);
  bool negative = (bits & sign_bit(format)) != 0;
  uint32_t field = (bits >> format.mantissa_bits) & ((1u << format.exponent_bits) - 1);
  uint32_t mantissa = bits & ((1u << format.mantissa_bits) - 1);
  uint32_t top_field = (1u << format.exponent_bits) - 1;
  float magnitude;
  if (format.has_infinity && field == top_field) {
    // A NaN keeps its payload, the quiet bit included (a signaling one is read as it is stored).
    magnitude = mantissa == 0 ? std::numeric_limits<float>::infinity()
                              : std::bit_cast<float>(0x7F800000u | (mantissa << (23 - format.mantissa_bits)));
  } else if (!format.has_infinity && field == top_field && mantissa == (1u << format.mantissa_bits) - 1) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (field == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), 1 - format.bias - format.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | (1u << format.mantissa_bits)),
                           static_cast<int>(field) - format.bias - format.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

uint32_t encode_float(ScalarKind kind, float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (kind == ScalarKind::f32) return bits;
  return encode_f32_bits(format_of(kind), bits);
}

uint32_t format_bits(ScalarKind kind, float value) {
  const FloatFormat& format = format_of(kind);
  if (kind == ScalarKind::f32 || !format.has_infinity || std::isfinite(value)) return encode_float(kind, value);
  const uint32_t f32 = std::bit_cast<uint32_t>(value);
  const uint32_t top = static_cast<uint32_t>(((1u << format.exponent_bits) - 1) << format.mantissa_bits);
  const uint32_t payload = (f32 & 0x7FFFFFu) >> (23 - format.mantissa_bits);  // 0 for an infinity
  return ((f32 >> 31) != 0 ? sign_bit(format) : 0) | top | payload;
}

float round_to_format(ScalarKind kind, float value) {
  // A NaN comes out quiet, as every conversion and arithmetic makes it (a signaling one a load
  // read is held as it is, for a copy).
  if (kind == ScalarKind::f32)
    return std::isnan(value) ? std::bit_cast<float>(std::bit_cast<uint32_t>(value) | 0x400000u) : value;
  return decode_float(kind, encode_float(kind, value));
}

float integer_to_format(ScalarKind kind, int64_t value) {
  const FloatFormat& format = format_of(kind);
  if (value == 0) return 0.0f;
  bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  uint32_t bits = encode_magnitude(format, magnitude, 0) | (negative ? sign_bit(format) : 0);
  if (kind == ScalarKind::f32 || !is_float(kind)) return std::bit_cast<float>(bits);
  return decode_float(kind, bits);
}

int64_t float_to_integer(ScalarKind kind, float value) {
  if (kind == ScalarKind::i1) return value != 0.0f ? 1 : 0;  // C++'s bool(x): NaN and 0.5 are true
  if (std::isnan(value)) return 0;
  float truncated = std::trunc(value);
  if (auto range = integer_range(kind)) {  // i8, i16, i32, u8, u16, u32: saturate at the type's range
    if (truncated >= static_cast<float>(range->highest)) return range->highest;  // 2^31 - 1 rounds up to 2^31
    if (truncated <= static_cast<float>(range->lowest)) return range->lowest;
    return static_cast<int64_t>(truncated);
  }
  if (truncated >= 9223372036854775808.0f) return std::numeric_limits<int64_t>::max();
  if (truncated < -9223372036854775808.0f) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(truncated);
}

int64_t wrap_integer(ScalarKind kind, int64_t value) {
  if (kind == ScalarKind::i1) return value & 1;
  if (kind == ScalarKind::i8) return static_cast<int8_t>(static_cast<uint8_t>(value));
  if (kind == ScalarKind::i16) return static_cast<int16_t>(static_cast<uint16_t>(value));
  if (kind == ScalarKind::u8) return static_cast<uint8_t>(value);
  if (kind == ScalarKind::u16) return static_cast<uint16_t>(value);
  if (kind == ScalarKind::u32) return static_cast<uint32_t>(value);
  if (kind == ScalarKind::i32) return static_cast<int32_t>(static_cast<uint32_t>(value));
  return value;
}

float truncate_to_tf32(float value) {
  if (std::isnan(value)) return value;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(value) & ~uint32_t{0x1fff});
}

float flush_subnormal(float value) {
  return std::fpclassify(value) == FP_SUBNORMAL ? std::copysign(0.0f, value) : value;
}

float largest_finite(ScalarKind kind) {
  if (kind == ScalarKind::f32) return std::numeric_limits<float>::max();
  return decode_float(kind, format_of(kind).largest_finite);
}

}  // namespace tilec::runtime
