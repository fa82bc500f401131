// tests/emulate/emulate_cli_test.cpp — `tilec emulate` end to end: its input errors, the driver
// it writes around a launcher, and (once the emulation runtime is in the tree) samples that run
// and match the interpreter on both targets, the build cache, and a hand-broken .cu.
//
// Every run shares one build cache under the build directory (TILEC_TEST_CACHE_DIR), so the
// tests never write to $HOME and later runs reuse earlier builds. The runtime is always in the
// tree: the EmulateRuntime tests never skip (a missing runtime fails them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>

#include "emulate_checks.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh directory for one test's files.
fs::path scratch(const std::string& name) {
  fs::path path = fs::temp_directory_path() / ("tilec_emulate_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(path);
  fs::create_directories(path);
  return path;
}

// "A, B, C, M" from "const float* A, float* B, ..., int64_t M" (a parameter list's names).
std::vector<std::string> names_of(const std::string& list) {
  std::vector<std::string> names;
  std::regex name(R"(([A-Za-z_][A-Za-z_0-9]*)\s*(,|$))");
  for (std::sregex_iterator it(list.begin(), list.end(), name), end; it != end; ++it) names.push_back((*it)[1]);
  return names;
}

// --- input errors ------------------------------------------------------------------------------

TEST(Emulate, HelpNamesEveryOption) {
  CommandResult r = run_command(tilec("emulate --help"));
  EXPECT_EQ(r.status, 0);
  for (const char* option : {"--target", "--kernel", "--dims", "-D", "--seed", "--schedules", "--sms", "--workers",
                             "--cu", "--host-cxx", "--keep", "--timeout", "--no-hazards", "--plain-tiles", "--inputs",
                             "--kernel-prefix"})
    EXPECT_THAT(r.out, HasSubstr(option));
}

TEST(Emulate, AMissingHostCompilerIsAnInputError) {
  CommandResult given = run_command(tilec("emulate samples/vector_add.tile --host-cxx /nonexistent/g++"));
  EXPECT_EQ(given.status, 1);
  EXPECT_THAT(given.err, HasSubstr("'/nonexistent/g++' (--host-cxx) is not an executable program"));
  // Nothing on PATH and no TILEC_HOST_CXX: the message says what to install.
  CommandResult none = run_command("cd " + source_dir().string() + " && env -u TILEC_HOST_CXX PATH=/nonexistent " +
                                   tilec_binary() + " emulate samples/vector_add.tile");
  EXPECT_EQ(none.status, 1);
  EXPECT_THAT(none.err, HasSubstr("no host C++ compiler on PATH"));
  EXPECT_THAT(none.err, HasSubstr("install g++"));
  CommandResult environment = run_command("cd " + source_dir().string() + " && TILEC_HOST_CXX=/nonexistent/clang++ " +
                                          tilec_binary() + " emulate samples/vector_add.tile");
  EXPECT_EQ(environment.status, 1);
  EXPECT_THAT(environment.err, HasSubstr("(TILEC_HOST_CXX)"));
}

TEST(Emulate, ACuTilecDidNotWriteIsRejected) {
  fs::path dir = scratch("foreign");
  write_file(dir / "mine.cu", "__global__ void k() {}\n");
  CommandResult foreign = run_command(tilec("emulate samples/vector_add.tile --cu " + (dir / "mine.cu").string()));
  EXPECT_EQ(foreign.status, 1);
  EXPECT_THAT(foreign.err, HasSubstr((dir / "mine.cu").string() + " was not written by tilec"));
  CommandResult missing = run_command(tilec("emulate samples/vector_add.tile --cu " + (dir / "absent.cu").string()));
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("cannot open"));
  // A .cu with --emit-harness: its main() is for a GPU (the host compiler's error said only
  // "'cudaMalloc' was not declared": a hunt).
  CommandResult harness_cu = run_command(tilec("compile samples/vector_add.tile --emit-harness -o " +
                                               (dir / "harness.cu").string()));
  ASSERT_EQ(harness_cu.status, 0) << harness_cu.err;
  CommandResult harness = run_command(tilec("emulate samples/vector_add.tile --cu " + (dir / "harness.cu").string()));
  EXPECT_EQ(harness.status, 1);
  EXPECT_THAT(harness.err, HasSubstr("was compiled with --emit-harness, whose check program runs on a GPU"));
  // A path the driver's #include cannot spell (an adversarial helper's directory with a '"').
  fs::create_directories(dir / "a\"b");
  CommandResult compiled = run_command(tilec("compile samples/vector_add.tile -o '" + (dir / "a\"b" / "k.cu").string() + "'"));
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  CommandResult quoted = run_command(tilec("emulate samples/vector_add.tile --cu '" + (dir / "a\"b" / "k.cu").string() + "'"));
  EXPECT_EQ(quoted.status, 1);
  EXPECT_THAT(quoted.err, HasSubstr("holds a double quote or a line break, which the emulation driver's #include cannot "
                                    "spell: move the file, or emulate without --cu"));
  fs::remove_all(dir);
}

// --cu runs for the target its header names: an sm_100a .cu emulated without --target trapped in
// the architecture guard ("build with the emulation macro of its target"), naming no option (a
// helper following the docs); a --target that contradicts the header is an input error. The
// file is compiled with --kernel-prefix (as for a library holding both targets' kernels), which
// emulate must be given too: without it the launcher it looks for is not there, and it says so.
TEST(Emulate, AGivenCuRunsForTheTargetItsHeaderNames) {
  fs::path dir = scratch("target");
  const std::string cu = (dir / "gemm.cu").string();
  ASSERT_EQ(run_command(tilec("compile samples/gemm.tile --target sm_100a --kernel-prefix sm100_ -o " + cu)).status, 0);
  CommandResult unprefixed = run_command(tilec("emulate samples/gemm.tile --cu " + cu));
  EXPECT_EQ(unprefixed.status, 1);
  EXPECT_THAT(unprefixed.err, HasSubstr("has no `launch_gemm(const __nv_bfloat16* A"));
  EXPECT_THAT(unprefixed.err, HasSubstr("a file compiled with --kernel-prefix P needs --kernel-prefix P here too"));
  CommandResult taken = run_command(tilec("emulate samples/gemm.tile --cu " + cu + " --kernel-prefix sm100_ "
                                          "--dims M=64,N=64,K=64 --sms 1 --schedules 1"));
  EXPECT_EQ(taken.status, 0) << taken.out << taken.err;
  // Named as the source names it (as --kernel takes it), not by its prefixed C++ name.
  EXPECT_THAT(taken.out, HasSubstr("kernel gemm [K=64,M=64,N=64] sm_100a, schedule eager: C ok"));
  CommandResult contradicted = run_command(tilec("emulate samples/gemm.tile --target sm_90a --cu " + cu));
  EXPECT_EQ(contradicted.status, 1);
  EXPECT_THAT(contradicted.err, HasSubstr("--cu " + cu + " was compiled for sm_100a, and --target is sm_90a: give "
                                          "--target sm_100a"));
  fs::remove_all(dir);
}

// An extent of 0 (issue 18: --dims refused it, so the launcher's empty-tensor paths ran on no
// CPU): a GEMM with K = 0 runs its empty K loop on a TMA copy of one zero element and stores
// zeros; with M = 0 its grid is empty; a plain kernel with N = 0 launches nothing.
TEST(Emulate, EmptyExtentsRunOnBothTargets) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    for (const char* dims : {"M=136,N=128,K=0", "M=0,N=128,K=64"}) {
      CommandResult r = run_command(tilec(std::string("emulate samples/gemm.tile --schedules 1 --target ") + target +
                                          " --dims " + dims));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr("C ok (max abs error 0, max rel error 0)"));
    }
  }
  CommandResult plain = run_command(tilec("emulate samples/vector_add.tile --schedules 1 --dims N=0"));
  EXPECT_EQ(plain.status, 0) << plain.out << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("Z ok"));
}

