// tests/persistent_tiles/cluster_test.cpp — persistent-tiles with `cluster = C` (clusters along M).
//
// The mapping is computed twice and checked against the same properties:
//   - with plain integers (cluster_walk below, through tile_order.h's decode_tile): the model of
//     docs/passes/persistent_tiles.md, independent of the pass's code;
//   - by running the pass's IR in the interpreter: a kernel of 1×1 tiles counts its visits of
//     each (m, n) and, after the pass, the test rewires two of its stores to record the worker
//     and the round (the tile loop's clock) that visited it.
// Properties: the workers are max(C, W div C * C); every tile runs exactly once; in one round
// the CTAs of one cluster (workers w with the same w div C) share n and take adjacent M tiles,
// rank r at m = base + r with base a multiple of C; and the interpreter's walk equals the model.
// Then `tilec run --check` of a gemm with cluster = 2 at a ragged M, and the located error for a
// cluster that is not a power of two.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "../passes/pass_test_support.h"
#include "ir/builder.h"
#include "passes/persistent_tiles/tile_order.h"
#include "runtime/interpreter/interpreter.h"

namespace tilec::testing {
namespace {

using persistent::decode_tile;
using persistent::TileOrder;

struct Shape {
  int64_t rows = 1, columns = 1;  // M tiles, N tiles
  TileOrder order;
  int64_t cluster = 1;
  int64_t requested_workers = 1;  // the `workers` attribute (what sm_count would give)

