// tests/cuda/tensor_core_test.cpp — the tensor-core backend's emitted CUDA, checked as text.
//
// Through the tilec binary on samples/gemm.tile (with -D to vary the tiles): the mbarrier arrival
// counts match who arrives (one per compute warpgroup on sm_90a, one tcgen05.commit on sm_100a);
// each full barrier expects exactly the bytes of the TMA boxes completing on it; the MMA steps
// walk K through the descriptors; the register split fits the SM; the launcher keeps the plain
// backend's signature; configurations the emitter does not support fail at the op's location.
// (samples_test compiles every emitted sample with nvcc for both targets and checks for spills.)
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string_view>
#include <unistd.h>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

// `tilec ARGUMENTS`, run from the source root.
CommandResult tilec_at_root(const std::string& arguments) {
  return run_command("cd " + source_dir().string() + " && " + tilec_binary() + " " + arguments);
}

CommandResult compile_sample(const std::string& sample, const std::string& target, const std::string& defines = "") {
  return tilec_at_root("compile samples/" + sample + ".tile --target " + target + defines);
}

CommandResult compile_gemm(const std::string& target, const std::string& defines = "") {
  return compile_sample("gemm", target, defines);
}


// The arrival count each barrier is initialized with: `tilec_mbarrier_init(NAME + 8 * slot, N)`.
std::map<std::string, int> barrier_counts(const std::string& cuda) {
  std::map<std::string, int> counts;
  std::regex init(R"(tilec_mbarrier_init\((\w+) \+ 8 \* slot, (\d+)\))");
  for (auto it = std::sregex_iterator(cuda.begin(), cuda.end(), init); it != std::sregex_iterator(); ++it)
    counts[(*it)[1]] = std::stoi((*it)[2]);
  return counts;
}

TEST(TensorCore, BarrierCountsMatchWhoArrives) {
  CommandResult hopper = compile_gemm("sm_90a");
  ASSERT_EQ(hopper.status, 0) << hopper.err;
  std::map<std::string, int> counts = barrier_counts(hopper.out);
  // Full barriers: the producer's one arrive.expect_tx; empty: one arrival per compute warpgroup.
  EXPECT_EQ(counts, (std::map<std::string, int>{{"pipe_a_full", 1}, {"pipe_a_empty", 2}, {"pipe_b_full", 1}, {"pipe_b_empty", 2}}));
  EXPECT_EQ(occurrences(hopper.out, "compute_thread % 128 == 0) tilec_mbarrier_arrive(pipe_a_empty"), 2u);

  CommandResult narrow = compile_gemm("sm_90a", " -D BM=64");
  ASSERT_EQ(narrow.status, 0) << narrow.err;
  EXPECT_EQ(barrier_counts(narrow.out)["pipe_a_empty"], 1) << "one compute warpgroup";
  EXPECT_NE(narrow.out.find("TILEC_LAUNCH_BOUNDS(256, 1)"), std::string::npos);

  CommandResult blackwell = compile_gemm("sm_100a");
  ASSERT_EQ(blackwell.status, 0) << blackwell.err;
  counts = barrier_counts(blackwell.out);
  EXPECT_EQ(counts["pipe_a_empty"], 1) << "tcgen05.commit arrives once";
  EXPECT_EQ(occurrences(blackwell.out, "if (compute_thread == 0) tilec_tcgen05_commit(pipe_b_empty"), 1u);
  EXPECT_NE(blackwell.out.find("tilec_mbarrier_init(accumulator_barrier, 1);"), std::string::npos);
  // Only the MMA issuer waits on full barriers: a thread a lap behind would misread the parity.
  EXPECT_EQ(occurrences(blackwell.out, "if (compute_thread == 0) tilec_mbarrier_wait(pipe_a_full"), 1u);
  EXPECT_EQ(occurrences(blackwell.out, "tilec_mbarrier_wait(pipe_a_full"), 1u);
}

// Every full barrier expects the bytes of the boxes its slot's TMA loads bring: 64-column panels
// of BM (A) or BK (B) rows of 128 bytes.
TEST(TensorCore, ExpectedTransactionBytesEqualTheBoxesLoaded) {
  for (const char* defines : {"", " -D BN=128 -D BK=128 -D STAGES=3"}) {
    SCOPED_TRACE(defines);
    CommandResult r = compile_gemm("sm_90a", defines);
    ASSERT_EQ(r.status, 0) << r.err;
    std::regex expect(R"(tilec_mbarrier_arrive_expect_tx\((pipe_\w+_full) \+ [^,]+, (\d+)\))");
    std::regex box(R"(tilec_tma_load_2d\(pipe_(\w)_buffer [^;]*&(\w+)_map)");
    std::map<std::string, long> expected_bytes;
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), expect); it != std::sregex_iterator(); ++it)
      expected_bytes[(*it)[1]] = std::stol((*it)[2]);
    std::map<std::string, long> boxes;
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), box); it != std::sregex_iterator(); ++it)
      ++boxes["pipe_" + (*it)[1].str() + "_full"];
    long bm = 128, bn = std::string(defines).empty() ? 256 : 128, bk = std::string(defines).empty() ? 64 : 128;
    ASSERT_EQ(expected_bytes.size(), 2u) << r.out;
    EXPECT_EQ(boxes["pipe_a_full"], bk / 64);
    EXPECT_EQ(boxes["pipe_b_full"], bn / 64);
    EXPECT_EQ(expected_bytes["pipe_a_full"], boxes["pipe_a_full"] * bm * 128);
    EXPECT_EQ(expected_bytes["pipe_b_full"], boxes["pipe_b_full"] * bk * 128);
    EXPECT_EQ(expected_bytes["pipe_a_full"], bm * bk * 2);
    EXPECT_EQ(expected_bytes["pipe_b_full"], bk * bn * 2);
  }
}

// One MMA per 16 of K: A's start moves 32 bytes inside a 128-byte row (then to the next panel),
// B's moves 16 rows of 128 bytes; B's leading offset is one panel (BK rows).
TEST(TensorCore, MmaStepsWalkKThroughTheDescriptors) {
  CommandResult r = compile_gemm("sm_90a", " -D BK=128 -D STAGES=2");
  ASSERT_EQ(r.status, 0) << r.err;
  std::regex step(R"(tilec_wgmma_m64n256k16_bf16\(acc_1, tilec_matrix_descriptor\(a \+ (\d+) \+ [^,]+, 16, 1024\), )"
                  R"(tilec_matrix_descriptor\(b \+ (\d+), (\d+), 1024\)\);)");
  std::vector<std::array<long, 3>> steps;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), step); it != std::sregex_iterator(); ++it)
    steps.push_back({std::stol((*it)[1]), std::stol((*it)[2]), std::stol((*it)[3])});
  ASSERT_EQ(steps.size(), 8u) << r.out;
  for (long k = 0; k < 8; ++k) {
    long element = k * 16;
    EXPECT_EQ(steps[k][0], element / 64 * (128 * 128) + element % 64 * 2) << "A, step " << k;
    EXPECT_EQ(steps[k][1], k * 16 * 128) << "B, step " << k;
    EXPECT_EQ(steps[k][2], 128 * 128) << "B's leading offset: one panel of BK rows";
  }
}

// sm_90a keeps one WGMMA group in flight (defer-mma-releases decides it in the IR; the backend
// prints it): wait_group 1 in the loop, each release of the slot the previous iteration read, and
// after the loop wait_group 0 and the last releases. One stage deep, holding a slot would starve
// the producer: wait_group 0, released at once.
TEST(TensorCore, StagesAreReleasedOneStepLateOnlyWhenTwoOrMoreDeep) {
  CommandResult deep = compile_gemm("sm_90a");
  ASSERT_EQ(deep.status, 0) << deep.err;
  EXPECT_EQ(occurrences(deep.out, "tilec_wgmma_wait<1>();"), 1u);
  EXPECT_EQ(occurrences(deep.out, "tilec_wgmma_wait<0>();"), 1u);
  for (const char* pipe : {"pipe_a", "pipe_b"}) {
    std::string held = std::string(pipe) + "_empty_held";
    std::string release = "tilec_mbarrier_arrive(" + std::string(pipe) + "_empty + 8 * static_cast<uint32_t>(" + held + "));";
    EXPECT_EQ(occurrences(deep.out, release), 2u) << pipe << ": in the loop and after it";
    size_t in_loop = deep.out.find(release), wait_all = deep.out.find("tilec_wgmma_wait<0>();");
    size_t after_loop = deep.out.find(release, in_loop + 1);
    EXPECT_LT(in_loop, wait_all);
    EXPECT_LT(wait_all, after_loop) << "the last slots are released after wait_group 0";
    EXPECT_NE(deep.out.find("next_" + held + " = " + pipe + "_consumer_index"), std::string::npos);
  }
  CommandResult shallow = compile_gemm("sm_90a", " -D STAGES=1");
  ASSERT_EQ(shallow.status, 0) << shallow.err;
  EXPECT_EQ(occurrences(shallow.out, "tilec_wgmma_wait<1>();"), 0u);
  EXPECT_EQ(occurrences(shallow.out, "_held"), 0u);
  EXPECT_EQ(occurrences(shallow.out, "if (compute_thread % 128 == 0) tilec_mbarrier_arrive(pipe_a_empty"), 1u);
}

TEST(TensorCore, RegistersFitTheSmAndTheLauncherKeepsThePlainSignature) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = compile_gemm(target);
    ASSERT_EQ(r.status, 0) << r.err;
    std::smatch lower, raise;
    ASSERT_TRUE(std::regex_search(r.out, lower, std::regex(R"(tilec_lower_registers<(\d+)>)")));
    ASSERT_TRUE(std::regex_search(r.out, raise, std::regex(R"(tilec_raise_registers<(\d+)>)")));
    EXPECT_LE(128 * std::stoi(lower[1]) + 256 * std::stoi(raise[1]), 65536);
    EXPECT_NE(r.out.find("TILEC_LAUNCH_BOUNDS(384, 1)"), std::string::npos);
    EXPECT_NE(r.out.find("extern \"C\" cudaError_t launch_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, "
                         "int64_t M, int64_t K, int64_t N, cudaStream_t stream)"),
              std::string::npos);
    EXPECT_NE(r.out.find(target == std::string("sm_90a") ? "#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(TILEC_EMULATE_SM90A)\n"
                                                       : "#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(TILEC_EMULATE_SM100A)\n"),
              std::string::npos);
    std::smatch shared;
    ASSERT_TRUE(std::regex_search(r.out, shared, std::regex(R"(const size_t shared_bytes = (\d+);)")));
    EXPECT_LE(std::stol(shared[1]), 227 * 1024);
  }
}

