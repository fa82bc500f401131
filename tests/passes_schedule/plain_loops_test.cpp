// tests/passes_schedule/plain_loops_test.cpp — the rule "only loops with mma are
// software-pipelined" (docs/passes/generate_schedule.md, passes/generate_schedule_pass.cpp
// phase 4), checked after the whole pipeline:
//   1. A GEMV-like loop (global loads, casts, a reduction; no mma) gets one stage under every
//      generator, and no stage buffer, mbarrier, pipe, mutex or warp_specialize op appears.
//   2. The same loop with `pipeline(4)` also keeps one stage, and a note at the loop says the
//      annotation has no effect.
//   3. Control: a loop with mma is still pipelined (more than one stage, pipes and mbarriers),
//      so the rule is not vacuous.
#include <gtest/gtest.h>
#include <fmt/core.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "ir/ir.h"
#include "passes/pipeline.h"
#include "tests/passes/pass_test_support.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

// The reported GEMV (issue: "a loop without mma gets 38 stages"); {pipeline} is spliced in.
constexpr const char* kGemv = R"(const BM = 4;
const BK = 256;
kernel gemv(A: tensor<M, K, bf16>, X: tensor<1, K, bf16>, Y: tensor<M, 1, f32>) grid tiles(cdiv(M, BM)) as (m) {{
  acc = zeros<BM, 1, f32>();
  for k in 0 .. cdiv(K, BK) {pipeline}carry (acc) {{
    a = cast(load A[m, k] : <BM, BK>, f32);
    x = cast(load X[0, k] : <1, BK>, f32);
    acc = acc + sum(a * x, axis = 1);
  }}
  store Y[m, 0] = acc;
}}
)";

struct Compiled {
  LoadedModule input;
  bool ok = false;
};

// Runs the whole pipeline on the .tile file at `path` with `generator`.
Compiled compile(const fs::path& path, const std::string& generator) {
  Compiled out{load_module(path), false};
  EXPECT_TRUE(out.input.module) << out.input.diagnostics->render_all();
  if (!out.input.module) return out;
  PassContext ctx{*out.input.diagnostics};
  ctx.generator = generator;
  PipelineStatus status = build_pipeline().run(*out.input.module, ctx, PipelineOptions{});
  out.ok = status == PipelineStatus::ok && !out.input.diagnostics->has_errors();
  EXPECT_TRUE(out.ok) << out.input.diagnostics->render_all();
  return out;
}

// The same for a .tile text, through a temporary file named after `name`.
Compiled compile_text(const std::string& name, const std::string& source, const std::string& generator) {
  fs::path path = fs::temp_directory_path() / fmt::format("tilec_plain_loops_{}_{}.tile", ::getpid(), name);
  write_file(path, source);
  Compiled out = compile(path, generator);
  fs::remove(path);
  return out;
}

// The `for` ops of the module, outermost first.
std::vector<const Operation*> loops_of(const Module& module) {
  std::vector<const Operation*> loops;
  walk(const_cast<Module&>(module), [&](Operation& op) {
    if (op.kind() == OpKind::for_) loops.push_back(&op);
  });
  return loops;
}

bool is_pipelining_op(OpKind kind) {
  switch (kind) {
    case OpKind::stage_buffer: case OpKind::stage_write: case OpKind::stage_read: case OpKind::stage_advance:
    case OpKind::mbarrier_create: case OpKind::mbarrier_arrive: case OpKind::mbarrier_wait:
    case OpKind::pipe_create: case OpKind::pipe_producer_acquire: case OpKind::pipe_producer_commit:
    case OpKind::pipe_consumer_wait: case OpKind::pipe_consumer_release:
    case OpKind::mutex_create: case OpKind::mutex_lock: case OpKind::mutex_unlock:
    case OpKind::tma_load_async: case OpKind::warp_specialize: case OpKind::agent:
      return true;
    default:
      return false;
  }
}

std::vector<std::string> pipelining_ops(const Module& module) {
  std::vector<std::string> found;
  walk(const_cast<Module&>(module), [&](Operation& op) {
    if (is_pipelining_op(op.kind()))
      found.push_back(fmt::format("'{}' at {}:{}", op.name(), op.location().line, op.location().column));
  });
  return found;
}

// The GEMV's k loop: one stage, every body op in stage 0, and no op of a pipelined loop.
void expect_plain_one_stage_loop(const Compiled& c) {
  ASSERT_TRUE(c.ok);
  auto loops = loops_of(*c.input.module);
  ASSERT_EQ(loops.size(), 1u);
  const Operation& loop = *loops.front();
  EXPECT_EQ(loop.int_attr("stages"), 1);
  for (const auto& op : loop.region().operations()) {
    if (op->info().has(kTerminator)) continue;
    EXPECT_EQ(op->int_attr("stage", -1), 0) << op->name();
  }
  EXPECT_EQ(pipelining_ops(*c.input.module), std::vector<std::string>{});
}

TEST(PlainLoops, GemvLoopKeepsOneStageAndGetsNoPipelineOps) {
  for (std::string generator : {"auto", "serial", "cost-based"}) {
    SCOPED_TRACE(generator);
    Compiled c = compile_text("gemv", fmt::format(kGemv, fmt::arg("pipeline", "")), generator);
    expect_plain_one_stage_loop(c);
    for (const Diagnostic& d : c.input.diagnostics->diagnostics())
      ADD_FAILURE() << "unexpected diagnostic: " << c.input.diagnostics->render(d);
  }
}

TEST(PlainLoops, PipelineFourOnAGemvLoopKeepsOneStageWithANote) {
  Compiled c = compile_text("gemv4", fmt::format(kGemv, fmt::arg("pipeline", "pipeline(4) ")), "auto");
  expect_plain_one_stage_loop(c);
  const auto& diagnostics = c.input.diagnostics->diagnostics();
  ASSERT_EQ(diagnostics.size(), 1u) << c.input.diagnostics->render_all();
  EXPECT_EQ(diagnostics[0].severity, Severity::note);
  EXPECT_EQ(diagnostics[0].location.line, 5);
  EXPECT_EQ(diagnostics[0].location.column, 3);
  EXPECT_EQ(diagnostics[0].message.rfind("pipeline(4) has no effect on a loop without mma", 0), 0u)
      << diagnostics[0].message;
  // The annotation the user wrote stays on the loop; only the schedule ignores it.
  EXPECT_EQ(loops_of(*c.input.module).front()->int_attr("pipeline"), 4);
}

TEST(PlainLoops, ALoopWithMmaIsStillPipelined) {
  // Four TMA loads, two MMAs and a scale in the loop: the cost-based generator gives it 3 stages.
  Compiled c = compile(source_dir() / "tests/golden/generate-schedule/gemm_cost_based_sm90a.tile", "auto");
  ASSERT_TRUE(c.ok);
  bool pipelined = false;
  for (const Operation* loop : loops_of(*c.input.module)) pipelined |= loop->int_attr("stages") > 1;
  EXPECT_TRUE(pipelined);
  EXPECT_FALSE(pipelining_ops(*c.input.module).empty());
}

}  // namespace
}  // namespace tilec::testing
