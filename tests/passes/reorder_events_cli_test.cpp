// tests/passes/reorder_events_cli_test.cpp — `tilec compile --max-events N` reaches the
// reorder-events pass: the limit changes the order and the warnings, a limit below 1 is an
// input error (exit 1), and the output is the same bytes every run.
#include <gtest/gtest.h>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

std::string compile_reduction_tree(const std::string& options) {
  return "cd " + source_dir().string() + " && " + tilec_binary() +
         " compile tests/golden/reorder-events/reduction_tree.tir --emit ir " + options;
}

TEST(ReorderEventsCli, MaxEventsBelowOneIsRejected) {
  for (const char* value : {"0", "-3"}) {
    CommandResult result = run_command(compile_reduction_tree(std::string("--max-events=") + value));
    EXPECT_EQ(result.status, 1) << result.err;
    EXPECT_NE(result.err.find("--max-events"), std::string::npos) << result.err;
    EXPECT_EQ(result.out, "");
  }
}

TEST(ReorderEventsCli, TheLimitDecidesTheOrderAndTheWarnings) {
  CommandResult loose = run_command(compile_reduction_tree("--max-events 12"));
  CommandResult standard = run_command(compile_reduction_tree(""));
  CommandResult tight = run_command(compile_reduction_tree("--max-events 1"));
  CommandResult tight_again = run_command(compile_reduction_tree("--max-events 1"));
  ASSERT_EQ(loose.status, 0) << loose.err;
  ASSERT_EQ(standard.status, 0) << standard.err;
  ASSERT_EQ(tight.status, 0) << tight.err;
  // Twelve loads fit 12 events in program order: the first add still follows the last load.
  EXPECT_LT(loose.out.find("%x11 = load"), loose.out.find("%s0 = add"));
  EXPECT_EQ(loose.err, "");
  // Eight do not: the first add moves up between the loads, without a warning.
  EXPECT_GT(standard.out.find("%x11 = load"), standard.out.find("%s0 = add"));
  EXPECT_EQ(standard.err, "");
  // One is impossible: a relaxed order, warned about, still the same bytes every run.
  EXPECT_NE(tight.err.find("warning: reorder-events: cannot keep LSU->SIMT within 1 live events"), std::string::npos)
      << tight.err;
  EXPECT_EQ(tight.out, tight_again.out);
  EXPECT_EQ(tight.err, tight_again.err);
}

}  // namespace
}  // namespace tilec::testing
