// tests/cuda/tensor_core_plan_test.cpp — the tensor-core analysis's decisions, asserted on the
// plan value (plan_tensor_core_kernel) rather than on the printed CUDA: the shared-memory map is
// aligned and disjoint and fits the budget; each barrier expects the arrivals of whoever arrives
// on it (the producer's one thread; each compute warpgroup on sm_90a, one tcgen05.commit on
// sm_100a); each mma matched the family's MMA form and keeps D where the family does; stores
// take TMA boxes of the family's rows; attention's register tiles, its A from registers (staged
// through shared memory on sm_100a) and its row reductions. Samples through the tilec binary, for
// each target.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
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

// samples/NAME.tile compiled for `target` through warp-specialize, and its kernel's plan.
Planned plan_sample(const std::string& name, const std::string& target) {
  Planned planned;
  CommandResult ir = run_command("cd " + source_dir().string() + " && " + tilec_binary() + " compile samples/" +
                                 name + ".tile --emit ir --target " + target);
  if (ir.status != 0) {
    planned.errors = ir.err;
    return planned;
  }
  DiagnosticEngine diagnostics(name + ".tir", ir.out);
  planned.module = parse_module(ir.out, diagnostics);
  if (!planned.module) {
    planned.errors = diagnostics.render_all();
    return planned;
  }
  std::optional<cuda::KernelPlan> kernel =
      cuda::compute_kernel_plan(*planned.module->kernels().front(), diagnostics,
                                kernel_name(*planned.module->kernels().front()));
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

// [offset, offset + bytes) of every placed region: stage buffers, barriers, the store staging,
// staged A operands, the row-reduction exchange.
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
  for (const auto& mma : plan.mmas)
    if (mma.staging_bytes > 0) {
      EXPECT_EQ(mma.staging_offset % 1024, 0) << "a staged A is swizzled like a TMA panel";
      regions.emplace_back(mma.staging_offset, mma.staging_offset + mma.staging_bytes);
    }
  if (plan.exchange_offset >= 0) regions.emplace_back(plan.exchange_offset, plan.exchange_offset + plan.exchange_bytes);
  std::sort(regions.begin(), regions.end());
  for (size_t i = 0; i < regions.size(); ++i) {
    EXPECT_LE(regions[i].second, plan.shared_bytes);
    if (i > 0) {
      EXPECT_LE(regions[i - 1].second, regions[i].first) << "regions overlap at " << regions[i].first;
    }
  }
}

TEST(TensorCorePlan, GemmOnSm90aKeepsAccumulatorsInEachWarpgroupsRegisters) {
  Planned gemm = plan_sample("gemm", "sm_90a");
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
  EXPECT_FALSE(plan.mmas[0].a_registers);
  EXPECT_EQ(plan.mmas[0].tmem_column, -1);
  EXPECT_EQ(plan.tmem_columns, 0);
  ASSERT_EQ(plan.fragments.size(), 1u);  // the accumulator, carried by the loop in place
  EXPECT_TRUE(plan.fragments[0].accumulator);
  ASSERT_EQ(plan.stores.size(), 1u);
  EXPECT_TRUE(plan.stores[0].tma);
  EXPECT_EQ(plan.stores[0].box_rows, 64);       // each warpgroup's rows
  EXPECT_EQ(plan.stores[0].chunk_columns, 32);  // 128 bytes of f32
  EXPECT_EQ(plan.stores[0].warpgroup_columns, 256);  // all of BN: each warpgroup stores its 64 rows
  expect_disjoint_within(plan, 2 * 16384);
  EXPECT_LE(plan.shared_bytes, target::find_target("sm_90a")->shared_memory_bytes);
}

TEST(TensorCorePlan, GemmOnSm100aAccumulatesInTmemAndCommitsOnce) {
  Planned gemm = plan_sample("gemm", "sm_100a");
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
  EXPECT_TRUE(plan.fragments.empty());  // the accumulator lives in TMEM only
  EXPECT_EQ(plan.stores[0].warpgroup_columns, 256 / 2);  // each compute warpgroup half of BN's columns
  if (plan.stores[0].tma) {
    EXPECT_EQ(plan.stores[0].box_rows, 128);  // one row per TMEM lane
  }
  expect_disjoint_within(plan, 2 * 16384);
}

// The register tiles of `plan` that are row vectors (running maxima and sums).
size_t row_vectors(const cuda::TensorCorePlan& plan) {
  return static_cast<size_t>(std::count_if(plan.fragments.begin(), plan.fragments.end(),
                                           [](const auto& fragment) { return fragment.columns == 1; }));
}

// S = Q·K^T from shared memory into registers; O += P·V with P a register tile (WGMMA takes A
// from registers as it stands); no exchange: a warpgroup holds whole rows.
TEST(TensorCorePlan, AttentionOnSm90aTakesPFromRegisters) {
  Planned attention = plan_sample("attention", "sm_90a");
  ASSERT_TRUE(attention.plan) << attention.errors;
  const cuda::TensorCorePlan& plan = *attention.plan;
  ASSERT_EQ(plan.mmas.size(), 2u);
  EXPECT_FALSE(plan.mmas[0].a_registers);
  EXPECT_TRUE(plan.mmas[0].registers);
  EXPECT_TRUE(plan.mmas[1].a_registers);
  EXPECT_TRUE(plan.mmas[1].registers);
  EXPECT_EQ(plan.mmas[1].staging_bytes, 0);
  EXPECT_EQ(plan.tmem_columns, 0);
  EXPECT_EQ(plan.exchange_offset, -1);
  EXPECT_GE(row_vectors(plan), 2u);  // the running row maximum and row sum
  EXPECT_GE(std::count_if(plan.fragments.begin(), plan.fragments.end(), [](const auto& f) { return f.accumulator; }),
            2);
  for (const auto& fragment : plan.fragments) EXPECT_EQ(fragment.rows, 128) << fragment.name;
  expect_disjoint_within(plan, 2 * 16384);
}

