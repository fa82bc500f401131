// tests/interpreter/agents_test.cpp — mbarriers, stage buffers, events, named barriers and
// agents as coroutines (docs/ir.md "Synchronization", "Agents"; docs/interpreter.md "Pipes,
// barriers and agents"). The warp-specialized gemm of sync/ws_gemm.tir must give exactly the
// numbers of the plain gemm for every trip count around the pipe depth; one-line planted bugs
// must give deadlock and race reports naming the barrier or buffer, the slot, the phase or
// fill, the agents and the op's location.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/executor.h"
#include "runtime/interpreter/executor_tile_runner.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/random_fill.h"
#include "tests/cli_runner.h"
#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

using testing::buffer_values;
using testing::parse_verified;

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(TILEC_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Replaces the one occurrence of `from` (the test fails if there is not exactly one).
std::string edit(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return text;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "ambiguous edit: " << from;
  return text.replace(at, from.size(), to);
}

// The plain gemm: the same tiles, loads instead of the pipe.
constexpr const char* kPlainGemm = R"(module
kernel @gemm(%A: tensor<M, K, bf16>, %B: tensor<K, N, bf16>, %C: tensor<M, N, f32>) {
  %M = dim %A {axis = 0} : index
  %K = dim %A {axis = 1} : index
  %N = dim %B {axis = 1} : index
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %block = constant {value = 4} : index
  %gm = cdiv %M, %block : index
  %gn = cdiv %N, %block : index
  %kt = cdiv %K, %block : index
  %m, %n = grid_ids %gm, %gn : index, index
  %init = zeros : tile<4x4xf32, reg>
  %acc = for %zero, %kt, %one, %init : tile<4x4xf32, reg> {
  ^(%k: index, %a: tile<4x4xf32, reg>):
    %x = load %A, %m, %k : tile<4x4xbf16, reg>
    %y = load %B, %k, %n : tile<4x4xbf16, reg>
    %s = mma %x, %y, %a : tile<4x4xf32, reg>
    yield %s
  }
  store %C, %m, %n, %acc
  return
}
)";

// The warp-specialized gemm with a pipe of `depth` slots.
std::string ws_gemm(int depth) {
  std::string text = read_source("tests/interpreter/sync/ws_gemm.tir");
  std::string d = std::to_string(depth);
  for (const char* from : {"count = 4", ", 4>"}) {
    std::string to = std::string(from).replace(std::string(from).find('4'), 1, d);
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, std::string(from).size(), to);
  }
  return text;
}

struct GemmRun {
  LaunchResult result;
  std::vector<double> C;
};