TEST(Emulate, BadDimsAndUnknownKernelsAreInputErrors) {
  CommandResult dims = run_command(tilec("emulate samples/vector_add.tile --dims N=-3"));
  EXPECT_EQ(dims.status, 1);
  EXPECT_THAT(dims.err, HasSubstr("--dims N=-3: expected NAME=INTEGER (0 or more"));
  CommandResult kernel = run_command(tilec("emulate samples/vector_add.tile --kernel gemm"));
  EXPECT_EQ(kernel.status, 1);
  EXPECT_THAT(kernel.err, HasSubstr("has no kernel named 'gemm' (its kernels: vector_add)"));
  EXPECT_EQ(run_command(tilec("emulate samples/vector_add.tile --target sm_80")).status, 1);
  EXPECT_EQ(run_command(tilec("emulate samples/vector_add.tile --schedules 0")).status, 1);
}

// A host compiler that answers --version and fails every build: the failure shows the
// compiler's own words and the command, exit 1 (never 2: a .cu that does not build is the
// input's problem). The drivers are written before the build, so --keep holds them anyway.
fs::path failing_compiler(const fs::path& dir) {
  fs::path path = dir / "failing-c++";
  write_file(path, "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'failing-c++ 1.0'; exit 0; }\n"
                   "echo 'failing-c++: this compiler builds nothing' >&2\nexit 1\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

TEST(Emulate, AFailedHostBuildShowsTheCompilerOutputAndCommand) {
  fs::path dir = scratch("failing");
  CommandResult r = run_command(tilec("emulate samples/vector_add.tile --host-cxx " + failing_compiler(dir).string()));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("failing-c++: this compiler builds nothing"));
  EXPECT_THAT(r.err, HasSubstr("tilec: note: the command was: " + (dir / "failing-c++").string()));
  // The runtime archive is built first (one for both targets, so without a target macro).
  EXPECT_THAT(r.err, HasSubstr("-DTILEC_EMULATE -I"));
  EXPECT_THAT(r.err, HasSubstr("runtime/emulate/layouts.cpp"));
  fs::remove_all(dir);
}

// The driver includes the .cu by absolute path and calls launch_NAME with the launcher's own
// parameters in the launcher's order; tensors come from DATA_DIR/argI.in, scalars by name.
// It is emulate_STEM.cpp for the input STEM.tile.
TEST(Emulate, TheDriverCallsTheLauncherWithItsParametersInOrder) {
  fs::path dir = scratch("driver");
  fs::path compiler = failing_compiler(dir);
  struct Case {
    const char* sample;
    const char* kernel;
    const char* target;
  };
  for (const Case& c : {Case{"gemm", "gemm", "sm_90a"}, Case{"gemm", "gemm", "sm_100a"},
                        Case{"scale_relu", "scale_relu", "sm_90a"}, Case{"layernorm", "layernorm", "sm_100a"}}) {
    SCOPED_TRACE(std::string(c.sample) + " " + c.target);
    fs::path keep = dir / (std::string(c.sample) + "_" + c.target);
    CommandResult r = run_command(tilec(std::string("emulate samples/") + c.sample + ".tile --target " + c.target +
                                        " --keep " + keep.string() + " --host-cxx " + compiler.string()));
    EXPECT_EQ(r.status, 1) << r.err;  // the failing compiler
    std::string cu = read_file(keep / (std::string(c.sample) + ".cu"));
    std::string driver = read_file(keep / (std::string("emulate_") + c.kernel + ".cpp"));
    ASSERT_FALSE(cu.empty());
    ASSERT_FALSE(driver.empty());
    EXPECT_THAT(driver, HasSubstr("#include \"" + (keep / (std::string(c.sample) + ".cu")).string() + "\""));
    EXPECT_THAT(driver, HasSubstr("tilec_emu::configure(argc, argv, "));
    EXPECT_THAT(driver, HasSubstr("return exit_status == tilec_emu::exit_ok"));
    std::smatch launcher, call;
    std::string kernel = c.kernel;
    ASSERT_TRUE(std::regex_search(cu, launcher, std::regex("extern \"C\" cudaError_t launch_" + kernel +
                                                           R"(\((.*), cudaStream_t stream\))")));
    ASSERT_TRUE(std::regex_search(driver, call, std::regex("= launch_" + kernel + R"(\((.*)nullptr\);)")));
    std::vector<std::string> parameters = names_of(launcher[1]);
    EXPECT_EQ(names_of(call[1]), parameters);
    ASSERT_FALSE(parameters.empty());
    // Every parameter is declared in the driver with the launcher's type (a tensor as a
    // pointer to its element type, written through when the launcher's is not const).
    std::string list = launcher[1];
    std::regex declaration(R"((const )?([A-Za-z_0-9]+)(\*?) ([A-Za-z_][A-Za-z_0-9]*)(, |$))");
    for (std::sregex_iterator it(list.begin(), list.end(), declaration), end; it != end; ++it) {
      std::string element = (*it)[2], name = (*it)[4];
      bool pointer = (*it)[3].length() > 0;
      if (pointer) EXPECT_THAT(driver, HasSubstr(element + "* const " + name + " = static_cast<" + element + "*>"));
      else EXPECT_THAT(driver, HasSubstr("const " + element + " " + name + " = "));
    }
  }
  // scale_relu's float scalars are read as floats; its outputs are written back.
  std::string scale = read_file(dir / "scale_relu_sm_90a" / "emulate_scale_relu.cpp");
  EXPECT_THAT(scale, HasSubstr("const float scale = float(static_cast<float>(tilec_emulate_driver::real(argc, argv, \"scale\")))"));
  EXPECT_THAT(scale, HasSubstr("tilec_emulate_driver::write_tensor(data_directory, 1, Y, Y_bytes)"));
  EXPECT_THAT(scale, Not(HasSubstr("write_tensor(data_directory, 0,")));
  // A file's kernels share one driver (each compile of one compiles the whole .cu): a function
  // per kernel, picked by the KERNEL argument.
  fs::path both = dir / "fp8_quantize";
  CommandResult r = run_command(tilec("emulate samples/fp8_quantize.tile --keep " + both.string() + " --host-cxx " +
                                      compiler.string()));
  EXPECT_EQ(r.status, 1) << r.err;
  std::string driver = read_file(both / "emulate_fp8_quantize.cpp");
  for (const char* kernel : {"amax", "quantize"}) {
    EXPECT_THAT(driver, HasSubstr(std::string("static int tilec_emulate_run_") + kernel + "(int argc, char** argv) {"));
    EXPECT_THAT(driver, HasSubstr(std::string("if (std::strcmp(tilec_emulate_kernel, \"") + kernel +
                                  "\") == 0) return tilec_emulate_run_" + kernel + "(argc, argv);"));
    EXPECT_THAT(driver, HasSubstr(std::string("= launch_") + kernel + "("));
  }
  fs::remove_all(dir);
}

// --- with the runtime ----------------------------------------------------------------------------

// A third persistent extent (issue 18, defect 2): batches of two 128-row tiles, each batch's
// B block chosen by the batch coordinate; three SMs, so CTAs cross batches between rounds.
TEST(EmulateRuntime, ABatchGridAxisGemmMatchesTheInterpreterOnBothTargets) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_batch_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "const BM = 128; const BN = 256; const BK = 64; const MT = 2;\n"
             "kernel bgemm(A: tensor<R, K, bf16>, B: tensor<KR, N, bf16>, C: tensor<R, N, f32>)\n"
             "    grid persistent(MT, cdiv(N, BN), cdiv(R, MT * BM), swizzle = 2) as (m, n, b) {\n"
             "  acc = zeros<BM, BN, f32>();\n"
             "  for k in 0 .. cdiv(K, BK) pipeline(3) carry (acc) {\n"
             "    acc = mma(load A[b * MT + m, k] : <BM, BK>, load B[b * cdiv(K, BK) + k, n] : <BK, BN>, acc);\n"
             "  }\n  store C[b * MT + m, n] = acc;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec("emulate " + source.string() + " --target " + target +
                                        " --dims R=768,K=128,KR=384,N=264 --sms 3 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("C ok"));
  }
  fs::remove(source);
}

