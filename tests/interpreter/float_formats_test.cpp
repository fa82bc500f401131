// tests/interpreter/float_formats_test.cpp — conversions between f32 and f16, bf16, f8e4m3,
// f8e5m2, checked against independent oracles: the compiler's _Float16, the classic bf16
// rounding bit trick, and a brute-force nearest-value search over all 256 f8 patterns.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "runtime/interpreter/float_formats.h"

namespace tilec::runtime {
namespace {

// The usual bf16 rounding: add 0x7FFF plus the lowest kept bit, truncate (non-NaN inputs).
uint32_t bf16_bit_trick(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
}

TEST(FloatFormats, AllSixteenBitPatternsRoundTrip) {
  for (ScalarKind kind : {ScalarKind::f16, ScalarKind::bf16}) {
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      float value = decode_float(kind, bits);
      uint32_t again = encode_float(kind, value);
      if (std::isnan(value)) {
        EXPECT_TRUE(std::isnan(decode_float(kind, again))) << bits;
        EXPECT_EQ(again & 0x8000u, bits & 0x8000u) << "NaN keeps its sign";
      } else {
        ASSERT_EQ(again, bits) << to_string(kind) << " pattern " << bits;
      }
    }
  }
}

TEST(FloatFormats, F16DecodeMatchesCompiler) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    float expected = static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(bits)));
    float got = decode_float(ScalarKind::f16, bits);
    if (std::isnan(expected)) EXPECT_TRUE(std::isnan(got));
    else ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected)) << bits;
  }
}

TEST(FloatFormats, F32ToF16AndBF16MatchOraclesAcrossTheRange) {
  // Every 4099th f32 pattern (about a million values, all exponents, both signs).
  for (uint64_t pattern = 0; pattern < (uint64_t{1} << 32); pattern += 4099) {
    float value = std::bit_cast<float>(static_cast<uint32_t>(pattern));
    if (std::isnan(value)) continue;
    uint32_t f16 = std::bit_cast<uint16_t>(static_cast<_Float16>(value));
    ASSERT_EQ(encode_float(ScalarKind::f16, value), f16) << "f32 pattern " << pattern;
    ASSERT_EQ(encode_float(ScalarKind::bf16, value), bf16_bit_trick(value)) << "f32 pattern " << pattern;
  }
}

TEST(FloatFormats, TiesRoundToEven) {
  // f16 keeps 10 mantissa bits: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(encode_float(ScalarKind::f16, 1.0f + 0x1p-11f), 0x3C00u);
  EXPECT_EQ(encode_float(ScalarKind::f16, 1.0f + 3 * 0x1p-11f), 0x3C02u);
  EXPECT_EQ(encode_float(ScalarKind::f16, 1.0f + 0x1p-11f + 0x1p-20f), 0x3C01u);  // past the tie
  // bf16 keeps 7.
  EXPECT_EQ(encode_float(ScalarKind::bf16, 1.0f + 0x1p-8f), 0x3F80u);
  EXPECT_EQ(encode_float(ScalarKind::bf16, 1.0f + 3 * 0x1p-8f), 0x3F82u);
  // Subnormal ties: half the smallest f16 subnormal goes to zero, 1.5 of it to 2.
  EXPECT_EQ(encode_float(ScalarKind::f16, 0x1p-25f), 0x0000u);
  EXPECT_EQ(encode_float(ScalarKind::f16, 3 * 0x1p-25f), 0x0002u);
  EXPECT_EQ(encode_float(ScalarKind::f16, -0x1p-24f), 0x8001u);
  // Overflow: 65504 is the largest f16; its tie with 65536 rounds to even, which is inf.
  EXPECT_EQ(encode_float(ScalarKind::f16, 65519.0f), 0x7BFFu);
  EXPECT_EQ(encode_float(ScalarKind::f16, 65520.0f), 0x7C00u);
  EXPECT_EQ(encode_float(ScalarKind::bf16, std::numeric_limits<float>::max()), 0x7F80u);
  EXPECT_EQ(encode_float(ScalarKind::f16, -std::numeric_limits<float>::infinity()), 0xFC00u);
}

// Brute force: the f8 value nearest to `value` (ties to the even encoding), saturating.
uint32_t nearest_f8(ScalarKind kind, float value) {
  uint32_t sign = std::signbit(value) ? 0x80u : 0u;
  // Beyond the largest finite the distances are too large to compare in double: saturate.
  uint32_t largest = kind == ScalarKind::f8e4m3 ? 0x7Eu : 0x7Bu;
  if (std::fabs(value) >= decode_float(kind, largest)) return sign | largest;
  uint32_t best = 0;
  double best_distance = INFINITY;
  for (uint32_t bits = 0; bits < 256; ++bits) {
    float candidate = decode_float(kind, bits);
    if (!std::isfinite(candidate)) continue;
    // The nearest value has the value's sign (this also keeps the sign of a zero result).
    if ((bits & 0x80u) != sign) continue;
    double distance = std::fabs(static_cast<double>(candidate) - value);
    if (distance < best_distance || (distance == best_distance && (bits & 1u) == 0)) {
      best = bits;
      best_distance = distance;
    }
  }
  return best;
}