// Runs `text` on M = N = 8 (four CTAs) and K = 4·k_tiles with seeded inputs.
GemmRun run_gemm(const std::string& text, int64_t k_tiles, unsigned workers = 0) {
  GemmRun run;
  auto module = parse_verified(text);
  if (!module) {
    run.result = LaunchResult{false, {}, "does not parse", -1, 0};
    return run;
  }
  const int64_t M = 8, N = 8, K = 4 * k_tiles;
  HostBuffer A(ScalarKind::bf16, {M, K}), B(ScalarKind::bf16, {K, N}), C(ScalarKind::f32, {M, N});
  fill_random(A, derive_seed(7, 0));
  fill_random(B, derive_seed(7, 1));
  std::vector<KernelArgument> arguments = {&A, &B, &C};
  LaunchOptions options;
  std::unique_ptr<Executor> executor;
  std::unique_ptr<ExecutorTileRunner> runner;
  if (workers > 0) {
    ExecutorOptions executor_options;
    executor_options.worker_count = workers;
    executor = std::make_unique<Executor>(executor_options);
    runner = std::make_unique<ExecutorTileRunner>(*executor);
    options.runner = runner.get();
  }
  run.result = run_kernel(*module->kernels().front(), arguments, {}, options);
  run.C = buffer_values(C);
  return run;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(InterpreterAgents, WarpSpecializedGemmGivesThePlainNumbersForEveryTripCount) {
  for (int depth : {1, 4}) {
    // 1, 2, depth-1, depth, depth+1, odd, 2·depth+1, many.
    for (int64_t k_tiles : {int64_t{1}, int64_t{2}, int64_t{depth > 1 ? depth - 1 : 1}, int64_t{depth},
                            int64_t{depth + 1}, int64_t{7}, int64_t{2 * depth + 1}, int64_t{37}}) {
      GemmRun plain = run_gemm(kPlainGemm, k_tiles);
      GemmRun specialized = run_gemm(ws_gemm(depth), k_tiles);
      ASSERT_TRUE(plain.result.ok) << plain.result.describe();
      ASSERT_TRUE(specialized.result.ok) << "depth " << depth << ", " << k_tiles << " k tiles: "
                                         << specialized.result.describe();
      EXPECT_EQ(specialized.C, plain.C) << "depth " << depth << ", " << k_tiles << " k tiles";
      double magnitude = 0;
      for (double v : plain.C) magnitude += std::abs(v);
      EXPECT_GT(magnitude, 0.0);
    }
  }
}

TEST(InterpreterAgents, ResultsDoNotDependOnTheWorkerCount) {
  GemmRun serial = run_gemm(ws_gemm(4), 9);
  GemmRun one = run_gemm(ws_gemm(4), 9, 1);
  GemmRun three = run_gemm(ws_gemm(4), 9, 3);
  ASSERT_TRUE(one.result.ok && three.result.ok) << one.result.describe() << three.result.describe();
  EXPECT_EQ(one.C, serial.C);
  EXPECT_EQ(three.C, serial.C);
  GemmRun broken_one = run_gemm(edit(ws_gemm(4), "        mbarrier_arrive %empty, %j loc(47:9)\n", ""), 9, 1);
  GemmRun broken_three = run_gemm(edit(ws_gemm(4), "        mbarrier_arrive %empty, %j loc(47:9)\n", ""), 9, 3);
  ASSERT_FALSE(broken_one.result.ok);
  EXPECT_EQ(broken_one.result.describe(), broken_three.result.describe());
  EXPECT_EQ(broken_one.result.tile, 0);
}

// Persistent-like: one CTA per row of tiles loops over the tiles of its row; both agents carry
// their (index, phase) pipeline state from tile to tile.
std::string persistent_gemm(int depth) {
  std::string text = ws_gemm(depth);
  text = edit(text, "  %m, %n = grid_ids %gm, %gn : index, index\n", "  %m = grid_ids %gm : index\n");
  text = edit(text, R"(      %pi, %pph = for %zero, %kt, %one, %zero, %one : index, index {
      ^(%k: index, %i: index, %ph: index):)",
              R"(      %pti, %ptph = for %zero, %gn, %one, %zero, %one : index, index {
      ^(%n: index, %ti: index, %tph: index):
      %pi, %pph = for %zero, %kt, %one, %ti, %tph : index, index {
      ^(%k: index, %i: index, %ph: index):)");
  text = edit(text, R"(        yield %i2, %ph2
      }
      yield
    })",
              R"(        yield %i2, %ph2
      }
      yield %pi, %pph
      }
      yield
    })");
  text = edit(text, R"(      %init = zeros : tile<4x4xf32, reg>
      %acc, %cj, %cjph = for %zero, %kt, %one, %init, %zero, %zero : tile<4x4xf32, reg>, index, index {)",
              R"(      %cti, %ctph = for %zero, %gn, %one, %zero, %zero : index, index {
      ^(%cn: index, %tj: index, %tjph: index):
      %init = zeros : tile<4x4xf32, reg>
      %acc, %cj, %cjph = for %zero, %kt, %one, %init, %tj, %tjph : tile<4x4xf32, reg>, index, index {)");
  text = edit(text, R"(      store %C, %m, %n, %acc
      yield
    })",
              R"(      store %C, %m, %cn, %acc
      yield %cj, %cjph
      }
      yield
    })");
  return text;
}

TEST(InterpreterAgents, PersistentGemmCarriesThePhaseAcrossTiles) {
  for (int depth : {1, 4})
    for (int64_t k_tiles : {1, 3, 5}) {  // 2 tiles per CTA: 2, 6 and 10 fills per pipe
      GemmRun plain = run_gemm(kPlainGemm, k_tiles);
      GemmRun persistent = run_gemm(persistent_gemm(depth), k_tiles);
      ASSERT_TRUE(persistent.result.ok) << persistent.result.describe();
      EXPECT_EQ(persistent.C, plain.C) << "depth " << depth << ", " << k_tiles << " k tiles";
    }
}

struct PlantedBug {
  const char* what;
  const char* from;
  const char* to;
  std::vector<std::string> report;  // parts the report must contain
  unsigned line, column;            // the reported op
};

