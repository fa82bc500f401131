// runtime/interpreter/float_formats.h — exact bit patterns of the small float formats and the
// conversions between them and f32, all rounding to nearest, ties to even.
//
//   format   sign.exponent.mantissa  bias  infinity  largest finite   NaN
//   f32      1.8.23                  127   yes       3.4e38           exponent all ones
//   bf16     1.8.7                   127   yes       3.39e38          exponent all ones
//   f16      1.5.10                  15    yes       65504            exponent all ones
//   f8e5m2   1.5.2                   15    no (sat)  57344            exponent all ones, mantissa ≠ 0
//   f8e4m3   1.4.3 (OCP "FN")        7     none      448              S.1111.111 only
//
// Overflow: f16 and bf16 follow IEEE (a value that rounds past the largest finite becomes ±inf).
// Both f8 formats saturate, as the GPU's `cvt.rn.satfinite` does: a finite value that rounds
// past the largest finite, and ±inf itself, become ± the largest finite. NaN stays NaN in every
// format (sign kept, quiet bit set, the payload's top bits kept where the target has room);
// decoding keeps a NaN's payload and quiet bit as they are.
// Subnormals are produced and read in every format (no flush to zero).
// Every value of every format here is exactly representable in f32, so decoding is exact.
#pragma once

#include <cstdint>

#include "ir/types.h"

namespace tilec::runtime {

// Bit pattern ↔ f32 for the stored float element types (f16, bf16, f8e4m3, f8e5m2; f32 itself
// is its own bit pattern). The pattern sits in the low bits of the result.
float decode_float(ScalarKind format, uint32_t bits);
uint32_t encode_float(ScalarKind format, float value);
// The bit pattern of a value `format` holds (one decode_float or round_to_format gave), as a
// store copies it and bitcast reads it: encode_float's, except that an f8e5m2 infinity (which a
// load reads, and no rounding makes) stays infinity rather than saturating, and a NaN keeps its
// payload, a signaling one staying signaling.
uint32_t format_bits(ScalarKind format, float value);

// Rounds an f32 to the nearest value of `format` (f32: unchanged), as an f32.
float round_to_format(ScalarKind format, float value);

// Rounds a 64-bit integer to the nearest value of a float `format` in one step (no double
// rounding through f32), as an f32.
float integer_to_format(ScalarKind format, int64_t value);

// Float → integer conversion: truncates toward zero, saturates at the type's range, NaN → 0.
// i1 gives 0 or 1 (nonzero, NaN included, → 1: C++'s bool(x)).
int64_t float_to_integer(ScalarKind integer_type, float value);

// Wraps a 64-bit result to an integer element type (i1: lowest bit; i8, i16 and i32: two's
// complement; u8, u16, u32: modulo 2^8, 2^16, 2^32).
int64_t wrap_integer(ScalarKind integer_type, int64_t value);

// An f32 as the tensor cores read an f32 mma operand (tf32: 1.8.10): the low 13 mantissa bits
// dropped, a truncation toward zero; infinities and NaNs stay what they are.
float truncate_to_tf32(float value);

// A subnormal f32 as zero of its sign, others as they are: what the GPU's f32 atomic and TMA
// reducing adds (atom/red.add.f32, cp.reduce.async.bulk .add.f32) do to operands and results,
// where every other f32 operation keeps subnormals.
float flush_subnormal(float value);

// The largest finite value of a float format.
float largest_finite(ScalarKind format);

}  // namespace tilec::runtime
