// tests/unit/verify_sync_ops_test.cpp — the verifier rules for insert-sync's ops
// (ir/verify_sync_ops.cpp): valid lowered IR passes, and each rule has a case breaking it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../verify_text.h"
#include "test_support.h"

namespace tilec::testing {
namespace {

using ::testing::HasSubstr;

// Lowered sync ops as insert-sync writes them; each case replaces one marked text.
constexpr const char* kValid = R"(module
kernel @k(%A: tensor<M, K, bf16>) {
  %M = dim %A {axis = 0} : index
  %m = grid_ids %M {schedule = "tiles"} : index
  %full = mbarrier_create {arrivals = 1, count = 2} : mbarrier
  %empty = mbarrier_create {arrivals = 1, count = 2} : mbarrier
  %buffer = stage_buffer %full, %empty : pipe<tile<64x32xbf16, smem>, 2>
  %c0 = constant {value = 0} : index
  %c1 = constant {value = 1} : index
  mbarrier_wait %empty, %c0, %c1
  mbarrier_arrive %full, %c0 {expect_tx = 4096}
  tma_load_async %buffer, %c0, %A, %m, %c0
  %i, %ph = stage_advance %c0, %c1 {count = 2} : index, index
  mbarrier_wait %full, %c0, %c0
  %a = stage_read %buffer, %c0 : tile<64x32xbf16, smem>
  mbarrier_arrive %empty, %c0
  event_set {event = 0, from = "TMA", to = "MMA"}
  event_wait {event = 0, from = "TMA", to = "MMA"}
  named_barrier_sync {id = 1, threads = 128}
  named_barrier_arrive {id = 1, threads = 128}
  return
}
)";

TEST(VerifySyncOps, AcceptsLoweredIr) { EXPECT_EQ(verify_text(kValid), ""); }

// A barrier, stage buffer, pipe or mutex made inside a loop or an `if` (IR text a hunt moved a
// line of): warp-specialize failed with an internal error; the verifier names the op.
TEST(VerifySyncOps, BarriersBuffersPipesAndMutexesAreMadeInTheKernelBody) {
  for (const char* made : {"%x = mbarrier_create {arrivals = 1, count = 1} : mbarrier",
                           "%x = pipe_create : pipe<tile<64x32xbf16, smem>, 2>", "%x = mutex_create : mutex"}) {
    const std::string errors = verify_text(replace_once(
        kValid, "  return\n", std::string("  %p = cmp %m, %m {predicate = \"eq\"} : i1\n  if %p {\n    ") + made +
                                   "\n    yield\n  } {\n    yield\n  }\n  return\n"));
    EXPECT_THAT(errors, HasSubstr("must sit directly in the kernel body, not inside 'if'")) << made;
  }
}

struct Broken {
  const char* rule;
  const char* from;
  const char* to;
  const char* message;
};

class VerifySyncOpsRejects : public ::testing::TestWithParam<Broken> {};

TEST_P(VerifySyncOpsRejects, EachRule) {
  const Broken& b = GetParam();
  EXPECT_THAT(verify_text(replace_once(kValid, b.from, b.to)), HasSubstr(b.message)) << b.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, VerifySyncOpsRejects,
    ::testing::Values(
        Broken{"mbarrier_count", "%full = mbarrier_create {arrivals = 1, count = 2}", "%full = mbarrier_create {arrivals = 1, count = 0}", "'count' must be in 1..1024, got 0"},
        Broken{"mbarrier_arrivals", "%full = mbarrier_create {arrivals = 1, count = 2}", "%full = mbarrier_create {arrivals = 0, count = 2}", "'arrivals' must be in 1..1048575, got 0"},
        // A count of 2^60 wrapped the shared-memory budget (a hunt's IR text).
        Broken{"mbarrier_count_huge", "%full = mbarrier_create {arrivals = 1, count = 2}",
               "%full = mbarrier_create {arrivals = 1, count = 1152921504606846976}",
               "'count' must be in 1..1024, got 1152921504606846976"},
        Broken{"mbarrier_count_missing", "%full = mbarrier_create {arrivals = 1, count = 2}", "%full = mbarrier_create {arrivals = 1}", "needs an integer 'count'"},
        Broken{"stage_buffer_barrier_slots", "%empty = mbarrier_create {arrivals = 1, count = 2}", "%empty = mbarrier_create {arrivals = 1, count = 1}",
               "a stage buffer 2 slots deep needs an empty barrier of 2 slots or more; it has 1"},
        Broken{"expect_tx_negative", "{expect_tx = 4096}", "{expect_tx = -1}", "'expect_tx' must be >= 0, got -1"},
        Broken{"stage_advance_count", "{count = 2} : index, index", "{count = 0} : index, index", "'count' must be >= 1, got 0"},
        Broken{"stage_advance_operand", "stage_advance %c0, %c1", "stage_advance %c0, %full", "operand 1 must be an index"},
        Broken{"stage_advance_result", "{count = 2} : index, index", "{count = 2} : index, i32", "result 1 must be an index"},
        Broken{"event_id", "event_set {event = 0,", "event_set {event = -2,", "'event' must be >= 0, got -2"},
        Broken{"event_pipe", "event_wait {event = 0, from = \"TMA\"", "event_wait {event = 0, from = \"DMA\"", "'from' = \"DMA\" is not a pipe"},
        Broken{"event_pipe_missing", "event_wait {event = 0, from = \"TMA\", to = \"MMA\"}", "event_wait {event = 0, from = \"TMA\"}", "needs a string 'to' naming a pipe"},
        Broken{"named_barrier_zero", "named_barrier_sync {id = 1,", "named_barrier_sync {id = 0,", "'id' must be in 1..15, got 0"},
        Broken{"named_barrier_sixteen", "named_barrier_arrive {id = 1,", "named_barrier_arrive {id = 16,", "'id' must be in 1..15, got 16"},
        Broken{"named_barrier_threads", "threads = 128}\n  named_barrier_arrive", "threads = 100}\n  named_barrier_arrive", "'threads' must be a multiple of 32, got 100"},
        Broken{"named_barrier_threads_zero", "threads = 128}\n  named_barrier_arrive", "threads = 0}\n  named_barrier_arrive", "'threads' must be >= 32, got 0"},
        Broken{"agent_outside", "  return\n", "  agent {name = \"producer\"} {\n  }\n  return\n", "an agent may only appear in a warp_specialize region"},
        Broken{"agent_crossing", "  return\n",
               "  warp_specialize {\n    agent {name = \"producer\"} {\n      %x = constant {value = 2} : index\n      yield\n    }\n"
               "    agent {name = \"compute\"} {\n      mbarrier_arrive %empty, %x\n      yield\n    }\n    yield\n  }\n  return\n",
               "operand 1 is defined in agent 'producer' but used in agent 'compute'"},
        Broken{"agent_name", "  return\n", "  warp_specialize {\n    agent {name = 3} {\n    }\n  }\n  return\n", "an agent needs a string 'name'"},
        // compile accepted it and run refused it (found by a helper).
        Broken{"agent_twice", "  return\n",
               "  warp_specialize {\n    agent {name = \"producer\"} {\n      yield\n    }\n"
               "    agent {name = \"producer\"} {\n      yield\n    }\n    yield\n  }\n  return\n",
               "agent 'producer' appears twice in this warp_specialize"}),
    [](const auto& info) { return std::string(info.param.rule); });

}  // namespace
}  // namespace tilec::testing
