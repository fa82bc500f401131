// tests/cuda/fragment_layout_test.cpp — the register-tile layouts of the tensor-core backend,
// evaluated for every thread and register.
//
// FragmentLayout spells C++ expressions; a small evaluator here computes them for each compute
// thread and register and checks: (1) every element of a tile is held by exactly one thread and
// register per warpgroup split; (2) a row vector's register for a tile register holds that
// register's row; (3) on sm_90a the layout is WGMMA's accumulator layout as the PTX ISA draws
// it, and the pairs the emitter packs for a register A operand (registers 2j, 2j+1 of a 16-column
// step) are the A fragment's a0..a7 of that figure; (4) on sm_100a a thread holds one TMEM lane
// (warp w reads lanes 32·(w mod 4)..). The expected layouts are written from the ISA's figures,
// not from the emitter's formulas.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "backend/cuda/tensor_core_fragments.h"

namespace tilec::cuda {
namespace {

// Integer expressions over + - * / % and parentheses with named variables (C++ semantics for
// non-negative operands).
class Evaluator {
 public:
  Evaluator(const std::string& text, const std::map<std::string, long>& variables)
      : text_(text), variables_(variables) {}
  long run() {
    long value = sum();
    skip_spaces();
    if (at_ != text_.size()) throw std::runtime_error("trailing text in " + text_);
    return value;
  }

 private:
  void skip_spaces() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  long sum() {
    long value = product();
    for (skip_spaces(); at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-'); skip_spaces()) {
      char op = text_[at_++];
      long right = product();
      value = op == '+' ? value + right : value - right;
    }
    return value;
  }
  long product() {
    long value = factor();
    for (skip_spaces(); at_ < text_.size() && (text_[at_] == '*' || text_[at_] == '/' || text_[at_] == '%'); skip_spaces()) {
      char op = text_[at_++];
      long right = factor();
      value = op == '*' ? value * right : op == '/' ? value / right : value % right;
    }
    return value;
  }
  long factor() {
    skip_spaces();
    if (text_[at_] == '(') {
      ++at_;
      long value = sum();
      skip_spaces();
      if (text_[at_++] != ')') throw std::runtime_error("missing ) in " + text_);
      return value;
    }
    size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) ++at_;
    std::string word = text_.substr(start, at_ - start);
    if (word.empty()) throw std::runtime_error("unexpected text in " + text_);
    if (std::isdigit(static_cast<unsigned char>(word[0]))) return std::stol(word);
    auto it = variables_.find(word);
    if (it == variables_.end()) throw std::runtime_error("unknown name " + word + " in " + text_);
    return it->second;
  }

