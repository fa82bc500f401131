// tests/cuda/harness_test.cpp — `--emit-harness` for kernels with mma, checked as text and with nvcc.
//
// Through the tilec binary: a tensor-core gemm's reference is the kernel before scheduling (no
// mbarriers, no warp roles) while its check calls the final launcher with the same arguments; a
// .tir stopped after fold-constants gives the same harness; a .tir past scheduling has no
// reference and fails at the kernel; nvcc builds (links) the gemm's harness for sm_90a and
// sm_100a (skipped with a printed reason when nvcc is absent). The plain backend's mma, in both
// modes: emit_properties_test.cpp (CudaEmit.MmaSumsInF32...) and the golden matmul.harness.cu.
#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <thread>
#include <vector>

#include "../cli_runner.h"
#include "../nvcc_path.h"

namespace tilec::testing {
namespace {

CommandResult tilec(const std::string& arguments) {
  return run_command("cd " + source_dir().string() + " && " + tilec_binary() + " " + arguments);
}


// The text of the first function whose head contains `head`, up to the closing brace at column 0.
std::string function_text(const std::string& cuda, const std::string& head) {
  size_t start = cuda.find(head);
  if (start == std::string::npos) return "";
  size_t end = cuda.find("\n}\n", start);
  return cuda.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(Harness, TensorCoreGemmChecksTheFinalLauncherAgainstTheKernelBeforeScheduling) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult r = tilec(std::string("compile samples/gemm.tile --emit-harness --target ") + target);
    ASSERT_EQ(r.status, 0) << target << "\n" << r.err;
    // The launcher under test is the warp-specialized one, with the plain signature.
    const std::string parameters = "const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int64_t M, int64_t K, int64_t N";
    EXPECT_EQ(occurrences(r.out, "extern \"C\" cudaError_t launch_gemm(" + parameters + ", cudaStream_t stream)"), 1u)
        << target;
    // The reference takes the same parameters, then its count-only switch and scratch.
    std::string reference = function_text(r.out, "__global__ void gemm_reference(");
    ASSERT_FALSE(reference.empty()) << target;
    EXPECT_EQ(reference.rfind("__global__ void gemm_reference(" + parameters + ", bool count_only, unsigned char* scratch", 0), 0u)
        << reference.substr(0, 300);
    // ... and runs the kernel as written: tile loops, no pipeline, barrier or tensor-core code.
    for (const char* scheduled : {"mbarrier", "stage", "warp", "wgmma", "tcgen05", "__syncthreads", "tilec_tma"})
      EXPECT_EQ(reference.find(scheduled), std::string::npos) << target << ": reference contains " << scheduled;
    EXPECT_EQ(occurrences(reference, "for (int elem = 0; elem < 32768; ++elem)"), 5u)
        << "zeros, carry in, mma, carry out, store:\n" << reference;
    EXPECT_NE(reference.find("for (int step = 0; step < 64; ++step) sum = add_f32(sum, mul_f32(to_f32(a[(elem / 256) * 64 + step]), "
                             "to_f32(b[step * 256 + elem % 256])));"),
              std::string::npos)
        << reference;
    // 2 * 128 * 256 * 64 flop per whole-tile mma.
    EXPECT_NE(reference.find("atomicAdd(&gemm_reference_flops, 4194304ull);"), std::string::npos) << reference;
    std::string check = function_text(r.out, "static int check_gemm(");
    EXPECT_EQ(occurrences(check, "launch_gemm(A, B, C, M, K, N, nullptr)"), 3u) << "once checked, warm-up, timed loop";
    EXPECT_NE(check.find("TILEC_LAUNCH(gemm_reference, static_cast<unsigned>((slots + 31) / 32), 32, 0, nullptr, A, B, C_reference, M, K, N, "
                         "!check_reference, scratch, slots);"),
              std::string::npos)
        << check;
    EXPECT_NE(check.find("harness_argument(argc, argv, \"check\", 1) != 0"), std::string::npos);
    EXPECT_NE(check.find("pass = harness_compare(\"C\", C_got, C_want, 0.01, 0.01) && pass;"), std::string::npos) << check;
    EXPECT_NE(check.find("TFLOP/s"), std::string::npos);
    EXPECT_NE(check.find("whole tile"), std::string::npos) << "the output says what is counted";
    // 64-bit sizes: M=8192 N=8192 K=8192 must not overflow.
    EXPECT_NE(check.find("const size_t A_count = static_cast<size_t>(M) * static_cast<size_t>(K);"), std::string::npos);
    EXPECT_EQ(check.find("int M"), std::string::npos);
  }
}

TEST(Harness, TirStoppedAfterFoldConstantsGivesTheSameHarness) {
  std::filesystem::path tir = std::filesystem::temp_directory_path() / ("tilec_harness_" + std::to_string(getpid()) + ".tir");
  CommandResult stopped = tilec("compile samples/gemm.tile --stop-after fold-constants --emit ir -o " + tir.string());
  ASSERT_EQ(stopped.status, 0) << stopped.err;
  CommandResult from_tile = tilec("compile samples/gemm.tile --emit-harness");
  CommandResult from_tir = tilec("compile " + tir.string() + " --emit-harness");
  std::filesystem::remove(tir);
  ASSERT_EQ(from_tile.status, 0) << from_tile.err;
  ASSERT_EQ(from_tir.status, 0) << from_tir.err;
  // Only the header's `source:` line may differ.
  auto without_source = [](const std::string& text) { return std::regex_replace(text, std::regex("//   source: [^\n]*\n"), ""); };
  EXPECT_TRUE(without_source(from_tile.out) == without_source(from_tir.out));
}

TEST(Harness, ScheduledTirHasNoReferenceAndFailsAtTheKernel) {
  CommandResult r = tilec("compile samples/expected/gemm.tir --emit-harness");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty());
  // At the kernel's line of the .tile the IR was printed from (the .tir's loc()).
  EXPECT_EQ(r.err.rfind("samples/gemm.tile:8:1: error:", 0), 0u) << r.err;  // and nothing before it
  EXPECT_NE(r.err.find("error: --emit-harness: kernel @gemm runs on the tensor cores"), std::string::npos) << r.err;
  // Without the harness the same file emits.
  EXPECT_EQ(tilec("compile samples/expected/gemm.tir").status, 0);
}