TEST(InterpreterAgents, PlantedBugsGiveDeadlockAndRaceReports) {
  const PlantedBug bugs[] = {
      {"the consumer's release removed", "        mbarrier_arrive %empty, %j loc(47:9)\n", "",
       {"deadlock: agent 'producer' at 30:9 waits for phase 0 (parity 0) of %empty[0]: phase 0 in progress, "
        "1 arrival and 0 bytes missing",
        "; agent 'consumer' at 43:9 waits for phase 1 (parity 1) of %full[0]: phase 1 in progress, 1 arrival and "
        "0 bytes missing"},
       30, 9},
      {"the release moved before the last read", "        %y = stage_read %b_buf, %j : tile<4x4xbf16, smem> loc(45:9)\n",
       "        mbarrier_arrive %empty, %j loc(47:9)\n        %y = stage_read %b_buf, %j : tile<4x4xbf16, smem> loc(45:9)\n",
       {"race: %b_buf[0] read by agent 'consumer' after it released fill 1 (arrived on %empty[0])"}, 45, 9},
      {"the producer's empty wait removed", "        mbarrier_wait %empty, %i, %ph loc(30:9)\n", "",
       {"race: %a_buf[0] fill 2 by agent 'producer' overwrites fill 1, which no agent has released on %empty[0]"}, 32,
       9},
      {"the consumer's full wait removed", "        mbarrier_wait %full, %j, %jph loc(43:9)\n", "",
       {"race: %a_buf[0] read by agent 'consumer' before its fill 1 was committed (the agent has not observed "
        "phase 0 of %full[0] complete; agent 'producer' filled it)"},
       44, 9},
      {"the producer's initial phase 0", "%pi, %pph = for %zero, %kt, %one, %zero, %one",
       "%pi, %pph = for %zero, %kt, %one, %zero, %zero",
       {"deadlock: agent 'producer' at 30:9 waits for phase 0 (parity 0) of %empty[0]: phase 0 in progress, 1 arrival",
        "agent 'consumer' at 43:9 waits for phase 0 (parity 0) of %full[0]: phase 0 in progress, 1 arrival and "
        "0 bytes missing"},
       30, 9},
      {"expect_tx short by one tile (the first TMA completes the phase)", "{expect_tx = 64}", "{expect_tx = 32}",
       {"race: %b_buf[0] read by agent 'consumer' before its fill 1 was committed (the agent has not observed "
        "phase 1 of %full[0] complete; agent 'producer' filled it)"},
       45, 9},
      {"an event waited for but never set", "        %s = mma %x, %y, %a : tile<4x4xf32, reg>\n",
       "        event_wait {event = 2, from = \"TMA\", to = \"MMA\"} loc(46:9)\n"
       "        %s = mma %x, %y, %a : tile<4x4xf32, reg>\n",
       {"agent 'consumer' at 46:9 waits for event 2 of TMA -> MMA, which is not set"}, 30, 9},
      {"an event set twice while live", "        %i2, %ph2 = stage_advance %i, %ph {count = 4} : index, index\n        yield %i2, %ph2\n      }\n      yield\n    }\n    agent",
       "        event_set {event = 3, from = \"TMA\", to = \"MMA\"} loc(34:9)\n"
       "        %i2, %ph2 = stage_advance %i, %ph {count = 4} : index, index\n        yield %i2, %ph2\n      }\n      yield\n    }\n    agent",
       {"agent 'producer': 'event_set': event id reused while live: event 3 of TMA -> MMA is set again before its wait"},
       34, 9},
  };
  for (const PlantedBug& bug : bugs) {
    GemmRun run = run_gemm(edit(ws_gemm(4), bug.from, bug.to), 9);
    ASSERT_FALSE(run.result.ok) << bug.what;
    for (const std::string& part : bug.report)
      EXPECT_TRUE(contains(run.result.message, part)) << bug.what << "\n  report: " << run.result.message
                                                       << "\n  expected: " << part;
    EXPECT_EQ(run.result.location.line, bug.line) << bug.what << ": " << run.result.message;
    EXPECT_EQ(run.result.location.column, bug.column) << bug.what;
    EXPECT_EQ(run.result.tile, 0) << bug.what;
  }
}

