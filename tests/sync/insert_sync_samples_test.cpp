// tests/sync/insert_sync_samples_test.cpp — insert-sync keeps what every kernel computes: each
// sample and each golden insert-sync input runs in the interpreter before and after the pass
// on the same random inputs, and the outputs must be bit-identical. The interpreter checks the
// lowered protocol as it runs (mbarrier phases, stage-buffer races, event ids), so a wrong
// phase or a missing arrive fails here too.
#include <gtest/gtest.h>

#include <algorithm>

#include "../passes/pass_test_support.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(source_dir() / "samples"))
    if (entry.path().extension() == ".tile") files.push_back(entry.path());
  for (const auto& entry : fs::directory_iterator(source_dir() / "tests" / "golden" / "insert-sync"))
    if (entry.path().extension() == ".tir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(InsertSyncSamples, EveryKernelComputesTheSameBeforeAndAfterThePass) {
  int compared = 0;
  for (const fs::path& path : inputs()) {
    SCOPED_TRACE(path.string());
    LoadedModule before = load_module(path);
    LoadedModule after = load_module(path);
    ASSERT_TRUE(before.module && after.module) << before.diagnostics->render_all();
    // .tile inputs stop just before insert-sync; the golden .tir inputs start there (stopping
    // after a pass they record already is an error).
    if (path.extension() == ".tile") {
      ASSERT_EQ(run_pipeline_until(before, "reorder-events"), "");
    }
    ASSERT_EQ(run_pipeline_until(after, "insert-sync"), "");
    for (size_t index = 0; index < before.module->kernels().size(); ++index) {
      const Operation& kernel_before = *before.module->kernels()[index];
      const Operation& kernel_after = *after.module->kernels()[index];
      EXPECT_EQ(compare_runs(kernel_before, kernel_after, 23 + index), "") << kernel_name(kernel_before);
      ++compared;
    }
  }
  EXPECT_GE(compared, 12);  // seven samples and five golden inputs
}

// The comparison is not vacuous: a producer state starting at phase 0 instead of 1 waits for
// an `empty` phase that never completes, and the interpreter reports the deadlock.
TEST(InsertSyncSamples, AWrongInitialProducerPhaseDeadlocks) {
  fs::path path = source_dir() / "tests" / "golden" / "insert-sync" / "gemm_sm90a.tir";
  LoadedModule before = load_module(path);
  LoadedModule after = load_module(path);
  ASSERT_TRUE(before.module && after.module);
  ASSERT_EQ(run_pipeline_until(after, "insert-sync"), "");
  Operation& kernel = *after.module->kernels()[0];
  Operation* loop = nullptr;
  walk(kernel.region(), [&](Operation& op) {
    if (op.kind() == OpKind::for_) loop = &op;
  });
  ASSERT_NE(loop, nullptr);
  // Operands: bounds, step, the accumulator, then A's producer (index, phase), ...
  ASSERT_EQ(loop->operand(5)->defining_op()->int_attr("value"), 1);
  EXPECT_EQ(compare_runs(*before.module->kernels()[0], kernel, 5), "");
  loop->set_operand(5, loop->operand(4));  // phase 0
  EXPECT_NE(compare_runs(*before.module->kernels()[0], kernel, 5).find("deadlock"), std::string::npos);
}

}  // namespace
}  // namespace tilec::testing
