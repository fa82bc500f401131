// tests/protocol/protocol_test.cpp — regression tests for the synchronization bugs other tile
// compilers have shipped (reference/ptx-notes.md): each runs a pipelined kernel through the
// whole pipeline with `tilec run --check`, which interprets the synchronized IR (mbarriers,
// stage buffers, phases) and compares its outputs with the IR as parsed. A wrong phase, a
// missing arrive or an early release makes the run fail with a deadlock or race report.
#include <gtest/gtest.h>

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

// Runs `input` with --check and expects every output to match.
void expect_check_passes(const std::string& input, const std::string& options) {
  CommandResult r = run_command(tilec("run " + input + " --check --seed 3 " + options));
  EXPECT_EQ(r.status, 0) << input << " " << options << "\n" << r.out << r.err;
  EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("mismatch"), std::string::npos) << r.out;
}

// gemm.tile: BK = 64, pipeline(4). K / BK iterations of the pipelined loop.
struct TripCount {
  const char* what;
  int k;
};

class GemmTripCount : public ::testing::TestWithParam<TripCount> {};

TEST_P(GemmTripCount, RunCheckPasses) {
  const TripCount& trip = GetParam();
  std::string dims = "--dims M=128,N=256,K=" + std::to_string(trip.k);
  expect_check_passes("samples/gemm.tile", dims + " --workers 1");
  // Several tiles with ragged edges, on more workers.
  expect_check_passes("samples/gemm.tile", "--dims M=200,N=296,K=" + std::to_string(trip.k) + " --workers 3");
}

INSTANTIATE_TEST_SUITE_P(
    Protocol, GemmTripCount,
    ::testing::Values(TripCount{"one_iteration", 64}, TripCount{"fewer_iterations_than_stages", 128},
                      TripCount{"odd_iterations", 192}, TripCount{"as_many_as_stages", 256},
                      TripCount{"not_a_multiple_of_two_stages", 320}, TripCount{"ragged_last_tile", 600},
                      TripCount{"twice_the_stages_plus_one", 576}),
    [](const ::testing::TestParamInfo<TripCount>& info) { return std::string(info.param.what); });

TEST(Protocol, OneAndTwoStagesPass) {
  for (const char* stages : {"1", "2"})
    for (const char* k : {"64", "192"})
      expect_check_passes("samples/gemm.tile", std::string("-D STAGES=") + stages + " --dims M=128,N=256,K=" + k);
}

TEST(Protocol, BothGeneratorsPass) {
  for (const char* generator : {"serial", "cost-based"})
    expect_check_passes("samples/gemm.tile", std::string("--generator ") + generator + " --dims M=128,N=256,K=320");
}

// One CTA runs the pipelined K loop for several output tiles: the pipes' phases carry across.
TEST(Protocol, PhaseCarriesAcrossPersistentTiles) {
  for (const char* k : {"32", "96", "160"})
    for (const char* workers : {"1", "2"})
      expect_check_passes("tests/protocol/gemm_persistent.tile",
                          std::string("--dims M=128,N=192,K=") + k + " --workers " + workers);
  expect_check_passes("tests/protocol/gemm_persistent.tile", "-D STAGES=1 --dims M=128,N=192,K=96");
}

// The tensor-core samples beside gemm (issue 6), each through the whole pipeline at several
// trip counts of its pipelined loop: one iteration, fewer than its stages, odd, ragged (the last
// block partial), with ragged output tiles and on more workers than one.
struct SampleTrip {
  const char* what;
  const char* sample;
  const char* options;
};

class TensorCoreSampleTripCount : public ::testing::TestWithParam<SampleTrip> {};

TEST_P(TensorCoreSampleTripCount, RunCheckPasses) {
  const SampleTrip& trip = GetParam();
  for (const char* workers : {" --workers 1", " --workers 3"})
    expect_check_passes(std::string("samples/") + trip.sample + ".tile", trip.options + std::string(workers));
}

