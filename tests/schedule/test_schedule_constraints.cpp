// tests/schedule/test_schedule_constraints.cpp — generator choice, schedule constraints
// (groups, max_depth, max_stages, force_serial) and input errors reported as errors.
#include <gtest/gtest.h>

#include "passes/schedule/generate_schedule.h"
#include "passes/schedule/schedule_lab.h"
#include "tests/schedule/schedule_test_support.h"

namespace tilec::schedule {
namespace {

using testing::check_independently;

// A chain of n ops on one resource with a loop-carried edge back to the start.
LoopGraph chain(int n, bool with_resource) {
  LoopGraph graph;
  int unit = graph.add_resource("unit", 1);
  for (int i = 0; i < n; ++i) {
    LoopOp op;
    op.name = "op" + std::to_string(i);
    op.latency = 2;
    if (with_resource) op.uses.push_back({unit, 0, 1, 1});
    graph.add_op(op);
  }
  for (int i = 0; i + 1 < n; ++i) graph.add_edge(i, i + 1, 2, 0);
  graph.add_edge(n - 1, 0, 2, 3);
  return graph;
}

TEST(GeneratorChoice, FollowsTheDesignRules) {
  ScheduleOptions options;
  EXPECT_EQ(choose_generator(chain(10, true), options), Generator::cost_based);
  EXPECT_EQ(choose_generator(chain(7, true), options), Generator::serial);    // < 8 ops
  EXPECT_EQ(choose_generator(chain(10, false), options), Generator::serial);  // no resource op
  LoopGraph forced = chain(10, true);
  forced.force_serial = true;
  EXPECT_EQ(choose_generator(forced, options), Generator::serial);
  LoopGraph async_only = chain(10, false);
  async_only.ops[3].async = true;
  EXPECT_EQ(choose_generator(async_only, options), Generator::cost_based);
  options.generator = Generator::cost_based;
  EXPECT_EQ(choose_generator(forced, options), Generator::cost_based);     // the user forces it
}

TEST(Constraints, MaxDepthKeepsOpsInEarlyStages) {
  // Without a limit the long chain spreads over several stages at ii = MII.
  LoopGraph graph = chain(12, true);
  for (int i = 0; i < 12; ++i) graph.ops[i].constraints.max_depth = 1;
  ScheduleOptions options;
  options.generator = Generator::cost_based;
  ScheduleResult result = generate_schedule(graph, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(check_independently(graph, result), "");
  for (const OpPlacement& op : result.ops) EXPECT_LE(op.stage, 1);
  EXPECT_TRUE(result.warnings.empty());
}

TEST(Constraints, MaxStagesBoundsTheWholeLoop) {
  LoopGraph graph = chain(12, true);
  graph.max_stages = 2;
  ScheduleOptions options;
  options.generator = Generator::cost_based;
  ScheduleResult result = generate_schedule(graph, options);
  EXPECT_EQ(check_independently(graph, result), "");
  EXPECT_LE(result.stages, 2);
}

TEST(Constraints, GroupMembersShareAStage) {
  LoopGraph graph = chain(12, true);
  graph.ops[0].constraints.group = 4;
  graph.ops[11].constraints.group = 5;
  graph.ops[11].constraints.leader_group = 4;  // joins group 4
  ScheduleOptions options;
  options.generator = Generator::cost_based;
  ScheduleResult result = generate_schedule(graph, options);
  EXPECT_EQ(check_independently(graph, result), "");
  EXPECT_EQ(result.ops[0].stage, result.ops[11].stage);
  LoopGraphIndex index = index_loop_graph(graph);
  ASSERT_EQ(index.group_members.size(), 1u);
  EXPECT_EQ(index.group_leader[0], 0);
}

TEST(Constraints, SerialGeneratorHonoursEveryConstraint) {
  LoopGraph graph = chain(12, true);
  graph.ops[2].constraints.group = 1;
  graph.ops[9].constraints.group = 1;
  graph.ops[5].constraints.max_depth = 0;
  ScheduleOptions options;
  options.generator = Generator::serial;
  ScheduleResult result = generate_schedule(graph, options);
  EXPECT_EQ(check_independently(graph, result), "");
  EXPECT_TRUE(validate_schedule(graph, result, true).empty());
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_EQ(result.strategy, "serial");
}

TEST(Constraints, ForceSerialInTheLabPicksTheSerialGenerator) {
  LabInput input = parse_schedule_lab(R"({"resources": {"u": 1},
    "ops": [{"name": "a", "latency": 1, "uses": [{"resource": "u"}]}, {"name": "b"}, {"name": "c"},
            {"name": "d"}, {"name": "e"}, {"name": "f"}, {"name": "g"}, {"name": "h"}],
    "constraints": {"force_serial": true}})");
  ASSERT_TRUE(input.errors.empty());
  EXPECT_TRUE(input.graph.force_serial);
  EXPECT_EQ(generate_schedule(input.graph).generator, Generator::serial);
}

std::vector<std::string> lab_errors(const char* text) { return parse_schedule_lab(text).errors; }

bool mentions(const std::vector<std::string>& errors, const std::string& text) {
  for (const std::string& error : errors)
    if (error.find(text) != std::string::npos) return true;
  return false;
}

TEST(InputErrors, AreReportedNotAsserted) {
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a"}], "edges": [{"from": "a", "to": "zz"}]})"),
                       "unknown op 'zz'"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a", "latency": -3}]})"), "negative latency"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a"}, {"name": "b"}],
      "edges": [{"from": "a", "to": "b", "latency": -1}]})"), "negative latency"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a", "uses": [{"resource": "nope"}]}]})"),
                       "unknown resource 'nope'"));
  EXPECT_TRUE(mentions(lab_errors(R"({"target": "sm_100a", "ops": [{"name": "a", "kind": "warp_drive"}]})"),
                       "kind 'warp_drive'"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a", "kind": "mma"}]})"), "no \"target\""));
  EXPECT_TRUE(mentions(lab_errors(R"({"target": "sm_42", "ops": []})"), "unknown target"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [)"), "malformed JSON"));
  // Where, as the reorder lab says it (the sched lab gave the message alone; a helper).
  EXPECT_EQ(parse_schedule_lab("{\n  \"ops\": [\n    {\"name\": \"a\",, }\n").position, "3:18");
  EXPECT_TRUE(mentions(lab_errors(R"({"resources": {"u": 1},
      "ops": [{"name": "a", "uses": [{"resource": "u", "occupancy": 2}]}]})"), "can never fit"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a"}, {"name": "a"}]})"), "declared twice"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a", "latency": 5000000}]})"), "above the limit"));
  EXPECT_TRUE(mentions(lab_errors(R"({"resources": {"u": 1},
      "ops": [{"name": "a", "uses": [{"resource": "u", "for": 100000000}]}]})"), "beyond the limit"));
  EXPECT_TRUE(mentions(lab_errors(R"({"ops": [{"name": "a", "latency": 1.5}]})"), "must be an integer"));
  EXPECT_TRUE(mentions(lab_errors(R"([1, 2])"), "must be a JSON object"));
  std::string long_chain = R"({"ops": [)";
  for (int i = 0; i < 10; ++i) long_chain += (i ? "," : "") + std::string(R"({"name": "o)") +
                                          std::to_string(i) + R"(", "latency": 1000000})";
  long_chain += "]}";
  EXPECT_TRUE(mentions(lab_errors(long_chain.c_str()), "too long to schedule"));
}

TEST(InputErrors, ZeroDistanceCycleNamesItsOps) {
  std::vector<std::string> errors = lab_errors(R"({"ops": [{"name": "x"}, {"name": "p"},
      {"name": "q"}, {"name": "r"}],
    "edges": [{"from": "x", "to": "p"}, {"from": "p", "to": "q"}, {"from": "q", "to": "r"},
              {"from": "r", "to": "p"}, {"from": "r", "to": "x", "distance": 1}]})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "zero-distance dependence cycle: p -> q -> r -> p");
}

TEST(InputErrors, EngineReturnsErrorsForBadGraphs) {
  LoopGraph graph;
  LoopOp op;
  op.name = "a";
  graph.add_op(op);
  graph.add_edge(0, 0, 1, 0);  // self-loop without distance
  graph.add_edge(0, 3, 1, 0);  // unknown op
  ScheduleResult result = generate_schedule(graph);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result.errors, "unknown op"));
  EXPECT_TRUE(mentions(result.errors, "zero-distance dependence cycle: a -> a"));
}

}  // namespace
}  // namespace tilec::schedule
