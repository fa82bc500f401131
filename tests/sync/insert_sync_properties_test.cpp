// tests/sync/insert_sync_properties_test.cpp — insert-sync on random straight-line kernels,
// checked by an independent walker over the final op order:
//   - an event id is never set while it is live, and every wait follows a set of its id;
//   - every dependence between two pipes with an asynchronous side (TMA, MMA) is ordered by
//     happens-before: same-pipe program order plus set → wait edges of the events.
// Also: the pipeline states of a two-deep loop nest are threaded through both loops.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "passes/insert_sync.h"
#include "passes/pass_manager.h"
#include "test_support.h"

namespace tilec::testing {
namespace {

// A random kernel of `count` ops: tma_loads (TMA), loads (LSU), mma (MMA), add (SIMT), exp
// (SFU) and stores (LSU).
std::string random_kernel(std::mt19937& random, int count) {
  std::string body;
  std::vector<std::string> shared_tiles, register_tiles{"%acc"};
  auto pick = [&](const std::vector<std::string>& from) { return from[random() % from.size()]; };
  for (int index = 0; index < count; ++index) {
    std::string name = fmt::format("%v{}", index);
    switch (random() % 6) {
      case 0:
        body += fmt::format("  {} = tma_load %A, %m, %zero : tile<64x64xbf16, smem>\n", name);
        shared_tiles.push_back(name);
        break;
      case 1:
        body += fmt::format("  {} = load %X, %m, %zero : tile<64x64xf32, reg>\n", name);
        register_tiles.push_back(name);
        break;
      case 2:
        if (shared_tiles.empty()) break;
        body += fmt::format("  {} = mma {}, {}, {} : tile<64x64xf32, reg>\n", name, pick(shared_tiles), pick(shared_tiles),
                            pick(register_tiles));
        register_tiles.push_back(name);
        break;
      case 3:
        body += fmt::format("  {} = add {}, {} : tile<64x64xf32, reg>\n", name, pick(register_tiles), pick(register_tiles));
        register_tiles.push_back(name);
        break;
      case 4:
        body += fmt::format("  {} = exp {} : tile<64x64xf32, reg>\n", name, pick(register_tiles));
        register_tiles.push_back(name);
        break;
      default: body += fmt::format("  store %Y, %m, %zero, {}\n", pick(register_tiles)); break;
    }
  }
  return "module {passes = [\"parse\", \"promote-mma-operands\", \"fold-constants\", \"parse-constraints\", \"build-resources\", "
         "\"generate-schedule\", \"reorder-events\", \"materialize-schedule\"]}\n"
         "kernel @random(%A: tensor<M, 64, bf16>, %X: tensor<M, 64, f32>, %Y: tensor<M, 64, f32>) {\n"
         "  %M = dim %A {axis = 0} : index\n"
         "  %m = grid_ids %M {schedule = \"tiles\"} : index\n"
         "  %zero = constant {value = 0} : index\n"
         "  %acc = zeros : tile<64x64xf32, reg>\n" +
         body + "  return\n}\n";
}

Pipe pipe_of(const Operation& op) { return op.info().pipe == Pipe::none ? Pipe::SIMT : op.info().pipe; }
bool is_async(const Operation& op) { return op.info().has(kAsync) || op.info().pipe == Pipe::MMA; }

// Checks the final order of one straight-line body; returns the problems found.
std::vector<std::string> check_body(const Region& body) {
  std::vector<std::string> problems;
  const auto& ops = body.operations();
  const int count = static_cast<int>(ops.size());
  // Happens-before edges: same-pipe order, a set after the last op of its `from` pipe, the wait
  // after its set, the next op of its `to` pipe after the wait.
  std::vector<std::vector<int>> edges(count);
  std::map<Pipe, int> last_on;
  std::map<std::tuple<std::string, std::string, int64_t>, int> live;  // (from, to, id) → set index
  for (int index = 0; index < count; ++index) {
    const Operation& op = *ops[index];
    Pipe pipe = pipe_of(op);
    if (op.kind() == OpKind::event_set || op.kind() == OpKind::event_wait) {
      auto key = std::make_tuple(op.string_attr("from"), op.string_attr("to"), op.int_attr("event"));
      pipe = *parse_pipe(op.kind() == OpKind::event_set ? std::get<0>(key) : std::get<1>(key));
      if (op.kind() == OpKind::event_set) {
        if (live.count(key)) problems.push_back(fmt::format("op {}: event {} set while live", index, std::get<2>(key)));
        live[key] = index;
      } else {
        auto it = live.find(key);
        if (it == live.end()) problems.push_back(fmt::format("op {}: wait for event {} with no set before it", index, std::get<2>(key)));
        else edges[it->second].push_back(index), live.erase(it);
      }
    }
    if (auto it = last_on.find(pipe); it != last_on.end()) edges[it->second].push_back(index);
    last_on[pipe] = index;
  }
  std::map<const Value*, int> defined_at;
  for (int index = 0; index < count; ++index)
    for (size_t result = 0; result < ops[index]->num_results(); ++result) defined_at[ops[index]->result(result)] = index;
  for (int consumer = 0; consumer < count; ++consumer) {
    const Operation& op = *ops[consumer];
    for (Value* operand : op.operands()) {
      if (!operand->type().is_tile() || !defined_at.count(operand)) continue;
      int producer = defined_at[operand];
      const Operation& from = *ops[producer];
      if (pipe_of(from) == pipe_of(op) || !(is_async(from) || is_async(op))) continue;
      std::vector<char> reached(count, 0);
      std::vector<int> stack{producer};
      while (!stack.empty()) {
        int at = stack.back();
        stack.pop_back();
        for (int next : edges[at])
          if (!reached[next]) reached[next] = 1, stack.push_back(next);
      }
      if (!reached[consumer])
        problems.push_back(fmt::format("op {} ({}) → op {} ({}) is not ordered by any event", producer, from.name(), consumer, op.name()));
    }
  }
  return problems;
}

TEST(InsertSyncProperties, RandomStraightLineKernelsGetSoundEvents) {
  std::mt19937 random(20261121);
  int events_seen = 0;
  int checked_without_waits = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string text = random_kernel(random, 4 + static_cast<int>(random() % 24));
    Compiled compiled = parse_tir(text);
    ASSERT_TRUE(compiled.module) << compiled.errors() << text;
    PassContext ctx{*compiled.diagnostics};
    ctx.max_events = 64;
    ASSERT_TRUE(insert_sync(*compiled.module, ctx)) << compiled.errors() << text;
    ASSERT_TRUE(verify_module(*compiled.module, *compiled.diagnostics)) << compiled.errors();
    const Region& body = compiled.module->kernels()[0]->region();
    for (const auto& op : body.operations()) events_seen += op->kind() == OpKind::event_set;
    std::vector<std::string> problems = check_body(body);
    EXPECT_TRUE(problems.empty()) << problems[0] << "\n" << print_module(*compiled.module);
    if (!problems.empty()) break;
    // The checker is not vacuous: without the waits, some dependence is left unordered.
    auto& ops = compiled.module->kernels()[0]->region().operations();
    bool had_wait = std::erase_if(ops, [](const auto& op) { return op->kind() == OpKind::event_wait; }) > 0;
    if (had_wait) {
      ++checked_without_waits;
      EXPECT_FALSE(check_body(compiled.module->kernels()[0]->region()).empty());
    }
  }
  EXPECT_GT(events_seen, 100);  // the generator does exercise the pass
  EXPECT_GT(checked_without_waits, 50);
}

TEST(InsertSyncProperties, StatesAreThreadedThroughATwoDeepLoopNest) {
  Compiled compiled = parse_tir(R"(module {passes = ["parse", "promote-mma-operands", "fold-constants", "parse-constraints", "build-resources", "generate-schedule", "reorder-events", "materialize-schedule"]}
kernel @nest(%X: tensor<M, 64, f32>, %Y: tensor<M, 64, f32>) {
  %M = dim %X {axis = 0} : index
  %m = grid_ids %M {schedule = "tiles"} : index
  %p = pipe_create : pipe<tile<64x64xf32, reg>, 3>
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %four = constant {value = 4} : index
  for %zero, %four, %one {
    ^(%i: index):
    for %zero, %four, %one {
      ^(%j: index):
      pipe_producer_acquire %p
      %x = load %X, %m, %j : tile<64x64xf32, reg>
      pipe_producer_commit %p, %x
      %y = pipe_consumer_wait %p : tile<64x64xf32, reg>
      store %Y, %m, %j, %y
      pipe_consumer_release %p
      yield
    }
    yield
  }
  return
}
)");
  ASSERT_TRUE(compiled.module) << compiled.errors();
  PassContext ctx{*compiled.diagnostics};
  ASSERT_TRUE(insert_sync(*compiled.module, ctx)) << compiled.errors();
  ASSERT_TRUE(verify_module(*compiled.module, *compiled.diagnostics)) << compiled.errors();
  Operation& kernel = *compiled.module->kernels()[0];
  std::vector<Operation*> loops;
  walk(kernel.region(), [&](Operation& op) {
    if (op.kind() == OpKind::for_) loops.push_back(&op);
    EXPECT_FALSE(op.kind() == OpKind::pipe_create || op.kind() == OpKind::pipe_consumer_wait) << op.name();
  });
  ASSERT_EQ(loops.size(), 2u);
  for (Operation* loop : loops) {
    // Two states (producer, consumer) × (index, phase): four carried values, in and out.
    EXPECT_EQ(loop->num_operands(), 3u + 4u);
    EXPECT_EQ(loop->num_results(), 4u);
    EXPECT_EQ(loop->region().num_arguments(), 1u + 4u);
    EXPECT_EQ(loop->region().terminator()->num_operands(), 4u);
  }
  // The inner loop starts from the outer loop's region arguments and the outer yields the
  // inner loop's results: the state survives both loops.
  Operation& outer = *loops[0];
  Operation& inner = *loops[1];
  for (size_t state = 0; state < 4; ++state) {
    EXPECT_EQ(inner.operand(3 + state), outer.region().argument(1 + state));
    EXPECT_EQ(outer.region().terminator()->operand(state), inner.result(state));
  }
  // The producer starts at phase 1, the consumer at phase 0.
  EXPECT_EQ(outer.operand(4)->defining_op()->int_attr("value"), 1);
  EXPECT_EQ(outer.operand(6)->defining_op()->int_attr("value"), 0);
}

}  // namespace
}  // namespace tilec::testing