// gemm_f16, gemm_bias_relu, batched_gemm: BK = 64, pipeline(4), so K = 64 is one iteration,
// K = 128 two (fewer than the stages), K = 600 ten with a partial last block. batched_gemm
// folds its batches into rows, 512 per batch (R = 700: two batches, the second cut short), and
// B's rows, cdiv(K, 64)·64 per batch (Q).
// attention: BKV = 64, pipeline(2) over cdiv(T, 64) key blocks (a short last block is masked);
// S queries (ragged), HD / 64 heads.
INSTANTIATE_TEST_SUITE_P(
    Protocol, TensorCoreSampleTripCount,
    ::testing::Values(SampleTrip{"gemm_f16_one_iteration", "gemm_f16", "--dims M=128,N=256,K=64"},
                      SampleTrip{"gemm_f16_fewer_than_stages", "gemm_f16", "--dims M=200,N=296,K=128"},
                      SampleTrip{"gemm_f16_ragged", "gemm_f16", "--dims M=200,N=296,K=600"},
                      SampleTrip{"gemm_f16_two_stages", "gemm_f16", "-D STAGES=2 --dims M=77,N=136,K=192"},
                      SampleTrip{"gemm_bias_relu_one_iteration", "gemm_bias_relu", "--dims M=128,N=256,K=64"},
                      SampleTrip{"gemm_bias_relu_fewer_than_stages", "gemm_bias_relu", "--dims M=200,N=296,K=128"},
                      SampleTrip{"gemm_bias_relu_ragged", "gemm_bias_relu", "--dims M=200,N=296,K=600"},
                      SampleTrip{"batched_gemm_one_iteration", "batched_gemm", "--dims R=1024,Q=128,N=256,K=64"},
                      SampleTrip{"batched_gemm_fewer_than_stages", "batched_gemm", "--dims R=700,Q=256,N=296,K=128"},
                      SampleTrip{"batched_gemm_ragged", "batched_gemm", "--dims R=700,Q=1280,N=296,K=600"},
                      SampleTrip{"attention_one_iteration", "attention", "--dims S=128,HD=64,T=64"},
                      SampleTrip{"attention_as_many_as_stages", "attention", "--dims S=200,HD=128,T=128"},
                      SampleTrip{"attention_odd_iterations", "attention", "--dims S=77,HD=64,T=192"},
                      SampleTrip{"attention_many_iterations", "attention", "--dims S=300,HD=128,T=576"},
                      SampleTrip{"attention_short_last_block", "attention", "--dims S=77,HD=64,T=104"},
                      SampleTrip{"attention_fewer_keys_than_a_block", "attention", "--dims S=128,HD=64,T=8"}),
    [](const ::testing::TestParamInfo<SampleTrip>& info) { return std::string(info.param.what); });

// gemm through the whole pipeline, as IR text lines.
std::vector<std::string> synchronized_gemm_lines(const std::string& target = "sm_90a") {
  CommandResult r = run_command(tilec("compile samples/gemm.tile --emit ir --target " + target));
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t find_line(const std::vector<std::string>& lines, const std::string& needle) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return i;
  ADD_FAILURE() << "no line contains " << needle;
  return lines.size();
}

CommandResult run_edited(const std::vector<std::string>& lines, const std::string& name,
                         const std::string& target = "sm_90a") {
  auto path = std::filesystem::temp_directory_path() / ("tilec_protocol_" + name + ".tir");
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  write_file(path, text);
  CommandResult r = run_command(tilec("run " + path.string() + " --target " + target + " --dims M=128,N=256,K=320 --workers 1"));
  std::filesystem::remove(path);
  return r;
}