// `grid tiles` with mma (issue 18, defect 2): one CTA per output tile, through the same
// tensor-core code. gemm as the user writes it with a tile grid, at a ragged shape, and a
// one-extent grid (a column of tiles) whose n is 0.
TEST(EmulateRuntime, TileGridMmaKernelsMatchTheInterpreterOnBothTargets) {
  std::string gemm = read_file(source_dir() / "samples" / "gemm.tile");
  size_t grid = gemm.find("grid persistent(");
  ASSERT_NE(grid, std::string::npos);
  size_t close = gemm.find(") as (m, n)", grid);
  ASSERT_NE(close, std::string::npos);
  fs::path tiles = fs::temp_directory_path() / ("tilec_emulate_tiles_" + std::to_string(::getpid()) + ".tile");
  write_file(tiles, gemm.substr(0, grid) + "grid tiles(cdiv(M, BM), cdiv(N, BN)" + gemm.substr(close));
  fs::path column = fs::temp_directory_path() / ("tilec_emulate_column_" + std::to_string(::getpid()) + ".tile");
  write_file(column,
             "kernel rows(A: tensor<M, K, bf16>, B: tensor<K, 64, bf16>, C: tensor<M, 64, f32>)\n"
             "    grid tiles(cdiv(M, 128)) as (m) {\n  acc = zeros<128, 64, f32>();\n"
             "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {\n"
             "    acc = mma(load A[m, k] : <128, 64>, load B[k, 0] : <64, 64>, acc);\n  }\n"
             "  store C[m, 0] = acc;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec("emulate " + tiles.string() + " --target " + target +
                                        " --dims M=200,N=296,K=136 --sms 2 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("C ok"));
    r = run_command(tilec("emulate " + column.string() + " --target " + target + " --dims M=300,K=200 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("C ok"));
  }
  fs::remove(tiles);
  fs::remove(column);
}

// Issue 18, defect 9: shapes TMA cannot address directly run too. bf16 rows of K = 100 (200
// bytes) and N = 300 (600 bytes), and an f32 output of 131 columns (524 bytes, stored back from
// the padded copy) match the interpreter on both targets; the launcher pads the tensors it must.
TEST(EmulateRuntime, UnalignedRowsGoThroughPaddedCopies) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    for (const char* dims : {"M=136,N=300,K=100", "M=64,N=131,K=72"}) {
      SCOPED_TRACE(std::string(target) + " " + dims);
      CommandResult r = run_command(tilec("emulate samples/gemm.tile --target " + std::string(target) + " --dims " + dims +
                                          " --sms 2 --schedules 1"));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr("C ok"));
    }
  }
}

// Issue 18, defect 5: 64-row MMAs on sm_100a (tcgen05.mma M = 64, TMEM layout F: rows in lanes
// 0..15 of each warp's quarter). gemm and gate_up (two accumulators in one store) with BM = 64,
// and attention with BQ = 64, whose S, P, O and row statistics are 64-row register tiles (lanes
// 16..31 stand in: they compute but neither stage P nor store O), at ragged shapes where CTAs
// walk several tiles; sm_90a runs the same source for comparison.
TEST(EmulateRuntime, SixtyFourRowMmasMatchTheInterpreterOnBothTargets) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    for (const char* run : {"samples/gemm.tile -D BM=64 --dims M=200,N=296,K=136",
                            "samples/gate_up.tile -D BM=64 --dims M=136,N=200,K=200",
                            "samples/attention.tile -D BQ=64 --dims S=136,T=72,HD=128"}) {
      SCOPED_TRACE(std::string(target) + " " + run);
      expect_emulation_matches(std::string(run) + " --target " + target + " --sms 2 --schedules 1", "");
    }
  }
}

// K-major tiles of 64 or 32 bytes of K take the 64- or 32-byte swizzle (TMA boxes and matrix
// descriptors alike): gemm with BK = 32 (A 64B, B MN-major 128B) and linear with BK = 16 (A and
// its K-major B 32B), K ragged, CTAs walking several tiles, on both targets.
TEST(EmulateRuntime, ShortKTilesWithTheSixtyFourAndThirtyTwoByteSwizzlesMatchTheInterpreter) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    for (const char* run : {"samples/gemm.tile -D BK=32 --dims M=200,N=296,K=200",
                            "samples/linear.tile -D BK=16 --dims M=200,N=296,K=72"}) {
      SCOPED_TRACE(std::string(target) + " " + run);
      expect_emulation_matches(std::string(run) + " --target " + target + " --sms 2 --schedules 1", "");
    }
  }
}

// MMAs 96 and 48 columns wide (issue 18: N was a multiple of 64 or a power of two): with B K-major
// ([N, K], a transposed load) N is B's rows, any multiple of 8 (16 for tcgen05 M = 128). On
// sm_100a the accumulator is read 48 and 24 columns per warpgroup: three tcgen05.ld .x16 and .x8.
TEST(EmulateRuntime, MmasOfAnyMultipleOfEightWithAKMajorBMatchTheInterpreter) {
  for (const char* run : {"samples/linear.tile -D BN=96 --dims M=200,N=296,K=72 --target sm_90a",
                          "samples/linear.tile -D BN=96 --dims M=200,N=296,K=72 --target sm_100a",
                          "samples/linear.tile -D BN=48 --dims M=136,N=104,K=72 --target sm_100a"}) {
    SCOPED_TRACE(run);
    expect_emulation_matches(std::string(run) + " --sms 2 --schedules 1", "");
  }
}

// MMAs 32 and 16 columns wide (issue 18: N was a multiple of 64): B MN-major in one 64- or 32-byte
// swizzle panel, tcgen05.ld .x16 and .x8 reads of the accumulator, and attention with BKV = 32,
// whose P (K = 32) sm_100a stages for tcgen05.mma in the 64-byte swizzle.
TEST(EmulateRuntime, MmasThirtyTwoAndSixteenColumnsWideMatchTheInterpreter) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    for (const char* run : {"samples/gemm.tile -D BN=32 --dims M=136,N=72,K=72",
                            "samples/gemm.tile -D BN=16 --dims M=136,N=40,K=72",
                            "samples/attention.tile -D BKV=32 --dims S=136,T=72,HD=128"}) {
      SCOPED_TRACE(std::string(target) + " " + run);
      expect_emulation_matches(std::string(run) + " --target " + target + " --sms 2 --schedules 1", "");
    }
  }
}

// Stores at element coordinates (issue 18): tile (i, j) of X lands one column to the right in Y
// (Y[r, c + 1] = X[r, c], column 0 of Y untouched), an offset no vector fits, and the same tiles
// one row down into Z through a 2-row tile. Both plain forms, both targets, match the
// interpreter; overlapping stores would be a race the interpreter reports.
TEST(EmulateRuntime, StoresAtElementCoordinatesMatchTheInterpreter) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_store_at_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "kernel shift(X: tensor<R, C, f32>, Y: tensor<R, C, f32>, Z: tensor<R, C, f32>)\n"
             "    grid tiles(cdiv(R, 8), cdiv(C, 32)) as (i, j) {\n"
             "  x = load X[i, j] : <8, 32>;\n"
             "  store Y at [i * 8, j * 32 + 1] = x * 2.0;\n"
             "  store Z at [i * 8 + 1, j * 32] = x + 1.0;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"})
    for (const char* form : {"registers", "shared"}) {
      SCOPED_TRACE(std::string(target) + " " + form);
      CommandResult r = run_command(tilec("emulate " + source.string() + " --target " + target + " --plain-tiles " + form +
                                          " --dims R=20,C=70"));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr("Y ok"));
      EXPECT_THAT(r.out, HasSubstr("Z ok"));
    }
  // Tiles of 32 columns stored 16 apart overlap: the interpreter names the race.
  write_file(source,
             "kernel overlap(X: tensor<R, C, f32>, Y: tensor<R, C, f32>) grid tiles(cdiv(R, 8), cdiv(C, 32)) as (i, j) {\n"
             "  store Y at [i * 8, j * 16] = load X[i, j] : <8, 32>;\n}\n");
  CommandResult race = run_command(tilec("run " + source.string() + " --dims R=8,C=64"));
  EXPECT_NE(race.status, 0);
  EXPECT_THAT(race.err, HasSubstr("race"));
  // emulate reports the reference's failure as run does: at the store, the line quoted (it gave
  // the file's name alone).
  CommandResult emulated = run_command(tilec("emulate " + source.string() + " --dims R=8,C=64"));
  EXPECT_EQ(emulated.status, 1);
  EXPECT_THAT(emulated.err, HasSubstr(source.string() + ":2:3: error: kernel overlap as parsed (the reference): "
                                                        "'store': race: tiles 0 and 1 both store element"));
  EXPECT_THAT(emulated.err, HasSubstr("\n    store Y at [i * 8, j * 16]"));
  fs::remove(source);
}

