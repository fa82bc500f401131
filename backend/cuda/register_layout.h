// backend/cuda/register_layout.h — which thread holds which element of a plain kernel's tiles.
//
// A plain kernel (no mma) whose tiles all fit one frame of R×C elements gets one blocked layout
// for all of them (docs/backend_cuda.md, "Register tiles"):
//   - along the columns each thread holds runs of V contiguous elements (V·size = 16 bytes where
//     C allows), `threads_per_row` threads side by side, so a warp reads whole 16-byte vectors of
//     consecutive addresses;
//   - the CTA's remaining threads stand across rows (`thread_rows`); a thread holds
//     `row_slots` rows (every thread_rows-th) and `column_slots` vectors (every
//     threads_per_row-th) of each, so a row reduction is a reduction over the low thread bits.
//   Thread t is (thread_row, thread_column) = (t / threads_per_row, t % threads_per_row).
// A tile of shape (r, c) with r, c each the frame's extent or 1 is the frame's layout with the
// dims of extent 1 dropped: a thread then holds one value per remaining slot, the same value as
// every thread it differs from only along a dropped dim (a row's sum is in every thread of the
// row). So elementwise ops, broadcasts and reductions never move data between layouts.
// Element k of a thread's array for a tile of shape (r, c) is slot (row_slot, column_slot, v)
// in row-major order over (row_slots(r), column_slots(c), width(c)).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/diagnostic.h"

namespace tilec {
class Operation;
}

namespace tilec::cuda {

struct RegisterLayout {
  int64_t rows = 1, columns = 1;  // the frame R×C: the largest tile extents of the kernel
  int64_t vector = 1;             // V: contiguous elements per thread along a row
  int64_t threads = 256;          // threads per CTA (a power of two, 32 to 1024; above 256 only for frames
                                  // of more than kMaxSlotsPerThread elements per thread at 256)
  int64_t threads_per_row = 1;    // threads side by side along the columns (a power of two)
  int64_t thread_rows = 1;        // threads / threads_per_row
  int64_t row_slots = 1;          // rows per thread: ceil(rows / thread_rows)
  int64_t column_slots = 1;       // vectors per thread along a row: ceil(columns / (V·threads_per_row))

  // Whether the frame's extent along `axis` is spread over threads (extent above 1).
  bool distributed(int axis) const { return axis == 0 ? rows > 1 : columns > 1; }
  // Slots whose rows or columns lie past the frame (the frame is not a multiple of the threads).
  bool padded_rows() const { return row_slots * thread_rows != rows && rows > 1; }
  bool padded_columns() const { return column_slots * threads_per_row * vector != columns && columns > 1; }

  // Per thread, for a tile of shape {r, c} (rank 1: {c} is read as {1, c}):
  int64_t row_slots_of(const std::vector<int64_t>& shape) const;
  int64_t column_slots_of(const std::vector<int64_t>& shape) const;
  int64_t width_of(const std::vector<int64_t>& shape) const;
  int64_t slots_of(const std::vector<int64_t>& shape) const {
    return row_slots_of(shape) * column_slots_of(shape) * width_of(shape);
  }

  // One line for the kernel's header comment.
  std::string describe() const;
};

// The shape as {rows, columns}: a rank-1 shape {c} is {1, c}.
std::vector<int64_t> as_matrix(const std::vector<int64_t>& shape);

// Elements of one full-frame tile a thread may hold: a few such tiles live at once, and above
// this they would spill out of the 255 registers a thread has.
inline constexpr int64_t kMaxSlotsPerThread = 64;

// The layout for `kernel`, or the reason it keeps the shared-memory form: a tile of rank above
// 2, two tiles whose shapes fit no common frame, a frame above kMaxSlotsPerThread elements per
// thread, an mma. `vector_bytes` caps V·size (16).
// With a layout, `spill` says where its tiles live at once would take more registers per thread
// than spare_registers(threads) (which nvcc then spills: a warning, not another form).
struct LayoutChoice {
  std::optional<RegisterLayout> layout;
  std::string reason;  // why not, when !layout
  std::string spill;
  Location spill_at;
};
inline constexpr int64_t kSpillRegisters = 232;  // of 255: the rest for addresses, indices, temporaries
// The registers a thread of a CTA of `threads` can spare for tiles: kSpillRegisters of 255 at 256
// threads; a CTA of 512 or 1024 shares the SM's 65536 (128 or 64 each), less the same 23.
inline constexpr int64_t spare_registers(int64_t threads) {
  return std::min<int64_t>(255, 65536 / threads) - (255 - kSpillRegisters);
}
LayoutChoice choose_register_layout(const Operation& kernel, int64_t vector_bytes = 16);

// Whether `kernel` has a floating-point reduce_sum: in the register form its terms are added in
// another order than the interpreter's (a thread's slots, then lanes, then warps), so outputs are
// compared with kReassociatedSumTolerance rather than bit for bit.
bool has_float_sum(const Operation& kernel);
// Such outputs match when |got - want| <= t·(|want| + max |want| over the tensor) besides the
// element type's own tolerance, t = 1e-4. Normwise, because a reassociated sum's error scales
// with the magnitude of what was summed, not with the result: an f32 sum of n terms moves by
// about sqrt(n)·2^-24 of their magnitude typically and n·2^-24 at worst, far below 1e-4 for
// the tile extents tilec emits, while a lost, stale or doubled partial moves an element by a
// whole part of it (a softmax whose row maximum misses a warp's partial lands about 5 times outside).
inline constexpr double kReassociatedSumTolerance = 1e-4;

// The layout of an R×C frame over at most `max_threads` threads whose narrowest global element
// is `element_bytes` wide (exposed for tests).
RegisterLayout blocked_layout(int64_t rows, int64_t columns, int64_t element_bytes, int64_t vector_bytes = 16,
                              int64_t max_threads = 256);

}  // namespace tilec::cuda
