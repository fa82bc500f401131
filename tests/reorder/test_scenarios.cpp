// tests/reorder/test_scenarios.cpp — the published PyPTO reorder scenarios, replayed as lab
// files (tests/reorder/scenarios/*.json) through parse_reorder_lab and reorder_events, with
// the property each scenario was written to show.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "passes/reorder/reorder_lab.h"
#include "tests/reorder/reorder_oracle.h"

namespace tilec::reorder {
namespace {

struct Loaded {
  LabInput input;
  ReorderResult result;
  std::map<std::string, int> position;  // statement name → position in the result
  std::map<std::string, int> program_peaks;
};

Loaded run_scenario(const std::string& file, std::optional<int> max_events = std::nullopt) {
  std::ifstream stream(std::string(TILEC_REORDER_SCENARIOS) + "/" + file);
  std::stringstream text;
  text << stream.rdbuf();
  LabParse parse = parse_reorder_lab(text.str());
  EXPECT_TRUE(parse.input.has_value()) << file << ": " << parse.error;
  Loaded loaded{*parse.input, {}, {}, {}};
  ReorderOptions options;
  options.max_events = max_events.value_or(loaded.input.max_events);
  loaded.result = reorder_events(loaded.input.segment, options);
  const Segment& segment = loaded.input.segment;
  for (int step = 0; step < static_cast<int>(loaded.result.order.size()); ++step) {
    loaded.position[segment.statements[loaded.result.order[step]].name] = step;
  }
  // Every scenario: the order keeps the program's meaning and the reported peaks are right.
  std::string why;
  EXPECT_TRUE(oracle::respects_program_semantics(segment, loaded.result.order, why)) << file << ": " << why;
  auto edges = oracle::derive_edges(segment);
  EXPECT_EQ(loaded.result.peak, oracle::recount_peaks(segment, edges, loaded.result.order)) << file;
  std::vector<int> program(segment.statements.size());
  for (int index = 0; index < static_cast<int>(program.size()); ++index) program[index] = index;
  loaded.program_peaks = oracle::recount_peaks(segment, edges, program);
  return loaded;
}

TEST(ReorderScenarios, LoadAddChainsFitAndKeepProgramOrder) {
  Loaded loaded = run_scenario("load_add_chains.json");
  EXPECT_TRUE(loaded.result.feasible);
  EXPECT_EQ(loaded.result.strategy, "original");
  EXPECT_EQ(loaded.result.peak.at("MTE2->V"), 1);
  EXPECT_LT(loaded.position["load_a"], loaded.position["add_a"]);
  EXPECT_LT(loaded.position["add_a"], loaded.position["add2_a"]);
  EXPECT_EQ(loaded.position["store"], 9);
}

TEST(ReorderScenarios, ThreeLoadsPairwiseAddsAndStore) {
  Loaded loaded = run_scenario("three_loads_pairwise_store.json");
  EXPECT_TRUE(loaded.result.feasible);
  EXPECT_EQ(loaded.result.peak.at("MTE2->V"), 3);  // all three loads live before the first add
  EXPECT_EQ(loaded.result.peak.at("V->MTE3"), 1);
  EXPECT_LT(loaded.position["add_all"], loaded.position["store"]);
  // Under a limit of 2 the adds interleave with the loads.
  Loaded tight = run_scenario("three_loads_pairwise_store.json", 2);
  EXPECT_TRUE(tight.result.feasible);
  EXPECT_EQ(tight.result.max_peak, 2);
  EXPECT_LT(tight.position["add_ab"], tight.position["load_c"]);
}

TEST(ReorderScenarios, NameReuseKeepsWarAndWaw) {
  Loaded loaded = run_scenario("name_reuse_war_waw.json", 1);
  EXPECT_TRUE(loaded.result.feasible);
  auto& p = loaded.position;
  EXPECT_LT(p["load_t1"], p["load_t2"]);  // WAW on t
  EXPECT_LT(p["add_u"], p["load_t2"]);    // WAR: add_u reads the first t
  EXPECT_LT(p["load_t2"], p["add_v"]);    // RAW on the second t
  EXPECT_LT(p["add_v"], p["load_u2"]);    // WAR on u
  EXPECT_LT(p["load_u2"], p["store_u"]);  // RAW on the second u
}

TEST(ReorderScenarios, TwelveLoadReductionTreeFitsOnlyAfterReorder) {
  Loaded loaded = run_scenario("reduction_tree_twelve_loads.json");
  EXPECT_EQ(loaded.program_peaks.at("MTE2->V"), 12);
  EXPECT_TRUE(loaded.result.feasible);
  EXPECT_NE(loaded.result.strategy, "original");
  EXPECT_LE(loaded.result.peak.at("MTE2->V"), 8);
}

TEST(ReorderScenarios, OneLoadBroadcastToTenConsumersIsOneEvent) {
  Loaded loaded = run_scenario("broadcast_ten_consumers.json", 1);
  EXPECT_TRUE(loaded.result.feasible);
  EXPECT_EQ(loaded.result.peak.at("MTE2->V"), 1);
  EXPECT_EQ(loaded.result.strategy, "original");
}

TEST(ReorderScenarios, NineProducersWithTwoConsumersEach) {
  Loaded loaded = run_scenario("nine_producers_two_consumers.json");
  EXPECT_EQ(loaded.program_peaks.at("MTE2->V"), 9);  // one event per producer, not per consumer
  EXPECT_TRUE(loaded.result.feasible);
  EXPECT_LE(loaded.result.peak.at("MTE2->V"), 8);
  for (int index = 0; index < 9; ++index) {
    std::string load = "load" + std::to_string(index);
    EXPECT_LT(loaded.position[load], loaded.position["first" + std::to_string(index)]);
    EXPECT_LT(loaded.position[load], loaded.position["second" + std::to_string(index)]);
  }
}

TEST(ReorderScenarios, FiveLoadsAllPairwiseAddsPeakTwoUnderBroadcast) {
  Loaded loaded = run_scenario("five_loads_pairwise_adds.json");  // the file asks for max_events 2
  // Per-edge accounting would hold one event per (load, add) edge: 20 live after the loads.
  int per_edge = 0;
  for (const auto& [from, to] : oracle::derive_edges(loaded.input.segment)) per_edge += from < 5 && to >= 5;
  EXPECT_EQ(per_edge, 20);
  EXPECT_EQ(loaded.program_peaks.at("MTE2->V"), 5);
  EXPECT_TRUE(loaded.result.feasible);
  EXPECT_EQ(loaded.result.max_peak, 2);
  // 2 is the least possible: the first add needs two loads live. The engine proves it.
  Loaded one = run_scenario("five_loads_pairwise_adds.json", 1);
  EXPECT_FALSE(one.result.feasible);
  EXPECT_EQ(one.result.max_peak, 2);
  ASSERT_EQ(one.result.warnings.size(), 1u);
  EXPECT_NE(one.result.warnings[0].find("MTE2->V"), std::string::npos);
  EXPECT_NE(one.result.warnings[0].find("peak 2"), std::string::npos);
  EXPECT_NE(one.result.warnings[0].find("exists"), std::string::npos);
}

TEST(ReorderScenarios, ComputeMovesAboveForWhileControlKeepsItsOrder) {
  Loaded loaded = run_scenario("control_if_for.json");  // max_events 1
  EXPECT_EQ(loaded.program_peaks.at("MTE2->S"), 2);
  EXPECT_TRUE(loaded.result.feasible);
  auto& p = loaded.position;
  EXPECT_LT(p["if0"], p["for0"]);
  EXPECT_LT(p["add_c"], p["for0"]);  // compute crossed the For (and the If)
  EXPECT_LT(p["load_c"], p["if0"]);
  EXPECT_LT(p["load_a"], p["if0"]);
  EXPECT_LT(p["load_b"], p["for0"]);
}

TEST(ReorderScenarios, GreedyDeadEndIsSolvedBySearch) {
  Loaded loaded = run_scenario("greedy_dead_end.json");
  EXPECT_TRUE(loaded.result.feasible);
  EXPECT_EQ(loaded.result.strategy, "exact-search");
  EXPECT_LE(loaded.result.max_peak, 2);
  EXPECT_LT(loaded.position["bridge"], loaded.position["early1"]);
}

}  // namespace
}  // namespace tilec::reorder
