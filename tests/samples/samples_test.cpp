// tests/samples/samples_test.cpp — every sample in samples/ is a regression test.
//
// For each samples/NAME.tile:
//   - `--emit ir --stop-after parse`, then the same on its own output, gives identical bytes;
//   - compiling twice gives identical bytes (determinism);
//   - the IR after the whole pipeline equals samples/expected/NAME.tir;
//   - for each target, the CUDA equals samples/expected/NAME.TARGET.cu, or, for a sample the
//     backend cannot compile yet (gemm before the tensor-core backend), the diagnostics equal
//     samples/expected/NAME.TARGET.err;
//   - every emitted .cu compiles with nvcc for its target (skipped, saying why, without nvcc);
//     an sm_100a file equal to its sm_90a file but for the target line, device code only.
// Bless: TILEC_BLESS=1 rewrites the expected files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <regex>
#include <sstream>

#include "../cli_runner.h"
#include "../nvcc_path.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> sample_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(source_dir() / "samples"))
    if (entry.path().extension() == ".tile") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string tilec(const std::string& arguments) {
  return "cd " + source_dir().string() + " && " + tilec_binary() + " " + arguments;
}

void expect_matches_file(const std::string& actual, const fs::path& expected) {
  if (blessing()) {
    fs::create_directories(expected.parent_path());
    write_file(expected, actual);
  }
  ASSERT_TRUE(fs::exists(expected)) << "missing " << expected << " (run with TILEC_BLESS=1)";
  EXPECT_EQ(actual, read_file(expected)) << "differs from " << expected;
}

class Sample : public ::testing::TestWithParam<std::string> {};

TEST_P(Sample, ParsedIrRoundTripsExactly) {
  std::string name = GetParam();
  auto tir = fs::temp_directory_path() / ("tilec_sample_" + name + "_" + std::to_string(::getpid()) + ".tir");
  CommandResult first = run_command(tilec("compile samples/" + name + ".tile --emit ir --stop-after parse -o " + tir.string()));
  ASSERT_EQ(first.status, 0) << first.err;
  CommandResult second = run_command(tilec("compile " + tir.string() + " --emit ir --stop-after parse"));
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(second.out, read_file(tir));
  fs::remove(tir);
}

TEST_P(Sample, PipelineIrIsDeterministicAndMatchesExpected) {
  std::string name = GetParam();
  CommandResult a = run_command(tilec("compile samples/" + name + ".tile --emit ir"));
  CommandResult b = run_command(tilec("compile samples/" + name + ".tile --emit ir"));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  expect_matches_file(a.out, source_dir() / "samples" / "expected" / (name + ".tir"));
}

// The worker counts RunCheck runs with: 1 and 3, or $TILEC_TEST_WORKER_COUNTS (comma-separated).
// The sanitizer stage gives "1": the executor's threads are ThreadSanitizer's
// (scripts/test-tsan.sh), and a second worker count only runs the same tilec paths again.
std::vector<std::string> worker_counts() {
  const char* given = std::getenv("TILEC_TEST_WORKER_COUNTS");
  std::vector<std::string> counts;
  std::stringstream list(given && *given ? given : "1,3");
  for (std::string count; std::getline(list, count, ',');)
    if (!count.empty()) counts.push_back(count);
  return counts;
}

TEST_P(Sample, RunCheckGivesTheSameResultsBeforeAndAfterThePipeline) {
  std::string name = GetParam();
  // Default extents (256) but for the batch and head counts (else bmm and head_softmax run 256
  // matrices each), then odd ones that leave partial tiles at every edge (Q: batched_gemm's B,
  // one batch of K padded to BK, as its assert asks).
  for (const char* dims : {" --dims BATCH=2,H=2", " --dims M=77,N=136,K=48,R=37,Q=64,BATCH=3,H=3"}) {
    SCOPED_TRACE(dims);
    for (const std::string& workers : worker_counts()) {
      CommandResult r = run_command(tilec("run samples/" + name + ".tile --check --seed 7 --workers " + workers + dims));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_NE(r.out.find("check "), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("mismatch"), std::string::npos) << r.out;
    }
  }
}

TEST_P(Sample, RunOutputDoesNotDependOnTheWorkerCount) {
  std::string name = GetParam();
  auto checksums = [&](const char* workers) {
    CommandResult r = run_command(tilec("run samples/" + name + ".tile --dims M=77,N=136,K=48,R=37,Q=64,BATCH=3,H=3 --workers " + workers));
    EXPECT_EQ(r.status, 0) << r.err;
    std::string kept;  // without the lines naming the worker count (one per kernel)
    for (size_t at = 0, end; at < r.out.size(); at = end + 1) {
      end = std::min(r.out.find('\n', at), r.out.size());
      const std::string line = r.out.substr(at, end - at);
      if (line.find(" worker") == std::string::npos) kept += line + "\n";
    }
    return kept;
  };
  EXPECT_EQ(checksums("1"), checksums("4"));
}