TEST(TensorCore, UnsupportedConfigurationsFailAtTheirLocation) {
  struct Case {
    const char* target;
    const char* defines;
    const char* message;
  };
  for (const Case& c : {Case{"sm_90a", " -D BK=96", "samples/gemm.tile:14:11: error: the tensor-core CUDA backend (sm_90a) does not "
                                                      "support an mma of bf16 with K = 96 per step (a multiple of 64: one "
                                                      "128-byte swizzle row; or 32 or 16: a 64- or 32-byte one)"},
                        Case{"sm_100a", " -D BN=48", "samples/gemm.tile:14:11: error: the tensor-core CUDA backend (sm_100a) does "
                                                       "not support an mma 48 columns wide (N: a multiple of 64 up to 256, or 32 "
                                                       "or 16; any multiple of 16 with B given as [N, K]: transpose(load W[n, k] "
                                                       ": <BN, BK>) as mma's b)"},
                        Case{"sm_100a", " -D BM=32", "samples/gemm.tile:14:11: error: the tensor-core CUDA backend (sm_100a) does "
                                                       "not support an mma of 32 rows (tcgen05.mma M = 128 or 64)"},
                        // At the loop whose pipeline(S) to lower, with the depth that fits (it was the kernel's line).
                        Case{"sm_90a", " -D STAGES=6", "samples/gemm.tile:11:3: error: kernel @gemm needs 296128 bytes of shared memory "
                                                         "for its stage buffers and barriers; the stage buffers 6 slots deep take "
                                                         "49152 bytes a slot (294912 bytes); the sm_90a budget is 232448 bytes (227 "
                                                         "KiB): use fewer stages: this loop's pipeline(6) as pipeline(4) fits, or "
                                                         "use smaller tiles"}}) {
    SCOPED_TRACE(std::string(c.target) + c.defines);
    CommandResult r = compile_gemm(c.target, c.defines);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

// No stage count fits: it said "use fewer stages: pipeline(1) here" at pipeline(1) (a hunt).
TEST(TensorCore, WhenNoStageCountFitsTheErrorSaysSo) {
  CommandResult r = tilec_at_root("compile samples/linear.tile -D BK=320 -D STAGES=1 -o /dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("samples/linear.tile:13:3: error: kernel @linear needs 246816 bytes of shared memory"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(227 KiB): no stage count fits, even one slot each: use smaller tiles"), std::string::npos)
      << r.err;
}

// Advice a hunt followed literally: the masked axis-0 reduction's fill is the combine's identity in
// the stored type (-1.0e30 was refused for an i32 accumulator), a 1-D tile's reduction says it is
// not 2-D (it said "cast to f32 first" of an f32 tile), and the padding names the next multiple
// of 8 (it said "pad the tile to 8 columns" of 60).
TEST(TensorCore, RefusalsAdviseWhatFits) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_advice_" + std::to_string(::getpid()) + ".tile");
  write_file(file,
             "kernel masked(X: tensor<M, K, i8>, W: tensor<N, K, i8>, Y: tensor<M, N, i32>, CS: tensor<1, N, i32>)\n"
             "    grid persistent(cdiv(M, 128), cdiv(N, 128)) as (m, n) {\n"
             "  acc = zeros<128, 128, i32>();\n"
             "  for k in 0 .. cdiv(K, 128) pipeline(3) carry (acc) {\n"
             "    acc = mma(load X[m, k] : <128, 128>, transpose(load W[n, k] : <128, 128>), acc);\n  }\n"
             "  store Y[m, n] = acc;\n"
             "  store CS[0, n] max= max(acc, axis = 0) if iota<1, 128, i32>(1) < 64;\n}\n"
             "kernel vector_sum(X: tensor<M, K, bf16>, W: tensor<K, N, bf16>, Y: tensor<M, N, f32>, B: tensor<N, f32>, "
             "R: tensor<N, f32>)\n"
             "    grid persistent(cdiv(M, 128), cdiv(N, 128)) as (m, n) {\n"
             "  acc = zeros<128, 128, f32>();\n"
             "  for k in 0 .. cdiv(K, 64) carry (acc) {\n"
             "    acc = mma(load X[m, k] : <128, 64>, load W[k, n] : <64, 128>, acc);\n  }\n"
             "  b = load B[n] : <128>;\n  store Y[m, n] = acc + b;\n  store R[n] += sum(b * 2.0, axis = 0);\n}\n");
  CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " -o /dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("mask the reduced tile instead (where(mask, x, -2147483648) before the reduction)"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("this 'reduce_sum' of a tile<128, f32> (compute agents reduce 2-D f32 and i32 tiles along "
                       "axis 1; this one is not 2-D)"),
            std::string::npos) << r.err;
  std::filesystem::remove(file);
  CommandResult padded = tilec_at_root("compile samples/attention.tile -D BKV=60 -o /dev/null");
  EXPECT_NE(padded.err.find("60 columns (a WGMMA fragment holds one column or a multiple of 8: store such columns "
                            "one at a time, or pad the tile to 64 columns)"),
            std::string::npos) << padded.err;
}

// After the wait that retires the loop's last WGMMAs, an empty asm names each accumulator
// register, so an epilogue reading them as integers (a bitcast) is not moved above the wait,
// where ptxas serialized every WGMMA of the kernel (C7514; an nvcc hunt).
TEST(TensorCore, TheFinalWgmmaWaitHoldsTheAccumulatorsRegisters) {
  CommandResult r = compile_gemm("sm_90a");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("tilec_wgmma_wait<0>();  // the last step's WGMMAs, then release the slots they read\n"
                       "        #pragma unroll\n"
                       "        for (int q = 0; q < 128; ++q) tilec_wgmma_hold(acc_1[q]);  // read after the wait\n"),
            std::string::npos);
}

// The figures of the shared-memory error add up: a tile loaded once per tile before the loop (X,
// one slot) is not a slot of the ring, which it was counted in (238896 bytes needed, "40960 bytes
// a slot, 9 slots deep"; found by a helper writing kernels from the docs).
TEST(TensorCore, TheSharedMemoryErrorCountsTheRingApartFromShallowerBuffers) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_ring_" + std::to_string(::getpid()) + ".tile");
  write_file(file,
             "kernel mlp_chain(X: tensor<M, D, bf16>, W1: tensor<D, F, bf16>, W2: tensor<F, E, bf16>, Y: tensor<M, E, f32>)\n"
             "    grid tiles(cdiv(M, 128)) as (m) {\n"
             "  x = load X[m, 0] : <128, 64>;\n  y = zeros<128, 128, f32>();\n"
             "  for f in 0 .. cdiv(F, 64) pipeline(9) carry (y) {\n"
             "    h = mma(x, load W1[0, f] : <64, 64>, zeros<128, 64, f32>());\n"
             "    y = mma(cast(h, bf16), load W2[f, 0] : <64, 128>, y);\n  }\n"
             "  store Y[m, 0] = y;\n}\n");
  CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " -o /dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(":5:3: error: kernel @mlp_chain needs 238896 bytes of shared memory for its stage buffers "
                       "and barriers; the stage buffers 9 slots deep take 24576 bytes a slot (221184 bytes), the "
                       "shallower ones 16384 bytes; the sm_90a budget is 232448 bytes (227 KiB): use fewer stages: this "
                       "loop's pipeline(9) as pipeline(8) fits"),
            std::string::npos)
      << r.err;
  std::filesystem::remove(file);
}

// Every kernel of a file declares the one extern __shared__ array with one alignment: a plain
// kernel's 16 beside a tensor-core kernel's 1024 drew nvcc's warning #1886-D (found by a helper).
TEST(TensorCore, PlainAndTensorCoreKernelsDeclareDynamicSharedMemoryAlike) {
  const std::string source = "kernel rowmax(X: tensor<R, 256, f32>, Y: tensor<R, 1, f32>) grid tiles(cdiv(R, 4)) as (r) {\n"
                             "  store Y[r, 0] = max(load X[r, 0] : <4, 256>, axis = 1);\n}\n"
                             "kernel gemm(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>)\n"
                             "    grid persistent(cdiv(M, 128), cdiv(N, 128)) as (m, n) {\n"
                             "  acc = zeros<128, 128, f32>();\n"
                             "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {\n"
                             "    acc = mma(load A[m, k] : <128, 64>, load B[k, n] : <64, 128>, acc);\n  }\n"
                             "  store C[m, n] = acc;\n}\n";
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_mixed_" + std::to_string(::getpid()) + ".tile");
  write_file(file, source);
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target " + target);
    ASSERT_EQ(r.status, 0) << r.err;
    std::set<std::string> alignments;
    const std::regex declaration(R"(\n\s*TILEC_DYNAMIC_SHARED\((\d+), shared_memory\);)");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), declaration); it != std::sregex_iterator(); ++it)
      alignments.insert((*it)[1]);
    EXPECT_EQ(alignments.size(), 1u) << target << ": " << fmt::format("{}", fmt::join(alignments, ", "));
    EXPECT_NE(r.out.find("rowmax_kernel("), std::string::npos);
    EXPECT_NE(r.out.find("gemm_kernel("), std::string::npos);
  }
  std::filesystem::remove(file);
}

// A tensor the kernel stores into and reads back: a TMA load of it after the store, or in a later
// iteration of a loop around both, is refused (the producer runs ahead); so is a computed B
// loaded from it (the compute threads read other threads' elements). A persistent in-place kernel
// that loads its own tile and overwrites it compiles: the loop over tiles is not such a loop (a
// helper found it refused while the same kernel as `grid tiles` compiled).
TEST(TensorCore, ATensorStoredBeforeItIsReadBackIsRefusedButAnInPlaceTileIsNot) {
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_read_back_" + std::to_string(::getpid()) + ".tile");
  struct Case {
    std::string text, message;  // "" when it compiles
  };
  const Case cases[] = {
      {"kernel inplace(X: tensor<M, 64, bf16>, W: tensor<64, 64, bf16>) grid persistent(cdiv(M, 64)) as (i) {\n"
       "  y = mma(load X[i, 0] : <64, 64>, load W[0, 0] : <64, 64>, zeros<64, 64, f32>());\n"
       "  store X[i, 0] = cast(y, bf16);\n}\n",
       ""},
      {"kernel cb(A: tensor<M, 64, bf16>, W: tensor<64, 64, f32>, O: tensor<M, 64, f32>) grid tiles(1) as (t) {\n"
       "  for c in 0 .. cdiv(M, 64) {\n"
       "    o = mma(load A[c, 0] : <64, 64>, cast(load W[0, 0] : <64, 64> * 0.5, bf16), zeros<64, 64, f32>());\n"
       "    store O[c, 0] = o;\n    store W[0, 0] = o;\n  }\n}\n",
       ":3:9: error: the tensor-core CUDA backend ({}) does not support an mma whose computed B reads %W, which this "
       "kernel stores into at line 5, in an earlier iteration of the loop at line 2: the compute threads write the B "
       "from elements other threads stored"},
      {"kernel pre(A: tensor<M, 64, bf16>, W: tensor<64, 64, bf16>, O: tensor<M, 64, f32>) grid persistent(1) as (t) {\n"
       "  store W[0, 0] = zeros<64, 64, bf16>();\n"
       "  for c in 0 .. cdiv(M, 64) {\n"
       "    store O[c, 0] = mma(load A[c, 0] : <64, 64>, load W[0, 0] : <64, 64>, zeros<64, 64, f32>());\n  }\n}\n",
       ":4:50: error: kernel @pre: this load of W is issued by the TMA producer warp, which runs ahead of the compute "
       "warps, so it would not see the store into it at line 2"},
  };
  for (const Case& c : cases)
    for (const char* target : {"sm_90a", "sm_100a"}) {
      SCOPED_TRACE(c.text + target);
      write_file(file, c.text);
      CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " -o /dev/null --target " + target);
      if (c.message.empty()) {
        EXPECT_EQ(r.status, 0) << r.err;
      } else {
        EXPECT_EQ(r.status, 1);
        EXPECT_NE(r.err.find(fmt::format(fmt::runtime(c.message), target)), std::string::npos) << r.err;
      }
    }
  std::filesystem::remove(file);
}