// Slices (issue 18, batched tensors): tiles of lower rank than their tensors, the leading
// coordinates picking the matrix. A 1-D row of a rank-4 tensor times a 1-D row of a matrix in a
// plain kernel (both forms; rows of 100 bf16, so most slices start off a 16-byte boundary), and
// bmm's rank-3 tensors on the tensor cores where sample_sweep's shapes do not go: rows TMA
// cannot address (a padded copy under a 3-D map), 64-row tiles (direct stores on sm_100a), and a
// bias read per element from a rank-3 tensor in the epilogue.
TEST(EmulateRuntime, SlicesOfHigherRankTensorsMatchTheInterpreter) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_slices_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "kernel slices(X: tensor<P, Q, R, C, bf16>, V: tensor<R, C, bf16>, Y: tensor<P, Q, R, C, bf16>)\n"
             "    grid tiles(R, cdiv(C, 64), P * Q) as (r, c, pq) {\n"
             "  x = load X[pq / Q, pq % Q, r, c] : <64>;\n"
             "  v = load V[r, c] : <64>;\n"
             "  store Y[pq / Q, pq % Q, r, c] = x * v + x;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"})
    for (const char* form : {"registers", "shared"}) {
      SCOPED_TRACE(std::string(target) + " " + form);
      CommandResult r = run_command(tilec("emulate " + source.string() + " --target " + target + " --plain-tiles " + form +
                                          " --dims P=2,Q=3,R=5,C=100"));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr("Y ok"));
    }
  std::string bmm = replace_once(read_file(source_dir() / "samples" / "bmm.tile"), "C: tensor<BATCH, M, N, f32>)",
                                 "C: tensor<BATCH, M, N, bf16>, Bias: tensor<BATCH, 1, N, f32>)");
  write_file(source, replace_once(bmm, "  store C[b, m, n] = acc;",
                                  "  bias = load Bias[b, 0, n] : <1, BN>;\n  store C[b, m, n] = cast(relu(acc + bias), bf16);"));
  const std::vector<std::string> runs = {"samples/bmm.tile --dims BATCH=3,M=70,N=300,K=100",
                                         "samples/bmm.tile -D BM=64 --dims BATCH=3,M=70,N=136,K=72",
                                         source.string() + " --dims BATCH=3,M=70,N=136,K=72"};
  for (const char* target : {"sm_90a", "sm_100a"})
    for (const std::string& run : runs) {
      SCOPED_TRACE(std::string(target) + " " + run);
      CommandResult r = run_command(tilec("emulate " + run + " --target " + target + " --sms 2 --schedules 1"));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr("C ok"));
    }
  fs::remove(source);
}

// Multi-head attention over rank-3 tensors (issue 18, batched tensors): Q, K, V and O are
// [H, S or T, D], so each head's matrices are slices and nothing is folded into columns by hand;
// K is given as rows ([T, D] per head) and read transposed, a K-major B of a 3-D box. The
// sample attention.tile folds the heads into HD columns instead. Its softmax is in base e
// (`exp`), which the samples (base 2, `exp2`) no longer run on the tensor cores.
TEST(EmulateRuntime, MultiHeadAttentionOverRank3TensorsMatchesTheInterpreter) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_mha_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "const BQ = 128;\nconst BKV = 64;\nconst D = 64;\nconst STAGES = 2;\n"
             "kernel mha(Q: tensor<H, S, D, bf16>, K: tensor<H, T, D, bf16>, V: tensor<H, T, D, bf16>,\n"
             "           O: tensor<H, S, D, f32>)\n"
             "    grid persistent(cdiv(S, BQ), H, swizzle = 8, cluster = 1) as (i, h) {\n"
             "  q = load Q[h, i, 0] : <BQ, D>;\n"
             "  row_max = full<BQ, 1, f32>(-1.0e30);\n"
             "  row_sum = zeros<BQ, 1, f32>();\n"
             "  o = zeros<BQ, D, f32>();\n"
             "  for j in 0 .. cdiv(T, BKV) pipeline(STAGES) carry (row_max, row_sum, o) {\n"
             "    kt = transpose(load K[h, j, 0] : <BKV, D>);\n"
             "    v = load V[h, j, 0] : <BKV, D>;\n"
             "    scores = mma(q, kt, zeros<BQ, BKV, f32>()) * 0.125;\n"
             "    key = iota<BQ, BKV, i32>(1) + cast(j * BKV, i32);\n"
             "    s = where(key < cast(T, i32), scores, -1.0e30);\n"
             "    new_max = max(row_max, max(s, axis = 1));\n"
             "    p = exp(s - new_max);\n"
             "    alpha = exp(row_max - new_max);\n"
             "    row_sum = row_sum * alpha + sum(p, axis = 1);\n"
             "    o = mma(cast(p, bf16), v, o * alpha);\n"
             "    row_max = new_max;\n"
             "  }\n"
             "  store O[h, i, 0] = o / row_sum;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec("emulate " + source.string() + " --target " + target +
                                        " --dims H=3,S=200,T=136 --sms 2 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("O ok"));
  }
  fs::remove(source);
}

// fp8_linear with X and W of the given 8-bit types, written to a temporary file.
fs::path fp8_linear_variant(const std::string& x_type, const std::string& w_type, const std::string& name) {
  std::string source = replace_once(read_file(source_dir() / "samples" / "fp8_linear.tile"), "X: tensor<M, K, f8e4m3>",
                                    "X: tensor<M, K, " + x_type + ">");
  fs::path path = fs::temp_directory_path() / ("tilec_emulate_" + name + "_" + std::to_string(::getpid()) + ".tile");
  write_file(path, replace_once(source, "W: tensor<N, K, f8e4m3>", "W: tensor<N, K, " + w_type + ">"));
  return path;
}

// `tilec compile` of `path` for `target` (its CUDA on success).
std::string compiled(const fs::path& path, const std::string& target) {
  CommandResult r = run_command(tilec("compile " + path.string() + " --target " + target));
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

// An fp8_linear variant matches the interpreter on both targets (rows of 200 bytes: padded copies).
void expect_fp8_linear_matches(const fs::path& path) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec("emulate " + path.string() + " --target " + target +
                                        " --dims M=136,N=264,K=200 --scalar x_scale=0.5,w_scale=2 --sms 2 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("Y ok"));
  }
}

// FP8 e5m2 (issue 18): fp8_linear with both operands e5m2 takes WGMMA's .e5m2 form and
// tcgen05's instruction-descriptor formats of 1; the emulator decodes those as the reference
// tables say, and its results match the interpreter's own e5m2 conversions.
TEST(EmulateRuntime, E5m2InputsMatchTheInterpreterOnBothTargets) {
  fs::path path = fp8_linear_variant("f8e5m2", "f8e5m2", "e5m2");
  EXPECT_THAT(compiled(path, "sm_90a"), HasSubstr("wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2"));
  expect_fp8_linear_matches(path);
  fs::remove(path);
}

// Mixed FP8 (issue 18): e4m3 activations times e5m2 weights take WGMMA's .e4m3.e5m2 form and
// tcgen05's per-operand formats (A 0, B 1); the interpreter converts each operand by its own type.
TEST(EmulateRuntime, MixedFp8InputsMatchTheInterpreterOnBothTargets) {
  fs::path path = fp8_linear_variant("f8e4m3", "f8e5m2", "mixed_fp8");
  const std::string hopper = compiled(path, "sm_90a");
  EXPECT_THAT(hopper, HasSubstr("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2"));
  EXPECT_THAT(hopper, HasSubstr("::tilec_emu::ptx::Operand::e4m3, ::tilec_emu::ptx::Operand::e5m2"));
  // D f32 (bit 4), A e4m3 (0 at bits 7-9), B e5m2 (1 at bits 10-12), both K-major, N / 8 = 32, M / 16 = 8.
  EXPECT_THAT(compiled(path, "sm_100a"), HasSubstr("0x08400410u"));
  expect_fp8_linear_matches(path);
  fs::remove(path);
}

