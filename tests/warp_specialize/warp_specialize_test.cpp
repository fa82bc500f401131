// tests/warp_specialize/warp_specialize_test.cpp — the warp-specialize pass seen through `tilec`:
// gemm's body becomes a producer agent (TMA loads, empty waits, full arrives) and a compute
// agent (everything else), both agents really run concurrently under `tilec run --check`, and
// bugs planted in the pass's output (a missing release, an early release) are reported by the
// interpreter as a deadlock naming both agents and as a race.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

std::string tilec(const std::string& arguments) {
  return "cd " + source_dir().string() + " && " + tilec_binary() + " " + arguments;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

std::vector<std::string> specialized_gemm(const std::string& defines = "") {
  CommandResult r = run_command(tilec("compile samples/gemm.tile --emit ir --stop-after warp-specialize" + defines));
  EXPECT_EQ(r.status, 0) << r.err;
  return lines_of(r.out);
}

// The index of the first line at or after `from` containing `needle` (lines.size() if none).
size_t find_line(const std::vector<std::string>& lines, const std::string& needle, size_t from = 0) {
  for (size_t i = from; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return i;
  return lines.size();
}

CommandResult run_edited(const std::vector<std::string>& lines, const std::string& name, const char* workers) {
  auto path = std::filesystem::temp_directory_path() / ("tilec_warp_specialize_" + name + ".tir");
  write_file(path, joined(lines));
  CommandResult r = run_command(tilec("run " + path.string() + " --dims M=128,N=256,K=320 --workers " + workers));
  std::filesystem::remove(path);
  return r;
}

// The text between the agent header line containing `name` and the next agent (or the end).
std::string agent_text(const std::vector<std::string>& lines, const std::string& name) {
  size_t begin = find_line(lines, "agent {name = \"" + name + "\"");
  EXPECT_LT(begin, lines.size()) << "no agent " << name << " in\n" << joined(lines);
  size_t end = find_line(lines, "agent {name = ", begin + 1);
  return joined(std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(std::min(begin, lines.size())),
                                         lines.begin() + static_cast<std::ptrdiff_t>(end)));
}

TEST(WarpSpecialize, ComputeWarpgroupsFollowTheAccumulatorRows) {
  std::string text = joined(specialized_gemm(" -D BM=64"));
  EXPECT_NE(text.find("agent {name = \"compute\", registers = 232, threads = 128}"), std::string::npos) << text;
  EXPECT_EQ(text.find("threads = 256"), std::string::npos) << text;
}

TEST(WarpSpecialize, GemmSplitsIntoAProducerAndAComputeAgent) {
  std::vector<std::string> lines = specialized_gemm();
  std::string text = joined(lines);
  EXPECT_NE(text.find("agent {name = \"producer\", registers = 40, threads = 128}"), std::string::npos) << text;
  // Two compute warpgroups: a warpgroup's MMA covers 64 of the accumulator's 128 rows.
  EXPECT_NE(text.find("agent {name = \"compute\", registers = 232, threads = 256}"), std::string::npos) << text;
  EXPECT_NE(text.find("named_barrier_sync {id = 1, order = 8, stage = 0, threads = 256}"), std::string::npos) << text;
  std::string producer = agent_text(lines, "producer");
  std::string compute = agent_text(lines, "compute");
  for (const char* op : {"tma_load_async", "mbarrier_wait %pipe_a_empty", "mbarrier_arrive %pipe_a_full", "stage_advance"})
    EXPECT_NE(producer.find(op), std::string::npos) << op << " missing from the producer\n" << producer;
  for (const char* op : {" = mma ", "stage_read", "mbarrier_wait %pipe_a_full", "mbarrier_arrive %pipe_a_empty", "store ",
                         "named_barrier_sync", "event_wait"})
    EXPECT_EQ(producer.find(op), std::string::npos) << op << " in the producer\n" << producer;
  for (const char* op : {" = mma ", "stage_read", "mbarrier_wait %pipe_a_full", "mbarrier_arrive %pipe_a_empty", "store "})
    EXPECT_NE(compute.find(op), std::string::npos) << op << " missing from the compute agent\n" << compute;
  for (const char* op : {"tma_load_async", "mbarrier_wait %pipe_a_empty", "mbarrier_arrive %pipe_a_full"})
    EXPECT_EQ(compute.find(op), std::string::npos) << op << " in the compute agent\n" << compute;
  // Each agent's loop carries only its own state: the producer no accumulator, the compute
  // agent no producer index.
  EXPECT_EQ(producer.find("tile<128x256xf32, reg>"), std::string::npos) << producer;
  EXPECT_EQ(compute.find("producer_index"), std::string::npos) << compute;
}

TEST(WarpSpecialize, TheSpecializedGemmRunsAndChecksOnOneAndThreeWorkers) {
  for (const char* workers : {"1", "3"}) {
    CommandResult r = run_command(tilec(std::string("run samples/gemm.tile --check --seed 5 --dims M=200,N=296,K=320 --workers ") + workers));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("mismatch"), std::string::npos) << r.out;
  }
}

// Planted bug: the compute agent never releases A's slots. Once the producer has filled every
// slot it waits on an empty barrier forever while the compute agent waits on a full one.
TEST(WarpSpecialize, AMissingReleaseIsADeadlockNamingBothAgents) {
  std::vector<std::string> lines = specialized_gemm();
  size_t release = find_line(lines, "mbarrier_arrive %pipe_a_empty");
  ASSERT_LT(release, lines.size());
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(release));
  for (const char* workers : {"1", "3"}) {
    CommandResult r = run_edited(lines, "no_release", workers);
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("deadlock"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("producer"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("compute"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("%pipe_a_empty"), std::string::npos) << r.err;
  }
}

// Planted bug: the compute agent releases A's slot before the mma reads it; the producer may
// refill the slot meanwhile, and the read after the release is a race.
TEST(WarpSpecialize, AReleaseBeforeTheMmaIsARace) {
  std::vector<std::string> lines = specialized_gemm();
  size_t release = find_line(lines, "mbarrier_arrive %pipe_a_empty");
  size_t mma = find_line(lines, " = mma ");
  ASSERT_LT(release, lines.size());
  ASSERT_LT(mma, release);
  std::string moved = lines[release];
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(release));
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(mma), moved);
  for (const char* workers : {"1", "3"}) {
    CommandResult r = run_edited(lines, "early_release", workers);
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("race: 'mma'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("after the agent released it"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace tilec::testing
