// runtime/interpreter/tile_arithmetic.h — the values the interpreter computes with, and the
// arithmetic of docs/ir.md on them.
//
// A TileValue is a dense row-major array with an element type; a scalar is a tile of rank 0.
// Float elements are held as f32 whose value is always exactly one of the element type's
// values (every op rounds its results to nearest even); integer, index and i1 elements are
// held as int64, wrapped to the element width after every op. Each function here computes one
// op's result into `out` and returns an empty string, or returns an error message (division by
// zero, operands that do not broadcast, an op applied to a type it does not accept).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_table.h"
#include "ir/types.h"

namespace tilec::runtime {

struct TileValue {
  ScalarKind element = ScalarKind::f32;
  std::vector<int64_t> shape;  // empty for a scalar
  std::vector<float> floats;   // used when the element type is a float
  std::vector<int64_t> ints;   // used otherwise

  bool holds_floats() const { return is_float(element); }
  int64_t count() const;

  // A zero-filled tile (or scalar, with an empty shape).
  static TileValue zeros(ScalarKind element, std::vector<int64_t> shape);
  static TileValue scalar_int(ScalarKind element, int64_t value);
  static TileValue scalar_float(ScalarKind element, float value);

  // Element i as a double (for tests and messages).
  double as_double(int64_t i) const;
};

// add sub mul div rem cdiv max min pow and or, and cmp with `predicate`. The result has the broadcast
// shape and the operands' element type (i1 for cmp).
std::string evaluate_binary(OpKind kind, const std::string& predicate, const TileValue& a,
                            const TileValue& b, TileValue& out);

// neg exp sqrt rsqrt relu tanh erf log log2 log1p expm1 sin cos tan atan asin acos sinh cosh
// sigmoid abs not (the f32 functions of <cmath>).
std::string evaluate_unary(OpKind kind, const TileValue& a, TileValue& out);

// cast to `target` (float ↔ float and int → float round to nearest even; float → int
// truncates toward zero, saturating; int → int wraps).
std::string evaluate_cast(const TileValue& a, ScalarKind target, TileValue& out);

// bitcast to `target`, a type of the element's width: each element's bits (format_bits for a
// float) read as `target`.
std::string evaluate_bitcast(const TileValue& a, ScalarKind target, TileValue& out);

// a·b + c with one rounding (std::fma in f32), then rounded to the element type; all three
// broadcast together; floats only.
std::string evaluate_fma(const TileValue& a, const TileValue& b, const TileValue& c, TileValue& out);

// select c ? a : b, all three broadcast together.
std::string evaluate_select(const TileValue& condition, const TileValue& a, const TileValue& b,
                            TileValue& out);

// transpose by the permutation `dims` (transpose_dims, ir/ir.h): out[i0, i1, ...] = a at
// i_k along dimension dims[k]; [1, 0] gives out[j, i] = a[i, j].
std::string evaluate_transpose(const TileValue& a, const std::vector<int64_t>& dims, TileValue& out);

// A store's i1 mask broadcast to the stored tile's `shape`: out[i] is whether element i (row-major)
// is written. An error message when the mask is not i1 or does not broadcast.
std::string broadcast_mask(const TileValue& mask, const std::vector<int64_t>& shape, std::vector<char>& out);

// slice: out[i0, i1, ...] = a[starts[0] + i0·steps[0], ...] for a result of `shape`.
std::string evaluate_slice(const TileValue& a, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                           const std::vector<int64_t>& shape, TileValue& out);
// concat: the tiles one after another along `axis` (equal in every other dimension).
std::string evaluate_concat(const std::vector<const TileValue*>& parts, int64_t axis, TileValue& out);
// interleave: the tiles' elements in turn along `axis` (element i from tile i % n at i / n).
std::string evaluate_interleave(const std::vector<const TileValue*>& parts, int64_t axis, TileValue& out);

// reduce_sum / reduce_max / reduce_min along `axis` (kept with extent 1).
std::string evaluate_reduce(OpKind kind, int64_t axis, const TileValue& a, TileValue& out);
// scan_sum / scan_prod / scan_max / scan_min: the inclusive prefix sums, products, maxima or
// minima along `axis`, in index order: floats run in f32 (the first element as it is) and each
// prefix is rounded to the element type (as reduce_sum rounds its one), integers wrap.
std::string evaluate_scan(OpKind kind, int64_t axis, const TileValue& a, TileValue& out);
// sort: every line along `axis` in ascending order (descending: the reverse), floats with NaNs
// after every number and -0.0 before +0.0 (NaNs among themselves in their order).
std::string evaluate_sort(int64_t axis, bool descending, const TileValue& a, TileValue& out);

// acc + a·b with products and sums in f32 (int64 for integers), k increasing, rounded once to
// the accumulator's type at the end.
std::string evaluate_mma(const TileValue& a, const TileValue& b, const TileValue& acc,
                         TileValue& out);

// The NumPy-style broadcast of two shapes restricted to equal rank (a rank-0 shape broadcasts
// to anything); false when they do not combine.
bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>& out);

}  // namespace tilec::runtime