// tf32 (issue 18): the reference reads f32 mma operands as the tensor cores do (docs/language.md,
// `mma`), so a tf32 kernel is checked against the numbers the interpreter gives; bf16 operands
// are widened as they are.
TEST(Harness, ReferenceReadsF32MmaOperandsAsTf32) {
  CommandResult tf32 = tilec("compile samples/tf32_linear.tile --emit-harness");
  ASSERT_EQ(tf32.status, 0) << tf32.err;
  EXPECT_NE(tf32.out.find("mul_f32(tf32_operand(t"), std::string::npos) << "the reference's mma";
  CommandResult gemm = tilec("compile samples/gemm.tile --emit-harness");
  ASSERT_EQ(gemm.status, 0) << gemm.err;
  EXPECT_EQ(gemm.out.find("mul_f32(tf32_operand("), std::string::npos);
  EXPECT_NE(gemm.out.find("mul_f32(to_f32("), std::string::npos);
}

// A tensor-core kernel renames parameters that meet its own locals (`row` is `row_1` in its
// launcher) while the plain reference keeps them: the check declares the reference's names and
// passes them to the launcher by position (--emit-harness failed with an internal error; found
// building every tensor-core test kernel for an H200).
TEST(Harness, RenamedTensorCoreParametersAreCalledByPosition) {
  CommandResult emitted = tilec("compile tests/emulate/tensor_core/emitter_names.tile --emit-harness");
  ASSERT_EQ(emitted.status, 0) << emitted.err;
  EXPECT_NE(emitted.out.find("launch_emitter_names(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, "
                             "float row_1, float column_1"),
            std::string::npos)
      << "the launcher no longer renames `row`: this test checks nothing";
  std::string check = function_text(emitted.out, "static int check_emitter_names(");
  EXPECT_NE(check.find("const float row = "), std::string::npos) << check;
  EXPECT_NE(check.find("launch_emitter_names(A, B, C, row, column, i, j, box, chunk, lane, warp, staging, "),
            std::string::npos)
      << check;
}