TEST(FloatFormats, F8MatchesBruteForceNearestValue) {
  for (ScalarKind kind : {ScalarKind::f8e4m3, ScalarKind::f8e5m2}) {
    std::vector<float> samples;
    for (uint64_t pattern = 0; pattern < (uint64_t{1} << 32); pattern += 65537)
      samples.push_back(std::bit_cast<float>(static_cast<uint32_t>(pattern)));
    // Every midpoint between neighbouring f8 values: the ties.
    for (uint32_t bits = 0; bits < 0x7F; ++bits) {
      float low = decode_float(kind, bits), high = decode_float(kind, bits + 1);
      if (std::isfinite(low) && std::isfinite(high)) {
        samples.push_back((low + high) / 2);
        samples.push_back(-(low + high) / 2);
      }
    }
    for (float value : samples) {
      if (std::isnan(value) || std::isinf(value)) continue;
      ASSERT_EQ(encode_float(kind, value), nearest_f8(kind, value))
          << to_string(kind) << " of " << value;
    }
  }
}

// What a load reads, a store copies: decoding keeps a NaN's payload and quiet bit, and
// format_bits gives every pattern of every 8- and 16-bit format back (an e5m2 infinity is not
// saturated, a signaling NaN not quieted, the sign of a NaN kept), where encode_float, the
// rounding of a computed value, saturates e5m2 and quiets NaNs as the GPU's conversions do.
TEST(FloatFormats, FormatBitsGiveEveryLoadedPatternBack) {
  for (ScalarKind kind : {ScalarKind::f8e4m3, ScalarKind::f8e5m2, ScalarKind::f16, ScalarKind::bf16}) {
    const uint32_t patterns = kind == ScalarKind::f16 || kind == ScalarKind::bf16 ? 65536 : 256;
    for (uint32_t bits = 0; bits < patterns; ++bits)
      ASSERT_EQ(format_bits(kind, decode_float(kind, bits)), bits) << to_string(kind) << " pattern " << bits;
  }
  EXPECT_EQ(format_bits(ScalarKind::f8e5m2, INFINITY), 0x7Cu);
  EXPECT_EQ(format_bits(ScalarKind::f8e5m2, -INFINITY), 0xFCu);
  EXPECT_EQ(encode_float(ScalarKind::f8e5m2, decode_float(ScalarKind::f8e5m2, 0x7D)), 0x7Fu);  // quieted
  EXPECT_EQ(format_bits(ScalarKind::f32, std::bit_cast<float>(0xFF800001u)), 0xFF800001u);
  // A conversion (cast to f32 of a loaded signaling NaN) or arithmetic quiets it.
  EXPECT_EQ(std::bit_cast<uint32_t>(round_to_format(ScalarKind::f32, decode_float(ScalarKind::f16, 0x7C01))),
            0x7FC02000u);
}

TEST(FloatFormats, F8SpecialValues) {
  EXPECT_EQ(largest_finite(ScalarKind::f8e4m3), 448.0f);
  EXPECT_EQ(largest_finite(ScalarKind::f8e5m2), 57344.0f);
  EXPECT_EQ(decode_float(ScalarKind::f8e4m3, 0x01), 0x1p-9f);  // smallest subnormal
  EXPECT_TRUE(std::isnan(decode_float(ScalarKind::f8e4m3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode_float(ScalarKind::f8e4m3, 0xFF)));
  EXPECT_EQ(decode_float(ScalarKind::f8e4m3, 0x78), 256.0f);  // exponent 15 is finite in e4m3
  EXPECT_TRUE(std::isinf(decode_float(ScalarKind::f8e5m2, 0x7C)));
  // Saturation: beyond the largest finite and infinities give ± the largest finite.
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, 1000.0f), 0x7Eu);
  EXPECT_EQ(encode_float(ScalarKind::f8e4m3, -INFINITY), 0xFEu);
  EXPECT_EQ(encode_float(ScalarKind::f8e5m2, 1e6f), 0x7Bu);
  EXPECT_EQ(encode_float(ScalarKind::f8e5m2, INFINITY), 0x7Bu);
  EXPECT_TRUE(std::isnan(round_to_format(ScalarKind::f8e4m3, NAN)));
  EXPECT_TRUE(std::isnan(round_to_format(ScalarKind::f8e5m2, NAN)));
  for (ScalarKind kind : {ScalarKind::f8e4m3, ScalarKind::f8e5m2})
    for (uint32_t bits = 0; bits < 256; ++bits) {
      float value = decode_float(kind, bits);
      if (!std::isnan(value) && !std::isinf(value)) {
        ASSERT_EQ(encode_float(kind, value), bits) << bits;
      }
    }
}

