// tests/passes/reorder_events_pass_test.cpp — the reorder-events IR pass on real inputs:
// every sample and every golden input computes the same outputs before and after the pass (in
// the interpreter), the reduction tree really is reordered, and a relaxed order warns with the
// pair, its peak, the limit and the op's location.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/ir.h"
#include "ir/verifier.h"
#include "pass_test_support.h"
#include "passes/pass_manager.h"
#include "passes/reorder_events_pass.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(source_dir() / "samples"))
    if (entry.path().extension() == ".tile") files.push_back(entry.path());
  for (const auto& entry : fs::directory_iterator(source_dir() / "tests" / "golden" / "reorder-events"))
    if (entry.path().extension() == ".tile" || entry.path().extension() == ".tir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> op_names(const Operation& kernel) {
  std::vector<std::string> names;
  for (const Operation* op : body_ops(kernel)) names.emplace_back(op->name());
  return names;
}

TEST(ReorderEventsPass, EverySampleAndGoldenInputComputesTheSameAfterThePass) {
  int kernels = 0, reordered = 0;
  for (const fs::path& path : inputs()) {
    SCOPED_TRACE(path.string());
    LoadedModule before = load_module(path);
    LoadedModule after = load_module(path);
    ASSERT_TRUE(before.module && after.module) << before.diagnostics->render_all();
    // persistent-tiles adds ops (its own tests check them); compare from its output.
    ASSERT_EQ(run_pipeline_until(before, "persistent-tiles"), "");
    ASSERT_EQ(run_pipeline_until(after, "reorder-events"), "");
    ASSERT_EQ(before.module->kernels().size(), after.module->kernels().size());
    for (size_t index = 0; index < before.module->kernels().size(); ++index) {
      const Operation& kernel_before = *before.module->kernels()[index];
      const Operation& kernel_after = *after.module->kernels()[index];
      EXPECT_EQ(compare_runs(kernel_before, kernel_after, 11 + index), "") << kernel_name(kernel_before);
      // The pass moves ops, never adds or removes them.
      std::vector<std::string> names_before = op_names(kernel_before), names_after = op_names(kernel_after);
      if (names_before != names_after) ++reordered;
      std::sort(names_before.begin(), names_before.end());
      std::sort(names_after.begin(), names_after.end());
      EXPECT_EQ(names_before, names_after);
      ++kernels;
    }
  }
  EXPECT_GE(kernels, 10);
  EXPECT_GE(reordered, 2);  // the reduction trees at least
}

TEST(ReorderEventsPass, ReductionTreeSampleFitsEightEventsOnlyAfterReorder) {
  LoadedModule input = load_module(source_dir() / "samples" / "reduction_tree.tile");
  ASSERT_TRUE(input.module);
  ASSERT_EQ(run_pipeline_until(input, "reorder-events"), "");
  EXPECT_TRUE(input.diagnostics->diagnostics().empty()) << input.diagnostics->render_all();
  // Never more than 8 loads whose tile has not been consumed yet.
  int live = 0, peak = 0;
  std::vector<const Value*> pending;
  for (const Operation* op : body_ops(*input.module->kernels()[0])) {
    for (const Value* operand : op->operands())
      if (auto it = std::find(pending.begin(), pending.end(), operand); it != pending.end()) {
        pending.erase(it);
        --live;
      }
    if (op->kind() == OpKind::load) {
      pending.push_back(op->result());
      peak = std::max(peak, ++live);
    }
  }
  EXPECT_LE(peak, 8);
  EXPECT_GE(peak, 2);
}

constexpr const char* kFiveLoadsPairwise = R"(module {passes = ["parse", "promote-mma-operands", "fold-constants"], source = "five.tir"}

kernel @five(%X: tensor<5, 8, f32>, %Y: tensor<10, 8, f32>) loc(1:1) {
  %n = constant {value = 1} : index loc(2:3)
  %i = grid_ids %n {schedule = "tiles"} : index loc(3:3)
  %a = load %X, %i, %i : tile<1x8xf32, reg> loc(4:3)
  %b = load %X, %i, %i : tile<1x8xf32, reg> loc(5:3)
  %c = load %X, %i, %i : tile<1x8xf32, reg> loc(6:3)
  %ab = add %a, %b : tile<1x8xf32, reg> loc(7:3)
  %bc = add %b, %c : tile<1x8xf32, reg> loc(8:3)
  %ac = add %a, %c : tile<1x8xf32, reg> loc(9:3)
  %s = add %ab, %bc : tile<1x8xf32, reg> loc(10:3)
  %t = add %s, %ac : tile<1x8xf32, reg> loc(11:3)
  store %Y, %i, %i, %t loc(12:3)
  return
}
)";