// A tensor named like the harness's reference kernel (NAME_reference) or its work counter
// (NAME_reference_flops) is renamed, so neither hides them (a hunt's harness did not compile:
// TILEC_LAUNCH(k_reference, ...) launched a float*).
TEST(Harness, ParametersNamedLikeTheReferenceAndItsCounterAreRenamed) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_harness_names_" + std::to_string(getpid()) + ".tile");
  std::string gemm = read_file(source_dir() / "samples" / "gemm.tile");
  for (const std::string from : {"C: tensor", "store C["})
    gemm.replace(gemm.find(from) + from.find('C'), 1, "gemm_reference_flops");
  write_file(file, gemm + "\nkernel k(k_reference: tensor<N, f32>, Y: tensor<N, f32>) grid tiles(cdiv(N, 256)) as (i) {\n"
                          "  store Y[i] = load k_reference[i] : <256>;\n}\n");
  CommandResult emitted = tilec("compile " + file.string() + " --emit-harness");
  std::filesystem::remove(file);
  ASSERT_EQ(emitted.status, 0) << emitted.err;
  EXPECT_NE(emitted.out.find("extern \"C\" cudaError_t launch_k(const float* k_reference_1, float* Y,"), std::string::npos);
  EXPECT_NE(emitted.out.find("__global__ void k_reference(const float* k_reference_1,"), std::string::npos);
  EXPECT_NE(emitted.out.find("float* gemm_reference_flops_1, int64_t M"), std::string::npos);
  EXPECT_NE(emitted.out.find("atomicAdd(&gemm_reference_flops, "), std::string::npos);
  EXPECT_EQ(emitted.out.find("atomicAdd(&gemm_reference_flops_1"), std::string::npos);
}

// nvcc builds (links) the tensor-core gemm's, attention's and tf32_linear's harnesses for both
// targets (the plain backend's harnesses: cuda_nvcc_test).
TEST(Harness, TensorCoreHarnessesLinkWithNvccForBothTargets) {
  std::string nvcc = nvcc_path();
  std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tilec_harness_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  struct Job {
    std::string name, command;
    CommandResult result;
  };
  std::vector<Job> jobs;
  for (std::string sample : {"gemm", "attention", "tf32_linear"}) {
    for (const char* target : {"sm_90a", "sm_100a"}) {
      std::string capability = std::string(target).substr(3);
      std::string name = sample + "_check." + target;
      std::filesystem::path file = directory / (name + ".cu");
      CommandResult emitted = tilec("compile samples/" + sample + ".tile --emit-harness --target " + target + " -o " + file.string());
      ASSERT_EQ(emitted.status, 0) << name << "\n" << emitted.err;
      jobs.push_back({name, nvcc + " -std=c++17 -gencode arch=compute_" + capability + ",code=sm_" + capability + " -o '" +
                                (directory / name).string() + "' '" + file.string() + "'", {}});
    }
  }
  // Without nvcc, what runs tilec (the emits above) still ran.
  if (nvcc.empty()) {
    std::filesystem::remove_all(directory);
    GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc or on PATH (or TILEC_TEST_NVCC=off)";
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) jobs[i].result = run_command(jobs[i].command);
  };
  std::thread first(worker), second(worker);
  first.join();
  second.join();
  for (const Job& job : jobs) {
    EXPECT_EQ(job.result.status, 0) << job.name << ":\n" << job.command << "\n" << job.result.out << job.result.err;
    EXPECT_TRUE(std::filesystem::exists(directory / job.name)) << job.name;
  }
  if (!HasFailure()) std::filesystem::remove_all(directory);
}

