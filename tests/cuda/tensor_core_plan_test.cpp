// tests/cuda/tensor_core_plan_test.cpp — the tensor-core analysis's decisions, asserted on the
// plan value (plan_tensor_core_kernel) rather than on the printed CUDA: the shared-memory map is
// aligned and disjoint and fits the budget; each barrier expects the arrivals of whoever arrives
// on it (the producer's one thread; each compute warpgroup on sm_90a, one tcgen05.commit on
// sm_100a); each mma matched the family's MMA form and keeps D where the family does; stores
// take TMA boxes of the family's rows. samples/gemm.tile through the tilec binary, for each target.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../cli_runner.h"
#include "backend/cuda/emit_tensor_core.h"
#include "backend/cuda/kernel_plan.h"
#include "backend/target.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"

namespace tilec::testing {
namespace {

struct Planned {
  std::unique_ptr<Module> module;
  std::optional<cuda::TensorCorePlan> plan;
  std::string errors;
};

// samples/gemm.tile compiled for `target` through warp-specialize, and its kernel's plan.
Planned plan_gemm(const std::string& target) {
  Planned planned;
  CommandResult ir = run_command("cd " + source_dir().string() + " && " + tilec_binary() +
                                 " compile samples/gemm.tile --emit ir --target " + target);
  if (ir.status != 0) {
    planned.errors = ir.err;
    return planned;
  }
  DiagnosticEngine diagnostics("gemm.tir", ir.out);
  planned.module = parse_module(ir.out, diagnostics);
  if (!planned.module) {
    planned.errors = diagnostics.render_all();
    return planned;
  }
  std::optional<cuda::KernelPlan> kernel = cuda::compute_kernel_plan(*planned.module->kernels().front(), diagnostics);
  if (!kernel) {
    planned.errors = diagnostics.render_all();
    return planned;
  }
  cuda::TensorCoreNeeds needs;
  needs.target = target::find_target(target);
  planned.plan = cuda::plan_tensor_core_kernel(*kernel, needs, diagnostics);
  planned.errors = diagnostics.render_all();
  return planned;
}

// [offset, offset + bytes) of every placed region: stage buffers, barriers, the store staging.
void expect_disjoint_within(const cuda::TensorCorePlan& plan, int64_t staging_bytes) {
  std::vector<std::pair<int64_t, int64_t>> regions;
  for (const auto& stage : plan.stages) {
    EXPECT_EQ(stage.offset % 1024, 0) << stage.name << ": the 128-byte swizzle needs 1024-byte alignment";
    regions.emplace_back(stage.offset, stage.offset + stage.depth * stage.slot_bytes);
  }
  for (const auto& barrier : plan.barriers) {
    EXPECT_EQ(barrier.offset % 8, 0) << barrier.name;
    regions.emplace_back(barrier.offset, barrier.offset + 8 * barrier.slots);
  }
  if (plan.store_staging_offset >= 0)
    regions.emplace_back(plan.store_staging_offset, plan.store_staging_offset + staging_bytes);
  std::sort(regions.begin(), regions.end());
  for (size_t i = 0; i < regions.size(); ++i) {
    EXPECT_LE(regions[i].second, plan.shared_bytes);
    if (i > 0) {
      EXPECT_LE(regions[i - 1].second, regions[i].first) << "regions overlap at " << regions[i].first;
    }
  }
}

TEST(TensorCorePlan, GemmOnSm90aKeepsAccumulatorsInEachWarpgroupsRegisters) {
  Planned gemm = plan_gemm("sm_90a");
  ASSERT_TRUE(gemm.plan) << gemm.errors;
  const cuda::TensorCorePlan& plan = *gemm.plan;
  ASSERT_EQ(plan.stages.size(), 2u);  // A as loaded is K-major; B [K, N] as loaded is MN-major
  EXPECT_EQ(plan.stages[0].tile, "tile<128x64xbf16, smem>");
  EXPECT_TRUE(plan.stages[0].k_major);
  EXPECT_EQ(plan.stages[1].tile, "tile<64x256xbf16, smem>");
  EXPECT_FALSE(plan.stages[1].k_major);
  EXPECT_EQ(plan.stages[0].slot_bytes, 128 * 64 * 2);
  for (const auto& barrier : plan.barriers)  // the producer's thread fills; two compute warpgroups release
    EXPECT_EQ(barrier.arrivals, barrier.purpose == "released by the compute agent" ? 2 : 1) << barrier.name;
  ASSERT_EQ(plan.mmas.size(), 1u);
  EXPECT_EQ(plan.mmas[0].kind, "f16");
  EXPECT_EQ(plan.mmas[0].m, 64);  // per compute warpgroup: 2 x 64 = BM
  EXPECT_EQ(plan.mmas[0].k, 16);
  EXPECT_TRUE(plan.mmas[0].registers);
  EXPECT_EQ(plan.mmas[0].tmem_column, -1);
  EXPECT_EQ(plan.tmem_columns, 0);
  ASSERT_EQ(plan.stores.size(), 1u);
  EXPECT_TRUE(plan.stores[0].tma);
  EXPECT_EQ(plan.stores[0].box_rows, 64);       // each warpgroup's rows
  EXPECT_EQ(plan.stores[0].chunk_columns, 32);  // 128 bytes of f32
  expect_disjoint_within(plan, 2 * 16384);
  EXPECT_LE(plan.shared_bytes, target::find_target("sm_90a")->shared_memory_bytes);
}

TEST(TensorCorePlan, GemmOnSm100aAccumulatesInTmemAndCommitsOnce) {
  Planned gemm = plan_gemm("sm_100a");
  ASSERT_TRUE(gemm.plan) << gemm.errors;
  const cuda::TensorCorePlan& plan = *gemm.plan;
  for (const auto& barrier : plan.barriers)  // tcgen05.commit arrives once for the CTA
    EXPECT_EQ(barrier.arrivals, 1) << barrier.name;
  ASSERT_EQ(plan.mmas.size(), 1u);
  EXPECT_EQ(plan.mmas[0].m, 128);  // the CTA's M in one instruction
  EXPECT_FALSE(plan.mmas[0].registers);
  EXPECT_EQ(plan.mmas[0].tmem_column, 0);
  EXPECT_EQ(plan.tmem_columns, 256);  // BN f32 columns, a power of two from 32
  ASSERT_EQ(plan.stores.size(), 1u);
  EXPECT_EQ(plan.stores[0].accumulators, 1u);
  if (plan.stores[0].tma) {
    EXPECT_EQ(plan.stores[0].box_rows, 128);  // one row per TMEM lane
  }
  expect_disjoint_within(plan, 2 * 16384);
}

}  // namespace
}  // namespace tilec::testing