// Program order in one agent ("main"): the synchronized loop before warp-specialize fills a
// slot and consumes it in the same iteration.
constexpr const char* kOneAgentGemm = R"(module
kernel @gemm(%A: tensor<M, K, bf16>, %B: tensor<K, N, bf16>, %C: tensor<M, N, f32>) {
  %M = dim %A {axis = 0} : index
  %K = dim %A {axis = 1} : index
  %N = dim %B {axis = 1} : index
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %block = constant {value = 4} : index
  %gm = cdiv %M, %block : index
  %gn = cdiv %N, %block : index
  %kt = cdiv %K, %block : index
  %m, %n = grid_ids %gm, %gn : index, index
  %full = mbarrier_create {count = 2, arrivals = 1} : mbarrier
  %empty = mbarrier_create {count = 2, arrivals = 1} : mbarrier
  %a_buf = stage_buffer %full, %empty : pipe<tile<4x4xbf16, smem>, 2>
  %b_buf = stage_buffer %full, %empty : pipe<tile<4x4xbf16, smem>, 2>
  %init = zeros : tile<4x4xf32, reg>
  %acc, %pi, %pph, %ci, %cph = for %zero, %kt, %one, %init, %zero, %one, %zero, %zero : tile<4x4xf32, reg>, index, index, index, index {
  ^(%k: index, %a: tile<4x4xf32, reg>, %i: index, %ph: index, %j: index, %jph: index):
    mbarrier_wait %empty, %i, %ph
    mbarrier_arrive %full, %i {expect_tx = 64}
    tma_load_async %a_buf, %i, %A, %m, %k
    tma_load_async %b_buf, %i, %B, %k, %n
    %i2, %ph2 = stage_advance %i, %ph {count = 2} : index, index
    mbarrier_wait %full, %j, %jph loc(28:5)
    %x = stage_read %a_buf, %j : tile<4x4xbf16, smem>
    %y = stage_read %b_buf, %j : tile<4x4xbf16, smem>
    %s = mma %x, %y, %a : tile<4x4xf32, reg>
    mbarrier_arrive %empty, %j
    %j2, %jph2 = stage_advance %j, %jph {count = 2} : index, index
    yield %s, %i2, %ph2, %j2, %jph2
  }
  store %C, %m, %n, %acc
  return
}
)";

TEST(InterpreterAgents, SynchronizedLoopRunsInOneAgent) {
  for (int64_t k_tiles : {1, 2, 5}) {
    GemmRun plain = run_gemm(kPlainGemm, k_tiles);
    GemmRun single = run_gemm(kOneAgentGemm, k_tiles);
    ASSERT_TRUE(single.result.ok) << single.result.describe();
    EXPECT_EQ(single.C, plain.C);
  }
  GemmRun stuck = run_gemm(edit(kOneAgentGemm, "    mbarrier_arrive %full, %i {expect_tx = 64}\n", ""), 2);
  ASSERT_FALSE(stuck.result.ok);
  EXPECT_EQ(stuck.result.message, "deadlock: agent 'main' at 28:5 waits for phase 0 (parity 0) of %full[0]: "
                                  "phase 0 in progress, 1 arrival missing and 64 bytes completed before an arrive expected them");
  EXPECT_EQ(stuck.result.location.line, 28u);
}

// Named barriers: each agent contributes its threads; a missing agent is a deadlock.
TEST(InterpreterAgents, NamedBarriersCountTheAgentsThreads) {
  std::string text = ws_gemm(4);
  std::string sync = "        named_barrier_sync {id = 1, threads = 256} loc(48:9)\n";
  text = edit(text, "        mbarrier_arrive %empty, %j loc(47:9)\n", "        mbarrier_arrive %empty, %j loc(47:9)\n" + sync);
  // After the loads: a sync between the arrive and the loads is a real deadlock (the consumer
  // waits for the bytes the producer would load after the sync).
  text = edit(text, "        tma_load_async %b_buf, %i, %B, %k, %n loc(33:9)\n",
              "        tma_load_async %b_buf, %i, %B, %k, %n loc(33:9)\n" + sync);
  GemmRun plain = run_gemm(kPlainGemm, 5);
  GemmRun synced = run_gemm(text, 5);
  ASSERT_TRUE(synced.result.ok) << synced.result.describe();
  EXPECT_EQ(synced.C, plain.C);
  std::string lonely = edit(ws_gemm(4), "        mbarrier_arrive %empty, %j loc(47:9)\n",
                            "        mbarrier_arrive %empty, %j loc(47:9)\n" + sync);
  GemmRun deadlocked = run_gemm(lonely, 5);
  ASSERT_FALSE(deadlocked.result.ok);
  EXPECT_TRUE(contains(deadlocked.result.message, "agent 'consumer' at 48:9 waits at named barrier 1: 128 of 256 threads arrived"))
      << deadlocked.result.message;
}

