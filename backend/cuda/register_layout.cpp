// backend/cuda/register_layout.cpp — the blocked layout of a plain kernel's register tiles.
//
// Choice, in order: V = 16 bytes of the narrowest element a full-width tile moves to or from
// global memory, halved until it divides C; the threads: enough for one vector slot each, a
// power of two from 32 to 256; along a row as many threads as the power of two dividing the
// row's vector count (all of them when that is below a warp: then the last vectors are padding),
// at most a warp when the frame has a row for every warp, the rest across rows. Every extent
// stays a compile-time constant, so the emitted index arithmetic folds to shifts and adds.
#include "backend/cuda/register_layout.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>

#include "backend/cuda/kernel_plan.h"
#include "ir/ir.h"
#include "ir/live_ranges.h"

namespace tilec::cuda {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t floor_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

int64_t ceil_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// The largest power of two dividing n (n > 0).
int64_t power_of_two_factor(int64_t n) { return n & -n; }

}  // namespace

std::vector<int64_t> as_matrix(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return {1, shape[0]};
  return shape;
}

int64_t RegisterLayout::row_slots_of(const std::vector<int64_t>& shape) const {
  return as_matrix(shape)[0] == 1 || !distributed(0) ? 1 : row_slots;
}

int64_t RegisterLayout::column_slots_of(const std::vector<int64_t>& shape) const {
  return as_matrix(shape)[1] == 1 || !distributed(1) ? 1 : column_slots;
}

int64_t RegisterLayout::width_of(const std::vector<int64_t>& shape) const {
  return as_matrix(shape)[1] == 1 || !distributed(1) ? 1 : vector;
}

std::string RegisterLayout::describe() const {
  return fmt::format("{}x{} frame over {} threads: {} x {} threads (rows x columns), each {} row(s) x {} vector(s) of {}",
                     rows, columns, threads, thread_rows, threads_per_row, row_slots, column_slots, vector);
}

RegisterLayout blocked_layout(int64_t rows, int64_t columns, int64_t element_bytes, int64_t vector_bytes,
                              int64_t max_threads) {
  RegisterLayout layout;
  layout.rows = rows;
  layout.columns = columns;
  layout.vector = std::max<int64_t>(1, vector_bytes / element_bytes);
  while (layout.vector > 1 && columns % layout.vector != 0) layout.vector /= 2;
  if (columns == 1) layout.vector = 1;
  int64_t vectors = ceil_div(columns, layout.vector);
  int64_t slots = rows * vectors;
  layout.threads = std::clamp<int64_t>(floor_power_of_two(slots), 32, max_threads);
  int64_t along_row = columns % layout.vector == 0 ? power_of_two_factor(vectors) : 1;
  if (along_row < std::min<int64_t>({32, floor_power_of_two(vectors), layout.threads}))
    along_row = ceil_power_of_two(vectors);  // padding beats a row split over too few threads
  // With a row for every warp, a row stays inside one warp: its reductions are shuffles only.
  if (along_row > 32 && rows >= layout.threads / 32) along_row = 32;
  if (columns == 1) along_row = 1;
  auto split = [&](int64_t threads_per_row) {
    RegisterLayout split = layout;
    split.threads_per_row = std::min(threads_per_row, layout.threads);
    split.thread_rows = layout.threads / split.threads_per_row;
    split.row_slots = rows > 1 ? ceil_div(rows, split.thread_rows) : 1;
    split.column_slots = ceil_div(vectors, split.threads_per_row);
    return split;
  };
  RegisterLayout exact = split(along_row);
  // Thread rows past the tile's rows hold nothing: a 4 x 11008 f32 frame split 64 threads a row
  // (2752 vectors: 64 · 43) left 12 of its 16 thread rows idle and 172 slots a thread. Every
  // thread taking every row, padded along it as an odd width is (11004 columns: 1 x 1024), holds
  // fewer, and a column sum then adds within each thread (a row per thread row exchanged 360 KB of
  // partials: a hunt); the exact split is kept where it holds no more.
  if (columns > 1 && exact.thread_rows > ceil_power_of_two(rows)) {
    RegisterLayout padded = split(std::min(ceil_power_of_two(vectors), layout.threads));
    if (padded.row_slots * padded.column_slots < exact.row_slots * exact.column_slots) return padded;
  }
  return exact;
}

