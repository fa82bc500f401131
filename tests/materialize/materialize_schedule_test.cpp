// tests/materialize/materialize_schedule_test.cpp — the materialize-schedule pass and the pipe
// and mutex region rules of the verifier (ir/verify_pipe_ops.cpp).
//  - Verifier: a valid materialized kernel verifies; each region rule broken by a one-line edit
//    is reported with a message naming the rule.
//  - Properties over the samples and tests/golden/materialize-schedule: every tma_load sits
//    between an acquire and a commit of one pipe; every consumer of a committed value reads a
//    pipe_consumer_wait result; pipe depths follow the depth rule; the IR verifies (the pass
//    manager checks after every pass); the interpreter's outputs are the same before and after
//    the pass.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "../verify_text.h"
#include "../passes/pass_test_support.h"
#include "ir/clone.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kValid = R"(module
kernel @k(%A: tensor<M, K, bf16>, %C: tensor<M, N, f32>) {
  %M = dim %A {axis = 0} : index
  %m, %n = grid_ids %M, %M {schedule = "tiles"} : index, index
  %c0 = constant {value = 0} : index
  %c1 = constant {value = 1} : index
  %acc0 = zeros : tile<64x64xf32, reg>
  %mutex = mutex_create : mutex
  %pipe_a = pipe_create : pipe<tile<64x32xbf16, smem>, 2>
  %acc = for %c0, %M, %c1, %acc0 {pipeline = 2} : tile<64x64xf32, reg> {
    ^(%k: index, %x: tile<64x64xf32, reg>):
    pipe_producer_acquire %pipe_a
    %a = tma_load %A, %m, %k : tile<64x32xbf16, smem>
    pipe_producer_commit %pipe_a, %a
    %b = tma_load %A, %k, %n : tile<32x64xbf16, smem>
    %w = pipe_consumer_wait %pipe_a : tile<64x32xbf16, smem>
    mutex_lock %mutex
    %y = mma %w, %b, %x : tile<64x64xf32, reg>
    mutex_unlock %mutex
    pipe_consumer_release %pipe_a
    yield %y
  }
  store %C, %m, %n, %acc
  return
}
)";

TEST(VerifyPipeRegion, AcceptsValidIr) { EXPECT_EQ(verify_text(kValid), ""); }

struct Broken {
  const char* rule;
  const char* from;
  const char* to;
  const char* message;
};

class VerifyPipeRegionRejects : public ::testing::TestWithParam<Broken> {};

TEST_P(VerifyPipeRegionRejects, EachRule) {
  const Broken& b = GetParam();
  EXPECT_THAT(verify_text(replace_once(kValid, b.from, b.to)), HasSubstr(b.message)) << b.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, VerifyPipeRegionRejects,
    ::testing::Values(
        Broken{"depth", "pipe<tile<64x32xbf16, smem>, 2>", "pipe<tile<64x32xbf16, smem>, 0>", "pipe depth must be >= 1"},
        Broken{"commit_type", "pipe_producer_commit %pipe_a, %a", "pipe_producer_commit %pipe_a, %x", "commits tile<64x64xf32, reg> into a pipe of"},
        Broken{"acquire_without_commit", "    pipe_producer_commit %pipe_a, %a\n", "", "pipe_producer_acquire has no pipe_producer_commit of its pipe in the same region"},
        Broken{"acquire_twice", "    pipe_producer_commit %pipe_a, %a\n", "    pipe_producer_acquire %pipe_a\n    pipe_producer_commit %pipe_a, %a\n", "no pipe_producer_commit before the next acquire"},
        Broken{"commit_without_acquire", "    pipe_producer_acquire %pipe_a\n", "", "pipe_producer_commit without a pipe_producer_acquire"},
        Broken{"wait_without_release", "    pipe_consumer_release %pipe_a\n", "", "pipe_consumer_wait has no pipe_consumer_release"},
        Broken{"release_without_wait", "    pipe_consumer_release %pipe_a\n    yield", "    pipe_consumer_release %pipe_a\n    pipe_consumer_release %pipe_a\n    yield", "pipe_consumer_release without a pipe_consumer_wait"},
        Broken{"lock_without_unlock", "    mutex_unlock %mutex\n", "", "mutex_lock has no mutex_unlock"},
        Broken{"unlock_without_lock", "    mutex_lock %mutex\n", "", "mutex_unlock without a mutex_lock"},
        Broken{"lock_twice", "    mutex_lock %mutex\n", "    mutex_lock %mutex\n    mutex_lock %mutex\n", "already locked"}),
    [](const ::testing::TestParamInfo<Broken>& info) { return std::string(info.param.rule); });

