// backend/cuda/element_spellings.h — the C++ expression each elementwise op prints as.
//
// One row per elementwise op the CUDA kernels compute with a fixed spelling, in the prelude's
// helpers (cuda_prelude.cpp), so the device code computes the interpreter's bits. BodyEmitter
// fills a row's placeholders: {a}, {b} and {c} are the operands' elements (f32 for floats, int64_t
// for integers) and {int} is the integer helpers' suffix ("i64", or "index<int32_t>" for index
// arithmetic in 32 bits). `cmp`, `select` and `cast` have no row: they read a predicate or two
// element types and are spelled in BodyEmitter::compute. The unit test
// CudaElementSpellings.EveryElementwiseOpHasItsSpellings checks the rows against the op table's
// traits, and every helper a row names against the prelude.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ir/op_table.h"
#include "ir/types.h"

namespace tilec::cuda {

struct ElementSpelling {
  OpKind kind;
  std::string_view f32;      // on floats (computed in f32); empty: integers or masks only
  std::string_view integer;  // on integers (computed in int64_t); empty: floats or masks only
  // On integers when the divisor is a constant other than 0 and -1, or marked `positive_divisor`
  // (div, rem): C's operator gives the interpreter's result there, and reads better.
  std::string_view safe_divisor;
  std::string_view mask;     // on i1 masks (and, or, not)
  // On integers whose 64-bit arithmetic may overflow (i64 operands; products of u32), a prelude
  // helper that wraps as the interpreter does; empty: `integer` cannot overflow there.
  std::string_view wrapping;
};

// Whether `kind` on integers of type `element`, computed in int64_t, may overflow it: i64 sums,
// differences, products and negations, and u32 products (up to 2^64; narrower types and index
// arithmetic cannot).
bool may_overflow_int64(OpKind kind, ScalarKind element);

// The row of `kind`, or nullptr (not elementwise, or cmp, select, cast).
const ElementSpelling* element_spelling(OpKind kind);

std::span<const ElementSpelling> element_spellings();

// How a reduction or a scan (reduce_* / scan_*) combines its running value `acc` with the next
// value `next`, both f32 for floats and int64_t for integers: the row of its combining_op
// (ir/op_table.h, the interpreter's mapping too), so add_f32 / mul_f32 / max_f32 / min_f32, and
// add_i64 / mul_i64 (they wrap, docs/ir.md) / max_i64 / min_i64. Every reduction and scan the
// CUDA backend writes (both plain forms, register tiles on the tensor cores) spells its step
// here; std::logic_error for any other op.
std::string combining_expression(OpKind kind, bool floating, std::string_view acc, std::string_view next);

// The statement a combining store (`store T[i] += tile`, `max=`, `min=`) writes for one element:
// `value`, of the tensor's element type `element`, combined atomically into `address` (a T*).
// Adds are CUDA's atomicAdd (its 64-bit integer form unsigned: the same bits, a wrapping add);
// integer maxima and minima are atomicMax / atomicMin (i64 as long long); float ones the
// prelude's tilec_atomic_max / tilec_atomic_min (atomic_extremum_prelude). Every CUDA form of
// the store (shared-memory loop, register tiles, tensor-core epilogue) spells it here.
std::string atomic_combine_statement(StoreCombine combine, ScalarKind element, std::string_view address,
                                     std::string_view value);

// The helpers float maxima and minima need (tilec_atomic_max, tilec_atomic_min: a
// compare-and-swap loop), for a file with a kernel that has one (ParamPlan::float_extrema).
std::string_view atomic_extremum_prelude();

}  // namespace tilec::cuda