  std::string describe() const {
    return fmt::format("{}x{} tiles, swizzle {}, {}, cluster {}, {} workers requested", rows, columns, order.swizzle,
                       order.column_major ? "column-major" : "row-major", cluster, requested_workers);
  }
};

struct Visit {
  int64_t worker = -1, round = -1;
  bool operator==(const Visit&) const = default;
};
using Walk = std::map<std::pair<int64_t, int64_t>, std::vector<Visit>>;  // (m, n) → its visits

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t launched_workers(const Shape& s) { return std::max(s.cluster, s.requested_workers / s.cluster * s.cluster); }

// The model: clusters walk the cluster tiles of (cdiv(rows, C), columns); rank r of cluster
// tile (row, n) runs (row * C + r, n) unless that is past the M tiles.
Walk cluster_walk(const Shape& s) {
  const int64_t workers = launched_workers(s);
  const int64_t clusters = workers / s.cluster;
  const int64_t cluster_rows = cdiv(s.rows, s.cluster);
  const int64_t total = cluster_rows * s.columns;
  Walk walk;
  for (int64_t worker = 0; worker < workers; ++worker)
    for (int64_t round = 0; round < cdiv(total, clusters); ++round) {
      const int64_t tile = round * clusters + worker / s.cluster;
      if (tile >= total) continue;
      auto [row, n] = decode_tile(tile, cluster_rows, s.columns, s.order);
      const int64_t m = row * s.cluster + worker % s.cluster;
      if (m < s.rows) walk[{m, n}].push_back({worker, round});
    }
  return walk;
}

// Empty when `walk` has the properties of the header comment, else what broke.
std::string check_walk(const Walk& walk, const Shape& s) {
  for (int64_t m = 0; m < s.rows; ++m)
    for (int64_t n = 0; n < s.columns; ++n) {
      auto it = walk.find({m, n});
      size_t visits = it == walk.end() ? 0 : it->second.size();
      if (visits != 1) return fmt::format("tile ({}, {}) ran {} times", m, n, visits);
    }
  if (walk.size() != static_cast<size_t>(s.rows * s.columns)) return "a tile outside the grid ran";
  // (cluster, round) → the (m, n, rank) its CTAs ran.
  std::map<std::pair<int64_t, int64_t>, std::vector<std::tuple<int64_t, int64_t, int64_t>>> groups;
  for (const auto& [tile, visits] : walk) {
    const Visit& visit = visits.front();
    if (visit.worker < 0 || visit.worker >= launched_workers(s))
      return fmt::format("worker {} is outside the launch of {}", visit.worker, launched_workers(s));
    groups[{visit.worker / s.cluster, visit.round}].push_back({tile.first, tile.second, visit.worker % s.cluster});
  }
  for (const auto& [key, members] : groups) {
    const auto& [m0, n0, rank0] = members.front();
    const int64_t base = m0 - rank0;
    if (base % s.cluster != 0) return fmt::format("cluster {} round {}: M tile {} at rank {}", key.first, key.second, m0, rank0);
    for (const auto& [m, n, rank] : members)
      if (n != n0 || m != base + rank)
        return fmt::format("cluster {} round {}: ({}, {}) at rank {} beside ({}, {}) at rank {}", key.first, key.second,
                           m, n, rank, m0, n0, rank0);
  }
  return {};
}

std::vector<Shape> shapes(const std::vector<int64_t>& rows, const std::vector<int64_t>& columns,
                          const std::vector<int64_t>& swizzles, const std::vector<int64_t>& clusters,
                          const std::vector<int64_t>& workers) {
  std::vector<Shape> out;
  for (int64_t r : rows)
    for (int64_t c : columns)
      for (int64_t swizzle : swizzles)
        for (bool column_major : {true, false})
          for (int64_t cluster : clusters)
            for (int64_t w : workers) out.push_back(Shape{r, c, TileOrder{swizzle, column_major}, cluster, w});
  return out;
}

TEST(PersistentClusters, TheModelRunsEveryTileOnceWithClustersOnAdjacentMTiles) {
  int checked = 0;
  for (const Shape& s : shapes({1, 2, 3, 5, 7, 8, 13}, {1, 2, 3, 4, 9}, {1, 2, 3, 8}, {1, 2, 4, 8},
                               {1, 2, 3, 5, 8, 13, 132})) {
    ASSERT_EQ(check_walk(cluster_walk(s), s), "") << s.describe();
    ++checked;
  }
  EXPECT_GT(checked, 5000);
}

TEST(PersistentClusters, WorkersAreRoundedDownToWholeClusters) {
  EXPECT_EQ(launched_workers(Shape{1, 1, {}, 2, 1}), 2);      // at least one cluster
  EXPECT_EQ(launched_workers(Shape{1, 1, {}, 2, 3}), 2);
  EXPECT_EQ(launched_workers(Shape{1, 1, {}, 4, 132}), 132);
  EXPECT_EQ(launched_workers(Shape{1, 1, {}, 8, 132}), 128);
  EXPECT_EQ(launched_workers(Shape{1, 1, {}, 1, 7}), 7);
}

// A kernel over 1×1 tiles: Count[m, n] += 1; Worker and Round get stores the test rewires. The
// grid has `rows` M tiles but the tensors have kPadding more rows, so a CTA that ran the body
// past the M tiles (a missing ragged-row guard) leaves a count there instead of nothing.
constexpr int64_t kPadding = 8;

std::string visit_kernel(const Shape& s) {
  return fmt::format(R"(// tilec IR
module {{passes = ["parse"]}}

kernel @visit(%Count: tensor<E0, E1, f32>, %Worker: tensor<E0, E1, f32>, %Round: tensor<E0, E1, f32>, %rows: index) loc(1:1) {{
  %e1 = dim %Count {{axis = 1}} : index loc(1:1)
  %m, %n = grid_ids %rows, %e1 {{cluster = {}, order = "{}", schedule = "persistent", swizzle = {}, workers = {}}} : index, index loc(2:1)
  %count = load %Count, %m, %n : tile<1x1xf32, reg> loc(3:1)
  %one = constant {{value = 1.0}} : f32 loc(3:1)
  %next = add %count, %one : tile<1x1xf32, reg> loc(3:1)
  store %Count, %m, %n, %next loc(3:1)
  %zero = zeros : tile<1x1xf32, reg> loc(4:1)
  store %Worker, %m, %n, %zero loc(4:1)
  store %Round, %m, %n, %zero loc(5:1)
  return
}}
)",
                     s.cluster, s.order.column_major ? "column" : "row", s.order.swizzle, s.requested_workers);
}

// Every op of `region` and its nested regions.
void collect(Region& region, std::vector<Operation*>& out) {
  for (auto& op : region.operations()) {
    out.push_back(op.get());
    for (size_t r = 0; r < op->num_regions(); ++r) collect(op->region(r), out);
  }
}

// Makes the store of zeros to `tensor` store `scalar` (an index value) instead.
void store_scalar_instead(Operation& store, Value* scalar) {
  Region& region = *store.parent_region();
  Builder builder(&region);
  builder.set_insertion_point(&region, region.position_of(&store));
  Value* as_float = builder.create(OpKind::cast, {scalar}, {Type::scalar(ScalarKind::f32)})->result();
  Value* tile = builder.create(OpKind::full, {as_float}, {Type::tile({1, 1}, ScalarKind::f32, MemorySpace::reg)})->result();
  store.set_operand(3, tile);
}

// The pass's walk, by interpreting its IR; fails the test (and returns {}) when it cannot run.
Walk interpreted_walk(const Shape& s) {
  LoadedModule input = parse_ir_text(visit_kernel(s));
  EXPECT_TRUE(input.module) << (input.diagnostics ? input.diagnostics->render_all() : "");
  if (!input.module) return {};
  EXPECT_EQ(run_pipeline_until(input, "persistent-tiles"), "");
  Operation& kernel = *input.module->kernels().front();
  Region& body = kernel.region();
  Value* worker = nullptr;
  Value* round = nullptr;
  for (auto& op : body.operations()) {
    if (op->kind() == OpKind::grid_ids) worker = op->result();
    if (op->kind() == OpKind::for_) round = op->region().argument(0);
  }
  EXPECT_TRUE(worker && round) << "no worker grid or tile loop";
  if (!worker || !round) return {};
  std::vector<Operation*> ops;
  collect(body, ops);
  for (Operation* op : ops) {
    if (op->kind() != OpKind::store) continue;
    if (op->operand(0) == body.argument(1)) store_scalar_instead(*op, worker);
    if (op->operand(0) == body.argument(2)) store_scalar_instead(*op, round);
  }

  const int64_t padded_rows = s.rows + kPadding;
  std::vector<runtime::HostBuffer> tensors(3, runtime::HostBuffer(ScalarKind::f32, {padded_rows, s.columns}));
  for (int64_t i = 0; i < tensors[0].element_count(); ++i) tensors[0].store_float(i, 0.0f);  // counts start at 0
  std::vector<runtime::KernelArgument> arguments{&tensors[0], &tensors[1], &tensors[2], s.rows};
  runtime::LaunchResult result =
      runtime::run_kernel(kernel, arguments, {{"E0", padded_rows}, {"E1", s.columns}});
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.tile_count, launched_workers(s)) << "the worker grid";
  Walk walk;
  for (int64_t i = 0; i < padded_rows * s.columns; ++i) {
    const std::pair<int64_t, int64_t> tile{i / s.columns, i % s.columns};
    const int64_t count = static_cast<int64_t>(tensors[0].load_float(i));
    for (int64_t visit = 0; visit < count; ++visit)
      walk[tile].push_back({static_cast<int64_t>(tensors[1].load_float(i)), static_cast<int64_t>(tensors[2].load_float(i))});
  }
  return walk;
}

