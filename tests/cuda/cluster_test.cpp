// tests/cuda/cluster_test.cpp — the CUDA launch of kernels with `cluster = C` (persistent-tiles).
//
// Through the tilec binary: a clustered kernel (the tensor-core gemm and a plain SIMT kernel,
// both cluster = 2) is launched with cudaLaunchKernelEx and a cluster dimension of (2, 1, 1) on a
// grid of whole clusters, for sm_90a and sm_100a; a cluster = 1 kernel keeps the plain launch
// (TILEC_LAUNCH, the prelude's macro for `<<<...>>>`). Then nvcc compiles the clustered files for
// both targets with no register spills (skipped, saying why, when nvcc is neither at
// /usr/local/cuda/bin/nvcc nor on PATH).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../cli_runner.h"
#include "../nvcc_path.h"

namespace tilec::testing {
namespace {

const char* const kClustered[] = {"tests/golden/persistent-tiles/gemm_cluster.tile",
                                  "tests/golden/persistent-tiles/cluster_ragged.tile"};

CommandResult compile(const std::string& input, const std::string& target) {
  return run_command("cd " + source_dir().string() + " && " + tilec_binary() + " compile " + input + " --target " + target);
}

// The text of the `extern "C"` launcher(s): from the first one to the end of the file.
std::string launchers(const std::string& cuda) {
  size_t at = cuda.find("extern \"C\" cudaError_t launch_");
  return at == std::string::npos ? std::string() : cuda.substr(at);
}

TEST(CudaClusters, AClusteredKernelIsLaunchedInClustersOfItsSize) {
  for (const char* input : kClustered)
    for (const char* target : {"sm_90a", "sm_100a"}) {
      SCOPED_TRACE(std::string(input) + " " + target);
      CommandResult r = compile(input, target);
      ASSERT_EQ(r.status, 0) << r.err;
      std::string launcher = launchers(r.out);
      ASSERT_FALSE(launcher.empty()) << r.out;
      EXPECT_EQ(launcher.find("<<<"), std::string::npos) << launcher;
      EXPECT_EQ(launcher.find("TILEC_LAUNCH("), std::string::npos) << launcher;
      EXPECT_NE(launcher.find("cluster_attribute[0].id = cudaLaunchAttributeClusterDimension;"), std::string::npos);
      EXPECT_NE(launcher.find("cluster_attribute[0].val.clusterDim.x = 2;"), std::string::npos);
      EXPECT_NE(launcher.find("cluster_attribute[0].val.clusterDim.y = 1;"), std::string::npos);
      EXPECT_NE(launcher.find("config.gridDim = dim3(static_cast<unsigned>(tile_count), 1, 1);"), std::string::npos);
      EXPECT_NE(launcher.find("if (tile_count % 2 != 0) return cudaErrorInvalidConfiguration;"), std::string::npos);
      EXPECT_NE(launcher.find("cudaLaunchKernelEx(&config, "), std::string::npos);
      // The grid is whole clusters: max(2, SM count div 2 * 2) workers.
      EXPECT_TRUE(std::regex_search(launcher, std::regex(R"(const int64_t workers = max_i64\(\w+, 2\);)"))) << launcher;
    }
}

TEST(CudaClusters, AnUnclusteredKernelKeepsThePlainLaunch) {
  CommandResult r = compile("samples/gemm.tile", "sm_90a");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string launcher = launchers(r.out);
  EXPECT_NE(launcher.find("TILEC_LAUNCH(gemm_kernel, static_cast<unsigned>(tile_count), "), std::string::npos) << launcher;
  EXPECT_EQ(launcher.find("cudaLaunchKernelEx"), std::string::npos);
}

TEST(CudaClusters, NvccCompilesTheClusteredKernelsForBothTargets) {
  const std::string nvcc = nvcc_path();
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tilec_cluster_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  struct Job {
    std::string name, command;
    int status = -1;
    std::string output;
  };
  std::vector<Job> jobs;
  for (const char* input : kClustered)
    for (const char* target : {"sm_90a", "sm_100a"}) {
      CommandResult emitted = compile(input, target);
      ASSERT_EQ(emitted.status, 0) << emitted.err;
      const std::string name = std::filesystem::path(input).stem().string() + "." + target;
      const std::filesystem::path file = directory / (name + ".cu");
      write_file(file, emitted.out);
      const std::string capability = std::string(target).substr(3);
      // sm_90a: host and device code (-c, the documented command); sm_100a: device code only.
      const bool hopper = std::string(target) == "sm_90a";
      jobs.push_back({name, nvcc + " -std=c++17 -gencode arch=compute_" + capability + ",code=sm_" + capability +
                                " -Xptxas -v " + (hopper ? "-c" : "-cubin") + " '" + file.string() + "' -o '" +
                                file.string() + (hopper ? ".o'" : ".cubin'")});
    }
  // Without nvcc, what runs tilec (the compiles above) still ran.
  if (nvcc.empty()) {
    std::filesystem::remove_all(directory);
    GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH (or TILEC_TEST_NVCC=off)";
  }
  auto run = [&](Job& job) {
    const std::filesystem::path log = directory / (job.name + ".log");
    job.status = std::system((job.command + " > '" + log.string() + "' 2>&1").c_str());
    job.output = read_file(log);
  };
  // Two at a time: nvcc takes seconds per file.
  for (size_t i = 0; i < jobs.size(); i += 2) {
    std::thread second;
    if (i + 1 < jobs.size()) second = std::thread([&, i] { run(jobs[i + 1]); });
    run(jobs[i]);
    if (second.joinable()) second.join();
  }
  const std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  for (const Job& job : jobs) {
    EXPECT_EQ(job.status, 0) << job.name << ":\n" << job.command << "\n" << job.output;
    size_t reports = 0;
    for (auto it = std::sregex_iterator(job.output.begin(), job.output.end(), spills); it != std::sregex_iterator();
         ++it, ++reports)
      EXPECT_TRUE((*it)[1] == "0" && (*it)[2] == "0") << job.name << " spills: " << it->str();
    EXPECT_GT(reports, 0u) << job.name << ": no ptxas report\n" << job.output;
  }
  if (!HasFailure()) std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace tilec::testing
