// tests/cuda/nvcc_compile_test.cpp — every input's CUDA compiles with nvcc for sm_90a and for
// sm_100a with no register spills (ptxas -v), the harnesses build and link (softmax; matmul's
// mma harness for both targets), two files built with -rdc=true device-link, and one source
// compiled for both targets with --kernel-prefix links into one program.
//
// nvcc is slow (seconds per file), so all compiles run in one test, two at a time. The sm_90a
// files compile with `-c` (host and device code, the documented command); the sm_100a files
// with `-cubin` (device code only, half the time): their host code is byte-identical to the
// sm_90a files' (emit_properties_test checks that only the header comment differs). Skipped
// with a printed reason when nvcc is neither at /usr/local/cuda/bin/nvcc nor on PATH.
#include <atomic>
#include <cstdio>
#include <regex>
#include <thread>
#include <unistd.h>

#include "tests/cuda/cuda_test_support.h"
#include "tests/nvcc_path.h"

namespace tilec::cuda_test {
namespace {

struct Job {
  std::string name;     // for messages
  std::string command;  // without the output redirection
  int status = -1;
  std::string output;
};

void run(Job& job, const std::filesystem::path& log) {
  job.status = std::system((job.command + " > '" + log.string() + "' 2>&1").c_str());
  job.output = read_file(log);
}

TEST(Nvcc, EveryInputCompilesForBothTargetsAndTheHarnessLinks) {
  std::string nvcc = tilec::testing::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH";

  std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tilec_cuda_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  std::vector<Job> jobs;
  for (const char* target : {"sm_90a", "sm_100a"}) {
    std::string capability = std::string(target).substr(3);
    for (const char* name : kInputs) {
      Emitted emitted = emit_input(name, target);
      ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
      std::filesystem::path file = directory / (std::string(name) + "." + target + ".cu");
      std::ofstream(file) << *emitted.cuda;
      bool hopper = std::string(target) == "sm_90a";
      jobs.push_back({file.filename().string(),
                      nvcc + " -std=c++17 -gencode arch=compute_" + capability + ",code=sm_" +
                          capability + " -Xptxas -v " + (hopper ? "-c" : "-cubin") + " '" +
                          file.string() + "' -o '" + file.string() + (hopper ? ".o'" : ".cubin'")});
    }
  }
  Emitted harness = emit_input("softmax", "sm_90a", /*harness=*/true);
  ASSERT_TRUE(harness.cuda) << harness.diagnostics;
  std::filesystem::path harness_file = directory / "softmax.harness.cu";
  std::ofstream(harness_file) << *harness.cuda;
  jobs.push_back({"softmax.harness.cu (linked)",
                  nvcc + " -std=c++17 -gencode arch=compute_90a,code=sm_90a -o '" +
                      (directory / "softmax_check").string() + "' '" + harness_file.string() + "'"});
  // The mma harness (flop counter, count-only reference) for both targets.
  for (const char* target : {"sm_90a", "sm_100a"}) {
    std::string capability = std::string(target).substr(3);
    Emitted matmul = emit_input("matmul", target, /*harness=*/true);
    ASSERT_TRUE(matmul.cuda) << matmul.diagnostics;
    std::filesystem::path file = directory / (std::string("matmul.harness.") + target + ".cu");
    std::ofstream(file) << *matmul.cuda;
    jobs.push_back({file.filename().string() + " (linked)",
                    nvcc + " -std=c++17 -gencode arch=compute_" + capability + ",code=sm_" + capability + " -o '" +
                        (directory / (std::string("matmul_check.") + target)).string() + "' '" + file.string() + "'"});
  }
  // Two files with relocatable device code device-link: every file-scope __device__ variable of
  // the emitted CUDA is static (tilec_sm_count_on_device was not, and nvlink refused the second
  // definition; a helper's build-system hunt). The files are the persistent gemm sample's, the
  // second with its kernel and launcher renamed.
  {
    const std::string gemm = read_file(kTestDir.parent_path().parent_path() / "samples" / "expected" / "gemm.sm_90a.cu");
    ASSERT_NE(gemm.find("tilec_sm_count_on_device"), std::string::npos);
    const std::string renamed = std::regex_replace(gemm, std::regex(R"(\b(launch_gemm|gemm_kernel)\b)"), "$1_copy");
    ASSERT_NE(renamed, gemm);
    std::string command;
    for (const auto& [stem, text] : {std::pair{"rdc_a", gemm}, std::pair{"rdc_b", renamed}}) {
      std::filesystem::path file = directory / (std::string(stem) + ".cu");
      std::ofstream(file) << text;
      command += nvcc + " -std=c++17 -gencode arch=compute_90a,code=sm_90a -rdc=true -c '" + file.string() + "' -o '" +
                 file.string() + ".o' && ";
    }
    // Built for plain sm_90 (no "a"), the kernels would trap at launch: nvcc warns while compiling.
    jobs.push_back({"gemm for sm_90 (warned)", nvcc + " -std=c++17 -gencode arch=compute_90,code=sm_90 -cubin '" +
                                                    (directory / "rdc_a.cu").string() + "' -o '" +
                                                    (directory / "sm_90.cubin").string() + "'"});
    jobs.push_back({"two files with -rdc=true (device-linked)",
                    command + nvcc + " -gencode arch=compute_90a,code=sm_90a -dlink '" + (directory / "rdc_a.cu.o").string() +
                        "' '" + (directory / "rdc_b.cu.o").string() + "' -o '" + (directory / "rdc_link.o").string() + "'"});
  }

  // One source compiled for both targets, each with its own --kernel-prefix, links into one
  // program that picks a launcher at run time (a library for Hopper and Blackwell): without the
  // prefixes both files define matmul_kernel and launch_matmul, and the link fails.
  {
    std::string command, objects;
    for (const char* target : {"sm_90a", "sm_100a"}) {
      const std::string capability = std::string(target).substr(3);
      CudaEmitOptions options;
      options.target = target::find_target(target);
      options.source_name = "inputs/matmul.tir";
      options.kernel_prefix = "sm" + capability.substr(0, capability.size() - 1) + "_";
      std::string header;
      options.launcher_header = &header;
      Emitted emitted = emit_text(read_file(kTestDir / "inputs" / "matmul.tir"), options.source_name, options);
      ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
      ASSERT_NE(header.find("launch_" + options.kernel_prefix + "matmul("), std::string::npos) << header;
      std::filesystem::path file = directory / ("prefixed." + std::string(target) + ".cu");
      std::ofstream(file) << *emitted.cuda;
      std::ofstream(directory / ("prefixed." + std::string(target) + ".h")) << header;
      command += nvcc + " -std=c++17 -gencode arch=compute_" + capability + ",code=sm_" + capability + " -c '" +
                 file.string() + "' -o '" + file.string() + ".o' && ";
      objects += " '" + file.string() + ".o'";
    }
    std::filesystem::path main_file = directory / "prefixed_main.cu";
    std::ofstream(main_file) << "#include \"prefixed.sm_90a.h\"\n#include \"prefixed.sm_100a.h\"\n"
                                "int main(int argc, char**) { return (argc > 1 ? launch_sm100_matmul : "
                                "launch_sm90_matmul) == nullptr; }\n";
    jobs.push_back({"one source for two targets with --kernel-prefix (linked)",
                    command + nvcc + " -std=c++17 -I'" + directory.string() + "'" + objects + " '" +
                        main_file.string() + "' -o '" + (directory / "prefixed_program").string() + "'"});
  }

  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) run(jobs[i], directory / (std::to_string(i) + ".log"));
  };
  std::thread first(worker), second(worker);
  first.join();
  second.join();

