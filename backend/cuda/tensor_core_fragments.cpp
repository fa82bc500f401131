// backend/cuda/tensor_core_fragments.cpp — register tile layouts of the compute warpgroups (see the
// header).
#include "backend/cuda/tensor_core_fragments.h"

#include <fmt/core.h>

#include <cstdlib>

namespace tilec::cuda {

std::string FragmentLayout::unsupported(int64_t rows, int64_t columns) const {
  if (rows == 1 && columns > 1)  // a row of its own: a bias stored or reduced apart from any tile
    return fmt::format("a single row (one value per column): the compute threads hold tiles of {} rows, so a row "
                       "only enters a tensor-core kernel broadcast into such a tile (a bias added to the "
                       "accumulator); store or reduce a row on its own in a plain kernel",
                       tcgen05_ ? "128 (or 64)" : std::to_string(64 * warpgroups_));
  if (tcgen05_) {
    if (rows != 128 && rows != 64)
      return fmt::format("{} rows (one per TMEM lane: 128; or 64, TMEM layout F)", rows);
    if (columns != 1 && columns % warpgroups_ != 0)
      return fmt::format("{} columns (a multiple of the {} compute warpgroups)", columns, warpgroups_);
    return "";
  }
  if (rows != 64 * warpgroups_)
    return fmt::format("{} rows (WGMMA gives each of the kernel's {} compute warpgroup{} 64 rows, so every tile it "
                       "holds in registers has {} rows: give the tiles held in registers (BM or BQ rows; a key block "
                       "held as a tile, BKV) {} rows, all alike, or make them all {}, which runs {} compute "
                       "warpgroup{})",
                       rows, warpgroups_, warpgroups_ == 1 ? "" : "s", 64 * warpgroups_, 64 * warpgroups_,
                       warpgroups_ == 1 ? 128 : 64, warpgroups_ == 1 ? 2 : 1, warpgroups_ == 1 ? "s" : "");
  if (columns != 1 && columns % 8 != 0)
    return fmt::format("{} columns (a WGMMA fragment holds one column or a multiple of 8: store such columns one "
                       "at a time, or pad the tile to {} columns)",
                       columns, (columns + 7) / 8 * 8);
  return "";
}

int64_t FragmentLayout::count(int64_t columns) const {
  if (columns == 1) return tcgen05_ ? 1 : 2;
  return tcgen05_ ? columns / warpgroups_ : columns / 2;
}

std::string FragmentLayout::owner(int64_t rows) const { return tcgen05_ && rows == 64 ? "lane < 16" : ""; }

std::string FragmentLayout::column_owner(int64_t rows) const {
  if (!tcgen05_) return "lane % 4 == 0";  // the four lanes of a quad hold the same two rows
  std::string condition = warpgroups_ > 1 ? "compute_warpgroup == 0" : "";
  if (const std::string lanes = owner(rows); !lanes.empty()) condition += (condition.empty() ? "" : " && ") + lanes;
  return condition;
}

namespace {

// "(origin + step)", or "(origin)" for a step of 0.
std::string position(const std::string& origin, const std::string& step) {
  return step == "0" ? fmt::format("({})", origin) : fmt::format("({} + {})", origin, step);
}

}  // namespace

std::string FragmentLayout::row(const std::string& i, bool row_vector, int64_t rows) const {
  return position(thread_row(rows), row_step(i, row_vector));
}

std::string FragmentLayout::column(const std::string& i, int64_t columns) const {
  return columns == 1 ? "0" : position(thread_column(columns), column_step(i, columns));
}

std::string FragmentLayout::thread_row(int64_t rows) const {
  if (tcgen05_) return rows == 64 ? "warp * 16 + lane % 16" : "warp * 32 + lane";
  return "compute_warpgroup * 64 + warp * 16 + lane / 4";
}

std::string FragmentLayout::row_step(const std::string& i, bool row_vector) const {
  if (tcgen05_) return "0";  // one row per thread
  return row_vector ? fmt::format("8 * {}", i) : fmt::format("8 * (({} / 2) % 2)", i);
}

std::string FragmentLayout::thread_column(int64_t columns) const {
  if (columns == 1) return "0";
  return tcgen05_ ? fmt::format("compute_warpgroup * {}", columns / warpgroups_) : "2 * (lane % 4)";
}

std::string FragmentLayout::column_step(const std::string& i, int64_t columns) const {
  if (columns == 1) return "0";
  return tcgen05_ ? i : fmt::format("8 * ({0} / 4) + {0} % 2", i);
}

std::string FragmentLayout::row_slot(const std::string& i) const {
  return tcgen05_ ? "0" : fmt::format("(({} / 2) % 2)", i);
}

std::string FragmentLayout::slice_problem(int64_t columns, int64_t start, int64_t width) const {
  if (tcgen05_)
    return warpgroups_ == 1 || width == columns
               ? ""
               : fmt::format("each of the {} compute warpgroups holds its part of every row's columns ({} of the {}), "
                             "so a tile {} wide made from its columns would take some from the other",
                             warpgroups_, columns / warpgroups_, columns, width);
  return start % 8 == 0 ? ""
                        : fmt::format("WGMMA's layout gives each thread 2 of every 8 columns, so a slice or concat() "
                                      "moves a register tile's columns by a multiple of 8 (not {})",
                                      std::abs(start));
}

std::string FragmentLayout::column_below(const std::string& i, int64_t bound) const {
  if (tcgen05_) return warpgroups_ == 1 ? fmt::format("{} < {}", i, bound) : "";
  return bound % 8 == 0 ? fmt::format("8 * (({}) / 4) < {}", i, bound) : "";
}

std::string FragmentLayout::sliced_register(const std::string& i, int64_t start) const {
  if (start == 0) return i;
  return fmt::format("({} + {})", i, tcgen05_ ? start : start / 2);
}

std::string FragmentLayout::combine_rows(const std::string& r, const std::string& combine,
                                         const std::string& exchange, const std::string& barrier) const {
  auto apply = [&](const std::string& a, const std::string& b) { return fmt::format(fmt::runtime(combine), a, b); };
  std::string out;
  if (!tcgen05_) {
    // The four lanes of a quad hold the columns of the same two rows.
    for (int slot = 0; slot < 2; ++slot)
      for (int mask : {1, 2}) {
        std::string element = fmt::format("{}[{}]", r, slot);
        out += fmt::format("{} = {};\n", element,
                           apply(element, fmt::format("__shfl_xor_sync(0xffffffffu, {}, {})", element, mask)));
      }
    return out;
  }
  if (warpgroups_ == 1) return out;  // a thread holds its row's every column
  out += fmt::format("{}[compute_warpgroup * 128 + warp * 32 + lane] = {}[0];\n", exchange, r);
  out += barrier + "\n";
  out += fmt::format("{}[0] = {};\n", r, apply(exchange + "[warp * 32 + lane]", exchange + "[128 + warp * 32 + lane]"));
  out += barrier + "  // the exchange is read before it is written again\n";
  return out;
}

}  // namespace tilec::cuda