  std::string text_;
  std::map<std::string, long> variables_;
  size_t at_ = 0;
};

struct Position {
  long row, column;
  bool operator<(const Position& other) const { return std::pair(row, column) < std::pair(other.row, other.column); }
};

// Where register i of compute thread t holds an element of a tile of `rows` x `columns`, by the
// layout's expressions.
Position held(const FragmentLayout& layout, long thread, long i, long columns, long rows) {
  std::map<std::string, long> variables{{"i", i},
                                        {"compute_thread", thread},
                                        {"lane", thread % 32},
                                        {"warp", (thread % 128) / 32},
                                        {"compute_warpgroup", thread / 128}};
  return {Evaluator(layout.row("i", columns == 1, rows), variables).run(),
          Evaluator(layout.column("i", columns), variables).run()};
}

TEST(FragmentLayout, EveryTileElementIsHeldOnceAndRowVectorsFollowTheRows) {
  for (bool blackwell : {false, true})
    for (long warpgroups : {1L, 2L}) {
      if (blackwell && warpgroups == 1) continue;  // sm_100a tiles are 128 rows: two warpgroups here
      FragmentLayout layout(blackwell ? target::MmaFamily::tcgen05 : target::MmaFamily::wgmma, warpgroups);
      long rows = blackwell ? 128 : 64 * warpgroups;
      for (long columns : {64L, 128L}) {
        SCOPED_TRACE(std::string(blackwell ? "sm_100a" : "sm_90a") + ", warpgroups " + std::to_string(warpgroups) +
                     ", columns " + std::to_string(columns));
        ASSERT_EQ(layout.unsupported(rows, columns), "");
        std::set<Position> seen;
        for (long thread = 0; thread < 128 * warpgroups; ++thread)
          for (long i = 0; i < layout.count(columns); ++i) {
            Position p = held(layout, thread, i, columns, rows);
            EXPECT_TRUE(p.row >= 0 && p.row < rows && p.column >= 0 && p.column < columns);
            EXPECT_TRUE(seen.insert(p).second) << "row " << p.row << " column " << p.column << " held twice";
            // The row vector register `row_slot(i)` of the same thread holds this row.
            std::map<std::string, long> variables{{"i", i}};
            long slot = Evaluator(layout.row_slot("i"), variables).run();
            ASSERT_GE(slot, 0);
            ASSERT_LT(slot, layout.count(1));
            EXPECT_EQ(held(layout, thread, slot, 1, rows).row, p.row);
          }
        EXPECT_EQ(static_cast<long>(seen.size()), rows * columns);
      }
    }
}

// PTX ISA, "Matrix fragments for wgmma.mma_async .m64nNk16": lane l of warp w (of the warpgroup)
// holds D rows 16w + l/4 and 16w + l/4 + 8; D register 4j + q is column 8j + 2(l % 4) + q % 2
// of the first row (q < 2) or the second (q >= 2). A (64 x 16, registers a0..a7): a0 a1 at the
// first row, columns 2(l % 4) + 0, 1; a2 a3 the second row, same columns; a4 a5 the first row,
// columns + 8; a6 a7 the second row, columns + 8.
TEST(FragmentLayout, Sm90aIsTheWgmmaAccumulatorLayoutAndPairsFormTheAFragment) {
  FragmentLayout layout(target::MmaFamily::wgmma, 2);
  const long columns = 64;
  for (long thread = 0; thread < 256; ++thread) {
    long lane = thread % 32, warp = (thread % 128) / 32, first_row = (thread / 128) * 64 + 16 * warp + lane / 4;
    for (long j = 0; j < columns / 8; ++j)
      for (long q = 0; q < 4; ++q) {
        Position p = held(layout, thread, 4 * j + q, columns, 128);
        EXPECT_EQ(p.row, first_row + (q >= 2 ? 8 : 0));
        EXPECT_EQ(p.column, 8 * j + 2 * (lane % 4) + q % 2);
      }
    // Step s of a register-A WGMMA takes registers 8s..8s+7 as a0..a7 (emit_wgmma packs 2i, 2i+1).
    for (long step = 0; step < columns / 16; ++step)
      for (long a = 0; a < 8; ++a) {
        Position p = held(layout, thread, 8 * step + a, columns, 128);
        long expected_row = first_row + ((a / 2) % 2 == 1 ? 8 : 0);
        long expected_column = 16 * step + 2 * (lane % 4) + a % 2 + (a >= 4 ? 8 : 0);
        EXPECT_EQ(p.row, expected_row) << "a" << a;
        EXPECT_EQ(p.column, expected_column) << "a" << a;
      }
  }
}

// The TMA-store epilogue (emit_tma_store) writes box `chunk` (W columns of 128 bytes: 32 f32 or
// 64 16-bit) on sm_90a from registers chunk·W/2 .. chunk·W/2 + W/2 - 1: those must be exactly the
// thread's elements in columns chunk·W .. chunk·W + W - 1.
TEST(FragmentLayout, Sm90aRegisterRunsFillWholeStoreBoxes) {
  FragmentLayout layout(target::MmaFamily::wgmma, 2);
  const long columns = 256;
  for (long width : {32L, 64L})
    for (long thread = 0; thread < 256; ++thread) {
      std::map<long, long> per_chunk;
      for (long i = 0; i < layout.count(columns); ++i) {
        Position p = held(layout, thread, i, columns, 128);
        EXPECT_EQ(p.column / width, i / (width / 2)) << "width " << width << ", register " << i;
        ++per_chunk[p.column / width];
      }
      for (const auto& [chunk, registers] : per_chunk) EXPECT_EQ(registers, width / 2) << "chunk " << chunk;
    }
}

// tcgen05.ld .32x32b: warp w of a warpgroup reads TMEM lanes 32(w % 4) .. 32(w % 4) + 31, one per
// thread, and register i of an .x32 load is column `first + i`.
TEST(FragmentLayout, Sm100aHoldsOneTmemLanePerThread) {
  FragmentLayout layout(target::MmaFamily::tcgen05, 2);
  for (long thread = 0; thread < 256; ++thread)
    for (long i = 0; i < layout.count(64); ++i) {
      Position p = held(layout, thread, i, 64, 128);
      EXPECT_EQ(p.row, 32 * ((thread / 32) % 4) + thread % 32);
      EXPECT_EQ(p.column, (thread / 128) * 32 + i);
    }
  EXPECT_EQ(layout.owner(128), "");
  EXPECT_NE(layout.unsupported(96, 64), "") << "a tile is 128 rows, one per TMEM lane, or 64";
}

// A 64-row tile on sm_100a is what tcgen05.ld 32x32b reads of TMEM layout F (PTX ISA, "Matrix
// fragments for tcgen05.mma", M = 64, cta_group::1: row 16w + r in lane 32w + r, r < 16):
// thread l < 16 of warp w holds row 16w + l, every element once over those threads; thread l >= 16
// stands in for thread l - 16, and only the owners (lanes 0..15) write.
TEST(FragmentLayout, Sm100aSixtyFourRowsAreTmemLayoutFAsTcgen05LdReadsIt) {
  for (long warpgroups : {1L, 2L}) {
    FragmentLayout layout(target::MmaFamily::tcgen05, warpgroups);
    ASSERT_EQ(layout.unsupported(64, 64), "");
    ASSERT_EQ(layout.owner(64), "lane < 16");
    std::set<Position> owned;
    for (long thread = 0; thread < 128 * warpgroups; ++thread) {
      const long lane = thread % 32, warp = (thread / 32) % 4;
      const long tmem_lane = 32 * warp + lane;  // what this thread's tcgen05.ld 32x32b reads
      for (long i = 0; i < layout.count(64); ++i) {
        Position p = held(layout, thread, i, 64, 64);
        ASSERT_TRUE(p.row >= 0 && p.row < 64) << p.row;
        EXPECT_EQ(p.column, thread / 128 * (64 / warpgroups) + i);
        if (lane < 16) {
          EXPECT_EQ(tmem_lane, 32 * (p.row / 16) + p.row % 16) << "layout F puts row " << p.row << " elsewhere";
          EXPECT_TRUE(owned.insert(p).second) << "row " << p.row << " column " << p.column << " owned twice";
        } else {
          EXPECT_EQ(p.row, held(layout, thread - 16, i, 64, 64).row) << "a stand-in holds its owner's row";
        }
        EXPECT_EQ(held(layout, thread, 0, 1, 64).row, p.row) << "the row vector holds the same row";
      }
    }
    EXPECT_EQ(owned.size(), 64u * 64u);
  }
}

// The stores address each register's element as the thread's first element plus steps
// (TensorCoreKernel::declare_store_corner): thread_row and row_step must add up to row, and
// likewise for columns, and the steps may not depend on the thread (the evaluator knows no
// `lane`, `warp` or `compute_warpgroup` there), or the unrolled loop's steps are not constants.
TEST(FragmentLayout, ThreadOriginPlusRegisterStepIsThePosition) {
  for (bool blackwell : {false, true})
    for (long warpgroups : {1L, 2L})
      for (long rows : {64L, 128L}) {
        FragmentLayout layout(blackwell ? target::MmaFamily::tcgen05 : target::MmaFamily::wgmma, warpgroups);
        for (long columns : {1L, 64L, 128L}) {
          if (!layout.unsupported(rows, columns).empty()) continue;
          SCOPED_TRACE(std::string(blackwell ? "sm_100a" : "sm_90a") + ", warpgroups " + std::to_string(warpgroups) +
                       ", " + std::to_string(rows) + " x " + std::to_string(columns));
          const bool row_vector = columns == 1;
          for (long thread = 0; thread < 128 * warpgroups; ++thread) {
            std::map<std::string, long> position{{"lane", thread % 32},
                                                 {"warp", (thread % 128) / 32},
                                                 {"compute_warpgroup", thread / 128}};
            const long first_row = Evaluator(layout.thread_row(rows), position).run();
            const long first_column = Evaluator(layout.thread_column(columns), position).run();
            for (long i = 0; i < layout.count(columns); ++i) {
              const std::map<std::string, long> register_only{{"i", i}};
              const long row_step = Evaluator(layout.row_step("i", row_vector), register_only).run();
              const long column_step = Evaluator(layout.column_step("i", columns), register_only).run();
              const Position p = held(layout, thread, i, columns, rows);
              EXPECT_EQ(first_row + row_step, p.row) << "thread " << thread << ", register " << i;
              EXPECT_EQ(first_column + column_step, p.column) << "thread " << thread << ", register " << i;
            }
          }
        }
      }
}

}  // namespace
}  // namespace tilec::cuda