// A tensor-core kernel's store at element coordinates (issue 18): gemm's tile (m, n) plus a bias
// tile read one row up (`load Bias at`, per element in the epilogue) lands at row m·BM - 3,
// column n·BN + 5, so the first tiles' rows start above the tensor (TMA and the direct stores
// drop them, the bias reads zeros there) and the last columns run past it. BM = 128 stores
// through TMA at those coordinates; BM = 64 on sm_100a stores directly, checking 0 <= index too.
TEST(EmulateRuntime, TensorCoreLoadsAndStoresAtElementCoordinatesMatchTheInterpreter) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_mma_store_at_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "const BM = 128;\nconst BN = 256;\nconst BK = 64;\n"
             "kernel shifted(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, Bias: tensor<M, N, f32>, C: tensor<M, N, f32>)\n"
             "    grid persistent(cdiv(M, BM), cdiv(N, BN), swizzle = 8, cluster = 1) as (m, n) {\n"
             "  acc = zeros<BM, BN, f32>();\n"
             "  for k in 0 .. cdiv(K, BK) pipeline(4) carry (acc) {\n"
             "    acc = mma(load A[m, k] : <BM, BK>, load B[k, n] : <BK, BN>, acc);\n  }\n"
             "  store C at [m * BM - 3, n * BN + 5] = acc + load Bias at [m * BM - 1, n * BN] : <BM, BN>;\n}\n");
  EXPECT_TRUE(std::regex_search(compiled(source, "sm_90a"),
                                std::regex(R"(tilec_tma_store_2d\(&C_store_map, staging \+ box, static_cast<int32_t>\(\w+ \+ chunk \* 32\), )")))
      << "the TMA store's box at the element coordinates";
  for (const char* target : {"sm_90a", "sm_100a"})
    for (const char* defines : {"", " -D BM=64"}) {
      SCOPED_TRACE(std::string(target) + defines);
      expect_emulation_matches(source.string() + " --target " + target + defines +
                               " --dims M=200,N=296,K=136 --sms 2 --schedules 2", "C");
    }
  fs::remove(source);
}

// Attention with K given as [T, D] (issue 18, transposed operands): S = Q·Kᵀ reads the K tile
// as a K-major B, as linear.tile does for its weight; the sample takes Kt as [D, T] instead.
// With pipeline(3) (-D STAGES=3) the running row max crosses stages: a register pipe that the
// loop carries (materialize-schedule rule 3a, the backend's stored register pipe), 4 key blocks
// over 3 stages, and CTAs taking two rounds.
TEST(EmulateRuntime, AttentionWithKeysAsRowsAndThreeStagesMatchesTheInterpreterOnBothTargets) {
  std::string attention = replace_once(read_file(source_dir() / "samples" / "attention.tile"),
                                       "Kt: tensor<HD, T, bf16>", "K: tensor<T, HD, bf16>");
  attention = replace_once(attention, "kt = load Kt[h, j] : <D, BKV>;", "kt = transpose(load K[j, h] : <BKV, D>);");
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_keys_" + std::to_string(::getpid()) + ".tile");
  write_file(source, attention);
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec("emulate " + source.string() + " --target " + target +
                                        " -D STAGES=3 --dims S=200,HD=128,T=200 --sms 3 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("O ok"));
  }
  fs::remove(source);
}

// --scalar values reach the emulated CUDA (the driver passes every scalar to the launcher), and
// an integer division by a zero scalar gives the interpreter's value instead of a trap.
TEST(EmulateRuntime, ScalarParametersAreGivenAndReported) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_scalar_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "kernel scaled(X: tensor<N, i32>, Y: tensor<N, f32>, Q: tensor<N, i32>, n: i32, alpha: f32)\n"
             "    grid tiles(cdiv(N, 8)) as (i) {\n"
             "  x = load X[i] : <8>;\n  store Y[i] = cast(x * n, f32) * alpha;\n  store Q[i] = x % n + x / n;\n}\n");
  for (const char* n : {"-3", "0"}) {
    CommandResult r = run_command(tilec("emulate " + source.string() + " --dims N=20 --schedules 1 --scalar n=" + n +
                                        ",alpha=0.25"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string("kernel scaled: scalars n=") + n + ", alpha=0.25"));
    EXPECT_THAT(r.out, HasSubstr("Q ok"));
  }
  fs::remove(source);
}

// --inputs DIR (as `tilec run --inputs`): a tensor parameter X takes the bytes of DIR/X.bin in
// the emulated program (the data file --keep keeps is that file) and in the interpreter; a file of
// the wrong size, a missing directory and a file of two kernels without --kernel are refused (a
// helper writing kernels from the docs had to edit the kept data files by hand).
TEST(EmulateRuntime, GivenInputsReachTheEmulatedProgram) {
  fs::path dir = fs::temp_directory_path() / ("tilec_emulate_inputs_" + std::to_string(::getpid()));
  fs::create_directories(dir / "in");
  std::vector<int32_t> x(20);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i * i) - 100;
  {
    std::ofstream out(dir / "in" / "X.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(int32_t)));
  }
  const std::string kernel = "kernel twice(X: tensor<N, i32>, Y: tensor<N, i32>)\n"
                             "    grid tiles(cdiv(N, 8)) as (i) {\n  store Y[i] = load X[i] : <8> * 2;\n}\n";
  fs::path source = dir / "twice.tile";
  write_file(source, kernel);
  CommandResult r = run_command(tilec("emulate " + source.string() + " --dims N=20 --schedules 1 --inputs " +
                                      (dir / "in").string() + " --keep " + (dir / "keep").string()));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("input %X tensor<20xi32>: read from "));
  EXPECT_THAT(r.out, HasSubstr("Y ok (max abs error 0"));
  EXPECT_EQ(read_file(dir / "keep" / "twice" / "arg0.in"), read_file(dir / "in" / "X.bin"));
  CommandResult wrong = run_command(tilec("emulate " + source.string() + " --dims N=24 --inputs " + (dir / "in").string()));
  EXPECT_EQ(wrong.status, 1);
  EXPECT_THAT(wrong.err, HasSubstr("X.bin holds 80 bytes, but %X tensor<24xi32> is 96 bytes"));
  CommandResult missing = run_command(tilec("emulate " + source.string() + " --inputs " + (dir / "none").string()));
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("none: not a directory"));
  write_file(source, kernel + "kernel again(X: tensor<N, i32>, Z: tensor<N, i32>)\n"
                              "    grid tiles(cdiv(N, 8)) as (i) {\n  store Z[i] = load X[i] : <8> + 1;\n}\n");
  CommandResult two = run_command(tilec("emulate " + source.string() + " --inputs " + (dir / "in").string()));
  EXPECT_EQ(two.status, 1);
  EXPECT_THAT(two.err, HasSubstr("has 2 kernels, and --inputs names files after parameters: choose one with --kernel"));
  fs::remove_all(dir);
}

