// tests/schedule/test_schedule_engines.cpp — each placement engine on its own (the ladder only
// shows the first rung that succeeds): on random graphs at ii = MII .. MII+3, every attempt
// that reports success must be a valid schedule keeping its constraints. Plus the threshold
// search and the distance closure against brute force.
#include <gtest/gtest.h>

#include "passes/schedule/compute_mii.h"
#include "passes/schedule/cost_evaluators.h"
#include "passes/schedule/iterative_modulo_schedule.h"
#include "passes/schedule/place_with_arms.h"
#include "passes/schedule/windowed_modulo_schedule.h"
#include "tests/schedule/schedule_test_support.h"

namespace tilec::schedule {
namespace {

using testing::check_independently;
using testing::make_random_graph;
using testing::RandomGraphShape;
using testing::SplitMix64;

void expect_valid(const LoopGraph& graph, int ii, const ModuloAttempt& attempt, const char* engine,
                  int trial, int& successes) {
  if (!attempt.scheduled) return;
  ++successes;
  ScheduleResult result;
  result.ii = ii;
  for (int cycle : attempt.cycles) result.ops.push_back({cycle, 0, 0});
  assign_stages_and_orders(result);
  ASSERT_EQ(check_independently(graph, result), "") << engine << " trial " << trial;
  ASSERT_TRUE(validate_schedule(graph, result, true).empty()) << engine << " trial " << trial;
}

TEST(ScheduleEngines, EverySuccessfulAttemptIsValid) {
  SplitMix64 random(424242);
  RandomGraphShape shape;
  shape.constraints = true;
  int successes[5] = {0, 0, 0, 0, 0};
  for (int trial = 0; trial < 600; ++trial) {
    LoopGraph graph = make_random_graph(random, shape);
    LoopGraphIndex index = index_loop_graph(graph);
    int mii = compute_mii(graph).mii();
    for (int ii = mii; ii <= mii + 3; ++ii) {
      DistanceClosure closure(graph, ii);
      std::vector<long> heights = compute_heights(graph, index, ii);
      PlacementSnapshot snapshot;
      expect_valid(graph, ii, place_with_arms(graph, index, closure, heights, ii, ArmSet::all, snapshot),
                   "initial-placement", trial, successes[0]);
      expect_valid(graph, ii, place_with_arms(graph, index, closure, heights, ii, ArmSet::cost_based_only,
                                              snapshot), "cost-based-placement", trial, successes[1]);
      expect_valid(graph, ii, iterative_modulo_schedule(graph, index, ii, ModuloPriority::height, 3),
                   "rau", trial, successes[2]);
      expect_valid(graph, ii, iterative_modulo_schedule(graph, index, ii, ModuloPriority::critical_path, 6),
                   "rau critical path", trial, successes[3]);
      expect_valid(graph, ii, windowed_modulo_schedule(graph, index, closure, heights, ii, 6),
                   "windowed", trial, successes[4]);
    }
  }
  // Each engine does real work (the cost-based arm alone inherits the dead ops the full
  // placement left, so it succeeds less often).
  for (int engine = 0; engine < 5; ++engine) EXPECT_GT(successes[engine], 400) << "engine " << engine;
}

TEST(ThresholdSearch, FindsTheSmallestPassingValue) {
  for (int lower : {0, 1, 3})
    for (int upper : {0, 1, 5, 64, 1000})
      for (int answer = -1; answer <= upper + 1; ++answer) {
        int probes = 0;
        auto probe = [&](int value) {
          ++probes;
          return answer >= 0 && value >= answer;
        };
        int expected = (answer >= 0 && std::max(answer, lower) <= upper) ? std::max(answer, lower) : -1;
        if (lower > upper) expected = -1;
        ASSERT_EQ(search_threshold(probe, lower, upper), expected)
            << lower << " " << upper << " " << answer;
        ASSERT_LE(probes, 40);  // logarithmic, not a linear scan
      }
}

TEST(DistanceClosure, MatchesLongestPathsByBruteForce) {
  SplitMix64 random(99);
  for (int trial = 0; trial < 200; ++trial) {
    LoopGraph graph = make_random_graph(random, RandomGraphShape{2, 9, false});
    int ii = compute_mii(graph).mii();
    DistanceClosure closure(graph, ii);
    // Bellman–Ford from every op: longest path, V − 1 rounds (no positive cycle at ii ≥ MII).
    int n = graph.op_count();
    for (int source = 0; source < n; ++source) {
      std::vector<long> best(n, DistanceClosure::no_path);
      best[source] = 0;
      for (int round = 0; round < n; ++round)
        for (const LoopEdge& e : graph.edges)
          if (best[e.from] != DistanceClosure::no_path)
            best[e.to] = std::max(best[e.to], best[e.from] + e.latency - static_cast<long>(ii) * e.distance);
      for (int target = 0; target < n; ++target)
        ASSERT_EQ(closure.at(source, target), best[target]) << trial << " " << source << " " << target;
    }
  }
}

}  // namespace
}  // namespace tilec::schedule