TEST(FloatFormats, IntegersRoundOnceNotTwice) {
  // 2^30 + 2^22 + 1 lies just above the bf16 midpoint 2^30 + 2^22; through f32 it would first
  // lose the +1, land exactly on the midpoint and tie down to 2^30.
  EXPECT_EQ(integer_to_format(ScalarKind::bf16, (int64_t{1} << 30) + (int64_t{1} << 22) + 1),
            0x1p30f + 0x1p23f);
  EXPECT_EQ(integer_to_format(ScalarKind::f32, 16777217), 16777216.0f);  // tie to even
  EXPECT_EQ(integer_to_format(ScalarKind::f32, 16777219), 16777220.0f);
  EXPECT_EQ(integer_to_format(ScalarKind::f16, 100000), INFINITY);
  EXPECT_EQ(integer_to_format(ScalarKind::f32, INT64_MIN), -0x1p63f);
  EXPECT_EQ(integer_to_format(ScalarKind::f8e4m3, -3), -3.0f);
}

TEST(FloatFormats, FloatToIntegerTruncatesAndSaturates) {
  EXPECT_EQ(float_to_integer(ScalarKind::i32, 2.7f), 2);
  EXPECT_EQ(float_to_integer(ScalarKind::i32, -2.7f), -2);
  EXPECT_EQ(float_to_integer(ScalarKind::i32, NAN), 0);
  EXPECT_EQ(float_to_integer(ScalarKind::i32, 1e10f), INT32_MAX);
  EXPECT_EQ(float_to_integer(ScalarKind::i64, -1e30f), INT64_MIN);
  // i1 is C++'s bool(x), as the emitted CUDA's float_to_int<bool>: any nonzero, NaN included.
  EXPECT_EQ(float_to_integer(ScalarKind::i1, 0.5f), 1);
  EXPECT_EQ(float_to_integer(ScalarKind::i1, NAN), 1);
  EXPECT_EQ(float_to_integer(ScalarKind::i1, -0.0f), 0);
  EXPECT_EQ(wrap_integer(ScalarKind::i32, (int64_t{1} << 32) + 5), 5);
  EXPECT_EQ(wrap_integer(ScalarKind::i32, 0xFFFFFFFFll), -1);
  // i8 (issue 18, quantization): saturates at -128 and 127, wraps in arithmetic.
  EXPECT_EQ(float_to_integer(ScalarKind::i8, 126.9f), 126);
  EXPECT_EQ(float_to_integer(ScalarKind::i8, 300.0f), 127);
  EXPECT_EQ(float_to_integer(ScalarKind::i8, -128.9f), -128);
  EXPECT_EQ(float_to_integer(ScalarKind::i8, NAN), 0);
  EXPECT_EQ(wrap_integer(ScalarKind::i8, 200), -56);
  EXPECT_EQ(wrap_integer(ScalarKind::i8, -129), 127);
  // i16 and u8: the same at their ranges; u8 saturates negatives at 0 and wraps modulo 256.
  EXPECT_EQ(float_to_integer(ScalarKind::i16, 40000.0f), 32767);
  EXPECT_EQ(float_to_integer(ScalarKind::i16, -32768.5f), -32768);
  EXPECT_EQ(float_to_integer(ScalarKind::u8, 255.9f), 255);
  EXPECT_EQ(float_to_integer(ScalarKind::u8, 256.0f), 255);
  EXPECT_EQ(float_to_integer(ScalarKind::u8, -0.9f), 0);
  EXPECT_EQ(float_to_integer(ScalarKind::u8, -3.0f), 0);
  EXPECT_EQ(float_to_integer(ScalarKind::i32, 3.0e9f), 2147483647);
  EXPECT_EQ(wrap_integer(ScalarKind::i16, 40000), -25536);
  EXPECT_EQ(wrap_integer(ScalarKind::u8, -1), 255);
  EXPECT_EQ(wrap_integer(ScalarKind::u8, 300), 44);
  // u16 and u32: saturate at 0 and 2^16 - 1 / 2^32 - 1, wrap modulo 2^16 / 2^32.
  EXPECT_EQ(float_to_integer(ScalarKind::u16, 70000.0f), 65535);
  EXPECT_EQ(float_to_integer(ScalarKind::u16, -5.0f), 0);
  EXPECT_EQ(float_to_integer(ScalarKind::u32, 5.0e9f), 4294967295LL);
  EXPECT_EQ(float_to_integer(ScalarKind::u32, 4.0e9f), 4000000000LL);
  EXPECT_EQ(float_to_integer(ScalarKind::u32, -1.0e9f), 0);
  EXPECT_EQ(wrap_integer(ScalarKind::u16, -1), 65535);
  EXPECT_EQ(wrap_integer(ScalarKind::u16, 65536 + 7), 7);
  EXPECT_EQ(wrap_integer(ScalarKind::u32, -1), 4294967295LL);
  EXPECT_EQ(wrap_integer(ScalarKind::u32, (int64_t{1} << 40) + 5), 5);
}

}  // namespace
}  // namespace tilec::runtime
