// tests/passes_schedule/schedule_ir_test.cpp — properties of parse-constraints, build-resources
// and generate-schedule on every sample and golden input, for both targets and every generator.
//
// 1. The published schedule (stage, order, cycle on body ops; ii, stages on the loop) is
//    re-validated against a dependence graph built here, independently of the pass: RAW edges
//    from SSA def-use (uses inside nested regions count), carried edges from each yield operand
//    to the users of the matching region argument (ii subtracted), latencies read from the
//    `latency` attributes; the modulo reservation table rebuilt from the `resources`
//    attributes with the machine model's capacities; stage = cycle div ii; order = rank within
//    the stage by (cycle, position); straight-line regions: stage 0, order = position.
// 2. Groups share a stage and max_depth holds in loops the cost-based generator scheduled.
// 3. The interpreter gives identical outputs for the kernel as parsed and after the passes.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "backend/machine_model.h"
#include "backend/target.h"
#include "frontend/lexer.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "ir/clone.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "passes/pipeline.h"
#include "tests/passes/pass_test_support.h"

namespace tilec {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> all_inputs() {
  fs::path root = TILEC_SOURCE_DIR;
  std::vector<fs::path> files;
  std::vector<fs::path> dirs = {root / "samples", root / "tests/golden/parse-constraints",
                                root / "tests/golden/build-resources", root / "tests/golden/generate-schedule"};
  for (const auto& dir : dirs)
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".tile" || entry.path().extension() == ".tir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::unique_ptr<Module> load(const fs::path& path, DiagnosticEngine& diagnostics, const std::string& source) {
  if (path.extension() == ".tir") return parse_module(source, diagnostics);
  auto tokens = frontend::lex(source, diagnostics);
  auto program = frontend::parse_program(tokens, diagnostics);
  if (diagnostics.has_errors()) return nullptr;
  return frontend::lower_program(program, {path.string(), {}}, diagnostics);
}

int64_t int_of(const Operation& op, const std::string& name) {
  const Attribute* a = op.attr(name);
  EXPECT_TRUE(a && a->is_int()) << "'" << op.name() << "' at " << op.location().line << " lacks " << name;
  return a && a->is_int() ? a->as_int() : 0;
}

void uses_of(const Operation& op, std::set<const Value*>& uses) {
  for (const Value* v : op.operands()) uses.insert(v);
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (const auto& inner : op.region(r).operations()) uses_of(*inner, uses);
}

struct Checker {
  const target::MachineModel& model;
  int loops = 0;