// A computed B the cost-based schedule starts two stages before its mma (attention over a
// dequantized V, computed before the first mma; a helper's hunt): the cast and scale in stage 0,
// the bf16 cast in stage 1, the mma in stage 2, so the B crosses one register pipe into another.
// Each is read where the B is written, element by element, as a single pipe was; the kernel was
// refused, and pipeline(1) was the way out. It compiles pipelined now
// (tests/emulate/tensor_core/early_computed_b.tile runs it).
TEST(TensorCore, AComputedBScheduledTwoStagesEarlyStaysPipelined) {
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_early_b_" + std::to_string(::getpid()) + ".tile");
  write_file(file,
             "kernel chain(Q: tensor<M, 64, bf16>, K: tensor<T, 64, bf16>, V: tensor<T, 64, f8e4m3>, O: tensor<M, 64, f32>)\n"
             "    grid tiles(cdiv(M, 64)) as (m) {\n"
             "  q = load Q[m, 0] : <64, 64>;\n  o = zeros<64, 64, f32>();\n"
             "  for j in 0 .. cdiv(T, 64) carry (o) {\n"
             "    v = cast(cast(load V[j, 0] : <64, 64>, f32) * 0.5, bf16);\n"
             "    s = mma(q, transpose(load K[j, 0] : <64, 64>), zeros<64, 64, f32>());\n"
             "    o = mma(cast(s, bf16), v, o);\n  }\n  store O[m, 0] = o;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult compiled = run_command(tilec_binary() + " compile " + file.string() + " -o /dev/null --target " + target);
    EXPECT_EQ(compiled.status, 0) << compiled.err;
    EXPECT_EQ(compiled.err, "");
    CommandResult scheduled = run_command(tilec_binary() + " compile " + file.string() +
                                          " -o /dev/null --stop-after generate-schedule --print-ir-after "
                                          "generate-schedule --target " + target);
    EXPECT_NE(scheduled.err.find("%o {generator = \"cost-based\", ii = 16, order = 9, stage = 0, stages = 3}"),
              std::string::npos)
        << scheduled.err;
    EXPECT_NE(scheduled.err.find("%v = cast %16 {cycle = 16, latency = 4, order = 0"), std::string::npos)
        << scheduled.err;
  }
  std::filesystem::remove(file);
}

// A computed B (a dequantized weight, as it is or transposed from nn.Linear's [N, K]) compiles on
// both targets, written into shared memory by the compute threads
// (tests/emulate/tensor_core/computed_b.tile runs it), rows of whole 128 bytes or of 64 or 32 (the
// narrower swizzles), and an 8-bit one K-major (the transpose of its [N, K] tile); one that is
// not bf16, f16 or 8-bit, an 8-bit [K, N] one, of rows of other widths, or read from a tile held
// in registers is refused as such
// (sm_90a named the computed tile's rows instead: "a register tile tile<64x128xu8, reg>: 64 rows").
TEST(TensorCore, AComputedBIsWrittenToSharedMemoryOrRefusedForWhatItIs) {
  struct Case {
    const char* name;
    int64_t n;  // BN
    std::string body;  // lines 5 and 6
    std::string message;  // "" when it compiles
  };
  const std::string rule = "the compute threads write a computed B into shared memory element by element from "
                           "loads, positions and scalars";
  const Case cases[] = {
      {"u8", 128, "    w = cast(cast(cast(load Wq[k, n] : <64, 128>, i32) - 128, f32), bf16);\n"
                  "    acc = mma(load X[m, k] : <128, 64>, w, acc);\n", ""},
      {"f32", 128, "    w = cast(load Wq[k, n] : <64, 128>, f32);\n    acc = mma(load Xf[m, k] : <128, 64>, w, acc);\n",
       ":6:11: error: the tensor-core CUDA backend ({}) does not support an mma whose computed B is an f32 tile: " + rule},
      // 32 and 16 columns: rows of 64 and 32 bytes, the narrower swizzles; 48 is neither.
      {"narrow", 32, "    w = cast(load Wq[k, n] : <64, 32>, bf16);\n    acc = mma(load X[m, k] : <128, 64>, w, acc);\n", ""},
      {"narrower", 16, "    w = cast(load Wq[k, n] : <64, 16>, bf16);\n    acc = mma(load X[m, k] : <128, 64>, w, acc);\n", ""},
      {"ragged", 48, "    w = cast(load Wq[k, n] : <64, 48>, bf16);\n    acc = mma(load X[m, k] : <128, 64>, w, acc);\n",
       ":6:11: error: the tensor-core CUDA backend ({}) does not support an mma whose computed B is 48 columns wide: " +
           rule},
      {"transposed", 128, "    w = cast(load Wq[n, k] : <128, 64>, bf16);\n"
                          "    acc = mma(load X[m, k] : <128, 64>, transpose(w), acc);\n", ""},
      {"transposed_narrow", 128, "    w = cast(load Wq[n, k] : <128, 32>, bf16);\n"
                                 "    acc = mma(load X[m, k] : <128, 32>, transpose(w), acc);\n", ""},
      {"transposed_ragged", 128, "    w = cast(load Wq[n, k] : <128, 48>, bf16);\n"
                                 "    acc = mma(load X[m, k] : <128, 48>, transpose(w), acc);\n",
       ":6:11: error: the tensor-core CUDA backend ({}) does not support an mma whose computed B transposes a tile 48 "
       "columns (K) wide: " + rule},
      // 8-bit (W4A8, W8A8 with a dequantized weight): K-major only, as the 8-bit MMAs read B.
      {"e4m3_transposed", 128, "    w = cast(cast(load Wq[n, k] : <128, 64>, f32) - 128.0, f8e4m3);\n"
                               "    acc = mma(load X8[m, k] : <128, 64>, transpose(w), acc);\n", ""},
      {"i8_transposed", 128, "    w = cast(cast(load Wq[n, k] : <128, 64>, i32) - 128, i8);\n"
                             "    acc = mma(load Xi[m, k] : <128, 64>, transpose(w), acc);\n", ""},
      {"e4m3", 128, "    w = cast(cast(load Wq[k, n] : <64, 128>, f32) - 128.0, f8e4m3);\n"
                    "    acc = mma(load X8[m, k] : <128, 64>, w, acc);\n",
       ":6:11: error: the tensor-core CUDA backend ({}) does not support an mma whose computed B is an f8e4m3 [K, N] "
       "tile (8-bit MMAs read B K-major: compute the [N, K] tile and give mma its transpose()): " + rule},
      {"held", 128, "    w = cast(load Wq[k, n] : <64, 128>, bf16);\n    acc = mma(load X[m, k] : <128, 64>, w, acc);\n"
                    "    store R[m, k] = max(cast(w, f32), axis = 1);\n",
       ":6:11: error: the tensor-core CUDA backend ({}) does not support an mma whose computed B reads %w, which the "
       "compute threads hold in registers: " + rule},
  };
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_dequant_" + std::to_string(::getpid()) + ".tile");
  for (const Case& c : cases)
    for (const char* target : {"sm_90a", "sm_100a"}) {
      SCOPED_TRACE(std::string(c.name) + " " + target);
      write_file(file, fmt::format("kernel dequant(X: tensor<M, K, bf16>, Xf: tensor<M, K, f32>, Wq: tensor<K, N, u8>, "
                                   "X8: tensor<M, K, f8e4m3>, Xi: tensor<M, K, i8>, Y: tensor<M, N, {2}>, "
                                   "R: tensor<M, K, f32>)\n"
                                   "    grid persistent(cdiv(M, 128), cdiv(N, {0})) as (m, n) {{\n"
                                   "  acc = zeros<128, {0}, {2}>();\n"
                                   "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {{\n{1}  }}\n"
                                   "  store Y[m, n] = acc;\n}}\n",
                                   c.n, c.body, std::string(c.name) == "i8_transposed" ? "i32" : "f32"));
      CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target " + target + " -o /dev/null");
      EXPECT_EQ(r.status, c.message.empty() ? 0 : 1) << r.err;
      if (!c.message.empty()) {
        EXPECT_NE(r.err.find(fmt::format(fmt::runtime(c.message), target)), std::string::npos) << r.err;
      }
    }
  std::filesystem::remove(file);
}

// A computed B's 8- or 16-bit weight is copied by TMA into a stage buffer of its own, which the
// compute threads read element by element as they write the B (promote-mma-operands phase 4):
// no thread reads the weight from global memory. An f32 weight (twice a bf16 one's shared memory)
// stays a load each thread reads where it writes the B, and so does one whose stage buffers, with
// the others and the B's staging, would not fit the shared memory: BN = 256 and BK = 128 three
// stages deep (refused for shared memory when its weight was copied by TMA), two stages fit.
TEST(TensorCore, AComputedBsWeightIsCopiedByTmaUnlessItIsF32OrDoesNotFit) {
  struct Case {
    const char* name;
    const char* element;  // Wq's
    std::string b;        // the mma's B
    bool tma;
    int bn = 128, bk = 64, stages = 2;
  };
  const Case cases[] = {
      {"i8", "i8", "cast(cast(load Wq[k, n] : <BK, BN>, f32) * 0.5, bf16)", true},
      {"transposed_u8", "u8", "transpose(cast(cast(cast(load Wq[n, k] : <BN, BK>, i32) - 128, f32), bf16))", true},
      {"f16", "f16", "cast(cast(load Wq[k, n] : <BK, BN>, f32) * 2.0, bf16)", true},
      {"f32", "f32", "cast(load Wq[k, n] : <BK, BN>, bf16)", false},
      {"wide_two_stages", "i8", "transpose(cast(load Wq[n, k] : <BN, BK>, bf16))", true, 256, 128, 2},
      {"wide_three_stages", "i8", "transpose(cast(load Wq[n, k] : <BN, BK>, bf16))", false, 256, 128, 3},
  };
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_tma_weight_" + std::to_string(::getpid()) + ".tile");
  for (const Case& c : cases)
    for (const char* target : {"sm_90a", "sm_100a"}) {
      SCOPED_TRACE(std::string(c.name) + " " + target);
      write_file(file, fmt::format("const BN = {3}; const BK = {4};\n"
                                   "kernel dequant(X: tensor<M, K, bf16>, Wq: tensor<{0}, {1}>, Y: tensor<M, N, f32>)\n"
                                   "    grid persistent(cdiv(M, 128), cdiv(N, BN)) as (m, n) {{\n"
                                   "  acc = zeros<128, BN, f32>();\n"
                                   "  for k in 0 .. cdiv(K, BK) pipeline({5}) carry (acc) {{\n"
                                   "    acc = mma(load X[m, k] : <128, BK>, {2}, acc);\n  }}\n"
                                   "  store Y[m, n] = acc;\n}}\n",
                                   c.b.find("Wq[n, k]") != std::string::npos ? "N, K" : "K, N", c.element, c.b, c.bn,
                                   c.bk, c.stages));
      CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target " + target);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(r.out.find("&Wq_map") != std::string::npos, c.tma) << r.out;
      EXPECT_EQ(r.out.find("read element by element into a computed B from Wq") != std::string::npos, c.tma);
      EXPECT_EQ(r.out.find("Wq[") == std::string::npos, c.tma) << "the weight read from global memory";
    }
  std::filesystem::remove(file);
}

// sm_100a writes a computed B into two staging buffers in turn (one while the MMA before reads
// the other) where both fit beside the stage buffers, and into one where they do not: a 128 x 128
// bf16 weight with BK = 128 three stages deep compiles with one buffer (it did before there were
// two), and with two stages with two.
TEST(TensorCore, Sm100aDoublesAComputedBsStagingWhereItFits) {
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_staging_" + std::to_string(::getpid()) + ".tile");
  write_file(file, "const STAGES = 2;\n"
                   "kernel dequant(X: tensor<M, K, bf16>, Wq: tensor<K, N, bf16>, S: tensor<N, f32>, Y: tensor<M, N, f32>)\n"
                   "    grid persistent(cdiv(M, 128), cdiv(N, 128)) as (m, n) {\n"
                   "  acc = zeros<128, 128, f32>();\n"
                   "  for k in 0 .. cdiv(K, 128) pipeline(STAGES) carry (acc) {\n"
                   "    w = cast(cast(load Wq[k, n] : <128, 128>, f32) * load S[n] : <128>, bf16);\n"
                   "    acc = mma(load X[m, k] : <128, 128>, w, acc);\n  }\n"
                   "  store Y[m, n] = acc;\n}\n");
  for (int stages : {2, 3}) {
    SCOPED_TRACE(stages);
    CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target sm_100a -D STAGES=" +
                                  std::to_string(stages));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("two such buffers, written in turn") != std::string::npos, stages == 2) << r.out.substr(0, 3000);
    EXPECT_EQ(r.out.find("computed_b_buffer ^= 1;") != std::string::npos, stages == 2);
  }
  std::filesystem::remove(file);
}

