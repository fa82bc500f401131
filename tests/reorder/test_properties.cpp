// tests/reorder/test_properties.cpp — properties of the reorder engine on thousands of seeded
// random segments, checked against the tests' own oracle (reorder_oracle.h):
//   - the engine's dependence graph is the one the definitions give;
//   - the order is a permutation that keeps every ordering the program needs;
//   - the reported peaks equal a recount from scratch, and feasible == (max_peak ≤ limit);
//   - program order is kept whenever it already fits;
//   - on small segments, whenever brute force finds an order within the limit, so does the engine.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "passes/reorder/compute_dependences.h"
#include "passes/reorder/reorder_events.h"
#include "tests/reorder/reorder_oracle.h"

namespace tilec::reorder {
namespace {

void check_result(const Segment& segment, int limit, const ReorderResult& result, const std::string& label) {
  const int count = static_cast<int>(segment.statements.size());
  std::vector<int> sorted = result.order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(count);
  std::iota(identity.begin(), identity.end(), 0);
  ASSERT_EQ(sorted, identity) << label << ": not a permutation";
  std::string why;
  ASSERT_TRUE(oracle::respects_program_semantics(segment, result.order, why)) << label << ": " << why;
  auto edges = oracle::derive_edges(segment);
  auto peaks = oracle::recount_peaks(segment, edges, result.order);
  ASSERT_EQ(result.peak, peaks) << label;
  ASSERT_EQ(result.max_peak, oracle::max_of(peaks)) << label;
  ASSERT_EQ(result.feasible, result.max_peak <= limit) << label;
  ASSERT_EQ(result.warnings.empty(), result.feasible) << label;
  int program_peak = oracle::max_of(oracle::recount_peaks(segment, edges, identity));
  if (program_peak <= limit) {
    ASSERT_EQ(result.order, identity) << label << ": program order fits but was changed";
    ASSERT_EQ(result.strategy, "original") << label;
  }
}

TEST(ReorderProperties, DependencesMatchTheDefinitions) {
  std::mt19937 random(1);
  for (int trial = 0; trial < 2000; ++trial) {
    Segment segment = oracle::random_segment(random, 1 + static_cast<int>(random() % 30), trial % 2 == 0);
    ASSERT_EQ(oracle::edges_of(compute_dependences(segment)), oracle::derive_edges(segment)) << "trial " << trial;
  }
}

TEST(ReorderProperties, OrdersAreTopologicalAndPeaksRecount) {
  std::mt19937 random(2);
  for (int trial = 0; trial < 3000; ++trial) {
    int count = 1 + static_cast<int>(random() % 40);
    Segment segment = oracle::random_segment(random, count, trial % 3 == 0);
    int limit = 1 + static_cast<int>(random() % 3);
    ReorderResult result = reorder_events(segment, ReorderOptions{.max_events = limit});
    check_result(segment, limit, result, "trial " + std::to_string(trial));
  }
}

TEST(ReorderProperties, LargerSegmentsGoThroughGreedyAndBeam) {
  // Over 64 statements there is no exact search; without barriers (whose incoming edges make
  // random segments infeasible) and with limits 3..5 the outcomes mix greedy, beam and relaxed.
  std::mt19937 random(3);
  std::map<std::string, int> strategies;
  for (int trial = 0; trial < 40; ++trial) {
    int count = 65 + static_cast<int>(random() % 120);
    Segment segment = oracle::random_segment(random, count, trial % 2 == 0, 0);
    int limit = 3 + static_cast<int>(random() % 3);
    ReorderResult result = reorder_events(segment, ReorderOptions{.max_events = limit});
    check_result(segment, limit, result, "trial " + std::to_string(trial));
    ++strategies[result.strategy];
  }
  EXPECT_GT(strategies["beam-search"], 0);
  EXPECT_GT(strategies["min-max-then-sum"], 0);
}

TEST(ReorderProperties, FindsAnOrderWheneverBruteForceDoes) {
  std::mt19937 random(4);
  int feasible_after_reorder = 0;
  int found_by_search = 0;
  for (int trial = 0; trial < 2500; ++trial) {
    int count = 2 + static_cast<int>(random() % 8);
    Segment segment = oracle::random_segment(random, count, trial % 2 == 1);
    int limit = 1 + static_cast<int>(random() % 2);
    ReorderResult result = reorder_events(segment, ReorderOptions{.max_events = limit});
    std::string label = "trial " + std::to_string(trial);
    check_result(segment, limit, result, label);
    bool exists = oracle::exists_order_within(segment, oracle::derive_edges(segment), limit);
    ASSERT_EQ(result.feasible, exists) << label << " strategy " << result.strategy;
    feasible_after_reorder += exists && result.strategy != "original";
    found_by_search += result.strategy == "exact-search";
  }
  EXPECT_GT(feasible_after_reorder, 50);  // the property is exercised, not vacuous
  EXPECT_GT(found_by_search, 0);          // including greedy dead ends
}

}  // namespace
}  // namespace tilec::reorder
