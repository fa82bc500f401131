// backend/cuda/tensor_core_fragments.h — how the compute warpgroups of a tensor-core kernel hold a
// register tile (a "fragment"): which element of the tile each thread's register i is.
//
// sm_90a follows WGMMA's accumulator layout, so an mma's result is a fragment as it stands and a
// 16-bit fragment is a register A operand as it stands: warpgroup g owns rows 64g..64g+63, warp w
// of it rows 16w.., lane l rows l/4 and l/4 + 8 of those, register i of a tile R x C (C/2 per
// thread) holds row 16w + l/4 + 8·((i/2) mod 2) and column 8·(i/4) + 2·(l mod 4) + (i mod 2); a
// row vector (R x 1) keeps the thread's two rows. sm_100a (tcgen05) follows tcgen05.ld's 32x32b shape: the
// thread of warp w (mod 4) and lane l holds row 32·(w mod 4) + l, and warpgroup g the columns
// g·C/W .. (g+1)·C/W - 1 of a tile (W warpgroups); a row vector keeps the thread's one row. A
// 64-row tile on sm_100a is TMEM layout F as tcgen05.ld 32x32b reads it (an M = 64 tcgen05.mma
// writes rows 16w..16w+15 to lanes 32w..32w+15): lane l < 16 of warp w holds row 16·(w mod 4) + l;
// lanes 16..31 stand in for lane l - 16 (same row and columns, values not to be written:
// `owner`).
#pragma once

#include <cstdint>
#include <string>

#include "backend/target.h"

namespace tilec::cuda {

class FragmentLayout {
 public:
  FragmentLayout(target::MmaFamily family, int64_t warpgroups)
      : tcgen05_(family == target::MmaFamily::tcgen05), warpgroups_(warpgroups) {}

  // Why a rows x columns tile cannot be a fragment ("" when it can); columns == 1: a row vector.
  std::string unsupported(int64_t rows, int64_t columns) const;
  // For a tile of `rows` rows: "" when every thread holds elements of its own, else the C++
  // condition of the threads that do (sm_100a, 64 rows: "lane < 16"); only they may write an
  // element where another thread could write it too (shared memory, global memory).
  std::string owner(int64_t rows) const;
  // For a column tile (rows x 1: one value per row, e.g. a row maximum): the C++ condition of the
  // one thread among those holding each row that writes it (sm_90a: the quad's first lane;
  // sm_100a: the first compute warpgroup, and lanes 0..15 for 64 rows).
  std::string column_owner(int64_t rows) const;
  // Registers per thread.
  int64_t count(int64_t columns) const;
  // C++ expressions, over `i` (the register) and the compute thread's `lane`, `warp` (in its
  // warpgroup) and `compute_warpgroup`, of the tile row and column register `i` holds in a tile
  // of `rows` rows.
  std::string row(const std::string& i, bool row_vector, int64_t rows) const;
  std::string column(const std::string& i, int64_t columns) const;
  // The same split in two: the position of the thread's register 0 (over `lane`, `warp` and
  // `compute_warpgroup`) and register `i`'s step from it (over `i` alone, so a constant in an
  // unrolled loop): row(i) is thread_row + row_step(i), column(i) thread_column + column_step(i).
  std::string thread_row(int64_t rows) const;
  std::string row_step(const std::string& i, bool row_vector) const;
  std::string thread_column(int64_t columns) const;
  std::string column_step(const std::string& i, int64_t columns) const;
  // The register of a row vector holding the row of a tile's register `i`.
  std::string row_slot(const std::string& i) const;
  // A column slice x[:, start:start + width] of a held tile x of `columns` columns read from the
  // thread's own registers: "" when each thread holds its slice elements, else why not (sm_90a:
  // a start that is not a multiple of 8; sm_100a with two compute warpgroups: each holds half of
  // each row's columns, so a narrower tile's halves are other columns). sliced_register: then the
  // register of x holding the element of the slice's register `i` (sm_90a: i + start/2, 8
  // columns being 4 registers; sm_100a: i + start).
  std::string slice_problem(int64_t columns, int64_t start, int64_t width) const;
  // Whether register `i`'s column is below `bound`, as C++ over `i` alone ("" where it depends on
  // the thread: sm_100a with two compute warpgroups, or sm_90a with a bound that is not a multiple
  // of 8, where the thread's 2·(lane mod 4) decides).
  std::string column_below(const std::string& i, int64_t bound) const;
  std::string sliced_register(const std::string& i, int64_t start) const;
  // The declarations `row` and `column` need, as one line.
  static std::string position_variables() {
    return "const int lane = compute_thread % 32, warp = (compute_thread % 128) / 32;  (void)lane, (void)warp;";
  }
  // Combines the per-thread partial results `r` (an array of count(1)) of a row reduction over
  // the threads holding the other columns of the same rows; `combine` spells "f(a, b)" with
  // {0} and {1}. sm_100a with two warpgroups exchanges through `exchange` (a float pointer to
  // 2 x 128 floats of shared memory) between two syncs of the named barrier `barrier`.
  std::string combine_rows(const std::string& r, const std::string& combine, const std::string& exchange,
                           const std::string& barrier) const;

 private:
  bool tcgen05_;  // tcgen05.ld's rows (else WGMMA's accumulator layout)
  int64_t warpgroups_;
};

}  // namespace tilec::cuda