// The harness's host helpers, harness_fill and harness_compare, compiled with the host C++ compiler
// and run on floats: NaN matches only NaN, an infinity only the same infinity (an H200 run compared
// -inf with -inf as outside: 0 * inf made the tolerance NaN), the normwise part takes the largest
// finite element, a failure names its first element; integers=1 fills -1, 0 and 1.
TEST(Harness, CompareMatchesInfinitiesAndFillGivesWholeValues) {
  const std::string cxx = host_cxx();
  if (cxx.empty()) GTEST_SKIP() << "no host C++ compiler ($TILEC_HOST_CXX or c++)";
  CommandResult emitted = tilec("compile tests/emulate/kernels/extrema.tile --emit-harness --target sm_90a");
  ASSERT_EQ(emitted.status, 0) << emitted.err;
  std::string helpers;
  for (const char* head : {"template <typename T>\nstatic void harness_fill(", "template <typename T>\nstatic double harness_double(",
                           "template <typename T>\nstatic bool harness_compare("}) {
    std::string text = definition_text(emitted.out, head);
    ASSERT_FALSE(text.empty()) << head;
    helpers += text + "\n";
  }
  std::string program = "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <limits>\n"
                        "#include <type_traits>\n#include <vector>\n"
                        "template <typename T> T from_f32(float x) { return x; }\n"
                        "float to_f32(float x) { return x; }\n" + helpers + R"(
int main() {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> want = {-inf, inf, nan, 1.0f}, same = want, finite = {-1e30f, inf, nan, 1.0f}, far = {-inf, inf, nan, 1.5f};
  int failures = 0;
  failures += !harness_compare("same", same, want, 1e-5, 1e-5);            // PASS
  failures += !harness_compare("same_normwise", same, want, 0, 0, 0.01);   // PASS
  failures += harness_compare("finite", finite, want, 1e-5, 1e-5);         // FAIL: first at element 0
  failures += harness_compare("far", far, want, 0, 0, 0.1);                // FAIL: 0.5 > 0.1 * 1
  failures += !harness_compare("near", far, want, 0, 0, 0.5);              // PASS
  std::vector<float> filled(1000);
  harness_fill(filled, 3, true);
  int counts[3] = {0, 0, 0};
  for (float x : filled) {
    if (x != -1 && x != 0 && x != 1) ++failures;
    else ++counts[static_cast<int>(x) + 1];
  }
  for (int count : counts) failures += count < 250;
  harness_fill(filled, 3, false);
  for (float x : filled) failures += !(x >= -1 && x < 1) || x == std::floor(x) && x != 0 && x != -1;
  std::printf("failures %d\n", failures);
  return failures;
}
)";
  std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tilec_harness_compare_" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  CommandResult built = build_host_program(cxx, directory, "compare", program);
  ASSERT_EQ(built.status, 0) << built.out << built.err << "\n" << program;
  CommandResult ran = run_command("'" + (directory / "compare").string() + "'");
  EXPECT_EQ(ran.status, 0) << ran.out;
  EXPECT_NE(ran.out.find("  same: max abs error 0, max rel error 0, 0 of 4 elements outside tolerance: PASS"), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("  same_normwise: max abs error 0, max rel error 0, 0 of 4 elements outside tolerance: PASS"),
            std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("  finite: max abs error 0, max rel error 0, 1 of 4 elements outside tolerance: FAIL\n"
                         "    first at element 0 (row-major): want -inf, got -1.00000002e+30"),
            std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("  far: max abs error 0.5, max rel error 0.5, 1 of 4 elements outside tolerance: FAIL\n"
                         "    first at element 3 (row-major): want 1, got 1.5"),
            std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("  near: max abs error 0.5, max rel error 0.5, 0 of 4 elements outside tolerance: PASS"),
            std::string::npos) << ran.out;
  if (!HasFailure()) std::filesystem::remove_all(directory);
}