  std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  for (const Job& job : jobs) {
    EXPECT_EQ(job.status, 0) << job.name << " failed to compile:\n" << job.command << "\n" << job.output;
    size_t reports = 0;
    for (auto it = std::sregex_iterator(job.output.begin(), job.output.end(), spills);
         it != std::sregex_iterator(); ++it, ++reports)
      EXPECT_TRUE((*it)[1] == "0" && (*it)[2] == "0") << job.name << " spills: " << it->str();
    if (job.command.find("-Xptxas -v") != std::string::npos) {
      EXPECT_GT(reports, 0u) << job.name << ": no ptxas report\n" << job.output;
    }
  }
  for (const Job& job : jobs) {
    if (job.name != "gemm for sm_90 (warned)") continue;
    EXPECT_NE(job.output.find("tilec: this file's tensor-core kernels are for sm_90a and trap on any other "
                              "architecture"),
              std::string::npos)
        << job.output;
  }
  EXPECT_TRUE(std::filesystem::exists(directory / "softmax_check"));
  EXPECT_TRUE(std::filesystem::exists(directory / "matmul_check.sm_90a"));
  EXPECT_TRUE(std::filesystem::exists(directory / "matmul_check.sm_100a"));
  EXPECT_TRUE(std::filesystem::exists(directory / "prefixed_program"));
  if (!HasFailure()) std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace tilec::cuda_test