  void check_loop(const Operation& loop) {
    ++loops;
    const Region& body = loop.region();
    int64_t ii = int_of(loop, "ii"), stages = int_of(loop, "stages");
    ASSERT_GT(ii, 0);
    bool cost_based = loop.string_attr("generator") == "cost-based";
    std::vector<const Operation*> ops;
    for (const auto& op : body.operations())
      if (!op->info().has(kTerminator)) ops.push_back(op.get());
    std::map<const Value*, size_t> producer;
    for (size_t i = 0; i < ops.size(); ++i)
      for (size_t r = 0; r < ops[i]->num_results(); ++r) producer[ops[i]->result(r)] = i;
    std::vector<int64_t> cycle(ops.size()), stage(ops.size()), order(ops.size()), latency(ops.size());
    int64_t max_stage = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      cycle[i] = int_of(*ops[i], "cycle");
      stage[i] = int_of(*ops[i], "stage");
      order[i] = int_of(*ops[i], "order");
      latency[i] = ops[i]->int_attr("latency", 0);
      EXPECT_GE(cycle[i], 0);
      EXPECT_EQ(stage[i], cycle[i] / ii) << ops[i]->name();
      max_stage = std::max(max_stage, stage[i]);
    }
    if (!ops.empty()) {
      EXPECT_EQ(stages, max_stage + 1);
    }
    // Order: the rank within the stage by (cycle, position).
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t rank = 0;
      for (size_t j = 0; j < ops.size(); ++j)
        if (stage[j] == stage[i] && (cycle[j] < cycle[i] || (cycle[j] == cycle[i] && j < i))) ++rank;
      EXPECT_EQ(order[i], rank) << ops[i]->name() << " at line " << ops[i]->location().line;
    }
    // Dependences: SSA inside the body, and carried through the yield.
    const Operation* yield = body.terminator();
    for (size_t j = 0; j < ops.size(); ++j) {
      std::set<const Value*> uses;
      uses_of(*ops[j], uses);
      for (const Value* v : uses) {
        if (auto it = producer.find(v); it != producer.end() && it->second != j) {
          size_t i = it->second;
          EXPECT_GE(cycle[j] - cycle[i], latency[i]) << ops[i]->name() << " → " << ops[j]->name();
        }
        if (v->owner_region() == &body && v->index() > 0 && yield && v->index() - 1 < yield->num_operands())
          if (auto it = producer.find(yield->operand(v->index() - 1)); it != producer.end()) {
            size_t i = it->second;
            EXPECT_GE(cycle[j] - cycle[i], latency[i] - ii) << "carried " << ops[i]->name() << " → " << ops[j]->name();
          }
      }
    }
    // Resources: the modulo reservation table.
    std::map<std::pair<std::string, int64_t>, int64_t> table;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Attribute* resources = ops[i]->attr("resources");
      if (!resources) continue;
      for (const Attribute& use : resources->as_array()) {
        const auto& f = use.as_array();
        for (int64_t t = 0; t < f[2].as_int(); ++t)
          table[{f[0].as_string(), (cycle[i] + f[1].as_int() + t) % ii}] += f[3].as_int();
      }
    }
    for (const auto& [key, used] : table) {
      const target::Slot* slot = model.find_slot(key.first);
      ASSERT_NE(slot, nullptr) << key.first;
      EXPECT_LE(used, slot->capacity) << key.first << " at cycle " << key.second << " mod " << ii;
    }
    // Constraints the cost-based generator must honour.
    if (cost_based) {
      std::map<int64_t, int64_t> group_stage;
      for (size_t i = 0; i < ops.size(); ++i) {
        if (const Attribute* group = ops[i]->attr("group")) {
          auto [it, inserted] = group_stage.try_emplace(group->as_int(), stage[i]);
          EXPECT_EQ(it->second, stage[i]) << "group " << group->as_int();
        }
        if (const Attribute* depth = ops[i]->attr("tileas.schedule.constraint.max_depth")) {
          EXPECT_LE(stage[i], depth->as_int());
        }
      }
    }
  }

  void check_region(const Region& region, bool loop_body) {
    int64_t position = 0;
    for (const auto& op : region.operations()) {
      for (size_t r = 0; r < op->num_regions(); ++r) check_region(op->region(r), op->kind() == OpKind::for_);
      if (op->kind() == OpKind::for_) check_loop(*op);
      if (!loop_body && !op->info().has(kTerminator)) {
        EXPECT_EQ(int_of(*op, "stage"), 0);
        EXPECT_EQ(int_of(*op, "order"), position);
      }
      ++position;
    }
  }
};

struct Compiled {
  std::unique_ptr<Module> parsed, scheduled;
};

Compiled compile(const fs::path& path, const std::string& target, const std::string& generator) {
  std::string source = read_text(path);
  DiagnosticEngine diagnostics(path.string(), source);
  Compiled out;
  out.scheduled = load(path, diagnostics, source);
  EXPECT_TRUE(out.scheduled) << diagnostics.render_all();
  if (!out.scheduled) return out;
  out.parsed = clone_module(*out.scheduled);
  out.scheduled->attributes()["target"] = Attribute(target);
  PassContext ctx{diagnostics, *target::find_target(target)};
  ctx.generator = generator;
  PipelineOptions options;
  options.stop_after = "generate-schedule";
  PassManager pipeline = build_pipeline();
  EXPECT_EQ(pipeline.run(*out.scheduled, ctx, options), PipelineStatus::ok) << diagnostics.render_all();
  return out;
}