// Given inputs whose sum cancels far below its terms (1e30, 62 ones and -1e30 at another position
// in each row: a helper's differential hunt) differ in the register form, which adds in another
// order, by more than the bound: the mismatch says why and what to run instead, and the shared
// form, in the interpreter's order, matches.
TEST(EmulateRuntime, AGivenSumThatCancelsSaysTheRegisterFormAddsInAnotherOrder) {
  fs::path dir = fs::temp_directory_path() / ("tilec_emulate_cancel_" + std::to_string(::getpid()));
  fs::create_directories(dir / "in");
  std::vector<float> x;
  for (int position : {1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 48, 63}) {
    std::vector<float> row(64, 1.0f);
    row[0] = 1e30f;
    row[static_cast<size_t>(position)] = -1e30f;
    x.insert(x.end(), row.begin(), row.end());
  }
  {
    std::ofstream out(dir / "in" / "X.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
  }
  fs::path source = dir / "row_sum.tile";
  write_file(source, "kernel row_sum(X: tensor<R, 64, f32>, S: tensor<R, 1, f32>) grid tiles(R) as (r) {\n"
                     "  store S[r, 0] = sum(load X[r, 0] : <1, 64>, axis = 1);\n}\n");
  const std::string run = "emulate " + source.string() + " --dims R=12 --schedules 1 --inputs " + (dir / "in").string();
  CommandResult registers = run_command(tilec(run));
  EXPECT_EQ(registers.status, 1) << registers.out << registers.err;
  EXPECT_THAT(registers.err, HasSubstr("S differs from the interpreter's result"));
  EXPECT_THAT(registers.err, HasSubstr("note: this kernel's float sums add in another order in the register form than "
                                       "in the interpreter"));
  EXPECT_THAT(registers.err, HasSubstr("rerun with --plain-tiles shared, which adds in the interpreter's order"));
  CommandResult shared = run_command(tilec(run + " --plain-tiles shared"));
  EXPECT_EQ(shared.status, 0) << shared.out << shared.err;
  fs::remove_all(dir);
}

// A kernel's assert, or a grid extent, that fails at launch: the interpreter refuses the launch
// and so must the emulated launcher (cudaErrorInvalidValue), on both targets, plain and
// tensor-core (whose persistent grid asserts its extents: two negative ones would multiply to a
// positive tile count); where all hold both run and match.
TEST(EmulateRuntime, AssertsAndNegativeGridsRefuseTheLaunchInTheLauncherToo) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_assert_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "kernel scale(X: tensor<N, f32>, Y: tensor<N, f32>, s: f32, t: i32) grid tiles(cast(t, index)) as (i) {\n"
             "  assert N % 64 == 0 && s > 0.0;\n  store Y[i] = load X[i] : <64> * s;\n}\n"
             "kernel gemm(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>, t: i32)\n"
             "    grid persistent(cdiv(M, 64) * cast(t, index), cdiv(N, 64) * cast(t, index)) as (m, n) {\n"
             "  assert K % 64 == 0;\n  acc = zeros<64, 64, f32>();\n"
             "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {\n"
             "    acc = mma(load A[m, k] : <64, 64>, load B[k, n] : <64, 64>, acc);\n  }\n"
             "  store C[m, n] = acc;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    const std::string refused_dims =
        std::string(" --target ") + target + " --dims N=96,M=64,K=96 --scalar s=0.5,t=1 --schedules 1";
    CommandResult refused = run_command(tilec("emulate " + source.string() + " --kernel scale" + refused_dims));
    EXPECT_EQ(refused.status, 1) << refused.out << refused.err;
    EXPECT_THAT(refused.err, HasSubstr(":2:3: error: kernel scale: assert N % 64 == 0 && s > 0.0 does not hold at "
                                       "launch (N = 96, s = 0.5); the emulated launcher refuses it too"));
    refused = run_command(tilec("emulate " + source.string() + " --kernel gemm" + refused_dims));
    EXPECT_EQ(refused.status, 1) << refused.out << refused.err;
    EXPECT_THAT(refused.err, HasSubstr(":7:3: error: kernel gemm: assert K % 64 == 0 does not hold at launch (K = 96); "
                                       "the emulated launcher refuses it too"));
    const std::string negative_dims =
        std::string(" --target ") + target + " --dims N=128,M=64,K=128 --scalar s=0.5,t=-2 --schedules 1";
    refused = run_command(tilec("emulate " + source.string() + " --kernel scale" + negative_dims));
    EXPECT_EQ(refused.status, 1) << refused.out << refused.err;
    EXPECT_THAT(refused.err, HasSubstr(":1:73: error: kernel scale: 'grid_ids': grid extent -2 is negative; the "
                                       "emulated launcher refuses it too"));
    refused = run_command(tilec("emulate " + source.string() + " --kernel gemm" + negative_dims));
    EXPECT_EQ(refused.status, 1) << refused.out << refused.err;
    EXPECT_THAT(refused.err, HasSubstr(":6:10: error: kernel gemm: 'grid_ids': grid extent -2 is negative; the "
                                       "emulated launcher refuses it too"));
    CommandResult ran = run_command(tilec("emulate " + source.string() + " --target " + target +
                                          " --dims N=128,M=64,K=128 --scalar s=0.5,t=2 --schedules 1"));
    EXPECT_EQ(ran.status, 0) << ran.out << ran.err;
    EXPECT_THAT(ran.out, HasSubstr("Y ok"));
    EXPECT_THAT(ran.out, HasSubstr("C ok"));
  }
  fs::remove(source);
}

// Index cdiv is the ceiling for any signs and divides by 0 as / does, in the interpreter and the
// emitted CUDA alike: cdiv(-1, 16) ran one iteration on the GPU (a/b + (a%b != 0)) and none in
// the interpreter, and an index division by a zero scalar killed the emulated program (SIGFPE).
TEST(EmulateRuntime, IndexDivisionsAgreeForNegativeAndZeroDivisors) {
  fs::path source = fs::temp_directory_path() / ("tilec_emulate_cdiv_" + std::to_string(::getpid()) + ".tile");
  write_file(source,
             "kernel divisions(Y: tensor<8, i64>, a: i64, b: i64) grid tiles(1) as (i) {\n"
             "  x = cast(a, index);\n  y = cast(b, index);\n"
             "  store Y at [0] = full<1, i64>(cast(cdiv(x, y), i64));\n"
             "  store Y at [1] = full<1, i64>(cast(x / y, i64));\n"
             "  store Y at [2] = full<1, i64>(cast(x % y, i64));\n"
             "  n = zeros<1, f32>();\n"
             "  for j in 0 .. cdiv(x, 16) carry (n) {\n    n = n + 1.0;\n  }\n"
             "  store Y at [3] = cast(n, i64);\n}\n");
  // a, b: cdiv, /, % and the trips of 0 .. cdiv(a, 16), as the docs define them.
  struct Case {
    const char* values;
    std::array<int64_t, 4> expected;
  };
  const fs::path outputs = fs::temp_directory_path() / ("tilec_emulate_cdiv_out_" + std::to_string(::getpid()));
  for (const Case& c : {Case{"a=-1,b=16", {0, 0, -1, 0}}, Case{"a=-7,b=2", {-3, -3, -1, 0}},
                        Case{"a=7,b=-2", {-3, -3, 1, 1}}, Case{"a=-7,b=-2", {4, 3, -1, 0}},
                        Case{"a=5,b=0", {-1, -1, 5, 1}}, Case{"a=5,b=-1", {-5, -5, 0, 1}}}) {
    SCOPED_TRACE(c.values);
    CommandResult r = run_command(tilec("emulate " + source.string() + " --schedules 1 --scalar " + c.values));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("Y ok"));
    // The interpreter's values, which the emulated CUDA matched.
    CommandResult run = run_command(tilec("run " + source.string() + " --scalar " + std::string(c.values) +
                                          " --outputs " + outputs.string()));
    ASSERT_EQ(run.status, 0) << run.err;
    std::ifstream in(outputs / "Y.bin", std::ios::binary);
    std::array<int64_t, 8> y{};
    in.read(reinterpret_cast<char*>(y.data()), sizeof(y));
    for (size_t i = 0; i < c.expected.size(); ++i) EXPECT_EQ(y[i], c.expected[i]) << i;
  }
  fs::remove(source);
  fs::remove_all(outputs);
}

TEST(EmulateRuntime, PlainSamplesMatchTheInterpreterOnBothTargets) {
  for (const char* target : {"sm_90a", "sm_100a"})
    for (const char* sample : {"vector_add", "softmax"}) {
      SCOPED_TRACE(std::string(sample) + " " + target);
      CommandResult r = run_command(tilec(std::string("emulate samples/") + sample + ".tile --target " + target +
                                          " --dims N=3000,R=100,D=96"));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr(std::string("kernel ") + sample));
      EXPECT_THAT(r.out, HasSubstr(std::string(target) + ", schedule eager: "));
      EXPECT_THAT(r.out, HasSubstr(std::string(target) + ", schedule lazy: "));
      EXPECT_THAT(r.out, HasSubstr("\nok\n"));
    }
}