// transpose() of a register tile is an mma's A only, and only for 16-bit inputs (MN-major A): as
// a B it is a computed B; cast after the transpose it names the form to write; of an 8-bit tile
// it is refused at the mma, saying why.
TEST(TensorCore, ATransposedRegisterTileIsOnlyA16BitA) {
  struct Case {
    const char* name;
    const char* element;
    std::string line;  // line 5
    std::string message;
  };
  const Case cases[] = {
      {"as_b", "bf16", "  y = mma(load Q[i, 0] : <64, 64>, transpose(cast(p_t, bf16)), zeros<64, 64, f32>());\n",
       ":5:7: error: the tensor-core CUDA backend (sm_90a) does not support an mma whose computed B reads %p_t, "
       "which the compute threads hold in registers"},
      {"cast_after", "bf16", "  y = mma(cast(transpose(p_t), bf16), k, zeros<64, 64, f32>());\n",
       ":5:16: error: the tensor-core CUDA backend (sm_90a) does not support this transpose of a register tile cast "
       "afterwards (to bf16): write the cast inside it, transpose(cast(x, bf16))"},
      {"eight_bit", "f8e4m3", "  y = mma(transpose(cast(p_t, f8e4m3)), transpose(load Q[i, 0] : <64, 64>), zeros<64, 64, f32>());\n",
       ":5:7: error: the tensor-core CUDA backend (sm_90a) does not support an mma of f8e4m3 whose A is the transpose "
       "of a register tile: 8-bit MMAs read A K-major (16-bit inputs take it)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("tilec_transposed_a_" + std::to_string(::getpid()) + ".tile");
    write_file(file, fmt::format("kernel t(Q: tensor<S, 64, {0}>, K: tensor<T, 64, {0}>, Y: tensor<S, 64, f32>)\n"
                                 "    grid tiles(cdiv(S, 64)) as (i) {{\n"
                                 "  k = load K[0, 0] : <64, 64>;\n"
                                 "  p_t = mma(k, transpose(load Q[i, 0] : <64, 64>), zeros<64, 64, f32>());\n"
                                 "{1}  store Y[i, 0] = y;\n}}\n",
                                 c.element, c.line));
    CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target sm_90a -o /dev/null");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    std::filesystem::remove(file);
  }
}

// A GEMM of A [M, K] and B [K, N] on tiles of `rows` x 64, its epilogue `epilogue` (lines 6 on),
// with `outputs` its further parameters.
std::string gemm_with_epilogue(const std::string& outputs, int64_t rows, const std::string& epilogue) {
  return fmt::format("kernel t(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, {0})\n"
                     "    grid persistent(cdiv(M, {1}), cdiv(N, 64)) as (m, n) {{\n"
                     "  acc = zeros<{1}, 64, f32>();\n"
                     "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {{\n"
                     "    acc = mma(load A[m, k] : <{1}, 64>, load B[k, n] : <64, 64>, acc); }}\n"
                     "{2}}}\n",
                     outputs, rows, epilogue);
}

// Masked stores in a tensor-core epilogue take the forms it holds: the store of a folded axis-0
// reduction, and of a tile reshaped between the tensor's dimensions whose mask reads an iota along
// a unit dimension (one from iotas along its rows or columns is computed again at the 2-D tile's
// shape: tests/emulate/tensor_core/varlen_attention.tile), are refused at the op, saying what to
// write instead (plain kernels take both).
TEST(TensorCore, MaskedStoresTheEpilogueDoesNotHoldAreRefusedSayingWhatToWrite) {
  struct Case {
    const char* name;
    std::string tensor, store, message;
  };
  const Case cases[] = {
      {"folded_reduction", "CS: tensor<1, N, f32>", "  store CS[0, n] max= max(acc, axis = 0) if n > 0;\n",
       ":6:3: error: the tensor-core CUDA backend (sm_90a) does not support a masked store of a reduction along "
       "axis 0; mask the reduced tile instead (where(mask, x, -1.0e30) before the reduction)"},
      {"between_dimensions", "O: tensor<M, 1, N, f32>",
       "  store O[m, 0, n] = reshape<64, 1, 64>(acc) if iota<64, 1, 64, i32>(1) < 1;\n",
       ":6:22: error: the tensor-core CUDA backend (sm_90a) does not support a masked store of a tile reshaped "
       "between the tensor's dimensions whose mask is not computed from iotas along its rows or columns"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("tilec_masked_" + std::to_string(::getpid()) + ".tile");
    write_file(file, gemm_with_epilogue(c.tensor, 64, c.store));
    CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target sm_90a -o /dev/null");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    std::filesystem::remove(file);
  }
}

// Column slices (acc[:, a:b]) and concat() along axis 1 stay in the threads holding the elements;
// those that would move them are refused at the op, saying what to write instead: rows and steps
// of a register tile or an accumulator on both targets (of a loaded tile, computed per element); on sm_90a a register tile's slice not at a multiple of 8 (WGMMA's layout), or
// its concat() at such a column; on sm_100a with two compute warpgroups a slice of a computed or
// loaded register tile (each holds half of every row; a loaded one is loaded as its columns),
// while slices of a loop's accumulator come from TMEM and compile (read by stores, or each into
// a register tile of its own after the loop), and a concat() of TMEM reads whose parts meet
// inside a 32-column load; and one column of a register tile broadcast along the columns.
TEST(TensorCore, ColumnSlicesThatWouldMoveElementsAreRefusedSayingWhatToWrite) {
  struct Case {
    const char *name, *target;
    std::string line;  // from line 6
    std::string message;  // "" when it compiles
  };
  const std::string rule = "does not support this subscript (rows, or a step) of %acc (tile<128, 64, f32>): it reads "
                           "%acc at other positions than the elements it gives, and each compute thread holds only "
                           "its own positions of it";
  const Case cases[] = {
      {"rows", "sm_90a", "  store Y[m, 0] = acc[0:32, :];\n",
       ":6:22: error: the tensor-core CUDA backend (sm_90a) " + rule + " (in registers)"},
      {"step", "sm_100a", "  store Y[m, n] = acc[:, ::2];\n",
       ":6:22: error: the tensor-core CUDA backend (sm_100a) " + rule + " (in tensor memory)"},
      // A loaded tile's rows and steps are computed per element (tests/emulate/tensor_core/row_moves.tile).
      {"loaded_rows", "sm_90a", "  a = load A[m, 0] : <256, 64>;\n  store Y[m, n] = acc + cast(a[::2], f32);\n", ""},
      {"sm90_start", "sm_90a", "  store Y[m, n] = acc[:, 4:12];\n",
       ":6:22: error: the tensor-core CUDA backend (sm_90a) does not support this slice of %acc (tile<128, 64, f32>, "
       "held in registers) at columns 4:12: WGMMA's layout gives each thread 2 of every 8 columns, so a slice or "
       "concat() moves a register tile's columns by a multiple of 8 (not 4); start it at a multiple of 8, or keep the tile whole and "
       "mask the columns outside 4:12 (where() of an iota<128, 64, i32>(1))"},
      // One column broadcast along the rows: masking does not broadcast it (a helper followed that hint).
      {"sm90_column", "sm_90a", "  store Y[m, n] = acc * acc[:, 3:4];\n",
       "at columns 3:4: WGMMA's layout gives each thread 2 of every 8 columns, so a slice or concat() moves a "
       "register tile's columns by a multiple of 8 (not 3); take the column as a row reduction of the masked tile "
       "instead: sum(where(iota<128, 64, i32>(1) == 3, x, 0.0), axis = 1)"},
      {"sm90_reduced", "sm_90a", "  store R[m, 0] = max(acc[:, 8:40], axis = 1);\n", ""},
      {"sm100_reduced", "sm_100a", "  store R[m, 0] = max(acc[:, 0:32], axis = 1);\n", ""},
      {"sm100_reduced_narrow", "sm_100a", "  store R[m, 0] = max(acc[:, 0:36], axis = 1);\n",
       ":6:26: error: the tensor-core CUDA backend (sm_100a) does not support a slice of a TMEM accumulator read into "
       "registers, 36 columns wide: the compute warpgroups read 18 columns each, and tcgen05.ld 32x32b reads 32, 16 or 8 "
       "columns at a time, so the tile must be a multiple of 16 columns wide (or use 64-row tiles, which one warpgroup "
       "reads)"},
      // A store of 40 columns from TMEM: 20 for each warpgroup, which tcgen05.ld cannot read (a
      // hunt's SwiGLU epilogue; the message said "a multiple of 8" of the 40).
      {"sm100_stored_narrow", "sm_100a", "  store Y[m, n] = acc[:, 0:40] * 2.0;\n",
       ":6:3: error: the tensor-core CUDA backend (sm_100a) does not support a store of a tile read from a TMEM "
       "accumulator, 40 columns wide: the compute warpgroups read 20 columns each, and tcgen05.ld 32x32b reads 32, 16 "
       "or 8 columns at a time, so the tile must be a multiple of 16 columns wide (or use 64-row tiles, which one "
       "warpgroup reads)"},
      // One column: the message divided by the columns each warpgroup reads, 0 (SIGFPE; a hunt's -D BF=1).
      {"sm100_stored_one_column", "sm_100a", "  store Y[m, n] = acc[:, 5:6];\n",
       ":6:3: error: the tensor-core CUDA backend (sm_100a) does not support a store of a tile read from a TMEM "
       "accumulator, 1 column wide: the 2 compute warpgroups split the columns, and tcgen05.ld 32x32b reads 32, 16 "
       "or 8 columns at a time, so the tile must be a multiple of 16 columns wide (or use 64-row tiles, which one "
       "warpgroup reads)"},
      {"sm100_computed", "sm_100a", "  h = relu(acc);\n  store R[m, 0] = max(h[:, 0:32], axis = 1);\n",
       ":7:24: error: the tensor-core CUDA backend (sm_100a) does not support this slice of %h (tile<128, 64, f32>, "
       "held in registers) at columns 0:32: each of the 2 compute warpgroups holds its part of every row's columns "
       "(32 of the 64), so a tile 32 wide made from its columns would take some from the other; slice an accumulator "
       "only in what its stores compute (TMEM is read at any column), use 64-row tiles"},
      {"sm100_stored", "sm_100a", "  store Y[m, n] = acc[:, 32:] * 2.0;\n", ""},
      {"sm100_loaded", "sm_100a", "  a = load A[m, 0] : <128, 128>;\n  store R[m, 0] = max(cast(a[:, 64:], f32), axis = 1);\n",
       ":7:29: error: the tensor-core CUDA backend (sm_100a) does not support this slice of %a (tile<128, 128, bf16>, "
       "held in registers) at columns 64:128: each of the 2 compute warpgroups holds its part of every row's columns "
       "(64 of the 128), so a tile 64 wide made from its columns would take some from the other; load those columns "
       "as a tile of their own (at element coordinates: load T at [r, c + 64] : <128, 64>)"},
      {"axis0", "sm_90a", "  store Y[m, n] = concat(acc, acc, axis = 0)[0:128];\n",
       ":6:19: error: the tensor-core CUDA backend (sm_90a) does not support this concat() along axis 0 of %acc (tile<128, "
       "64, f32>): it reads %acc at other positions than the elements it gives"},
      {"sm90_concat", "sm_90a", "  store Y[m, n] = concat(acc[:, :4], acc[:, :60], axis = 1);\n",
       ":6:19: error: the tensor-core CUDA backend (sm_90a) does not support this concat() of %acc (tile<128, 64, f32>, "
       "held in registers) as its columns 4:64: WGMMA's layout gives each thread 2 of every 8 columns, so a slice or "
       "concat() moves a register tile's columns by a multiple of 8 (not 4); make each part a multiple of 8 columns wide"},
      {"sm90_rotated", "sm_90a", "  store Y[m, n] = concat(acc[:, 16:], acc[:, :16], axis = 1);\n", ""},
      // One column broadcast along the columns: each element reads that column of its row, which
      // the threads holding a register tile's row do not all hold (a loaded column is read so:
      // tests/emulate/tensor_core/broadcast_columns.tile).
      {"sm90_column_broadcast", "sm_90a", "  store Y[m, n] = acc * acc[:, 8:9];\n",
       ":6:23: error: the tensor-core CUDA backend (sm_90a) does not support this 'mul' of a column of a tile the "
       "compute threads hold in registers"},
      {"sm100_column_broadcast", "sm_100a", "  h = relu(acc);\n  store Y[m, n] = h * h[:, 0:1];\n",
       ":7:21: error: the tensor-core CUDA backend (sm_100a) does not support this 'mul' of a column of a tile the "
       "compute threads hold in registers"},
      // An interleave reads its parts at other positions than the element's: not a register tile.
      {"sm90_interleave", "sm_90a", "  store Y[m, 0] = interleave(acc[:, :32], acc[:, 32:]);\n",
       ":6:19: error: the tensor-core CUDA backend (sm_90a) does not support this interleave() of %acc (tile<128, 64, "
       "f32>): it reads %acc at other positions than the elements it gives, and each compute thread holds only its "
       "own positions of it (in registers)"},
      {"sm100_interleave_loaded", "sm_100a", "  a = load A[m, 0] : <128, 32>;\n  store Y[m, n] = acc * cast(interleave(a, a), f32);\n", ""},
      {"sm100_seam", "sm_100a", "  store Y[m, n] = concat(acc[:, 16:], acc[:, :16], axis = 1);\n",
       ":6:3: error: the tensor-core CUDA backend (sm_100a) does not support a concat() whose parts meet at column 48 "
       "of the stored tile, with TMEM accumulators in it: a store reads TMEM 32 columns at a time, each from one part, "
       "so parts meet at multiples of 32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("tilec_column_slice_" + std::to_string(::getpid()) + ".tile");
    write_file(file, gemm_with_epilogue("Y: tensor<M, N, f32>, R: tensor<M, 1, f32>", 128, c.line));
    CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target " + c.target +
                                  " -o /dev/null");
    EXPECT_EQ(r.status, c.message.empty() ? 0 : 1) << r.err;
    if (!c.message.empty()) {
      EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    }
    std::filesystem::remove(file);
  }
}

// An mma loop without pipeline(S) is bounded at 4 stages (attention's backward took 18, and a
// GEMM loop with an atomic store 33, past the shared memory, where the error had to name the loop
// and the bound to write): it compiles, its loop scheduled 4 stages deep.
TEST(TensorCore, AnMmaLoopWithoutPipelineIsBoundedAtFourStages) {
  std::string source = replace_once(read_file(source_dir() / "samples" / "attention_backward.tile"),
                                    " pipeline(STAGES) carry (dk, dv)", " carry (dk, dv)");
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tilec_unbounded_" + std::to_string(::getpid()) + ".tile");
  write_file(file, source);
  CommandResult r = run_command(tilec_binary() + " compile " + file.string() + " --target sm_90a -o /dev/null");
  EXPECT_EQ(r.status, 0) << r.err;
  CommandResult ir = run_command(tilec_binary() + " compile " + file.string() +
                                 " --target sm_90a --emit ir --stop-after generate-schedule");
  EXPECT_NE(ir.out.find("stages = 4"), std::string::npos) << ir.out.substr(0, 2000);
  std::filesystem::remove(file);
}

// K-major tiles whose rows are 64 or 32 bytes of K (bf16 BK = 32 or 16, fp8 BK = 64, tf32
// BK = 16) take the 64- or 32-byte swizzle: their TMA maps say so, their matrix descriptors pass
// the swizzle (the descriptor values are checked against the reference tables in
// layout_tables_test), and TMA fills them one box per tile. They were refused ("a multiple of 64:
// one 128-byte swizzle row"). MN-major tiles (gemm's B) keep the 128-byte swizzle.
TEST(TensorCore, ShortKTilesTakeTheSixtyFourAndThirtyTwoByteSwizzles) {
  struct Case {
    const char* defines;
    int swizzle;
    const char* a_box;  // the A map's box rows x columns
  };
  for (const char* target : {"sm_90a", "sm_100a"})
    for (const Case& c : {Case{" -D BK=32", 64, "128, 32, CU_TENSOR_MAP_SWIZZLE_64B"},
                          Case{" -D BK=16", 32, "128, 16, CU_TENSOR_MAP_SWIZZLE_32B"}}) {
      SCOPED_TRACE(std::string(target) + c.defines);
      CommandResult r = compile_gemm(target, c.defines);
      ASSERT_EQ(r.status, 0) << r.err;
      const std::string w = std::to_string(c.swizzle);
      EXPECT_NE(r.out.find("A of mma from A (K-major, 1 panel(s) of " + std::to_string(c.swizzle / 2) + " columns, " + w +
                           "B swizzle)"), std::string::npos);
      EXPECT_NE(r.out.find("B of mma from B (MN-major, 4 panel(s) of 64 columns, 128B swizzle)"), std::string::npos);
      EXPECT_NE(r.out.find(std::string("A_tma.pitch, ") + c.a_box + "); status"), std::string::npos);
      EXPECT_NE(r.out.find(", 16, " + std::to_string(8 * c.swizzle) + ", " + w + ")"), std::string::npos)
          << "A's descriptors: leading 16, stride 8 rows of the swizzle, the swizzle";
    }
}

// MMAs 32 or 16 columns wide (issue 18; N was a multiple of 64): gemm's MN-major B tile of 64 or
// 32 bytes per K row is one panel in the 64- or 32-byte swizzle (its TMA box and its descriptors
// say so), and on sm_100a each of the two compute warpgroups reads its 16 or 8 columns of the
// accumulator with tcgen05.ld 32x32b.x16 or .x8 (layout_tables_test checks the values against the
// reference tables; EmulateRuntime runs them).
TEST(TensorCore, MmasThirtyTwoAndSixteenColumnsWideReadBInOneNarrowPanel) {
  for (const char* target : {"sm_90a", "sm_100a"})
    for (int n : {32, 16}) {
      SCOPED_TRACE(std::string(target) + " BN=" + std::to_string(n));
      CommandResult r = compile_gemm(target, " -D BN=" + std::to_string(n));
      ASSERT_EQ(r.status, 0) << r.err;
      const std::string w = std::to_string(2 * n);
      EXPECT_NE(r.out.find("B of mma from B (MN-major, 1 panel(s) of " + std::to_string(n) + " columns, " + w + "B swizzle)"),
                std::string::npos);
      EXPECT_NE(r.out.find("B_tma.pitch, 64, " + std::to_string(n) + ", CU_TENSOR_MAP_SWIZZLE_" + w + "B); status"),
                std::string::npos);
      EXPECT_NE(r.out.find("tilec_matrix_descriptor(b + 0, " + std::to_string(64 * 2 * n) + ", " + std::to_string(8 * 2 * n) +
                           ", " + w + ")"),
                std::string::npos)
          << "B's descriptors: leading = the panel (64 K rows), stride 8 rows of the swizzle, the swizzle";
      if (std::string(target) == "sm_100a") {
        const std::string load = "tilec_tmem_load_" + std::to_string(n / 2);
        EXPECT_NE(r.out.find("void " + load + "(uint32_t address, uint32_t (&values)[" + std::to_string(n / 2) + "]"),
                  std::string::npos);
        EXPECT_NE(r.out.find(load + "(tmem_base + "), std::string::npos);
      }
    }
}

// permute(w, 1, 0) of a loaded mma operand is transpose(w): promote-mma-operands folds it into a
// transposed load the same way, so samples/linear.tile written with permute compiles to the same
// .cu (its source name aside) on both targets.
TEST(TensorCore, APermuteOfAnMmaOperandIsItsTranspose) {
  std::ifstream in(source_dir() / "samples" / "linear.tile");
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string transposed = "transpose(load W[n, k] : <BN, BK>)";
  const size_t at = source.find(transposed, source.find("mma("));
  ASSERT_NE(at, std::string::npos);
  std::string permuted = source;
  permuted.replace(at, transposed.size(), "permute(load W[n, k] : <BN, BK>, 1, 0)");
  char dir_template[] = "/tmp/tilec-permute-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string file = std::string(dir_template) + "/linear.tile";
  std::ofstream(file) << permuted;
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult with_transpose = compile_sample("linear", target);
    CommandResult with_permute = tilec_at_root("compile " + file + " --target " + std::string(target));
    ASSERT_EQ(with_permute.status, 0) << with_permute.err;
    std::string renamed = with_permute.out;
    for (size_t p = renamed.find(file); p != std::string::npos; p = renamed.find(file, p))
      renamed.replace(p, file.size(), "samples/linear.tile");
    EXPECT_EQ(renamed, with_transpose.out);
  }
  std::filesystem::remove_all(dir_template);
}

// mma operands loaded at element coordinates (issue 18): samples/conv1d.tile reads each tap's
// rows of X shifted by tap - 1 (`load X at`), a TMA box at the element coordinates themselves,
// not times the box; W's box is at tile coordinates. The sample sweep emulates it.
TEST(TensorCore, Conv1dLoadsItsShiftedRowsAsTmaBoxesAtElementCoordinates) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = compile_sample("conv1d", target);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(&X_map, static_cast<int32_t>\(\w+\), static_cast<int32_t>\(\w+\), )")));
    EXPECT_NE(r.out.find("&W_map, static_cast<int32_t>(n * 128), static_cast<int32_t>(k * 64), static_cast<int32_t>(tap), "),
              std::string::npos);
  }
}