const char* const kTargets[] = {"sm_90a", "sm_100a"};

TEST_P(Sample, CudaMatchesExpectedForEachTarget) {
  std::string name = GetParam();
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec("compile samples/" + name + ".tile --target " + target));
    fs::path expected = source_dir() / "samples" / "expected" / (name + "." + target);
    if (blessing()) {
      fs::remove(fs::path(expected).concat(".cu"));
      fs::remove(fs::path(expected).concat(".err"));
    }
    if (r.status == 0) {
      expect_matches_file(r.out, fs::path(expected).concat(".cu"));
    } else {
      EXPECT_EQ(r.status, 1) << r.err;
      expect_matches_file(r.err, fs::path(expected).concat(".err"));
    }
  }
}

// The launchers of an emitted file (from the first `extern "C"` on) with every number written 0:
// what differs between a tensor-core kernel's two targets there is constants (shared-memory
// bytes, box sizes).
std::string launcher_shape(const std::string& text) {
  static const std::regex number("[0-9]+");
  size_t launchers = text.find("extern \"C\"");
  return launchers == std::string::npos ? "" : std::regex_replace(text.substr(launchers), number, "0");
}

TEST(SampleCuda, EveryEmittedFileCompilesWithNvccForItsTarget) {
  std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH";
  struct Job {
    std::string file, target;
    bool device_only;  // -cubin instead of -c
  };
  std::vector<Job> jobs;
  for (const auto& name : sample_names()) {
    fs::path hopper = source_dir() / "samples" / "expected" / (name + ".sm_90a.cu");
    fs::path blackwell = source_dir() / "samples" / "expected" / (name + ".sm_100a.cu");
    // A plain kernel's host code (launchers of one form: the tile count, the asserts, one
    // launch) is what cuda-nvcc's plain inputs and the integration examples compile with -c; a
    // tensor-core kernel's (tensor maps, padded copies, clusters) differs by sample, so those
    // compile with -c here. Plain samples compile their device code alone (-cubin).
    const bool tensor_cores = fs::exists(hopper) && read_file(hopper).find("(CUDA backend, tensor cores)") != std::string::npos;
    if (fs::exists(hopper)) jobs.push_back({hopper.string(), "sm_90a", !tensor_cores});
    if (!fs::exists(blackwell)) continue;
    // The sm_100a file's host code is the sm_90a file's, which `-c` compiles above, so its
    // device code alone is compiled (-cubin: half the time): a plain kernel's two files differ
    // only in the header's target line, and a tensor-core kernel's launchers only in constants
    // (the host helpers before them are target-independent prelude text, which the sm_90a file
    // has too). A file whose launchers differ otherwise gets `-c`.
    const std::string launchers = launcher_shape(read_file(blackwell));
    const bool same_host_code = fs::exists(hopper) && !launchers.empty() && launchers == launcher_shape(read_file(hopper));
    jobs.push_back({blackwell.string(), "sm_100a", same_host_code});
  }
  ASSERT_FALSE(jobs.empty());
  ASSERT_TRUE(std::any_of(jobs.begin(), jobs.end(), [](const Job& job) { return job.device_only; }))
      << "no sm_100a file matched its sm_90a file's host code: the header or the launchers changed?";
  // Two at a time: the machines this runs on have two cores.
  for (size_t i = 0; i < jobs.size(); i += 2) {
    std::vector<std::future<CommandResult>> running;
    for (size_t j = i; j < std::min(i + 2, jobs.size()); ++j) {
      // Named copies, not a structured binding: clang 14 (the sanitizer build) cannot capture one.
      std::string file = jobs[j].file;
      std::string arch = jobs[j].target == "sm_90a" ? "90a" : "100a";
      std::string mode = jobs[j].device_only ? " -cubin" : " -c";
      std::string out = (fs::temp_directory_path() / ("tilec_nvcc_" + std::to_string(::getpid()) + "_" + std::to_string(j) + ".o")).string();
      running.push_back(std::async(std::launch::async, [=] {
        CommandResult r = run_command(nvcc + " -std=c++17 -gencode arch=compute_" + arch + ",code=sm_" + arch +
                                      " -Xptxas -v" + mode + " " + file + " -o " + out);
        fs::remove(out);
        return r;
      }));
    }
    for (size_t j = 0; j < running.size(); ++j) {
      CommandResult r = running[j].get();
      EXPECT_EQ(r.status, 0) << jobs[i + j].file << "\n" << r.err;
      std::regex spills(R"(([1-9][0-9]*) bytes spill (stores|loads))");
      EXPECT_FALSE(std::regex_search(r.err, spills)) << "ptxas reports spills in " << jobs[i + j].file << "\n" << r.err;
      EXPECT_EQ(r.err.find("Potential Performance Loss"), std::string::npos) << jobs[i + j].file << "\n" << r.err;
      EXPECT_EQ(r.err.find("(C75"), std::string::npos) << jobs[i + j].file << "\n" << r.err;
    }
  }
}