bool has_float_sum(const Operation& kernel) {
  bool found = false;
  walk(kernel.region(), [&](const Operation& op) {
    found = found || (op.kind() == OpKind::reduce_sum && is_float(op.operand(0)->type().element()));
  });
  return found;
}

LayoutChoice choose_register_layout(const Operation& kernel, int64_t vector_bytes) {
  LayoutChoice choice;
  std::vector<const Value*> tiles;
  std::string reason;
  int64_t element_bytes = 0;  // the narrowest element of a tile moved to or from global memory
  walk(kernel.region(), [&](const Operation& op) {
    if (op.kind() == OpKind::mma && reason.empty())
      reason = fmt::format("it has an mma ({}:{})", op.location().line, op.location().column);
    if (op.kind() == OpKind::sort && reason.empty())
      reason = fmt::format("it has a sort ({}:{}), whose lines cross threads", op.location().line,
                           op.location().column);
    if (is_scan(op.kind()) && reason.empty())
      reason = fmt::format("it has a scan ({}:{}), whose running values cross threads", op.location().line,
                           op.location().column);
    // A reshape that keeps the matrix (a row <N> as <1, N>) keeps every thread's slots.
    const bool moving_reshape = op.kind() == OpKind::reshape &&
                                as_matrix(op.operand(0)->type().shape()) != as_matrix(op.result()->type().shape());
    if ((op.kind() == OpKind::transpose || op.kind() == OpKind::slice || op.kind() == OpKind::concat ||
         op.kind() == OpKind::interleave ||
         moving_reshape) &&
        reason.empty())
      reason = fmt::format("it has a {} ({}:{}), which moves elements between threads", op.name(),
                           op.location().line, op.location().column);
    // A tile moved through a box (a <BQ, D> tile of a [B, S, H, D] tensor) is a register tile
    // when its rows lie along one dimension and its columns along the last (emit_memory).
    if (op.has_attr("box") && reason.empty() && (op.kind() == OpKind::load || op.kind() == OpKind::store)) {
      const Type& tile = moved_tile(op)->type();
      std::string why = tile.rank() == 2 ? box_problem(op, tile.shape(), op.operand(0)->type().rank())
                                         : "a box around a tile that is not 2-D";
      if (!why.empty())
        reason = fmt::format("its {} ({}:{}) takes {}, which register tiles do not", op.name(), op.location().line,
                             op.location().column, why);
    }
    for (size_t i = 0; i < op.num_results(); ++i)
      if (op.result(i)->type().is_tile()) tiles.push_back(op.result(i));
    for (size_t r = 0; r < op.num_regions(); ++r)
      for (size_t i = 0; i < op.region(r).num_arguments(); ++i)
        if (op.region(r).argument(i)->type().is_tile()) tiles.push_back(op.region(r).argument(i));
    const Value* moved = op.kind() == OpKind::load || op.kind() == OpKind::store ? moved_tile(op) : nullptr;
    if (moved) {
      int bytes = byte_size(moved->type().element());
      element_bytes = element_bytes == 0 ? bytes : std::min<int64_t>(element_bytes, bytes);
    }
  });
  if (!reason.empty()) {
    choice.reason = reason;
    return choice;
  }
  int64_t rows = 1, columns = 1;
  for (const Value* tile : tiles) {
    const std::vector<int64_t>& shape = tile->type().shape();
    if (shape.empty() || shape.size() > 2) {
      choice.reason = fmt::format("a tile has rank {} (register tiles take rank 1 or 2)", shape.size());
      return choice;
    }
    std::vector<int64_t> matrix = as_matrix(shape);
    rows = std::max(rows, matrix[0]);
    columns = std::max(columns, matrix[1]);
  }
  for (const Value* tile : tiles) {
    std::vector<int64_t> matrix = as_matrix(tile->type().shape());
    if ((matrix[0] != rows && matrix[0] != 1) || (matrix[1] != columns && matrix[1] != 1)) {
      choice.reason = fmt::format("its tiles' shapes fit no common {}x{} frame (one is {}x{})", rows, columns,
                                  matrix[0], matrix[1]);
      return choice;
    }
  }
  // A frame too big for 256 threads (a 32768-wide softmax row, a 4 x 8192 RMSNorm: a hunt's
  // kernels took the shared form and overflowed shared memory) spreads over 512 or 1024, a CTA's
  // most, so that each thread holds at most kMaxSlotsPerThread of it.
  RegisterLayout layout;
  int64_t per_thread = 0;
  for (int64_t threads : {256, 512, 1024}) {
    layout = blocked_layout(rows, columns, element_bytes == 0 ? 4 : element_bytes, vector_bytes, threads);
    per_thread = layout.slots_of({rows, columns});
    if (per_thread <= kMaxSlotsPerThread) break;
  }
  if (per_thread > kMaxSlotsPerThread) {
    choice.reason = fmt::format("a {}x{} tile would take {} registers per thread (more than {})", rows, columns,
                                per_thread, kMaxSlotsPerThread);
    return choice;
  }
  choice.layout = layout;
  // Registers a tile's slots take (two 16-bit elements share one, four 8-bit ones).
  auto registers = [&](const void* tile) {
    const Type& type = static_cast<const Value*>(tile)->type();
    return (layout.slots_of(as_matrix(type.shape())) * byte_size(type.element()) + 3) / 4;
  };
  // An elementwise op's result is computed element by element where it is read (its loops are
  // unrolled straight-line code nvcc interleaves), so it needs no registers of its own; the
  // loaded, carried and reduced tiles do. A loop's carried tile is one, whatever its name: its
  // initial value, the loop body's argument and the loop's result.
  std::function<const Value*(const Value*)> carried = [&](const Value* value) -> const Value* {
    const Operation* loop = value->is_argument() ? value->owner_region()->parent_op() : value->defining_op();
    if (!loop || loop->kind() != OpKind::for_ || (value->is_argument() && value->index() == 0)) return value;
    return carried(loop->operand(value->is_argument() ? 2 + value->index() : 3 + value->index()));
  };
  const PeakLive peak = peak_live(
      kernel.region(),
      [&](const Value* value) -> const void* {
        if (!value->type().is_tile()) return nullptr;
        const Value* held = carried(value);
        if (held != value) return held;  // carried: held across the steps, however it began
        const Operation* def = value->defining_op();
        return def && def->info().has(kElementwise) ? nullptr : value;
      },
      registers);
  const int64_t spare = spare_registers(layout.threads);
  if (peak.total > spare) {
    std::vector<std::string> tiles;
    for (const void* tile : peak.holders) {
      const Value* value = static_cast<const Value*>(tile);
      const Operation* def = value->defining_op();
      const bool located = def && def->location().known();
      tiles.push_back(fmt::format("{}{}", value->type().to_source_string(),
                                  located ? fmt::format(" (line {})", def->location().line) : ""));
    }
    choice.spill = fmt::format("{} tiles live here take {} registers per thread in the register form ({}), more than "
                               "the {} a thread can spare in a CTA of {} threads: nvcc is likely to spill some to "
                               "local memory; use smaller tiles, or keep fewer live at once",
                               peak.holders.size(), peak.total, fmt::join(tiles, ", "), spare, layout.threads);
    choice.spill_at = peak.at->location();
  }
  return choice;
}

}  // namespace tilec::cuda