TEST(ScheduleIr, PublishedSchedulesHoldAgainstAnIndependentDependenceGraph) {
  int loops = 0, inputs = 0;
  for (const fs::path& path : all_inputs())
    for (std::string target : {"sm_90a", "sm_100a"})
      for (std::string generator : {"auto", "serial", "cost-based"}) {
        SCOPED_TRACE(fmt::format("{} --target {} --generator {}", path.string(), target, generator));
        Compiled c = compile(path, target, generator);
        ASSERT_TRUE(c.scheduled);
        Checker checker{target::find_target(target)->machine_model};
        for (const auto& kernel : c.scheduled->kernels()) checker.check_region(kernel->region(), false);
        loops += checker.loops;
        ++inputs;
      }
  EXPECT_GT(inputs, 20);
  EXPECT_GT(loops, 20);
}

// The checker is not vacuous: a published schedule with the second MMA moved 12 cycles too
// early (inside the first MMA's 16-cycle latency, and onto its tp_smem_rd cycles) is rejected.
TEST(ScheduleIr, CheckerRejectsAScheduleThatBreaksALatency) {
  fs::path expected = fs::path(TILEC_SOURCE_DIR) / "tests/golden/generate-schedule/gemm_cost_based_sm90a.expected";
  std::string text = read_text(expected);
  const std::string original = "%acc_4 = mma %d, %e, %acc_3 {cycle = 72,";
  ASSERT_NE(text.find(original), std::string::npos) << "re-bless changed the example; update this test";
  text.replace(text.find(original), original.size(), "%acc_4 = mma %d, %e, %acc_3 {cycle = 60,");
  DiagnosticEngine diagnostics(expected.string(), text);
  std::unique_ptr<Module> broken = parse_module(text, diagnostics);
  ASSERT_TRUE(broken) << diagnostics.render_all();
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    Checker checker{target::sm90a_machine_model()};
    for (const auto& kernel : broken->kernels()) checker.check_region(kernel->region(), false);
  }
  bool latency_caught = false, resource_caught = false;
  for (int i = 0; i < failures.size(); ++i) {
    std::string message = failures.GetTestPartResult(i).message();
    latency_caught |= message.find("mma → mma") != std::string::npos;
    resource_caught |= message.find("tp_smem_rd at cycle") != std::string::npos;
  }
  EXPECT_TRUE(latency_caught);
  EXPECT_TRUE(resource_caught);
}

TEST(ScheduleIr, GeneratorOptionIsPublishedOnEveryLoop) {
  fs::path gemm = fs::path(TILEC_SOURCE_DIR) / "tests/golden/generate-schedule/gemm_cost_based_sm90a.tile";
  for (std::string generator : {"serial", "cost-based"}) {
    Compiled c = compile(gemm, "sm_90a", generator);
    ASSERT_TRUE(c.scheduled);
    int loops = 0;
    walk(*c.scheduled, [&](Operation& op) {
      if (op.kind() != OpKind::for_) return;
      ++loops;
      EXPECT_EQ(op.string_attr("generator"), generator);
      if (generator == "serial") {
        EXPECT_EQ(op.int_attr("stages"), 1);
      }
    });
    EXPECT_EQ(loops, 2) << "the K loop and the one-round tile loop of the tile grid (persistent-tiles)";
  }
}

TEST(ScheduleIr, InterpreterOutputsAreUnchangedByThePasses) {
  int kernels = 0;
  for (const fs::path& path : all_inputs()) {
    SCOPED_TRACE(path.string());
    Compiled c = compile(path, "sm_90a", "cost-based");
    ASSERT_TRUE(c.scheduled);
    for (const auto& kernel : c.scheduled->kernels()) {
      const Operation* original = c.parsed->find_kernel(kernel_name(*kernel));
      ASSERT_NE(original, nullptr);
      EXPECT_EQ(testing::compare_runs(*original, *kernel, 7), "");
      ++kernels;
    }
  }
  EXPECT_GT(kernels, 10);
}

}  // namespace
}  // namespace tilec