// The plain backend's mma kernels (a .tir stopped after fold-constants) as their golden .cu
// files hold them, emulated against the interpreter: matmul_bt's B is a `transposed` tma_load, the
// same read the harness's reference makes for a K-major B (linear.tile) or an MN-major A
// (weight_grad.tile), and bmm_bt's a transposed load of a rank-3 tensor's slice (mha.tile's K:
// the reference could not be emitted for it, which gpu_check.py's build found). Ragged in M, N
// and K.
TEST(EmulateRuntime, PlainMmaKernelsWithATransposedLoadMatchTheInterpreter) {
  for (const char* input : {"matmul", "matmul_bt", "bmm_bt"}) {
    SCOPED_TRACE(input);
    const std::string name = input;
    const std::string batch = name == "bmm_bt" ? "H=3," : "";
    CommandResult r = run_command(tilec("emulate tests/cuda/inputs/" + name + ".tir --cu tests/cuda/golden/" + name +
                                        ".cu --dims " + batch + "M=40,N=70,K=24 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("kernel " + name + " [" + batch + "K=24,M=40,N=70] sm_90a, schedule eager: C ok"));
  }
}

// A ragged gemm: partial tiles in M, N and K, two SMs so persistent CTAs take several tiles.
// Clusters of 2 CTAs along M (a cudaLaunchKernelEx launch with the cluster attribute): the grid
// is rounded to whole clusters and a cluster's CTAs share n; the results must not change.
TEST(EmulateRuntime, AClusteredGemmMatchesTheInterpreterOnBothTargets) {
  fs::path dir = scratch("cluster");
  write_file(dir / "gemm_cluster.tile",
             replace_once(read_file(source_dir() / "samples" / "gemm.tile"), "cluster = 1", "cluster = 2"));
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec("emulate " + (dir / "gemm_cluster.tile").string() + " --target " + target +
                                        " --dims M=520,N=264,K=136 --sms 4 --schedules 3"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("schedule random (seed 1): C ok"));
  }
  fs::remove_all(dir);
}

TEST(EmulateRuntime, RaggedGemmMatchesTheInterpreterOnBothTargets) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec(std::string("emulate samples/gemm.tile --target ") + target +
                                        " --dims M=200,N=136,K=72 --sms 2 --schedules 3"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("kernel gemm [K=72,M=200,N=136] " + std::string(target) + ", schedule eager: C ok"));
    EXPECT_THAT(r.out, HasSubstr("schedule random (seed 1): C ok"));
    EXPECT_THAT(r.out, HasSubstr("\nok\n"));
  }
}

TEST(EmulateRuntime, ASecondRunDoesNotRecompile) {
  std::string command = "emulate samples/vector_add.tile --dims N=5000 --seed 7 --verbose";
  CommandResult first = run_command(tilec(command));
  ASSERT_EQ(first.status, 0) << first.err;
  CommandResult second = run_command(tilec(command));
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_THAT(second.err, HasSubstr("using the cached emulated program"));
  EXPECT_THAT(second.err, Not(HasSubstr("tilec: compiling")));
  // Without --verbose, nothing is said about compiling.
  CommandResult quiet = run_command(tilec("emulate samples/vector_add.tile --dims N=5000 --seed 7"));
  EXPECT_EQ(quiet.status, 0);
  EXPECT_THAT(quiet.err, Not(HasSubstr("compiling")));
}

// --kernel K runs K in the program of the whole file (its driver has every kernel): emulating
// the file and then one of its kernels builds once. It built a program of K alone, another cache
// entry compiling the same .cu again.
TEST(EmulateRuntime, OneKernelRunsInTheProgramOfItsFile) {
  const std::string command = "emulate samples/fp8_quantize.tile --dims R=40,C=300 --seed 3 --verbose";
  CommandResult whole = run_command(tilec(command));
  ASSERT_EQ(whole.status, 0) << whole.err;
  EXPECT_THAT(whole.out, HasSubstr("kernel amax"));
  CommandResult one = run_command(tilec(command + " --kernel quantize"));
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_THAT(one.err, HasSubstr("using the cached emulated program"));
  EXPECT_THAT(one.err, Not(HasSubstr("tilec: compiling")));
  EXPECT_THAT(one.out, HasSubstr("kernel quantize [C=300,R=40] sm_90a, schedule eager: Q ok"));
  EXPECT_THAT(one.out, Not(HasSubstr("kernel amax")));
}

// The standard headers and tilec_emulate.h are precompiled once per compiler, flags and runtime
// (about half of a program's compile with g++ 12), and each program's compile -includes them;
// a precompiled header the compiler passes over would show as a note under --verbose.
TEST(EmulateRuntime, ProgramsCompileAgainstThePrecompiledHeaders) {
  fs::path dir = scratch("prelude");
  // A comment no other run has, so the program is compiled here rather than found in the cache.
  std::string cu = read_file(source_dir() / "samples" / "expected" / "vector_add.sm_90a.cu") +
                   "// " + std::to_string(::getpid()) + " " +
                   std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n";
  write_file(dir / "vector_add.cu", cu);
  CommandResult r = run_command(tilec("emulate samples/vector_add.tile --dims N=300 --schedules 1 --verbose --cu " +
                                      (dir / "vector_add.cu").string()));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Z ok"));
  std::smatch include;
  ASSERT_TRUE(std::regex_search(r.err, include, std::regex(R"(-include (\S+/prelude-[0-9a-f]+\.h) )"))) << r.err;
  const std::string header = include[1];
  EXPECT_TRUE(fs::exists(header + ".gch") || fs::exists(header + ".pch")) << header;
  EXPECT_THAT(r.err, Not(HasSubstr("were not used")));
  // Linked by gold where it is installed (GNU ld takes twice as long); the program ran above.
  if (system("command -v ld.gold >/dev/null 2>&1") == 0) {
    EXPECT_THAT(r.err, HasSubstr(" -fuse-ld=gold"));
  }
  fs::remove_all(dir);
}

// A stopped run (Ctrl-C, or a build system's SIGTERM) left its working directory (the data
// files of large --dims are gigabytes) and the cache's scratch directory behind, with the
// compiler's temporary files: now the compilers are stopped and both removed, and tilec ends by
// the signal. Stopped while the runtime compiles, in a cache of its own.
TEST(Emulate, ASignalRemovesTheWorkingAndScratchDirectories) {
  fs::path dir = scratch("signal");
  fs::create_directories(dir / "tmp");
  const std::string script =
      "export TMPDIR=" + (dir / "tmp").string() + " TILEC_CACHE_DIR=" + (dir / "cache").string() + "; cd " +
      source_dir().string() + " && { " + tilec_binary() +
      " emulate samples/gemm.tile --dims M=128,N=128,K=128 >/dev/null 2>&1 & pid=$!; "
      "for i in $(seq 300); do ls " + (dir / "cache" / "emulate").string() +
      " 2>/dev/null | grep -q '^tmp[.]' && break; sleep 0.1; done; kill -TERM $pid; wait $pid; echo status $?; }";
  CommandResult r = run_command("sh -c '" + script + "'");
  EXPECT_THAT(r.out, HasSubstr("status 143")) << r.out << r.err;  // 128 + SIGTERM
  std::vector<std::string> left;
  for (const fs::path& folder : {dir / "tmp", dir / "cache" / "emulate"})
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.path().extension() != ".lock") left.push_back(entry.path().string());
  EXPECT_TRUE(left.empty()) << ::testing::PrintToString(left);
  fs::remove_all(dir);
}

// Inline PTX outside a guarded helper cannot run on the host: the build fails (exit 1, never 2)
// and the note says where PTX belongs.
TEST(EmulateRuntime, InlinePtxOutsideAHelperIsExplained) {
  fs::path dir = scratch("asm");
  std::string cu = read_file(source_dir() / "samples" / "expected" / "vector_add.sm_90a.cu");
  const std::string from = "  const uint32_t tile_number = blockIdx.x;\n";
  ASSERT_NE(cu.find(from), std::string::npos);
  cu.replace(cu.find(from), from.size(), from + "  asm volatile(\"bar.sync 0;\");\n");
  write_file(dir / "asm.cu", cu);
  CommandResult r = run_command(tilec("emulate samples/vector_add.tile --cu " + (dir / "asm.cu").string()));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("every asm must sit in a prelude helper under #ifndef TILEC_EMULATE"));
  fs::remove_all(dir);
}