// tcgen05.mma: both D are register tiles computed in TMEM columns of their own; P goes to shared
// memory (swizzled as TMA would) for the second mma.
TEST(TensorCorePlan, AttentionOnSm100aStagesPThroughSharedMemory) {
  Planned attention = plan_sample("attention", "sm_100a");
  ASSERT_TRUE(attention.plan) << attention.errors;
  const cuda::TensorCorePlan& plan = *attention.plan;
  ASSERT_EQ(plan.mmas.size(), 2u);
  EXPECT_FALSE(plan.mmas[0].a_registers);
  EXPECT_TRUE(plan.mmas[1].a_registers);
  EXPECT_EQ(plan.mmas[1].staging_bytes, 128 * 64 * 2);  // P: BQ x BKV bf16
  std::vector<std::pair<int64_t, int64_t>> columns;  // each D's TMEM columns, [first, last)
  for (const auto& mma : plan.mmas) {
    EXPECT_TRUE(mma.registers);
    EXPECT_EQ(mma.m, 128);
    ASSERT_GE(mma.tmem_column, 0);
    columns.emplace_back(mma.tmem_column, mma.tmem_column + 64);  // BKV and D are both 64
  }
  EXPECT_LE(columns[0].second, columns[1].first) << "the two mmas' TMEM columns overlap";
  EXPECT_LE(columns[1].second, plan.tmem_columns);
  EXPECT_GE(row_vectors(plan), 2u);
  expect_disjoint_within(plan, 2 * 16384);
}

// Every mma sample on every target: the shared-memory map is aligned, disjoint and within the
// budget; each barrier expects one arrival from the producer's thread, or the family's release
// arrivals from the compute agent; TMEM regions (accumulators and D in registers) are disjoint
// within the allocation, a power of two from 32 columns (none on sm_90a).
class PlanInvariants : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(PlanInvariants, SharedMemoryBarriersAndTmemAreConsistent) {
  const auto& [sample, target_name] = GetParam();
  Planned planned = plan_sample(sample, target_name);
  ASSERT_TRUE(planned.plan) << planned.errors;
  const cuda::TensorCorePlan& plan = *planned.plan;
  const target::Target& target = *target::find_target(target_name);
  const bool tcgen05 = target.mma == target::MmaFamily::tcgen05;
  const int64_t warpgroups = plan.compute_threads / 128;
  ASSERT_TRUE(warpgroups == 1 || warpgroups == 2) << plan.compute_threads;
  expect_disjoint_within(plan, warpgroups * 16384);
  EXPECT_LE(plan.shared_bytes, target.shared_memory_bytes);
  for (const auto& barrier : plan.barriers) {
    const bool released = barrier.purpose == "released by the compute agent";
    EXPECT_EQ(barrier.arrivals, released && !tcgen05 ? warpgroups : 1) << barrier.name;
  }
  std::vector<std::pair<int64_t, int64_t>> columns;  // [first, last) of each D in TMEM
  for (const auto& mma : plan.mmas) {
    EXPECT_EQ(mma.tmem_column >= 0, tcgen05) << "D in TMEM on sm_100a only";
    if (mma.tmem_column >= 0) columns.emplace_back(mma.tmem_column, mma.tmem_column + mma.n);
    // sm_100a stages every A from registers; sm_90a those WGMMA does not read from registers
    // (tf32, 8-bit integers: neither kind f16 nor f8f6f4).
    EXPECT_EQ(mma.staging_bytes > 0, mma.a_registers && (tcgen05 || (mma.kind != "f16" && mma.kind != "f8f6f4")))
        << "an A from registers is staged where the instruction reads A from shared memory only";
  }
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());  // one chain, several mmas
  for (size_t i = 0; i < columns.size(); ++i) {
    EXPECT_LE(columns[i].second, plan.tmem_columns);
    if (i > 0) {
      EXPECT_LE(columns[i - 1].second, columns[i].first) << "TMEM columns overlap at " << columns[i].first;
    }
  }
  if (tcgen05) {
    EXPECT_GE(plan.tmem_columns, 32);
    EXPECT_EQ(plan.tmem_columns & (plan.tmem_columns - 1), 0) << "TMEM is allocated in powers of two";
    EXPECT_LE(plan.tmem_columns, target.tensor_memory_columns);
  } else {
    EXPECT_EQ(plan.tmem_columns, 0);
  }
  for (const auto& store : plan.stores) {
    if (store.tma) {
      EXPECT_EQ(store.box_rows, tcgen05 ? 128 : 64);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(MmaSamples, PlanInvariants,
                         ::testing::Combine(::testing::Values("attention", "attention_backward", "batched_gemm", "bmm",
                                                              "causal_attention",
                                                              "conv1d", "fp8_attention", "fp8_linear", "gate_up", "gemm", "gqa_attention", "int8_linear",
                                                              "gemm_bias_relu", "gemm_f16", "linear", "mha", "moe_grouped_gemm",
                                                              "syrk", "tf32_linear", "w4a16_linear", "w4a8_linear", "w8a16_linear",
                                                              "weight_grad"),
                                            ::testing::Values("sm_90a", "sm_100a")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace tilec::testing
