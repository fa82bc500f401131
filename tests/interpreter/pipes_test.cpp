// tests/interpreter/pipes_test.cpp — pipes and mutexes run in program order by one agent
// (docs/ir.md "Pipes and mutexes"): values pass through unchanged, and every protocol misuse is
// an error naming the pipe (or mutex) and the op's location.
#include <gtest/gtest.h>

#include <string>

#include "runtime/interpreter/interpreter.h"
#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

using testing::buffer_values;
using testing::make_buffer;
using testing::parse_unverified;
using testing::parse_verified;

// A kernel summing the four 4-element tiles of X into Z; BODY is the loop body, which must
// yield the new accumulator %s from %a. PRE is placed before the loop (after %p's creation).
std::string kernel_text(const std::string& pre, const std::string& body, int depth = 2) {
  return R"(module
kernel @pipe_sum(%X: tensor<16, f32>, %Z: tensor<4, f32>) {
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %two = constant {value = 2} : index
  %four = constant {value = 4} : index
  %g = grid_ids %one : index
  %p = pipe_create : pipe<tile<4xf32, reg>, )" + std::to_string(depth) + R"(>
  %m = mutex_create : mutex
  %init = zeros : tile<4xf32, reg>
)" + pre + R"(
  %acc = for %zero, %four, %one, %init : tile<4xf32, reg> {
  ^(%k: index, %a: tile<4xf32, reg>):
)" + body + R"(
  }
  store %Z, %zero, %acc
  return
}
)";
}

// `verified`: false for IR the verifier refuses (misuse it can see in one region), which the
// interpreter must still report by itself.
LaunchResult run(const std::string& text, std::vector<double>& out, bool verified = true) {
  auto module = verified ? parse_verified(text) : parse_unverified(text);
  if (!module) return LaunchResult{false, {}, "does not parse", -1, 0};
  std::vector<double> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i + 1;
  HostBuffer X = make_buffer(ScalarKind::f32, {16}, x);
  HostBuffer Z(ScalarKind::f32, {4});
  LaunchResult result = run_kernel(*module->kernels().front(), std::vector<KernelArgument>{&X, &Z});
  out = buffer_values(Z);
  return result;
}

const std::vector<double> kSums = {1 + 5 + 9 + 13, 2 + 6 + 10 + 14, 3 + 7 + 11 + 15, 4 + 8 + 12 + 16};

TEST(InterpreterPipes, CommitThenWaitPassesTheValueThrough) {
  std::vector<double> out;
  LaunchResult result = run(kernel_text("", R"(
    mutex_lock %m
    pipe_producer_acquire %p
    %x = load %X, %k : tile<4xf32, reg>
    pipe_producer_commit %p, %x
    %y = pipe_consumer_wait %p : tile<4xf32, reg>
    %s = add %a, %y : tile<4xf32, reg>
    pipe_consumer_release %p
    mutex_unlock %m
    yield %s)"), out);
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(out, kSums);
}

TEST(InterpreterPipes, ProducerRunsAheadByTheDepthInFifoOrder) {
  // Tiles 0 and 1 are committed before the loop; iteration k waits for tile k, then refills
  // with tile k+2 (clamped reads of tiles 4 and 5 are all zeros, never waited for).
  std::vector<double> out;
  LaunchResult result = run(kernel_text(R"(
  pipe_producer_acquire %p
  %x0 = load %X, %zero : tile<4xf32, reg>
  pipe_producer_commit %p, %x0
  pipe_producer_acquire %p
  %x1 = load %X, %one : tile<4xf32, reg>
  pipe_producer_commit %p, %x1)", R"(
    %y = pipe_consumer_wait %p : tile<4xf32, reg>
    %s = add %a, %y : tile<4xf32, reg>
    pipe_consumer_release %p
    %next = add %k, %two : index
    pipe_producer_acquire %p
    %x = load %X, %next : tile<4xf32, reg>
    pipe_producer_commit %p, %x
    yield %s)"), out);
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(out, kSums);
}

struct Misuse {
  const char* body;
  const char* message;
};

TEST(InterpreterPipes, ProtocolMisuseIsALocatedErrorNamingThePipe) {
  const Misuse cases[] = {
      {R"(
    pipe_producer_acquire %p
    pipe_producer_acquire %p
    pipe_producer_acquire %p loc(40:5)
    yield %a)", "'pipe_producer_acquire': acquires a slot of pipe %p beyond its depth 2 (2 acquired"},
      {R"(
    %x = load %X, %k : tile<4xf32, reg>
    pipe_producer_commit %p, %x loc(40:5)
    yield %a)", "'pipe_producer_commit': commits to pipe %p without an acquired slot"},
      {R"(
    %y = pipe_consumer_wait %p : tile<4xf32, reg> loc(40:5)
    yield %y)", "'pipe_consumer_wait': waits on pipe %p with nothing published"},
      {R"(
    pipe_producer_acquire %p
    %x = load %X, %k : tile<4xf32, reg>
    pipe_producer_commit %p, %x
    pipe_consumer_release %p loc(40:5)
    yield %a)", "'pipe_consumer_release': releases a slot of pipe %p with nothing waited for"},
      {R"(
    %v = stage_read %p, %zero : tile<4xf32, reg> loc(40:5)
    yield %a)", "'stage_read': operand 0 must be a stage buffer"},
      {R"(
    mutex_unlock %m loc(40:5)
    yield %a)", "'mutex_unlock': unlocks mutex %m, which is not locked"},
      {R"(
    mutex_lock %m loc(40:5)
    yield %a)", "deadlock: agent 'main' at 40:5 waits to lock mutex %m, which is locked"},
  };
  for (const Misuse& misuse : cases) {
    std::vector<double> out;
    LaunchResult result = run(kernel_text("", misuse.body), out, /*verified=*/false);
    ASSERT_FALSE(result.ok) << misuse.body;
    EXPECT_NE(result.message.find(misuse.message), std::string::npos) << result.message;
    EXPECT_EQ(result.location.line, 40u) << result.message;
    EXPECT_EQ(result.location.column, 5u) << result.message;
  }
}

TEST(InterpreterPipes, ReleasedSlotsAreReusedForeverAtDepthOne) {
  std::vector<double> out;
  LaunchResult result = run(kernel_text("", R"(
    pipe_producer_acquire %p
    %x = load %X, %k : tile<4xf32, reg>
    pipe_producer_commit %p, %x
    %y = pipe_consumer_wait %p : tile<4xf32, reg>
    pipe_consumer_release %p
    %s = add %a, %y : tile<4xf32, reg>
    yield %s)", 1), out);
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(out, kSums);
}

}  // namespace
}  // namespace tilec::runtime