// Batched tensors (issue 18): bmm's rank-3 operands and output are 3-D TMA boxes of one matrix
// (coordinates column, row, batch) over 3-D maps of BATCH matrices; 2-D kernels keep the 2-D
// forms and leave the 3-D helpers out. A rank-4 tensor is a batch of G·BATCH matrices: its two
// leading coordinates fold into one (an inner one outside its extent gives -1, zero-filled).
TEST(TensorCore, BatchedTensorsUseThreeDimensionalBoxes) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = compile_sample("bmm", target);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(occurrences(r.out, "tilec_tma_load_3d(pipe_a_buffer"), 1u) << "A: one 64-column panel";
    EXPECT_EQ(occurrences(r.out, "tilec_tma_load_3d(pipe_w_buffer"), 4u) << "B: four panels of BN = 256";
    EXPECT_NE(r.out.find("static_cast<int32_t>(k * 64), static_cast<int32_t>(m * 128), static_cast<int32_t>(b), "),
              std::string::npos) << "A's box at (k·BK, m·BM, b)";
    EXPECT_NE(r.out.find("tilec_tma_store_3d(&C_store_map"), std::string::npos);
    EXPECT_EQ(occurrences(r.out, "tilec_tensor_map(&"), 3u);
    EXPECT_NE(r.out.find("A_tma.data, 3, A_tma.empty() ? 1 : BATCH, A_tma.empty() ? 1 : M, A_tma.map_columns()"),
              std::string::npos);
    EXPECT_NE(r.out.find("A_tma.prepare(A, BATCH * M, K, 2, false, stream)"), std::string::npos) << "copied as B·M rows";
    CommandResult gemm = compile_gemm(target, "");
    ASSERT_EQ(gemm.status, 0) << gemm.err;
    EXPECT_EQ(gemm.out.find("tilec_tma_load_3d"), std::string::npos);
  }
  std::string source = replace_once(read_file(source_dir() / "samples" / "bmm.tile"), "A: tensor<BATCH, M, K, bf16>",
                                    "A: tensor<G, BATCH, M, K, bf16>");
  source = replace_once(source, "a = load A[b, m, k]", "a = load A[0, b, m, k]");
  std::filesystem::path rank4 = std::filesystem::temp_directory_path() / ("tilec_rank4_" + std::to_string(::getpid()) + ".tile");
  write_file(rank4, source);
  CommandResult folded = run_command(tilec_binary() + " compile " + rank4.string());
  ASSERT_EQ(folded.status, 0) << folded.err;
  EXPECT_NE(folded.out.find("static_cast<int32_t>(m * 128), static_cast<int32_t>((0 <= b && b < BATCH ? 0 * BATCH + b "
                            ": -1)), "),
            std::string::npos)
      << "A's box at (k·BK, m·BM, 0·BATCH + b)";
  EXPECT_NE(folded.out.find("A_tma.prepare(A, G * BATCH * M, K, 2, false, stream)"), std::string::npos);
  EXPECT_NE(folded.out.find("A_tma.data, 3, A_tma.empty() ? 1 : G * BATCH, A_tma.empty() ? 1 : M,"), std::string::npos);
  std::filesystem::remove(rank4);
}