// gemm as the user writes it with a tile grid (one CTA per output tile): ptxas serialized its
// WGMMAs ("C7515 Potential Performance Loss: wgmma.mma_async instructions are serialized"),
// since nvcc made straight-line code of the tile loop's one round (found by a helper writing
// kernels from the docs; the H200 ran this form at 695 TFLOP/s against the persistent one's 765).
TEST(SampleCuda, ATileGridGemmKeepsItsWgmmasInFlight) {
  std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH";
  std::string gemm = read_file(source_dir() / "samples" / "gemm.tile");
  const std::string persistent = "grid persistent(cdiv(M, BM), cdiv(N, BN), swizzle = 8, cluster = 1)";
  size_t grid = gemm.find(persistent);
  ASSERT_NE(grid, std::string::npos);
  gemm.replace(grid, persistent.size(), "grid tiles(cdiv(M, BM), cdiv(N, BN))");
  const std::string stem = (fs::temp_directory_path() / ("tilec_tile_grid_gemm_" + std::to_string(::getpid()))).string();
  write_file(stem + ".tile", gemm);
  CommandResult compiled = run_command(tilec("compile " + stem + ".tile --target sm_90a -o " + stem + ".cu"));
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  CommandResult r = run_command(nvcc + " -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xptxas -v -c " + stem +
                                ".cu -o " + stem + ".o");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("0 bytes spill stores"), std::string::npos) << "no ptxas report:\n" << r.err;
  EXPECT_EQ(r.err.find("Potential Performance Loss"), std::string::npos) << r.err;
  for (const char* suffix : {".tile", ".cu", ".o"}) fs::remove(stem + suffix);
}

// Tensor-core test kernels (tests/emulate/tensor_core/) whose accumulators are computed before
// their mmas, for sm_90a: nvcc sank tf32_mlp's zero fill past wgmma.fence and ptxas injected a
// warpgroup.arrive ("C7519"); the dQ kernels' copies out of a register pipe gave C7519 and C7520
// (serialized WGMMAs). tilec_wgmma_pin keeps that work before the fence; no spills either. With
// them if_tile (an `if` assigning tiles, in the epilogue and in attention's loop).
TEST(SampleCuda, AccumulatorsComputedBeforeTheirMmasKeepTheWgmmasInFlight) {
  std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH";
  const std::pair<const char*, const char*> kernels[] = {
      {"tf32_mlp", ""}, {"transposed_register_a", ""}, {"transposed_register_a", " -D BQ=128 -D BKV=128"},
      {"attention_backward_dq", ""}, {"if_tile", ""}};
  for (const auto& [name, defines] : kernels) {
    SCOPED_TRACE(std::string(name) + defines);
    const std::string stem = (fs::temp_directory_path() / ("tilec_pinned_" + std::to_string(::getpid()))).string();
    CommandResult compiled = run_command(tilec("compile " + (source_dir() / "tests/emulate/tensor_core").string() +
                                               "/" + name + ".tile" + defines + " --target sm_90a -o " + stem + ".cu"));
    ASSERT_EQ(compiled.status, 0) << compiled.err;
    EXPECT_NE(read_file(stem + ".cu").find("tilec_wgmma_pin("), std::string::npos) << "no accumulator is pinned";
    CommandResult r = run_command(nvcc + " -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xptxas -v -c " + stem +
                                  ".cu -o " + stem + ".o");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("0 bytes spill stores"), std::string::npos) << "no ptxas report, or spills:\n" << r.err;
    EXPECT_EQ(r.err.find("(C75"), std::string::npos) << r.err;
    for (const char* suffix : {".cu", ".o"}) fs::remove(stem + suffix);
  }
}