TEST(Protocol, ThePipelineSynchronizesGemmWithMbarriers) {
  std::vector<std::string> lines = synchronized_gemm_lines();
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  for (const char* op : {"mbarrier_create", "mbarrier_wait", "tma_load_async", "stage_read", "stage_advance",
                         "expect_tx = 16384", "mma_wait {pending = 1}"})
    EXPECT_NE(text.find(op), std::string::npos) << op << " missing from\n" << text;
  // The accumulator's mutex is taken by the compute agent alone: prune-named-barriers removed it.
  EXPECT_EQ(text.find("named_barrier"), std::string::npos) << text;
  CommandResult r = run_edited(lines, "unchanged");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

// A planted bug: the producer's arrive on a full barrier removed. The consumer's wait can never
// pass, which the interpreter reports as a deadlock naming the barrier.
TEST(Protocol, ARemovedArriveIsReportedAsADeadlock) {
  std::vector<std::string> lines = synchronized_gemm_lines();
  size_t arrive = find_line(lines, "mbarrier_arrive %pipe_a_full");
  ASSERT_LT(arrive, lines.size());
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(arrive));
  CommandResult r = run_edited(lines, "no_arrive");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("deadlock"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("%pipe_a_full[0]"), std::string::npos) << r.err;
}

// defer-mma-releases keeps one step's WGMMAs in flight (sm_90a, the default target): the k loop
// waits with pending = 1 and releases the previous step's slots. Planted bugs: waiting with
// pending = 2 releases a slot whose mma is still in flight, which the interpreter reports when
// that mma retires; without the wait after the loop, the store reads an accumulator still in
// flight.
TEST(Protocol, AReleaseBeforeItsAsyncMmaRetiresIsARace) {
  std::vector<std::string> lines = synchronized_gemm_lines();
  size_t wait = find_line(lines, "mma_wait {pending = 1}");
  ASSERT_LT(wait, lines.size());
  EXPECT_NE(find_line(lines, "mbarrier_arrive %pipe_a_empty, %pipe_a_empty_held"), lines.size());
  lines[wait].replace(lines[wait].find("pending = 1"), 11, "pending = 2");
  CommandResult r = run_edited(lines, "pending_2");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("race: the async 'mma' at 14:11, retired by this mma_wait, by agent 'compute' reads %a"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("after the agent released it"), std::string::npos) << r.err;
}

TEST(Protocol, AnAccumulatorReadBeforeItsAsyncMmaRetiresIsARace) {
  std::vector<std::string> lines = synchronized_gemm_lines();
  size_t wait = find_line(lines, "mma_wait {pending = 0}");
  ASSERT_LT(wait, lines.size());
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(wait));
  CommandResult r = run_edited(lines, "no_final_wait");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("race: 'store' by agent 'compute' reads %acc_1, the result of an async mma still in flight"),
            std::string::npos) << r.err;
}

// On sm_100a one thread issues the MMAs, and issuer-only-waits leaves the full waits to it: the
// stage it guards may then be read only as an mma operand. Planted bug: a reduction of A.
TEST(Protocol, AStageReadOtherThanByAnMmaAfterAnIssuerWaitIsARace) {
  std::vector<std::string> lines = synchronized_gemm_lines("sm_100a");
  size_t wait = find_line(lines, "mbarrier_wait %pipe_a_full");
  ASSERT_LT(wait, lines.size());
  EXPECT_NE(lines[wait].find("{issuer, "), std::string::npos) << lines[wait];
  ASSERT_EQ(run_edited(lines, "issuer_unchanged", "sm_100a").status, 0);
  size_t read = find_line(lines, "%a = stage_read %pipe_a_buffer");
  ASSERT_LT(read, lines.size());
  std::string indent = lines[read].substr(0, lines[read].find('%'));
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(read) + 1,
               indent + "%peek = reduce_max %a {axis = 1} : tile<128x1xbf16, reg> loc(14:11)");
  CommandResult r = run_edited(lines, "issuer_reduction", "sm_100a");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("race: 'reduce_max' by agent 'compute' reads %a (%pipe_a_buffer[0] fill 1), whose full barrier "
                       "only the MMA issuer waited for"),
            std::string::npos) << r.err;
}

// The release moved before the mma is planted in the same output by
// tests/warp_specialize (WarpSpecialize.AReleaseBeforeTheMmaIsARace), on 1 and 3 workers.

}  // namespace
}  // namespace tilec::testing