// CTAs on two executor workers: the same results, and the same report byte for byte (reports are
// collected, deduplicated and printed in .cu line order, whichever worker found them first).
TEST(EmulateRuntime, TwoWorkersGiveTheSameResultsAndReports) {
  fs::path dir = scratch("workers");
  std::string cu = read_file(source_dir() / "samples" / "expected" / "gemm.sm_90a.cu");
  const std::string fence = "tilec_fence_proxy_async();  // the box is read by TMA";
  ASSERT_NE(cu.find(fence), std::string::npos);
  cu.replace(cu.find(fence), fence.size(), "");
  write_file(dir / "unfenced.cu", cu);
  const std::string common = "emulate samples/gemm.tile --dims M=520,N=264,K=136 --sms 4 --schedules 1";
  CommandResult one = run_command(tilec(common + " --workers 1"));
  CommandResult two = run_command(tilec(common + " --workers 2"));
  EXPECT_EQ(one.status, 0) << one.out << one.err;
  EXPECT_EQ(two.status, 0) << two.out << two.err;
  EXPECT_THAT(two.out, HasSubstr("schedule eager: C ok (max abs error 0"));
  CommandResult broken_one = run_command(tilec(common + " --workers 1 --cu " + (dir / "unfenced.cu").string()));
  CommandResult broken_two = run_command(tilec(common + " --workers 2 --cu " + (dir / "unfenced.cu").string()));
  EXPECT_EQ(broken_two.status, 1);
  EXPECT_THAT(broken_two.err, HasSubstr("missing fence.proxy.async"));
  EXPECT_EQ(broken_one.err, broken_two.err);
  fs::remove_all(dir);
}

// An access outside a tensor (issue 18's negative tile coordinates read before a tensor and showed
// only as mismatches, or a crash): every tensor lies between guard pages, ending at the trailing
// one in the eager run and starting at the leading one in the lazy run, so a read past the end, a
// write past the end and a read before the start are each reported with the tensor's name, the
// offset, the CUDA thread and the .cu and .tile lines. vector_add at N = 1000: one CTA, thread t holds columns 4t..4t+3.
TEST(EmulateRuntime, AccessesOutsideATensorAreReportedByName) {
  fs::path dir = scratch("bounds");
  const std::string cu = read_file(source_dir() / "samples" / "expected" / "vector_add.sm_90a.cu");
  struct Case {
    const char* name;
    const char* find;
    const char* replace;
    const char* report;
  };
  const Case cases[] = {
      {"read_past_end", "load_vector<4>(&x[s * 4], X, row, column, 1, N, X_vectors);",
       "load_vector<4>(&x[s * 4], X, row, column, 1, N + 64, X_vectors);",
       "out-of-bounds global memory access: a read reaching byte offset 4000 of tensor X (past its last byte), whose "
       "4000 bytes are offsets 0 to 3999; by thread 250 (warp 7, warpgroup 1) of CTA (0, 0, 0), at "},
      {"write_past_end", "store_vector<4>(Z, row, column, 1, N, Z_vectors, &t1[s * 4]);",
       "store_vector<4>(Z, row, column, 1, N + 64, Z_vectors, &t1[s * 4]);",
       "a write reaching byte offset 4000 of tensor Z (past its last byte)"},
      {"read_before_start", "load_vector<4>(&y[s * 4], Y, row, column, 1, N, Y_vectors);",
       "load_vector<4>(&y[s * 4], Y - 64, row, column, 1, N, Y_vectors);",
       "a read reaching byte offset -256 of tensor Y (before its first byte), whose 4000 bytes are offsets 0 to 3999; "
       "by thread 0 (warp 0, warpgroup 0)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string broken = cu;
    ASSERT_NE(broken.find(c.find), std::string::npos);
    broken.replace(broken.find(c.find), std::strlen(c.find), c.replace);
    const fs::path path = dir / (std::string(c.name) + ".cu");
    write_file(path, broken);
    CommandResult r = run_command(tilec("emulate samples/vector_add.tile --dims N=1000 --cu " + path.string()));
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.report));
    // Where: the kernel's .cu line (and its .tile line), and the prelude helper's, from addr2line.
    EXPECT_THAT(r.err, HasSubstr(std::string(c.name) + ".cu:"));
    EXPECT_THAT(r.err, HasSubstr("(samples/vector_add.tile:"));
    EXPECT_THAT(r.err, HasSubstr("the kernel accessed memory it may not"));
  }
  fs::remove_all(dir);
}

// A hand-edited .cu that adds x to itself instead of y: the emulated result differs from the
// .tile's, and the report names the output and the first mismatching index.
TEST(EmulateRuntime, AHandBrokenCuIsReportedAsAMismatch) {
  fs::path dir = scratch("edited");
  CommandResult compiled = run_command(tilec("compile samples/vector_add.tile -o " + (dir / "edited.cu").string()));
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  std::string cu = read_file(dir / "edited.cu");
  const std::string from = "add_f32(x[k], y[k])";
  ASSERT_NE(cu.find(from), std::string::npos);
  cu.replace(cu.find(from), from.size(), "add_f32(x[k], x[k])");
  write_file(dir / "edited.cu", cu);
  CommandResult r = run_command(tilec("emulate samples/vector_add.tile --dims N=2000 --cu " + (dir / "edited.cu").string()));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("kernel vector_add, schedule eager: Z differs from the interpreter's result"));
  EXPECT_THAT(r.err, HasSubstr("first at [0]"));
  fs::remove_all(dir);
}

// A .cu compiled from another program (or from this one before its parameters changed) is an
// input error naming the launcher it lacks, not the host compiler's "not declared".
TEST(EmulateRuntime, ACuFromAnotherProgramIsRefusedByName) {
  fs::path dir = scratch("other");
  CommandResult compiled = run_command(tilec("compile samples/vector_add.tile -o " + (dir / "other.cu").string()));
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  CommandResult r = run_command(tilec("emulate samples/softmax.tile --cu " + (dir / "other.cu").string()));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("has no `launch_softmax(const float* X, float* Y, int64_t R, cudaStream_t stream)`"));
  fs::remove_all(dir);
}

// Register tiles whose frame is not a multiple of the CTA's threads: padded slots (rows past 24,
// columns past 100) must be left out of the reductions and stores, every real element kept
// (a slot formula without parentheses once dropped rows 16-23 of the column sum).
TEST(EmulateRuntime, PaddedRegisterFramesReduceEveryElement) {
  fs::path dir = scratch("padded");
  write_file(dir / "column_sum.tir", R"(module

kernel @column_sum(%X: tensor<R, C, f32>, %Y: tensor<1, C, f32>) {
  %C = dim %X {axis = 1} : index
  %0 = constant {value = 0} : index
  %n = grid_ids %C {schedule = "tiles"} : index
  %x = load %X, %0, %n : tile<24x64xf32, reg>
  %s = reduce_sum %x {axis = 0} : tile<1x64xf32, reg>
  store %Y, %0, %n, %s
  return
}
)");
  write_file(dir / "row_max.tir", R"(module

kernel @row_max(%X: tensor<R, 100, f32>, %Y: tensor<R, 1, f32>) {
  %R = dim %X {axis = 0} : index
  %0 = constant {value = 0} : index
  %m = grid_ids %R {schedule = "tiles"} : index
  %x = load %X, %m, %0 : tile<4x100xf32, reg>
  %s = reduce_max %x {axis = 1} : tile<4x1xf32, reg>
  %t = reduce_sum %x {axis = 1} : tile<4x1xf32, reg>
  %u = add %s, %t : tile<4x1xf32, reg>
  store %Y, %m, %0, %u
  return
}
)");
  CommandResult sums = run_command(tilec("emulate " + (dir / "column_sum.tir").string() + " --dims R=50,C=130"));
  EXPECT_EQ(sums.status, 0) << sums.out << sums.err;
  CommandResult maxima = run_command(tilec("emulate " + (dir / "row_max.tir").string() + " --dims R=9 --target sm_100a"));
  EXPECT_EQ(maxima.status, 0) << maxima.out << maxima.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tilec::testing