// tests/emulate/tensor_core/NAME.tile compiled for both targets and built by nvcc with ptxas's
// report (-Xptxas -v), the two builds side by side: each build's result (status, stderr).
std::vector<CommandResult> ptxas_reports(const std::string& nvcc, const std::string& name) {
  const std::string stem = (fs::temp_directory_path() / ("tilec_" + name + "_" + std::to_string(::getpid()))).string();
  std::vector<std::future<CommandResult>> builds;
  for (const std::string arch : {"90a", "100a"}) {
    const std::string cu = stem + "." + arch + ".cu";
    CommandResult compiled = run_command(tilec("compile tests/emulate/tensor_core/" + name + ".tile --target sm_" +
                                               arch + " -o " + cu));
    EXPECT_EQ(compiled.status, 0) << compiled.err;
    builds.push_back(std::async(std::launch::async, [=] {
      return run_command(nvcc + " -std=c++17 -gencode arch=compute_" + arch + ",code=sm_" + arch +
                         " -Xptxas -v -cubin " + cu + " -o " + cu + ".cubin");
    }));
  }
  std::vector<CommandResult> reports;
  for (std::future<CommandResult>& build : builds) reports.push_back(build.get());
  for (const char* arch : {"90a", "100a"})
    for (const char* suffix : {".cu", ".cu.cubin"}) fs::remove(stem + "." + arch + suffix);
  return reports;
}

// Element-by-element stores of one 128 x 128 accumulator (masked_epilogue's six: masks from
// iotas, from the accumulator, per row and per tile; =, +=, max=, |=). Each element's 64-bit offset
// and each register's bounds and masks, the same in every store, were computed once and held
// across the stores: ptxas spilled 288 bytes on sm_90a and 396 on sm_100a. Now each store
// addresses its elements from the thread's first (`corner`) and starts from tilec_opaque
// positions (TensorCoreKernel::declare_store_corner).
TEST(SampleCuda, ManyElementStoresOfOneAccumulatorDoNotSpill) {
  std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH";
  for (const CommandResult& r : ptxas_reports(nvcc, "masked_epilogue")) {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("0 bytes spill stores"), std::string::npos) << "no ptxas report:\n" << r.err;
    EXPECT_FALSE(std::regex_search(r.err, std::regex(R"(([1-9][0-9]*) bytes spill (stores|loads))"))) << r.err;
  }
}

// A register tile computed from the accumulator (tests/emulate/tensor_core/register_epilogue.tile):
// its per-register loop declared lane and warp inside, nvcc left it rolled, and sm_90a put the
// tile and the accumulator in 512 bytes of local memory (no spill reported) and serialized the
// WGMMAs (C7514). No stack frame and no C75xx note on either target.
TEST(SampleCuda, ARegisterEpilogueKeepsItsTilesInRegisters) {
  std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH";
  for (const CommandResult& r : ptxas_reports(nvcc, "register_epilogue")) {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("0 bytes stack frame, 0 bytes spill stores"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("(C75"), std::string::npos) << r.err;
  }
}

// The .tile samples above are compiled twice; here every .tir input the suites keep goes through
// the whole pipeline twice, to IR and to CUDA for each target, and every lab input through
// `tilec sched` / `tilec reorder` twice: the same input must give the same bytes (status,
// stdout and stderr).
TEST(Determinism, TirAndLabInputsGiveTheSameBytesTwice) {
  std::vector<std::string> commands;
  for (const char* folder : {"samples/expected", "tests/cuda/inputs"})
    for (const auto& entry : fs::directory_iterator(source_dir() / folder)) {
      if (entry.path().extension() != ".tir") continue;
      std::string input = std::string(folder) + "/" + entry.path().filename().string();
      commands.push_back("compile " + input + " --emit ir");
      for (const char* target : kTargets) commands.push_back("compile " + input + " --target " + target);
    }
  for (const auto& [folder, lab] : {std::pair{"tests/schedule/data", "sched"}, {"tests/reorder/scenarios", "reorder"}})
    for (const auto& entry : fs::directory_iterator(source_dir() / folder))
      if (entry.path().extension() == ".json")
        commands.push_back(std::string(lab) + " " + folder + "/" + entry.path().filename().string());
  std::sort(commands.begin(), commands.end());
  ASSERT_GT(commands.size(), 20u);
  for (const std::string& command : commands) {
    CommandResult first = run_command(tilec(command));
    EXPECT_TRUE(first.status == 0 || first.status == 1) << command << "\n" << first.err;
#ifndef TILEC_SANITIZE  // under the sanitizers one run is what a sanitized tilec adds; the first stage compares two
    CommandResult second = run_command(tilec(command));
    EXPECT_EQ(first.status, second.status) << command;
    EXPECT_EQ(first.out, second.out) << command;
    EXPECT_EQ(first.err, second.err) << command;
#endif
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, Sample, ::testing::ValuesIn(sample_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tilec::testing