// FP8 (issue 18): e4m3 inputs take the 8-bit instructions, K = 32 per step, 128-column panels
// of one byte each, UINT8 tensor maps; a B given as [K, N] (MN-major) is refused with the form to
// write, since 8-bit MMAs read B K-major.
TEST(TensorCore, Fp8LinearUsesTheEightBitInstructionsAndRefusesAnMnMajorB) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = compile_sample("fp8_linear", target);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(occurrences(r.out, "CU_TENSOR_MAP_DATA_TYPE_UINT8, "), 2u) << "X and W";
    if (std::string(target) == "sm_90a") {
      EXPECT_NE(r.out.find("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"), std::string::npos);
      EXPECT_EQ(occurrences(r.out, "tilec_wgmma_m64n256k32_e4m3_bk(acc"), 4u) << "BK = 128: four steps of 32";
    } else {
      EXPECT_NE(r.out.find("tcgen05.mma.cta_group::1.kind::f8f6f4"), std::string::npos);
      EXPECT_EQ(occurrences(r.out, "tilec_tcgen05_mma_f8f6f4(tmem_base"), 4u) << "BK = 128: four steps of 32";
    }
  }
  std::string source = replace_once(read_file(source_dir() / "samples" / "fp8_linear.tile"), "W: tensor<N, K, f8e4m3>",
                                    "W: tensor<K, N, f8e4m3>");
  source = replace_once(source, "transpose(load W[n, k] : <BN, BK>)", "load W[k, n] : <BK, BN>");
  std::filesystem::path mn_major = std::filesystem::temp_directory_path() / ("tilec_fp8_mn_major_" + std::to_string(::getpid()) + ".tile");
  write_file(mn_major, source);
  CommandResult refused = run_command(tilec_binary() + " compile " + mn_major.string() + " -o /dev/null");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("8-bit MMAs read B K-major. Give the weight as [N, K] and write transpose(load W[n, k] : <BN, "
                             "BK>) as mma's b"),
            std::string::npos)
      << refused.err;
  std::filesystem::remove(mn_major);
}

// tf32 (issue 18): f32 inputs take WGMMA's m64nNk8 .tf32 form and tcgen05's kind::tf32 (formats
// 2 in the instruction descriptor), K = 8 per step over 32-column (128-byte) panels, FLOAT32
// tensor maps; like 8-bit MMAs they read both operands K-major and A only from shared memory.
TEST(TensorCore, Tf32LinearUsesTheTf32InstructionsAndRefusesAnMnMajorB) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = compile_sample("tf32_linear", target);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(occurrences(r.out, "CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "), 3u) << "X, W and Y";
    if (std::string(target) == "sm_90a") {
      EXPECT_NE(r.out.find("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"), std::string::npos);
      EXPECT_EQ(r.out.find(", p, 1, 1, "), std::string::npos) << "tf32 takes no transpose immediates";
      EXPECT_EQ(occurrences(r.out, "tilec_wgmma_m64n256k8_tf32_bk(acc"), 4u) << "BK = 32: four steps of 8";
    } else {
      EXPECT_NE(r.out.find("tcgen05.mma.cta_group::1.kind::tf32"), std::string::npos);
      EXPECT_EQ(occurrences(r.out, "tilec_tcgen05_mma_tf32(tmem_base"), 4u) << "BK = 32: four steps of 8";
      // D f32 (bit 4), A and B tf32 (2 at bits 7 and 10), both K-major, N / 8 = 32, M / 16 = 8.
      EXPECT_NE(r.out.find("0x08400910u"), std::string::npos);
    }
  }
  std::string source = replace_once(read_file(source_dir() / "samples" / "tf32_linear.tile"), "W: tensor<N, K, f32>",
                                    "W: tensor<K, N, f32>");
  source = replace_once(source, "transpose(load W[n, k] : <BN, BK>)", "load W[k, n] : <BK, BN>");
  std::filesystem::path mn_major = std::filesystem::temp_directory_path() / ("tilec_tf32_mn_major_" + std::to_string(::getpid()) + ".tile");
  write_file(mn_major, source);
  CommandResult refused = run_command(tilec_binary() + " compile " + mn_major.string() + " -o /dev/null");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("an mma of f32 whose B is [K, N] in memory: tf32 MMAs read B K-major"), std::string::npos)
      << refused.err;
  std::filesystem::remove(mn_major);
}

// A column <BQ, 1> stored from the epilogue (attention's log-sum-exp): one of the threads holding
// each row writes it, the quad's first lane on sm_90a (a quad's four lanes hold the same two
// rows), the first compute warpgroup on sm_100a (both hold every row).
TEST(TensorCore, AColumnIsStoredByOneThreadPerRow) {
  const std::string source = "tests/emulate/tensor_core/attention_lse.tile";
  CommandResult hopper = tilec_at_root("compile " + source + " --target sm_90a");
  ASSERT_EQ(hopper.status, 0) << hopper.err;
  EXPECT_NE(hopper.out.find("auto* const corner = LSE + (origin0 * H + origin1);"), std::string::npos);
  EXPECT_NE(hopper.out.find("if (lane % 4 == 0 && index0 < S && index1 < H) corner[row_step * H + column_step] = "),
            std::string::npos);
  CommandResult blackwell = tilec_at_root("compile " + source + " --target sm_100a");
  ASSERT_EQ(blackwell.status, 0) << blackwell.err;
  EXPECT_NE(blackwell.out.find("if (compute_warpgroup == 0 && index0 < S && index1 < H) corner[row_step * H + "
                               "column_step] = "),
            std::string::npos);
}

// An 8-bit A from registers (issue 18): fp8_attention's e4m3 P. On sm_90a WGMMA reads it from
// registers (m64nNk32 with four registers of A, no transpose immediates), the fragment built from
// the accumulator layout by moving bytes within each quad of lanes (tilec_wgmma_a_bytes); it was
// written to shared memory behind a wgmma_wait<0> and a barrier, and fp8 attention ran slower
// than bf16 on an H200. sm_100a stages it as it stages a 16-bit P (tcgen05.mma reads A from
// shared memory).
TEST(TensorCore, AnEightBitRegisterAIsFedAsRegistersOnSm90aAndStagedOnSm100a) {
  CommandResult hopper = compile_sample("fp8_attention", "sm_90a");
  ASSERT_EQ(hopper.status, 0) << hopper.err;
  EXPECT_NE(hopper.out.find("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%0,"), std::string::npos);
  EXPECT_NE(hopper.out.find("{%32, %33, %34, %35}, %36, p, 1, 1;"), std::string::npos)
      << "A in four registers; 8-bit forms take no transpose immediates";
  EXPECT_NE(hopper.out.find("_words[i] = tilec_wgmma_a_bytes(tilec_pack_bytes("), std::string::npos);
  EXPECT_EQ(occurrences(hopper.out, "tilec_wgmma_m64n64k32_e4m3_register_a_bk(t"), 2u) << "BKV = 64: two steps of 32";
  EXPECT_EQ(hopper.out.find("staged A"), std::string::npos);
  EXPECT_EQ(hopper.out.find("(from registers): 8192 bytes"), std::string::npos) << "no staging buffer";
  CommandResult blackwell = compile_sample("fp8_attention", "sm_100a");
  ASSERT_EQ(blackwell.status, 0) << blackwell.err;
  EXPECT_NE(blackwell.out.find("//   A of the mma at line 28 (from registers): 8192 bytes at "), std::string::npos)
      << "128 x 64 e4m3";
  EXPECT_NE(blackwell.out.find("*reinterpret_cast<__nv_fp8_e4m3*>(staging + column / 64 * 8192 + "),
            std::string::npos);
}

// int8 (issue 18: "integer mma (i8 into i32) is not supported"): i8 inputs take WGMMA's
// m64nNk32 .s32.s8.s8 form with int32 registers and no scale or transpose immediates, and
// tcgen05's kind::i8 (D format 2, A/B formats 1 for s8, 0 for u8), K = 32 per step, UINT8 maps;
// an integer WGMMA N that is not a multiple of 16 is refused (ptxas refuses m64n40k32 .s8).
TEST(TensorCore, Int8LinearUsesTheIntegerInstructions) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = compile_sample("int8_linear", target);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(occurrences(r.out, "CU_TENSOR_MAP_DATA_TYPE_UINT8, "), 2u) << "X and W";
    if (std::string(target) == "sm_90a") {
      EXPECT_NE(r.out.find("wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {%0,"), std::string::npos);
      EXPECT_NE(r.out.find("tilec_wgmma_m64n256k32_s8_bk(int32_t (&d)[128]"), std::string::npos);
      EXPECT_NE(r.out.find("%128, %129, p;"), std::string::npos) << "integers take no scale or transpose immediates";
      EXPECT_NE(r.out.find("\"+r\"(d[127])"), std::string::npos);
      EXPECT_EQ(occurrences(r.out, "tilec_wgmma_m64n256k32_s8_bk(acc"), 4u) << "BK = 128: four steps of 32";
    } else {
      EXPECT_NE(r.out.find("tcgen05.mma.cta_group::1.kind::i8"), std::string::npos);
      // N = 256 (32 << 17), M = 128 (8 << 24), B K-major, formats s8 (1 << 7, 1 << 10), D S32 (2 << 4).
      EXPECT_EQ(occurrences(r.out, "0x084004a0u"), 4u) << "BK = 128: four steps of 32";
      EXPECT_NE(r.out.find("static_cast<int32_t>(values[i])"), std::string::npos) << "TMEM cells read as s32";
    }
  }
  std::string source = read_file(source_dir() / "tests" / "emulate" / "tensor_core" / "int8_mixed.tile");
  std::filesystem::path narrow =
      std::filesystem::temp_directory_path() / ("tilec_int8_n40_" + std::to_string(::getpid()) + ".tile");
  write_file(narrow, replace_once(source, "const BN = 48;", "const BN = 40;"));
  CommandResult refused = run_command(tilec_binary() + " compile " + narrow.string() + " --target sm_90a -o /dev/null");
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("an mma 40 columns wide (N: a multiple of 16 up to 256)"), std::string::npos) << refused.err;
  EXPECT_EQ(run_command(tilec_binary() + " compile " + narrow.string() + " --target sm_100a -o /dev/null").status, 0)
      << "tcgen05's M = 64 steps N by 8";
  std::filesystem::remove(narrow);
}

