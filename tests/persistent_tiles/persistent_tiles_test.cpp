// tests/persistent_tiles/persistent_tiles_test.cpp — the persistent-tiles pass.
//
// 1. The tile order (passes/persistent_tiles/tile_order.h) against an independent brute-force
//    enumeration of the seed's order, for many (M tiles, N tiles, swizzle, order); and the
//    worker walk (t = i * workers + w for i < cdiv(total, workers), t < total) visits every
//    tile exactly once for many worker counts.
// 2. The pass's IR: no persistent grid is left, the worker grid is sized by sm_count, the tile
//    loop and its guard are there, and the kernel computes what it computed before.
// 3. `tilec run --check` on samples/gemm.tile and the golden persistent kernels with tile
//    counts that are not multiples of the workers or the swizzle, for --sms 1, 3 and 7.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <set>
#include <utility>
#include <vector>

#include "../passes/pass_test_support.h"
#include "passes/persistent_tiles/tile_order.h"

namespace tilec::testing {
namespace {

using persistent::decode_tile;
using persistent::TileOrder;

// The seed's order written out as loops: panels of `swizzle` positions along the slow axis
// (the last one narrower); inside a panel, for each fast position, the panel's slow positions.
std::vector<std::pair<int64_t, int64_t>> brute_force_order(int64_t rows, int64_t columns, const TileOrder& order) {
  const int64_t fast_extent = order.column_major ? rows : columns;
  const int64_t slow_extent = order.column_major ? columns : rows;
  std::vector<std::pair<int64_t, int64_t>> tiles;
  for (int64_t panel_start = 0; panel_start < slow_extent; panel_start += order.swizzle)
    for (int64_t fast = 0; fast < fast_extent; ++fast)
      for (int64_t slow = panel_start; slow < std::min(panel_start + order.swizzle, slow_extent); ++slow)
        tiles.push_back(order.column_major ? std::pair{fast, slow} : std::pair{slow, fast});
  return tiles;
}

TEST(PersistentTileOrder, MatchesTheBruteForceOrder) {
  int checked = 0;
  for (int64_t rows = 1; rows <= 9; ++rows)
    for (int64_t columns = 1; columns <= 9; ++columns)
      for (int64_t swizzle : {1, 2, 3, 4, 8, 16})
        for (bool column_major : {true, false}) {
          TileOrder order{swizzle, column_major};
          auto expected = brute_force_order(rows, columns, order);
          ASSERT_EQ(static_cast<int64_t>(expected.size()), rows * columns);
          for (int64_t tile = 0; tile < rows * columns; ++tile) {
            auto got = decode_tile(tile, rows, columns, order);
            ASSERT_EQ(got, expected[static_cast<size_t>(tile)])
                << fmt::format("tile {} of {}x{}, swizzle {}, {}", tile, rows, columns, swizzle,
                               column_major ? "column-major" : "row-major");
            ++checked;
          }
        }
  EXPECT_GT(checked, 10000);
}

TEST(PersistentTileOrder, PlainOrdersAreColumnAndRowMajor) {
  // swizzle 1: column-major is m fastest, row-major is n fastest.
  EXPECT_EQ(decode_tile(4, 3, 5, TileOrder{1, true}), (std::pair<int64_t, int64_t>{1, 1}));
  EXPECT_EQ(decode_tile(4, 3, 5, TileOrder{1, false}), (std::pair<int64_t, int64_t>{0, 4}));
  // swizzle 3 over 5 N tiles, 2 M tiles: panel 0 is n in [0, 3), panel 1 (narrower) n in [3, 5).
  std::vector<std::pair<int64_t, int64_t>> walk;
  for (int64_t tile = 0; tile < 10; ++tile) walk.push_back(decode_tile(tile, 2, 5, TileOrder{3, true}));
  std::vector<std::pair<int64_t, int64_t>> expected{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1},
                                                    {1, 2}, {0, 3}, {0, 4}, {1, 3}, {1, 4}};
  EXPECT_EQ(walk, expected);
}

TEST(PersistentTileOrder, EveryTileIsVisitedExactlyOnceByTheWorkers) {
  for (int64_t rows : {1, 2, 5, 7, 12})
    for (int64_t columns : {1, 3, 8, 11})
      for (int64_t swizzle : {1, 3, 8})
        for (bool column_major : {true, false})
          for (int64_t workers : {1, 2, 3, 4, 7, 64, 132}) {
            const int64_t total = rows * columns;
            const int64_t rounds = (total + workers - 1) / workers;
            std::multiset<std::pair<int64_t, int64_t>> visited;
            for (int64_t worker = 0; worker < workers; ++worker)
              for (int64_t round = 0; round < rounds; ++round) {
                const int64_t tile = round * workers + worker;
                if (tile < total) visited.insert(decode_tile(tile, rows, columns, TileOrder{swizzle, column_major}));
              }
            ASSERT_EQ(static_cast<int64_t>(visited.size()), total);
            for (int64_t m = 0; m < rows; ++m)
              for (int64_t n = 0; n < columns; ++n)
                ASSERT_EQ(visited.count({m, n}), 1u) << fmt::format("tile ({}, {}) of {}x{}, {} workers", m, n, rows,
                                                                    columns, workers);
          }
}

// Every op of `region` and its nested regions.
void collect(const Region& region, std::vector<const Operation*>& out) {
  for (const auto& op : region.operations()) {
    out.push_back(op.get());
    for (size_t r = 0; r < op->num_regions(); ++r) collect(op->region(r), out);
  }
}

TEST(PersistentTilesPass, RewritesTheGridIntoATileLoop) {
  for (const char* name : {"swizzle_tail", "column_major", "row_major", "gemm_sm_90a", "batch_axis"}) {
    SCOPED_TRACE(name);
    auto path = source_dir() / "tests" / "golden" / "persistent-tiles" / fmt::format("{}.tile", name);
    LoadedModule before = load_module(path);
    ASSERT_TRUE(before.module);
    LoadedModule after = load_module(path);
    ASSERT_EQ(run_pipeline_until(after, "persistent-tiles"), "");
    const Operation& kernel = *after.module->kernels().front();
    std::vector<const Operation*> ops;
    collect(kernel.region(), ops);
    int grids = 0, sm_counts = 0, tile_loops = 0;
    for (const Operation* op : ops) {
      if (op->kind() == OpKind::grid_ids) {
        ++grids;
        EXPECT_EQ(op->string_attr("schedule"), "tiles");
        ASSERT_EQ(op->num_operands(), 1u);
        ASSERT_NE(op->operand(0)->defining_op(), nullptr);
        EXPECT_EQ(op->operand(0)->defining_op()->kind(), OpKind::sm_count);
      }
      sm_counts += op->kind() == OpKind::sm_count;
      // The tile loop sits directly in the kernel body and holds the guard.
      if (op->kind() == OpKind::for_ && op->parent_op() == &kernel) {
        ++tile_loops;
        bool guarded = false;
        for (const auto& inner : op->region().operations()) guarded |= inner->kind() == OpKind::if_;
        EXPECT_TRUE(guarded);
      }
    }
    EXPECT_EQ(grids, 1);
    EXPECT_EQ(sm_counts, 1);
    EXPECT_EQ(tile_loops, 1);
    EXPECT_EQ(compare_runs(*before.module->kernels().front(), kernel, 7), "");
  }
}

TEST(PersistentTilesPass, RunCheckPassesForManyShapesAndWorkerCounts) {
  struct Case {
    const char* input;
    const char* dims;
  };
  const std::vector<Case> cases{
      {"samples/gemm.tile", "M=300,N=600,K=64"},   // 3 x 3 tiles: swizzle 8 leaves one narrow panel
      {"samples/gemm.tile", "M=128,N=1304,K=96"},  // 1 x 6 tiles
      {"tests/golden/persistent-tiles/swizzle_tail.tile", "M=100,N=160"},  // 4 x 5 tiles, panels 3 + 2
      {"tests/golden/persistent-tiles/column_major.tile", "M=70,N=230"},
      {"tests/golden/persistent-tiles/row_major.tile", "M=170,N=90"},
      {"tests/golden/persistent-tiles/batch_axis.tile", "R=320,N=70"},  // 5 batches of 2 x 3 tiles
  };
  for (const Case& c : cases)
    for (int sms : {1, 3, 7}) {
      SCOPED_TRACE(fmt::format("{} --dims {} --sms {}", c.input, c.dims, sms));
      CommandResult r = run_command(fmt::format("cd {} && {} run {} --check --dims {} --sms {}", source_dir().string(),
                                                tilec_binary(), c.input, c.dims, sms));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_NE(r.out.find("  check "), std::string::npos) << r.out;  // the outputs were compared
    }
}

}  // namespace
}  // namespace tilec::testing