TEST(PersistentClusters, ThePassIrWalksTheTilesLikeTheModel) {
  int checked = 0;
  for (const Shape& s : shapes({1, 3, 5, 8}, {1, 3, 4}, {1, 3}, {1, 2, 4, 8}, {1, 3, 8})) {
    SCOPED_TRACE(s.describe());
    Walk interpreted = interpreted_walk(s);
    ASSERT_EQ(check_walk(interpreted, s), "");
    ASSERT_EQ(interpreted, cluster_walk(s));
    ++checked;
  }
  EXPECT_EQ(checked, 4 * 3 * 2 * 2 * 4 * 3);
}

TEST(PersistentClusters, RunCheckOfAClusteredGemmAtARaggedM) {
  // M = 300: 3 M tiles, so the second cluster row has one CTA with nothing to do.
  for (const char* dims : {"M=300,N=600,K=64", "M=130,N=1304,K=96"})
    for (int sms : {1, 3}) {
      SCOPED_TRACE(fmt::format("--dims {} --sms {}", dims, sms));
      CommandResult r = run_command(fmt::format("cd {} && {} run tests/golden/persistent-tiles/gemm_cluster.tile --check "
                                                "--dims {} --sms {}",
                                                source_dir().string(), tilec_binary(), dims, sms));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_NE(r.out.find("check %C: ok"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find(": 2 CTAs on"), std::string::npos) << "1 and 3 SMs launch one cluster of 2: " << r.out;
    }
}

TEST(PersistentClusters, AClusteredTilesGridThatIsNotWholeClustersIsRefused) {
  const std::string text = R"(// tilec IR
module {passes = ["parse", "promote-mma-operands", "fold-constants", "persistent-tiles"]}

kernel @odd(%X: tensor<N, f32>) loc(1:1) {
  %three = constant {value = 3} : index loc(1:1)
  %w = grid_ids %three {cluster = 2, schedule = "tiles"} : index loc(2:1)
  return
}
)";
  LoadedModule input = parse_ir_text(text);
  ASSERT_TRUE(input.module) << input.diagnostics->render_all();
  runtime::HostBuffer x(ScalarKind::f32, {4});
  std::vector<runtime::KernelArgument> arguments{&x};
  runtime::LaunchResult result = runtime::run_kernel(*input.module->kernels().front(), arguments, {{"N", 4}});
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("not whole clusters of 2"), std::string::npos) << result.message;
}

TEST(PersistentClusters, TheVerifierChecksATilesGridsCluster) {
  for (const char* bad : {"cluster = 3", "cluster = 16"}) {
    LoadedModule input = parse_ir_text(fmt::format(R"(// tilec IR
module {{passes = ["parse"]}}

kernel @k(%X: tensor<N, f32>) loc(1:1) {{
  %four = constant {{value = 4}} : index loc(1:1)
  %w = grid_ids %four {{{}, schedule = "tiles"}} : index loc(2:1)
  return
}}
)",
                                                   bad));
    EXPECT_FALSE(input.module) << bad;
    EXPECT_NE(input.diagnostics->render_all().find("'cluster' on a tiles grid is 1, 2, 4 or 8"), std::string::npos)
        << input.diagnostics->render_all();
  }
}

}  // namespace
}  // namespace tilec::testing