// The launcher's encoding of gemm's output map: f32, over C or its padded copy, boxes of `rows` x 32.
std::string store_map_encoding(long rows) {
  return "tilec_tensor_map(&C_store_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, C_tma.data, 2, 1, C_tma.map_rows(), "
         "C_tma.map_columns(), C_tma.pitch, " + std::to_string(rows) + ", 32)";
}

CommandResult compile_attention(const std::string& target, const std::string& defines = "") {
  return compile_sample("attention", target, defines);
}

// The text between the first occurrences of `from` and of `to` after it ("" when either is missing).
std::string between(const std::string& text, const std::string& from, const std::string& to) {
  size_t start = text.find(from);
  if (start == std::string::npos) return "";
  size_t end = text.find(to, start);
  return end == std::string::npos ? "" : text.substr(start, end - start);
}

// attention (sm_90a): its register pipes (s and the row max cross the loop's stages inside the
// compute agent) need no mbarrier; P·V is a WGMMA with A from registers, the pairs packed before
// the fence, K walking them four registers per 16 columns; each row reduction combines the four
// lanes of a quad.
TEST(TensorCore, AttentionKeepsItsTilesInRegistersOnSm90a) {
  CommandResult r = compile_attention("sm_90a");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(barrier_counts(r.out), (std::map<std::string, int>{{"pipe_kt_full", 1}, {"pipe_kt_empty", 2}, {"pipe_v_full", 1},
                                                               {"pipe_v_empty", 2}, {"pipe_q_full", 1}, {"pipe_q_empty", 2}}));
  EXPECT_EQ(occurrences(r.out, "tilec_mbarrier_wait(pipe_s_"), 0u);
  EXPECT_EQ(occurrences(r.out, "tilec_mbarrier_arrive(pipe_s_"), 0u);
  std::regex step(R"(tilec_wgmma_m64n64k16_bf16_register_a\((\w+), (\w+)\[(\d+)\], \w+\[(\d+)\], \w+\[(\d+)\], \w+\[(\d+)\], )"
                  R"(tilec_matrix_descriptor\(v \+ (\d+), 8192, 1024\)\);)");
  long steps = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), step); it != std::sregex_iterator(); ++it, ++steps) {
    for (int pair = 0; pair < 4; ++pair) EXPECT_EQ(std::stol((*it)[3 + pair]), 4 * steps + pair);
    EXPECT_EQ(std::stol((*it)[7]), steps * 16 * 128) << "16 rows of V per step";
  }
  EXPECT_EQ(steps, 4) << "K = 64: four steps of 16";
  std::string before_mma = between(r.out, "o_2 = mma", "_register_a(");
  ASSERT_NE(before_mma, "");
  EXPECT_LT(before_mma.find("tilec_pack_pair("), before_mma.find("tilec_wgmma_fence();"));
  EXPECT_EQ(occurrences(r.out, "__shfl_xor_sync(0xffffffffu, "), 8u)
      << "two reductions, two rows per thread, masks 1 and 2";
  // The summary comment (lines "//   ...") stays in the header, before the kernel.
  size_t kernel = r.out.find("__global__");
  ASSERT_NE(kernel, std::string::npos);
  EXPECT_EQ(r.out.find("\n//   ", kernel), std::string::npos);
}

// attention with pipeline(3): the running row max is written before the key loop and in it, and
// read in it before the write (the next step's max), so its register pipe is stored: registers
// of its own, each write copies into them and each read copies out, so the stage that reads the
// old max after the write still sees it. It used to be refused (and materialize-schedule had
// given that stage the old max where the new one was meant; run --check caught it).
TEST(TensorCore, AttentionWithThreeStagesCarriesTheRowMaxInARegisterPipeOfItsOwn) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = compile_attention(target, " -D STAGES=3");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("pipe_row_max_buffer: pipe<tile<128x1xf32, reg>, 4> in registers (written and read by the "
                         "compute agent in program order; a loop carries it)"),
              std::string::npos);
    EXPECT_NE(r.out.find("float pipe_row_max_buffer["), std::string::npos);
    EXPECT_EQ(occurrences(r.out, "// stage_write pipe_row_max_buffer: a copy of "), 2u) << "before the loop and in it";
    EXPECT_EQ(occurrences(r.out, "= stage_read pipe_row_max_buffer: a copy, which later writes leave alone"), 1u)
        << "in the loop";
    // The drain after the loop reads the last row max, which nothing reads: no copy (nvcc warned
    // that it was set but never used).
    EXPECT_EQ(occurrences(r.out, "= stage_read pipe_row_max_buffer: not read, so not copied"), 1u);
    EXPECT_NE(r.out.find("stage_read pipe_new_max_buffer: the registers of new_max"), std::string::npos);
  }
  CommandResult run = tilec_at_root("run samples/attention.tile -D STAGES=3 --check --dims S=200,T=200,HD=128");
  EXPECT_EQ(run.status, 0) << run.out << run.err;
}

// attention (sm_100a): P goes to shared memory (then the async-proxy fence and a barrier of the
// compute threads before the one issuing thread reads it); S and P·V have TMEM columns of their
// own; every commit to the accumulator barrier is waited for; row reductions exchange partial
// results between the two warpgroups.
TEST(TensorCore, AttentionStagesPThroughSharedMemoryOnSm100a) {
  CommandResult r = compile_attention("sm_100a");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string staging = between(r.out, "o_2 = mma", "tilec_tcgen05_commit(accumulator_barrier)");
  ASSERT_NE(staging, "");
  size_t fence = staging.find("tilec_fence_proxy_async();"), sync = staging.find("tilec_named_barrier_sync(");
  size_t issue = staging.find("tilec_tcgen05_mma(tmem_base + 64");
  EXPECT_TRUE(fence < sync && sync < issue) << staging;
  EXPECT_NE(r.out.find("tilec_tcgen05_mma(tmem_base + 0, "), std::string::npos);
  EXPECT_NE(r.out.find("tilec_tmem_alloc<128>"), std::string::npos);
  EXPECT_EQ(occurrences(r.out, "tilec_tcgen05_commit(accumulator_barrier)"), 2u);
  EXPECT_EQ(occurrences(r.out, "tilec_mbarrier_wait(accumulator_barrier, accumulator_parity)"), 2u);
  EXPECT_EQ(occurrences(r.out, "exchange[compute_warpgroup * 128 + warp * 32 + lane] = "), 2u);

  // 64 query rows: sm_90a holds them in one warpgroup; sm_100a in TMEM layout F (M = 64 tcgen05.mma,
  // instruction descriptor M field 4), where lanes 0..15 of each warp own the rows: only they
  // stage P and store O. 96 rows are neither.
  EXPECT_EQ(compile_attention("sm_90a", " -D BQ=64").status, 0);
  CommandResult narrow = compile_attention("sm_100a", " -D BQ=64");
  ASSERT_EQ(narrow.status, 0) << narrow.err;
  EXPECT_NE(narrow.out.find("0x04110490u"), std::string::npos) << "M = 64, N = 64, bf16 into f32";
  EXPECT_NE(narrow.out.find("if (lane < 16) {"), std::string::npos) << "P staged by the owners only";
  EXPECT_NE(narrow.out.find("if (lane < 16 && "), std::string::npos) << "O stored by the owners only";
  CommandResult odd = compile_attention("sm_100a", " -D BQ=96");
  EXPECT_EQ(odd.status, 1);
  EXPECT_NE(
      odd.err.find("samples/attention.tile:24:13: error: the tensor-core CUDA backend (sm_100a) does not support a "
                   "register tile tile<96, 1, f32>: 96 rows (one per TMEM lane: 128; or 64, TMEM layout F)"),
      std::string::npos)
      << odd.err;
}

// The epilogue goes through shared memory and TMA when the staging fits: each compute warpgroup
// stores boxes of 128-byte rows (32 f32 columns) that together cover its part of the tile, with a
// tensor map the launcher encodes for exactly those boxes; the named barriers it syncs are its
// own (not the IR's, not the emitter's other one); the last stores are waited for. When the
// stages leave no room, the stores are direct.
TEST(TensorCore, EpilogueStoresThroughTmaWhereTheStagingFits) {
  struct Case {
    const char* target;
    long box_rows, chunks, column_step;
  };
  for (const Case& c : {Case{"sm_90a", 64, 8, 32}, Case{"sm_100a", 128, 4, 32}}) {
    SCOPED_TRACE(c.target);
    CommandResult r = compile_gemm(c.target);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(store_map_encoding(c.box_rows)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("for (int chunk = 0; chunk < " + std::to_string(c.chunks) + "; ++chunk) {"), std::string::npos);
    // chunks x 32 columns = the columns a warpgroup holds (all 256 on sm_90a, half on sm_100a)
    EXPECT_EQ(c.chunks * c.column_step, std::string(c.target) == "sm_90a" ? 256 : 128);
    EXPECT_EQ(occurrences(r.out, "tilec_tma_store_2d(&C_store_map, staging + box, "), 1u);
    EXPECT_NE(r.out.find("const __grid_constant__ CUtensorMap C_store_map"), std::string::npos);
    // The IR's barrier 1 (the accumulator's mutex, compute agent only) is gone
    // (prune-named-barriers): private 1, ours 2..3.
    EXPECT_EQ(occurrences(r.out, "tilec_named_barrier_sync(2 + compute_warpgroup, 128);"), 2u)
        << "private 1, ours 2..3";
    EXPECT_NE(r.out.find("tilec_bulk_wait_all();"), std::string::npos);
    EXPECT_EQ(occurrences(r.out, "auto* const corner = C + "), 0u);
  }
  CommandResult full = compile_gemm("sm_90a", " -D BN=192 -D STAGES=5");
  ASSERT_EQ(full.status, 0) << full.err;
  EXPECT_EQ(occurrences(full.out, "tilec_tma_store_2d("), 1u) << "only the prelude's definition";
  EXPECT_EQ(occurrences(full.out, "auto* const corner = C + "), 1u);
}

// `+=` goes through TMA's reducing store like `=` through its plain one (splitk_gemm), but not into
// a tensor the kernel also reads (the read must see the writes, which TMA lands asynchronously);
// a TMA store after another one into the same tensor first waits for that one's writes (bulk
// operations are not ordered with one another). tests/emulate/tensor_core/stores_then_reads.tile;
// its numbers: EmulateRuntime.StoresThenReadsOfOneTensorSeeEachOther.
TEST(TensorCore, AddingStoresGoThroughTmaWhereNothingReadsTheirWrites) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult splitk = compile_sample("splitk_gemm", target);
    ASSERT_EQ(splitk.status, 0) << splitk.err;
    EXPECT_EQ(occurrences(splitk.out, "tilec_tma_reduce_add_2d(&C_store_map, staging + box, "), 1u);
    EXPECT_EQ(occurrences(splitk.out, "atomicAdd("), 0u);
    CommandResult both = tilec_at_root(std::string("compile tests/emulate/tensor_core/stores_then_reads.tile --target ") + target);
    ASSERT_EQ(both.status, 0) << both.err;
    EXPECT_NE(both.out.find("store at line 20: each thread writes its elements from registers: the kernel also reads "
                            "the tensor (line 21)"),
              std::string::npos) << both.out.substr(0, 6000);
    EXPECT_EQ(occurrences(both.out, "tilec_tma_store_2d(&E_store_map, staging + box, "), 1u);
    EXPECT_EQ(occurrences(both.out, "tilec_tma_reduce_add_2d(&E_store_map, staging + box, "), 1u);
    // The add's first box waits for all of this thread's bulk writes; the plain store's, only reads.
    // So does the store of the same box at every k-step of store_every_step (the F store).
    EXPECT_EQ(occurrences(both.out, "if (chunk == 0) tilec_bulk_wait_all(); else tilec_bulk_wait_read<"), 2u);
    const size_t plain = both.out.find("tilec_tma_store_2d(&E_store_map"), wait_all = both.out.find("if (chunk == 0) tilec_bulk_wait_all();"),
                 add = both.out.find("tilec_tma_reduce_add_2d(&E_store_map");
    EXPECT_LT(plain, wait_all);
    EXPECT_LT(wait_all, add);
    EXPECT_NE(both.out.find("// first, the earlier store's writes (line 31) are done"),
              std::string::npos);
    EXPECT_NE(both.out.find("// first, the previous iteration's writes of this box (loop at line 38) are done"),
              std::string::npos);
    const size_t every_step = both.out.find("tilec_tma_store_2d(&F_store_map"),
                 last_wait = both.out.rfind("if (chunk == 0) tilec_bulk_wait_all();");
    EXPECT_LT(last_wait, every_step);
  }
}