// The harness's NAME=VALUE arguments: an extent is an integer from 0 to 2^62, a value a number;
// anything else ends the program with a message (R=-5 aborted on a vector's length, R=1e30
// became INT64_MIN, R=abc became 0: a hunt).
TEST(Harness, ArgumentsThatAreNotNumbersOrExtentsEndTheProgram) {
  const std::string cxx = host_cxx();
  if (cxx.empty()) GTEST_SKIP() << "no host C++ compiler ($TILEC_HOST_CXX or c++)";
  CommandResult emitted = tilec("compile samples/softmax.tile --emit-harness --target sm_90a");
  ASSERT_EQ(emitted.status, 0) << emitted.err;
  std::string helpers;
  for (const char* head : {"static const char* harness_value(", "static void harness_refuse(",
                           "static double harness_argument(", "static long long harness_integer(",
                           "static int64_t harness_extent("}) {
    std::string text = definition_text(emitted.out, head);
    ASSERT_FALSE(text.empty()) << head;
    helpers += text + "\n";
  }
  const std::string program = "#include <cerrno>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
                              "#include <cstdlib>\n#include <cstring>\n" + helpers +
                              "int main(int argc, char** argv) {\n"
                              "  std::printf(\"%lld %g %lld\\n\", static_cast<long long>(harness_extent(argc, argv, \"R\", 7)),\n"
                              "              harness_argument(argc, argv, \"alpha\", 0.5), harness_integer(argc, argv, \"seed\", 3));\n}\n";
  std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tilec_harness_arguments_" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  CommandResult built = build_host_program(cxx, directory, "arguments", program);
  ASSERT_EQ(built.status, 0) << built.out << built.err << "\n" << program;
  const std::string binary = "'" + (directory / "arguments").string() + "'";
  EXPECT_EQ(run_command(binary).out, "7 0.5 3\n");
  // A seed past 2^53 is read exactly (through a double it was ...992).
  EXPECT_EQ(run_command(binary + " R=5 alpha=-2.5 seed=9007199254740993").out, "5 -2.5 9007199254740993\n");
  for (const char* bad : {"R=-5", "R=1e30", "R=abc", "R=", "R=99999999999999999999", "alpha=x", "seed=1.5"}) {
    CommandResult refused = run_command(binary + " " + bad);
    EXPECT_EQ(refused.status, 2) << bad << refused.out;
    EXPECT_NE(refused.err.find(bad), std::string::npos) << refused.err;
  }
  if (!HasFailure()) std::filesystem::remove_all(directory);
}

// Each written tensor's tolerance: an integer is exact unless it is rounded from a float the
// launcher sums in another order (an mma's accumulator, floored: one step off; its minimum too),
// not when chosen by comparing such floats (an argmax, a count); a float tensor CTAs add to allows
// one unit roundoff per tile adding to an element (tiles x elements each adds / the tensor's
// elements), at most a tenth of max|want|.
TEST(Harness, ToleranceFollowsWhatEachTensorIsComputedFrom) {
  CommandResult plain = tilec("compile tests/emulate/kernels/accumulate.tile --emit-harness --target sm_90a");
  ASSERT_EQ(plain.status, 0) << plain.err;
  for (const char* exact : {"I", "L", "U"})
    EXPECT_NE(plain.out.find(std::string("harness_compare(\"") + exact + "\", " + exact + "_got, " + exact + "_want, 0, 0)"),
              std::string::npos) << exact;
  EXPECT_NE(plain.out.find("harness_compare(\"H\", H_got, H_want, 0.01, 0.01, std::max(0.01, std::min(0.1, std::ceil("
                           "static_cast<double>(tile_count) * 128 / std::max<double>(H_count, 1)) * 0.00390625)))"),
            std::string::npos);
  CommandResult mma = tilec("compile tests/emulate/tensor_core/extrema_epilogue.tile --emit-harness --target sm_90a");
  ASSERT_EQ(mma.status, 0) << mma.err;
  for (const char* floored : {"P", "TMIN"})
    EXPECT_NE(mma.out.find(std::string("harness_compare(\"") + floored + "\", " + floored + "_got, " + floored + "_want, 1, 0)"),
              std::string::npos) << floored;
  EXPECT_NE(mma.out.find("harness_compare(\"C\", C_got, C_want, 0.01, 0.01, std::max(0.01, std::min(0.1, std::ceil("
                         "static_cast<double>(tile_count) * 16384 / std::max<double>(C_count, 1)) * 0.00390625)))"),
            std::string::npos);
  CommandResult argmax = tilec("compile tests/emulate/tensor_core/row_argmax.tile --emit-harness --target sm_90a");
  ASSERT_EQ(argmax.status, 0) << argmax.err;
  for (const char* chosen : {"Idx", "Count"})
    EXPECT_NE(argmax.out.find(std::string("harness_compare(\"") + chosen + "\", " + chosen + "_got, " + chosen + "_want, 0, 0)"),
              std::string::npos) << chosen;
  EXPECT_NE(mma.out.find("harness_argument(argc, argv, \"integers\", 0) != 0"), std::string::npos);
}

}  // namespace
}  // namespace tilec::testing
