// runtime/interpreter/element_semantics.h — what each elementwise op computes per element, as the
// interpreter evaluates it (docs/ir.md, Arithmetic).
//
// One row per elementwise op, the counterpart of the CUDA backend's spellings
// (backend/cuda/element_spellings.h): floats in f32 (the caller rounds the result to the element
// type), integers in 64 bits that wrap (the caller wraps to the element width), masks as integers
// 0 and 1. `cmp`, `select` and `cast` have no row: they read a predicate or two element types
// (tile_arithmetic.cpp). The unit test InterpreterElementSemantics.EveryElementwiseOpHasItsRow
// checks each row against the op table: the operand count picks unary, binary or ternary, the
// operand-kind traits (kFloatsOnly, kIntegersOnly, kBitwise) pick the columns.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "ir/op_table.h"

namespace tilec::runtime {

struct ElementSemantics {
  OpKind kind;
  float (*f32_unary)(float) = nullptr;
  float (*f32_binary)(float, float) = nullptr;
  float (*f32_ternary)(float, float, float) = nullptr;  // fma
  int64_t (*integer_unary)(int64_t) = nullptr;          // integers and masks
  int64_t (*integer_binary)(int64_t, int64_t) = nullptr;
};

// The row of `kind`; throws std::logic_error naming the op when it has none (not elementwise, or
// cmp, select, cast, or an op added to the op table without its row here).
const ElementSemantics& element_semantics(OpKind kind);
std::span<const ElementSemantics> all_element_semantics();

// The block of four words Philox4x32-10 gives for a counter and a key (the known answers of
// Random123, the authors' implementation, hold: tests/interpreter/element_semantics_test.cpp).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);
// `randint`'s element: word 0 of the block for the key (seed's low word, high word) and the
// counter (offset's low word, high word, 0, 0), both read as 64-bit two's complement.
uint32_t philox_randint(int64_t seed, int64_t offset);

// IEEE maxNum / minNum, as CUDA's fmaxf / fminf: a NaN operand is ignored, -0 orders below +0.
float float_max(float a, float b);
float float_min(float a, float b);

}  // namespace tilec::runtime