// sm_100a keeps an accumulator in TMEM while mmas and stores alone read it in its loop: a row
// reduction in the epilogue (row_max) reads the loop's result, which is read from TMEM into
// registers once the loop is done; one inside the loop (running_max) keeps the whole chain in
// registers, every k-step's mma waited for and read back. The summary says which, and why (a
// helper found the epilogue case only by its spills: the chain was in registers then too).
TEST(TensorCore, TheSummarySaysWhereAnAccumulatorIsHeldAndWhy) {
  const std::string source = R"(
const BM = 128; const BN = 128; const BK = 64;
kernel row_max(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>, R: tensor<M, 1, f32>)
    grid persistent(cdiv(M, BM), cdiv(N, BN)) as (m, n) {
  acc = zeros<BM, BN, f32>();
  for k in 0 .. cdiv(K, BK) pipeline(3) carry (acc) {
    acc = mma(load A[m, k] : <BM, BK>, load B[k, n] : <BK, BN>, acc);
  }
  store C[m, n] = acc;
  store R[m, 0] max= max(acc, axis = 1);
}
kernel running_max(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, R: tensor<M, 1, f32>)
    grid persistent(cdiv(M, BM), cdiv(N, BN)) as (m, n) {
  acc = zeros<BM, BN, f32>();
  for k in 0 .. cdiv(K, BK) pipeline(3) carry (acc) {
    acc = mma(load A[m, k] : <BM, BK>, load B[k, n] : <BK, BN>, acc);
    store R[m, 0] max= max(acc, axis = 1);
  }
}
kernel computed_a(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>)
    grid persistent(cdiv(M, BM), cdiv(N, BN)) as (m, n) {
  acc = zeros<BM, BN, f32>();
  for k in 0 .. cdiv(K, BK) pipeline(3) carry (acc) {
    acc = mma(load A[m, k] : <BM, BK> * 2.0, load B[k, n] : <BK, BN>, acc);
  }
  store C[m, n] = acc;
}
)";
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tilec_row_max_" + std::to_string(::getpid()) + ".tile");
  write_file(path, source);
  CommandResult tc = run_command(tilec_binary() + " compile " + path.string() + " --target sm_100a");
  ASSERT_EQ(tc.status, 0) << tc.err;
  EXPECT_NE(tc.out.find("in registers, 64 per thread; read from the TMEM accumulator acc_1 once its loop is done"),
            std::string::npos)
      << tc.out.substr(0, 4000);
  EXPECT_NE(tc.out.find("// acc_2: the accumulator acc_1, read from TMEM once the loop is done"), std::string::npos);
  EXPECT_NE(tc.out.find("in registers, 64 per thread; not in TMEM, since line 17 (reduce_max) reads it (TMEM keeps "
                        "accumulators only mmas and stores read)"),
            std::string::npos)
      << tc.out.substr(0, 4000);
  // An A computed in registers kept the chain out of TMEM too, and the summary said nothing (a
  // helper found it through the epilogue-like wait and read-back of every k-step).
  EXPECT_NE(tc.out.find("in registers, 64 per thread; not in TMEM, since the mma of line 24 takes an A computed in "
                        "registers (TMEM keeps accumulators of mmas whose A is a loaded tile)"),
            std::string::npos)
      << tc.out;
  std::filesystem::remove(path);
}

// A value the stored expression reads several times is one local, declared before the store:
// the tanh GELU reads h = acc + b five times, and spelling it out at each read made the
// expression five loads of the bias deep (ptxas spilled the 128x256 tile's epilogue on sm_90a).
// The numbers: ABiasVectorBroadcastsInATensorCoreEpilogue (tests/emulate/emulate_kernels_test.cpp).
TEST(TensorCore, AValueTheStoreReadsSeveralTimesIsComputedOnce) {
  const std::string source = R"(
const BM = 128; const BN = 256; const BK = 64;
kernel gelu(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, Bias: tensor<N, f32>, C: tensor<M, N, bf16>)
    grid persistent(cdiv(M, BM), cdiv(N, BN)) as (m, n) {
  acc = zeros<BM, BN, f32>();
  for k in 0 .. cdiv(K, BK) pipeline(4) carry (acc) {
    acc = mma(load A[m, k] : <BM, BK>, load B[k, n] : <BK, BN>, acc);
  }
  x = acc + load Bias[n] : <BN>;
  store C[m, n] = cast(0.5 * x * (1.0 + tanh(0.79788 * (x + 0.044715 * x * x * x))), bf16);
}
)";
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("tilec_gelu_" + std::to_string(::getpid()) + ".tile");
  write_file(path, source);
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec_binary() + " compile " + path.string() + " --target " + target);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string store = r.out.substr(r.out.find("// store C"));
    EXPECT_EQ(occurrences(store, "const auto x_element = add_f32("), 1u) << store;
    EXPECT_EQ(occurrences(store, "Bias["), 1u) << "the bias is read once per element\n" << store;
    EXPECT_EQ(occurrences(store, "x_element"), 6u) << "declared, then read five times\n" << store;
  }
  std::filesystem::remove(path);
}

// Hostile hand-written IR: a sample's final IR with any one line removed, for both targets,
// either compiles or is rejected with a located error (exit 1); never an internal error or a crash.
void expect_every_deletion_compiled_or_rejected(const std::string& sample) {
  std::string text = read_file(source_dir() / "samples" / "expected" / (sample + ".tir"));
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  auto path = std::filesystem::temp_directory_path() / ("tilec_tc_deletion_" + std::to_string(::getpid()) + ".tir");
  size_t compiled = 0, rejected = 0;
  for (size_t removed = 0; removed < lines.size(); ++removed) {
    std::string mutated;
    for (size_t i = 0; i < lines.size(); ++i)
      if (i != removed) mutated += lines[i] + "\n";
    write_file(path, mutated);
    for (const char* target : {"sm_90a", "sm_100a"}) {
#ifdef TILEC_SANITIZE
      // Under the sanitizers (a sanitized tilec is four times slower) each deletion is compiled
      // for one target, the two in turn; the first stage compiles each for both.
      if ((removed % 2 == 0) != (std::string_view(target) == "sm_90a")) continue;
#endif
      ++compiled;
      CommandResult r = run_command(tilec_binary() + " compile " + path.string() + " --target " + target + " -o /dev/null");
      EXPECT_TRUE(r.status == 0 || r.status == 1) << "line " << removed + 1 << " removed, " << target << ": exit " << r.status
                                                  << "\n" << r.err;
      if (r.status == 1) {
        ++rejected;
        EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
      }
    }
  }
  std::filesystem::remove(path);
  EXPECT_GT(2 * rejected, compiled) << "most deletions break the IR and must be reported";
}

// item() in a tensor-core kernel reads loaded elements (samples/moe_grouped_gemm.tile,
// tests/emulate/tensor_core/device_scalars.tile); a whole-tile sum of the accumulator would be a
// reduction along axis 0, which only a store combining the same way takes (+=): refused at its
// location with what to write instead.
TEST(TensorCore, ItemOfAWholeTileSumIsRefusedWithWhatToWriteInstead) {
  std::string source = replace_once(read_file(source_dir() / "samples" / "gemm.tile"), "  store C[m, n] = acc;",
                                    "  store C[m, n] = acc * item(sum(acc));");
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tilec_item_" + std::to_string(::getpid()) + ".tile");
  write_file(path, source);
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult refused =
        run_command(tilec_binary() + " compile " + path.string() + " --target " + target + " -o /dev/null");
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("does not support a sum() along axis 0 (of a whole tile, or a column; 'reduce_sum') "
                               "read other than by a store that combines the same way: the threads hold a column's "
                               "rows apart; write it straight into one, store T[0, 0] += sum(x), or store the per-row"),
              std::string::npos)
        << refused.err;
  }
  std::filesystem::remove(path);
}

// A sort in a tensor-core kernel is refused at the sort, saying plain kernels take it.
TEST(TensorCore, ASortIsRefusedSayingPlainKernelsTakeIt) {
  std::string source = replace_once(read_file(source_dir() / "samples" / "gemm.tile"), "  store C[m, n] = acc;",
                                    "  store C[m, n] = sort(acc, axis = 1);");
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tilec_sort_" + std::to_string(::getpid()) + ".tile");
  write_file(path, source);
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult refused =
        run_command(tilec_binary() + " compile " + path.string() + " --target " + target + " -o /dev/null");
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find(":16:19: error: the tensor-core CUDA backend (" + std::string(target) +
                               ") does not support a sort in a tensor-core kernel (plain kernels take it: sort in a "
                               "kernel of its own)"),
              std::string::npos)
        << refused.err;
  }
  std::filesystem::remove(path);
}

// The same for a column reduction computed on before a store into a vector (found by a helper
// porting kernels): it was refused as "this reshape in a tensor-core kernel", a reshape the store
// makes and the author never wrote; a scaled sum is told to take the scale inside.
TEST(TensorCore, AColumnReductionComputedOnBeforeAVectorStoreSaysWhatToWrite) {
  const std::string gemm = read_file(source_dir() / "samples" / "gemm.tile");
  struct Case {
    const char* parameter;
    const char* store;
    const char* expected;
  };
  const Case cases[] = {
      {"C: tensor<M, N, f32>, V: tensor<N, f16>", "  store V[n] min= cast(min(acc, axis = 0), f16);",
       "a min() along axis 0 (a column's; 'reduce_min') read other than by a store that combines the same way: the "
       "threads hold a column's rows apart; write it straight into one, store T[0, n] min= min(x, axis = 0) (T[n] for "
       "a vector T) into an f32 tensor"},
      {"C: tensor<M, N, f32>, V: tensor<N, f32>, s: f32", "  store V[n] += sum(acc, axis = 0) * s;",
       "store T[0, n] += sum(x, axis = 0) (T[n] for a vector T) with the scale inside, sum(x * s, axis = 0)"},
  };
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tilec_column_vector_" + std::to_string(::getpid()) + ".tile");
  for (const Case& c : cases) {
    std::string source = replace_once(gemm, "C: tensor<M, N, f32>", c.parameter);
    source = replace_once(source, "  store C[m, n] = acc;", std::string("  store C[m, n] = acc;\n") + c.store);
    write_file(path, source);
    for (const char* target : {"sm_90a", "sm_100a"}) {
      CommandResult refused =
          run_command(tilec_binary() + " compile " + path.string() + " --target " + target + " -o /dev/null");
      EXPECT_EQ(refused.status, 1);
      EXPECT_NE(refused.err.find(c.expected), std::string::npos) << refused.err;
      EXPECT_EQ(refused.err.find("this reshape"), std::string::npos) << refused.err;
    }
  }
  std::filesystem::remove(path);
}

TEST(TensorCore, EveryOneLineDeletionOfGemmIsCompiledOrRejected) { expect_every_deletion_compiled_or_rejected("gemm"); }

TEST(TensorCore, EveryOneLineDeletionOfAttentionIsCompiledOrRejected) {
  expect_every_deletion_compiled_or_rejected("attention");
}

}  // namespace
}  // namespace tilec::testing
