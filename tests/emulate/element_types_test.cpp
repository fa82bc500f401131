// tests/emulate/element_types_test.cpp — the emulation runtime's FP8 element types, byte by byte,
// against the OCP 8-bit floating point formats (the values below are the specification's, not
// computed by a formula shared with the runtime). e5m2 is IEEE-like: exponent 11111 holds ±inf
// (mantissa 00) and NaNs; e4m3 has no infinity, and S.1111.111 is its only NaN. Converting to
// either saturates (the .satfinite conversions tilec emits): past the largest finite, and from an
// infinity, gives the largest finite. A decoded e5m2 infinity read as 57344 (and its NaNs as
// 81920 and 98304) made `tilec emulate` report mismatches for a kernel loading such bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/emulate/include/tilec_emulate.h"

namespace {

using tilec_emu::e4m3_bits_to_float;
using tilec_emu::e5m2_bits_to_float;
using tilec_emu::float_to_e4m3_bits;
using tilec_emu::float_to_e5m2_bits;

TEST(EmulatedFp8, E5m2DecodesInfinitiesNaNsAndTheFiniteRange) {
  EXPECT_EQ(e5m2_bits_to_float(0x7c), std::numeric_limits<float>::infinity());
  EXPECT_EQ(e5m2_bits_to_float(0xfc), -std::numeric_limits<float>::infinity());
  for (uint8_t bits : {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}) EXPECT_TRUE(std::isnan(e5m2_bits_to_float(bits))) << +bits;
  EXPECT_EQ(e5m2_bits_to_float(0x7b), 57344.0f);              // 1.75 * 2^15, the largest finite
  EXPECT_EQ(e5m2_bits_to_float(0x04), std::ldexp(1.0f, -14));  // the smallest normal
  EXPECT_EQ(e5m2_bits_to_float(0x01), std::ldexp(1.0f, -16));  // the smallest subnormal
  EXPECT_EQ(e5m2_bits_to_float(0x3c), 1.0f);
  EXPECT_EQ(e5m2_bits_to_float(0xc0), -2.0f);
  EXPECT_TRUE(std::signbit(e5m2_bits_to_float(0x80)));
}

TEST(EmulatedFp8, E4m3HasOneNaNAndNoInfinity) {
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(0xff)));
  EXPECT_EQ(e4m3_bits_to_float(0x7e), 448.0f);  // 1.75 * 2^8, the largest finite
  EXPECT_EQ(e4m3_bits_to_float(0x78), 256.0f);  // exponent 1111 is finite
  EXPECT_EQ(e4m3_bits_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(e4m3_bits_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_bits_to_float(0x38), 1.0f);
}

TEST(EmulatedFp8, ConversionsSaturateAndKeepNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_e5m2_bits(inf), 0x7b);
  EXPECT_EQ(float_to_e5m2_bits(-inf), 0xfb);
  EXPECT_EQ(float_to_e5m2_bits(1.0e6f), 0x7b);
  EXPECT_TRUE(std::isnan(e5m2_bits_to_float(float_to_e5m2_bits(std::nanf("")))));
  EXPECT_EQ(float_to_e4m3_bits(inf), 0x7e);
  EXPECT_EQ(float_to_e4m3_bits(-1000.0f), 0xfe);
  EXPECT_TRUE(std::isnan(e4m3_bits_to_float(float_to_e4m3_bits(std::nanf("")))));
  // Every finite byte survives a round trip.
  for (int bits = 0; bits < 256; ++bits) {
    const float e5m2 = e5m2_bits_to_float(static_cast<uint8_t>(bits));
    if (std::isfinite(e5m2)) {
      EXPECT_EQ(float_to_e5m2_bits(e5m2), bits) << bits;
    }
    const float e4m3 = e4m3_bits_to_float(static_cast<uint8_t>(bits));
    if (std::isfinite(e4m3)) {
      EXPECT_EQ(float_to_e4m3_bits(e4m3), bits) << bits;
    }
  }
}

// An f32 atomicAdd (an adding store, and the TMA's reducing add, which adds through it) flushes
// subnormal operands and results to zero of their sign, as the PTX ISA says atom.add.f32 does:
// 4 x 1e-40 added into 0 stays 0 (a helper found the emulator and interpreter kept 4e-40). f16
// and bf16 adds (.noftz) and normal f32 sums are untouched.
TEST(EmulatedAtomics, AnF32AddFlushesSubnormals) {
  float sum = 0.0f;
  for (int i = 0; i < 4; ++i) atomicAdd(&sum, 1e-40f);
  EXPECT_EQ(sum, 0.0f);
  float negative = -0.0f;
  atomicAdd(&negative, -1e-40f);
  EXPECT_TRUE(std::signbit(negative));
  float cancelled = 1.5e-38f;  // normal; the difference is subnormal: flushed
  atomicAdd(&cancelled, -1.4e-38f);
  EXPECT_EQ(cancelled, 0.0f);
  float normal = 1.0f;
  atomicAdd(&normal, 0.5f);
  EXPECT_EQ(normal, 1.5f);
  __half half(0.0f);
  atomicAdd(&half, __half(1e-7f));  // an f16 subnormal: kept
  EXPECT_GT(static_cast<float>(half), 0.0f);
}

}  // namespace