std::vector<fs::path> inputs() {
  std::vector<fs::path> paths;
  for (const fs::path& dir : {source_dir() / "samples", source_dir() / "tests/golden/materialize-schedule"})
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".tile" || entry.path().extension() == ".tir") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(MaterializeSchedule, PropertiesHoldOnEveryInput) {
  int tma_loads = 0;
  for (const fs::path& path : inputs()) {
    SCOPED_TRACE(path.string());
    LoadedModule loaded = load_module(path);
    ASSERT_TRUE(loaded.module) << loaded.diagnostics->render_all();
    ASSERT_EQ(run_pipeline_until(loaded, "materialize-schedule"), "");
    walk(*loaded.module, [&](Operation& op) {
      if (!op.parent_region()) return;  // a kernel
      Region& region = *op.parent_region();
      size_t at = region.position_of(&op);
      if (op.kind() == OpKind::tma_load) {
        ++tma_loads;
        // Between an acquire and a commit of the same pipe; the commit publishes this value.
        ASSERT_GT(at, 0u);
        ASSERT_LT(at + 1, region.operations().size());
        Operation& acquire = *region.operations()[at - 1];
        Operation& commit = *region.operations()[at + 1];
        ASSERT_EQ(acquire.kind(), OpKind::pipe_producer_acquire);
        ASSERT_EQ(commit.kind(), OpKind::pipe_producer_commit);
        EXPECT_EQ(acquire.operand(0), commit.operand(0));
        EXPECT_EQ(commit.operand(1), op.result());
        // Every other reader of the loaded value is a tie (a yield or a loop's init).
        walk(*loaded.module, [&](Operation& reader) {
          for (size_t i = 0; i < reader.num_operands(); ++i) {
            if (reader.operand(i) != op.result() || &reader == &commit) continue;
            EXPECT_TRUE(reader.kind() == OpKind::yield || (reader.kind() == OpKind::for_ && i >= 3))
                << "'" << reader.name() << "' reads a tma_load result that did not pass through its pipe";
          }
        });
        // Depth rule: at least the loop's stages and pipeline attributes.
        const Type& pipe = acquire.operand(0)->type();
        Operation* loop = op.parent_op();
        if (loop->kind() == OpKind::for_) {
          EXPECT_GE(pipe.depth(), loop->int_attr("stages", 1));
          EXPECT_GE(pipe.depth(), loop->int_attr("pipeline", 1));
        }
        EXPECT_GE(pipe.depth(), 1);
      }
      if (op.kind() == OpKind::pipe_consumer_wait) {
        // Depth rule: a reader in a later stage of the same region fits in the pipe.
        for (const auto& other : region.operations())
          for (Value* operand : other->operands()) {
            if (operand == op.result() && other->has_attr("stage")) {
              EXPECT_LE(other->int_attr("stage", 0) - op.int_attr("stage", 0) + 1, op.operand(0)->type().depth());
            }
          }
      }
    });
  }
  EXPECT_GE(tma_loads, 8);
}

TEST(MaterializeSchedule, KernelsWithoutCandidatesGetNoPipeOps) {
  for (const char* name : {"vector_add", "softmax", "layernorm", "broadcast", "scale_relu", "reduction_tree"}) {
    SCOPED_TRACE(name);
    LoadedModule loaded = load_module(source_dir() / "samples" / (std::string(name) + ".tile"));
    ASSERT_TRUE(loaded.module);
    ASSERT_EQ(run_pipeline_until(loaded, "materialize-schedule"), "");
    int new_ops = 0;
    walk(*loaded.module, [&](Operation& op) {
      new_ops += op.kind() >= OpKind::pipe_create && op.kind() <= OpKind::mutex_unlock;
    });
    EXPECT_EQ(new_ops, 0);
  }
}

TEST(MaterializeSchedule, InterpreterOutputsAreUnchangedByThePass) {
  int kernels = 0;
  for (const fs::path& path : inputs()) {
    SCOPED_TRACE(path.string());
    LoadedModule loaded = load_module(path);
    ASSERT_TRUE(loaded.module);
    ASSERT_EQ(run_pipeline_until(loaded, "reorder-events"), "");
    std::unique_ptr<Module> before = clone_module(*loaded.module);
    ASSERT_EQ(run_pipeline_until(loaded, "materialize-schedule"), "");
    for (const auto& kernel : loaded.module->kernels()) {
      EXPECT_EQ(compare_runs(*before->find_kernel(kernel_name(*kernel)), *kernel, 11), "");
      ++kernels;
    }
  }
  EXPECT_GE(kernels, 12);
}

}  // namespace
}  // namespace tilec::testing