TEST(ReorderEventsPass, RelaxedOrderWarnsWithPairPeakLimitAndLocation) {
  LoadedModule input = parse_ir_text(kFiveLoadsPairwise);
  ASSERT_TRUE(input.module) << input.diagnostics->render_all();
  PassContext ctx{*input.diagnostics};
  ctx.max_events = 1;
  ASSERT_TRUE(reorder_events(*input.module, ctx));
  EXPECT_FALSE(input.diagnostics->has_errors());
  DiagnosticEngine verifier;
  EXPECT_TRUE(verify_module(*input.module, verifier)) << verifier.render_all();
  // Three loads pairwise added: the second load's consumers all need the first or the third,
  // so two LSU->SIMT events are live at once in every order.
  const auto& diagnostics = input.diagnostics->diagnostics();
  ASSERT_EQ(diagnostics.size(), 1u) << input.diagnostics->render_all();
  EXPECT_EQ(diagnostics[0].severity, Severity::warning);
  EXPECT_EQ(diagnostics[0].message,
            "reorder-events: cannot keep LSU->SIMT within 1 live events (--max-events): peak 2 after this 'load' "
            "(no order within the limit exists)");
  EXPECT_TRUE(diagnostics[0].location.known());
  EXPECT_GE(diagnostics[0].location.line, 4u);
  EXPECT_LE(diagnostics[0].location.line, 6u);
  std::string rendered = input.diagnostics->render(diagnostics[0]);
  EXPECT_NE(rendered.find("<test>.tir:" + std::to_string(diagnostics[0].location.line) + ":3: warning:"), std::string::npos)
      << rendered;
}

TEST(ReorderEventsPass, MaxEventsBelowOneIsAnInputError) {
  LoadedModule input = parse_ir_text(kFiveLoadsPairwise);
  ASSERT_TRUE(input.module);
  PassContext ctx{*input.diagnostics};
  ctx.max_events = 0;
  EXPECT_FALSE(reorder_events(*input.module, ctx));
  EXPECT_NE(input.diagnostics->render_all().find("--max-events must be at least 1"), std::string::npos);
}

TEST(ReorderEventsPass, ProgramOrderThatFitsIsKept) {
  std::string text = kFiveLoadsPairwise;
  LoadedModule input = parse_ir_text(text);
  ASSERT_TRUE(input.module);
  std::vector<Operation*> before = body_ops(*input.module->kernels()[0]);
  PassContext ctx{*input.diagnostics};  // 8 events: program order fits
  ASSERT_TRUE(reorder_events(*input.module, ctx));
  EXPECT_EQ(body_ops(*input.module->kernels()[0]), before);
  EXPECT_TRUE(input.diagnostics->diagnostics().empty());
}

TEST(ReorderEventsPass, RelaxedGoldenInputWarnsAtTheNinthLoad) {
  LoadedModule input = load_module(source_dir() / "tests" / "golden" / "reorder-events" / "relaxed.tir");
  ASSERT_TRUE(input.module);
  ASSERT_EQ(run_pipeline_until(input, "reorder-events"), "");
  const auto& diagnostics = input.diagnostics->diagnostics();
  ASSERT_EQ(diagnostics.size(), 1u) << input.diagnostics->render_all();
  EXPECT_EQ(diagnostics[0].severity, Severity::warning);
  EXPECT_EQ(diagnostics[0].location, (Location{24, 3}));  // %x8, the ninth load
  EXPECT_NE(diagnostics[0].message.find("cannot keep LSU->SIMT within 8 live events (--max-events): peak 9"),
            std::string::npos)
      << diagnostics[0].message;
}

TEST(ReorderEventsPass, DocumentedWorkedExampleIsTheGoldenOutput) {
  std::string expected = read_file(source_dir() / "tests" / "golden" / "reorder-events" / "compute_above_for.expected");
  std::string kernel = expected.substr(expected.find("kernel @"));
  std::string doc = read_file(source_dir() / "docs" / "passes" / "reorder_events.md");
  EXPECT_NE(doc.find(kernel), std::string::npos)
      << "docs/passes/reorder_events.md's worked example differs from compute_above_for.expected";
}

}  // namespace
}  // namespace tilec::testing