// `tilec run` prints the report at file:line:col and exits 1, with or without --check, and the
// same report and numbers for every worker count.
TEST(InterpreterAgents, TilecRunReportsDeadlocksAndRacesAtTheirOps) {
  namespace fs = std::filesystem;
  std::string correct = read_source("tests/interpreter/sync/ws_gemm.tir");
  std::string tilec = testing::tilec_binary() + " run ";
  std::string dims = " --dims M=8,N=8,K=40";
  fs::path good = fs::temp_directory_path() / ("tilec_agents_" + std::to_string(::getpid()) + "_good.tir");
  fs::path bad = fs::temp_directory_path() / ("tilec_agents_" + std::to_string(::getpid()) + "_bad.tir");
  testing::write_file(good, correct);
  testing::CommandResult one = testing::run_command(tilec + good.string() + dims + " --workers 1 --check");
  testing::CommandResult three = testing::run_command(tilec + good.string() + dims + " --workers 3 --check");
  EXPECT_EQ(one.status, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "check %C: ok")) << one.out;
  auto checksum = [](const std::string& out) { return out.substr(out.find("checksum")); };
  EXPECT_EQ(checksum(one.out), checksum(three.out));

  testing::write_file(bad, edit(correct, "        mbarrier_arrive %empty, %j loc(47:9)\n", ""));
  for (const char* options : {" --workers 1", " --workers 3 --check"}) {
    testing::CommandResult r = testing::run_command(tilec + bad.string() + dims + options);
    EXPECT_EQ(r.status, 1) << options;
    EXPECT_TRUE(contains(r.err, bad.string() + ":30:9: error: kernel ws_gemm: deadlock: agent 'producer' at 30:9 "
                                "waits for phase 0 (parity 0) of %empty[0]"))
        << r.err;
  }
  testing::write_file(bad, edit(correct, "        mbarrier_wait %full, %j, %jph loc(43:9)\n", ""));
  testing::CommandResult race = testing::run_command(tilec + bad.string() + dims + " --workers 3 --check");
  EXPECT_EQ(race.status, 1);
  EXPECT_TRUE(contains(race.err, bad.string() + ":44:9: error: kernel ws_gemm: race: %a_buf[0] read by agent "
                                 "'consumer' before its fill 1 was committed"))
      << race.err;
  fs::remove(good);
  fs::remove(bad);
}

// IR text printed from a .tile locates its ops in that file: a launch failure names the .tile's
// line and quotes it, as the verifier's errors do (it named the .tir with the .tile's line and
// column, and quoted nothing; found by a helper).
TEST(InterpreterAgents, TilecRunReportsAFailureInIrTextAtItsTileLine) {
  namespace fs = std::filesystem;
  std::string gemm = read_source("samples/expected/gemm.tir");
  const size_t wait = gemm.find("mbarrier_wait %pipe_a_full");
  ASSERT_NE(wait, std::string::npos);
  const size_t begin = gemm.rfind('\n', wait) + 1, end = gemm.find('\n', wait) + 1;
  fs::path bad = fs::temp_directory_path() / ("tilec_agents_" + std::to_string(::getpid()) + "_gemm.tir");
  testing::write_file(bad, gemm.substr(0, begin) + gemm.substr(end));
  // From the source directory, where the module's `source = "samples/gemm.tile"` is found.
  testing::CommandResult r = testing::run_command("cd " + testing::source_dir().string() + " && " +
                                                  testing::tilec_binary() + " run " + bad.string() + " --check");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "samples/gemm.tile:14:11: error: kernel gemm: race: %pipe_a_buffer[0] read by agent "
                              "'compute' before its fill 1 was committed"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "      acc = mma(a, b, acc);\n            ^")) << r.err;
  EXPECT_FALSE(contains(r.err, bad.string())) << r.err;
  fs::remove(bad);
}

}  // namespace
}  // namespace tilec::runtime
