// tests/cli/cli_test.cpp — the tilec command line: help, exit statuses, bad inputs and paths,
// the stage options of compile, and run's error reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string tilec(const std::string& arguments) {
  return "cd " + source_dir().string() + " && " + tilec_binary() + " " + arguments;
}

fs::path temp_file(const std::string& name, const std::string& text) {
  fs::path path = fs::temp_directory_path() / ("tilec_cli_" + std::to_string(::getpid()) + "_" + name);
  write_file(path, text);
  return path;
}

TEST(Cli, HelpExplainsEverySubcommand) {
  CommandResult r = run_command(tilec("--help"));
  EXPECT_EQ(r.status, 0);
  for (const char* sub : {"compile", "run", "reorder"}) EXPECT_THAT(r.out, HasSubstr(sub));
  CommandResult compile = run_command(tilec("compile --help"));
  EXPECT_EQ(compile.status, 0);
  for (const char* option : {"--emit", "--stop-after", "--target", "--print-ir-after-all", "--time-passes", "-D"})
    EXPECT_THAT(compile.out, HasSubstr(option));
}

// IR text edited after insert-sync so that a barrier expects two arrivals: warp-specialize (one
// agent arrives once) refuses it as an input error with the op's location, exit 1. An empty
// barrier's said "internal error" and exited 2, which means a bug in tilec; a full barrier's
// compiled to a kernel that would deadlock on the GPU (both found by helpers).
TEST(Cli, AnEditedBarrierArrivalCountIsAnInputError) {
  for (const auto& [barrier, message] :
       {std::pair{"%a_pipe_empty", "samples/gemm.tile:13:3: error: kernel @gemm: the empty mbarrier %a_pipe_empty expects "
                                   "2 arrivals per phase, but its one consumer agent arrives once"},
        std::pair{"%a_pipe_full", "samples/gemm.tile:13:3: error: kernel @gemm: the full mbarrier %a_pipe_full expects 2 "
                                  "arrivals per phase, but its one producer agent arrives once, with its transaction "
                                  "bytes"}}) {
    std::string ir = read_file(source_dir() / "tests" / "golden" / "warp-specialize" / "gemm.tir");
    const std::string from = std::string(barrier) + " = mbarrier_create {arrivals = 1";
    ASSERT_NE(ir.find(from), std::string::npos) << from;
    ir.replace(ir.find(from), from.size(), std::string(barrier) + " = mbarrier_create {arrivals = 2");
    fs::path path = temp_file("arrivals.tir", ir);
    CommandResult r = run_command(tilec("compile " + path.string() + " -o /dev/null"));
    fs::remove(path);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  }
}

TEST(Cli, UsageErrorsExitOne) {
  EXPECT_EQ(run_command(tilec("")).status, 1);
  EXPECT_EQ(run_command(tilec("frobnicate")).status, 1);
  EXPECT_EQ(run_command(tilec("compile samples/vector_add.tile --target sm_80")).status, 1);
  EXPECT_EQ(run_command(tilec("compile samples/vector_add.tile --stop-after no-such-pass")).status, 1);
  EXPECT_EQ(run_command(tilec("compile samples/vector_add.tile -D BLOCK")).status, 1);
}

// Found by a helper using tilec from build systems: output lost to a full disk exited 0 (--emit
// ir) or 2, "internal error" (the .cu); a failed -o write left a truncated file that make took as
// up to date; -o onto the input replaced the source. Writes past `ulimit -f` fail as a full disk
// does (SIGXFSZ ignored, so the write returns EFBIG).
TEST(Cli, AnOutputThatCannotBeWrittenIsAnErrorAndLeavesNoPartFile) {
  if (fs::exists("/dev/full"))
    for (const char* emit : {"cu", "ir"}) {
      CommandResult full =
          run_command("(" + tilec(std::string("compile samples/vector_add.tile --emit ") + emit + " > /dev/full)"));
      EXPECT_EQ(full.status, 1) << emit << full.err;
      EXPECT_THAT(full.err, HasSubstr("tilec: error: cannot write to standard output: No space left on device"));
    }
  // An error message that cannot be written (standard error full or closed) aborted (134): it
  // exits 1, as the error it carried (a hunt).
  if (fs::exists("/dev/full")) {
    const fs::path bad = temp_file("bad_for_stderr.tile", "kernel");
    EXPECT_EQ(run_command("(" + tilec("compile " + bad.string()) + " 2>/dev/full)").status, 1);
    EXPECT_EQ(run_command("(" + tilec("compile " + bad.string()) + " 2>&-)").status, 1);
  }
  const fs::path out = temp_file("kept.cu", "the .cu of an earlier build\n");
  CommandResult big = run_command("trap '' XFSZ; ulimit -f 4; " + tilec("compile samples/gemm.tile -o " + out.string()));
  EXPECT_EQ(big.status, 1) << big.err;
  EXPECT_THAT(big.err, HasSubstr("cannot write '" + out.string() + "'"));
  EXPECT_EQ(read_file(out), "the .cu of an earlier build\n") << "a failed write keeps the earlier file whole";
  for (const auto& entry : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(entry.path().filename().string().find(out.filename().string() + ".tilec-"), std::string::npos) << entry.path();
  fs::remove(out);
  const fs::path source = temp_file("self.tile", read_file(source_dir() / "samples" / "vector_add.tile"));
  CommandResult self = run_command(tilec("compile " + source.string() + " -o " + source.parent_path().string() + "/./" +
                                         source.filename().string()));
  EXPECT_EQ(self.status, 1);
  EXPECT_THAT(self.err, HasSubstr("the input and -o are the same file"));
  EXPECT_THAT(read_file(source), HasSubstr("kernel vector_add"));
  CommandResult twice = run_command(tilec("compile " + source.string() + " -o k.cu --report k.cu"));
  EXPECT_EQ(twice.status, 1);
  EXPECT_THAT(twice.err, HasSubstr("-o and --report are the same file 'k.cu'; give each its own file"));
  // Two outputs on standard output ran together, and --depfile - made a file named '-' (a hunt).
  CommandResult both = run_command(tilec("compile samples/vector_add.tile --header -"));
  EXPECT_EQ(both.status, 1);
  EXPECT_THAT(both.err, HasSubstr("--header - and the .cu both write to standard output; give -o FILE"));
  CommandResult dash = run_command(tilec("compile samples/vector_add.tile --depfile - -o k.cu"));
  EXPECT_EQ(dash.status, 1);
  EXPECT_THAT(dash.err, HasSubstr("--depfile -: make and ninja read a dependency file from a path"));
  // Back-end options the chosen output never reaches are refused, as --header is (they were
  // accepted and ignored: an options hunt).
  CommandResult prefix_ir = run_command(tilec("compile samples/vector_add.tile --emit ir --kernel-prefix x_"));
  EXPECT_EQ(prefix_ir.status, 1);
  EXPECT_THAT(prefix_ir.err, HasSubstr("--kernel-prefix names the .cu's kernels and launchers; it applies to --emit cu"));
  CommandResult tokens_shared = run_command(tilec("compile samples/vector_add.tile --emit tokens --plain-tiles shared"));
  EXPECT_EQ(tokens_shared.status, 1);
  EXPECT_THAT(tokens_shared.err, HasSubstr("--plain-tiles shared applies to --emit cu"));
  // run's results are on standard output: a report there ran into them (a docs audit).
  CommandResult run_dash = run_command(tilec("run samples/vector_add.tile --report -"));
  EXPECT_EQ(run_dash.status, 1);
  EXPECT_THAT(run_dash.err, HasSubstr("--report -: the run's results go to standard output"));
  // A warning that cannot be written does not fail the compile (the .cu was not written: a docs
  // audit).
  const fs::path warned = temp_file("warned.tile",
      "kernel k(X: tensor<R, 11008, f32>, W: tensor<1, 11008, f32>, B: tensor<1, 11008, f32>, Y: tensor<R, 11008, f32>)\n"
      "    grid tiles(cdiv(R, 4)) as (r) {\n"
      "  x = load X[r, 0] : <4, 11008>;\n  w = load W[0, 0] : <1, 11008>;\n  b = load B[0, 0] : <1, 11008>;\n"
      "  m = sum(x, axis = 1) / 11008.0;\n  d = x - m;\n  v = sum(d * d, axis = 1) / 11008.0;\n"
      "  store Y[r, 0] = d * rsqrt(v + 0.00001) * w + b;\n}\n");
  ASSERT_THAT(run_command(tilec("compile " + warned.string() + " -o /dev/null")).err, HasSubstr("warning:"));
  const fs::path warned_cu = warned.string() + ".cu";
  CommandResult quiet = run_command("(" + tilec("compile " + warned.string() + " -o " + warned_cu.string()) + " 2>&-)");
  EXPECT_EQ(quiet.status, 0);
  EXPECT_THAT(read_file(warned_cu), HasSubstr("Generated by tilec"));
  fs::remove(warned_cu);
  // run's --report onto the input wrote the HTML over the kernel's source (a hunt).
  CommandResult report = run_command(tilec("run " + source.string() + " --report " + source.string()));
  EXPECT_EQ(report.status, 1);
  EXPECT_THAT(report.err, HasSubstr("the input and --report are the same file"));
  EXPECT_THAT(read_file(source), HasSubstr("kernel vector_add"));
  fs::remove(source);
}

// The input's path is quoted in the .cu's header comment: a line break in it put the rest of
// the name outside the comment, and nvcc failed (a helper's hunt); a backslash ending it would
// splice the next line into the comment.
TEST(Cli, TheHeaderCommentKeepsAnyFileNameInsideIt) {
  const fs::path source = temp_file("line\nbreak\\", read_file(source_dir() / "samples" / "vector_add.tile"));
  CommandResult r = run_command(tilec("compile '" + source.string() + "'"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string name = source.filename().string();
  EXPECT_THAT(r.out, HasSubstr("//   source:   " + source.parent_path().string() + "/" +
                               name.substr(0, name.find('\n')) + "\\x0abreak\\x5c\n//   target:"));
  fs::remove(source);
}

// --header declares the launchers, so a call that no longer matches the kernel fails to compile
// (a helper's hunt: a copied prototype linked after a parameter was added, and N got the stream).
// The calls are compiled by the host compiler against the emulation's CUDA headers (no nvcc).
TEST(Cli, TheLauncherHeaderMakesAStaleCallACompileError) {
  const fs::path dir = fs::temp_directory_path() / ("tilec_cli_header_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string tile = read_file(source_dir() / "samples" / "vector_add.tile");
  const std::string from = "Z: tensor<N, f32>)";
  ASSERT_NE(tile.find(from), std::string::npos);
  tile.replace(tile.find(from), from.size(), "Z: tensor<N, f32>, alpha: f32)");
  write_file(dir / "k.tile", tile);
  CommandResult r = run_command(tilec("compile " + (dir / "k.tile").string() + " -o " + (dir / "k.cu").string() +
                                      " --header " + (dir / "k.h").string()));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string header = read_file(dir / "k.h");
  EXPECT_THAT(header, HasSubstr("#pragma once\n"));
  EXPECT_THAT(header, HasSubstr("extern \"C\" cudaError_t launch_vector_add(const float* X, const float* Y, float* Z, "
                                "float alpha, int64_t N, cudaStream_t stream);"));
  EXPECT_THAT(read_file(dir / "k.cu"), HasSubstr("extern \"C\" cudaError_t launch_vector_add(const float* X, const "
                                                 "float* Y, float* Z, float alpha, int64_t N, cudaStream_t stream) {"));
  const std::string cxx = "c++ -std=c++20 -fsyntax-only -DTILEC_EMULATE -I" +
                          (source_dir() / "runtime" / "emulate" / "include").string() + " -I" + dir.string() + " ";
  write_file(dir / "now.cpp", "#include \"k.h\"\ncudaError_t f(float* p) { return launch_vector_add(p, p, p, 2.0f, 8, nullptr); }\n");
  write_file(dir / "stale.cpp", "#include \"k.h\"\ncudaError_t f(float* p) { return launch_vector_add(p, p, p, 8, nullptr); }\n");
  CommandResult now = run_command(cxx + (dir / "now.cpp").string());
  EXPECT_EQ(now.status, 0) << now.err;
  CommandResult stale = run_command(cxx + (dir / "stale.cpp").string());
  EXPECT_NE(stale.status, 0) << "the call without alpha compiled";
  EXPECT_THAT(stale.err, HasSubstr("launch_vector_add"));
  // --header belongs to the .cu: with --emit ir it is an error, and it may not be -o's file.
  CommandResult ir = run_command(tilec("compile samples/vector_add.tile --emit ir --header " + (dir / "x.h").string()));
  EXPECT_EQ(ir.status, 1);
  EXPECT_THAT(ir.err, HasSubstr("--header declares the launchers of the .cu; it applies to --emit cu"));
  CommandResult same = run_command(tilec("compile samples/vector_add.tile -o " + (dir / "x.h").string() + " --header " +
                                         (dir / "x.h").string()));
  EXPECT_EQ(same.status, 1);
  EXPECT_THAT(same.err, HasSubstr("-o and --header are the same file"));
  fs::remove_all(dir);
}

// --kernel-prefix renames every kernel's functions (a library compiles one .tile for sm_90a and
// sm_100a, and both files defined gemm_kernel and launch_gemm); a prefix that would not make C++
// identifiers of our own is refused, naming what to write.
TEST(Cli, AKernelPrefixRenamesTheKernelsFunctions) {
  CommandResult r = run_command(tilec("compile samples/softmax.tile --kernel-prefix lib2_"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("lib2_softmax_kernel("));
  EXPECT_THAT(r.out, HasSubstr("extern \"C\" cudaError_t launch_lib2_softmax("));
  EXPECT_THAT(r.out, Not(HasSubstr("launch_softmax(")));
  EXPECT_THAT(r.err, Not(HasSubstr("warning")));
  // A kernel whose prefixed name C++ reserves is renamed, and the warning names the prefix.
  const fs::path line = temp_file("line.tile", "kernel line(X: tensor<N, f32>) grid tiles(1) as (i) {\n"
                                                "  store X[i] = zeros<8, f32>();\n}\n");
  CommandResult renamed = run_command(tilec("compile " + line.string() + " --kernel-prefix in"));
  fs::remove(line);
  ASSERT_EQ(renamed.status, 0) << renamed.err;
  EXPECT_THAT(renamed.out, HasSubstr("launch_inline_1("));
  EXPECT_THAT(renamed.err, HasSubstr("kernel 'line' is emitted as inline_1_kernel, launched by launch_inline_1 "
                                     "('inline' is reserved in CUDA C++"));
  for (const auto& [prefix, why] : std::vector<std::pair<std::string, std::string>>{
           {"9x", "must start with a letter"},
           {"_x", "must start with a letter"},
           {"a__b", "holds '__', which C++ reserves"},
           {"a-b", "is not the start of a C++ identifier"},
           {"tilec_", "would make names starting with 'tilec_'"},
           {"cudaFoo", "would make names starting with 'cuda'"}}) {
    CommandResult bad = run_command(tilec("compile samples/softmax.tile --kernel-prefix " + prefix));
    EXPECT_NE(bad.status, 0) << prefix;
    EXPECT_THAT(bad.err, HasSubstr("tilec: error: --kernel-prefix: '" + prefix + "' " + why)) << prefix;
  }
}

TEST(Cli, CommandLineErrorsSayTilecError) {
  CommandResult typo = run_command(tilec("--versio"));
  EXPECT_EQ(typo.status, 1);
  EXPECT_THAT(typo.err, HasSubstr("tilec: error: unknown option '--versio'"));
  CommandResult missing = run_command(tilec("sched"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("tilec: error: input is required"));
}

TEST(Cli, BadPathsAreClearErrors) {
  CommandResult missing = run_command(tilec("compile no/such/file.tile"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("cannot open 'no/such/file.tile'"));
  CommandResult directory = run_command(tilec("compile samples"));
  EXPECT_EQ(directory.status, 1);
  EXPECT_THAT(directory.err, HasSubstr("is a directory"));
  fs::path empty = temp_file("empty.tile", "  \n");
  CommandResult blank = run_command(tilec("compile " + empty.string()));
  EXPECT_EQ(blank.status, 1);
  EXPECT_THAT(blank.err, HasSubstr("the file is empty"));
  fs::remove(empty);
  CommandResult unwritable = run_command(tilec("compile samples/vector_add.tile -o /no/such/dir/out.cu"));
  EXPECT_EQ(unwritable.status, 1);
  EXPECT_THAT(unwritable.err, HasSubstr("cannot write '/no/such/dir/out.cu'"));
}

// Found by a helper writing wrong programs: standard input and devices had no size limit
// (`compile /dev/zero` read until memory ran out), and an --inputs entry that is a directory
// ended in an internal error.
TEST(Cli, StandardInputDevicesAndInputDirectoriesAreBoundedInputErrors) {
  CommandResult piped = run_command("(head -c 17000000 /dev/zero | tr '\\0' ' ' | " + tilec_binary() + " compile - -o /dev/null)");
  EXPECT_EQ(piped.status, 1) << piped.err;
  EXPECT_THAT(piped.err, HasSubstr("'<stdin>' is more than 16777216 bytes, the limit"));
  CommandResult device = run_command(tilec("compile /dev/zero -o /dev/null"));
  EXPECT_EQ(device.status, 1) << device.err;
  EXPECT_THAT(device.err, HasSubstr("'/dev/zero' is more than 16777216 bytes, the limit"));
  const fs::path inputs = fs::temp_directory_path() / ("tilec_cli_inputs_" + std::to_string(::getpid()));
  fs::create_directories(inputs / "X.bin");
  CommandResult directory = run_command(tilec("run samples/vector_add.tile --dims N=256 --inputs " + inputs.string()));
  EXPECT_EQ(directory.status, 1) << directory.err;
  EXPECT_THAT(directory.err, HasSubstr("X.bin is a directory, not a file of X's bytes"));
  fs::remove_all(inputs);
}

// --print-ir-after parse printed nothing ("parse" is the front end, not a pass); a --dims name no
// kernel has suggested a -D that would fail too, where the user meant another spelling.
TEST(Cli, PrintIrAfterParseAndAMisspelledDimension) {
  CommandResult parsed = run_command(tilec("compile samples/vector_add.tile --print-ir-after parse -o /dev/null"));
  EXPECT_EQ(parsed.status, 0) << parsed.err;
  EXPECT_THAT(parsed.err, HasSubstr("// ----- IR after parse -----\n// tilec IR\nmodule {passes = [\"parse\"]"));
  CommandResult dims = run_command(tilec("run samples/vector_add.tile --dims n=64"));
  EXPECT_THAT(dims.err, HasSubstr("--dims n=64: no kernel run has a dimension named n (its dimensions: N; did you mean "
                                  "N?; a `const` is set with -D, not --dims)"));
}

// Found by a helper writing wrong programs: a misspelled statement keyword or `load` gave an
// unrelated syntax error; a float cdiv() operand was told to cast the other operand to f32 (which
// cdiv then refused); a refused loop bound went on to warn that the loop never runs; a constant
// `B % -1` was called an overflow.
TEST(Cli, MisspellingsAndFloatCdivOperandsSayWhatToWrite) {
  auto compile = [](const std::string& body, const std::string& grid = "cdiv(N, 128)") {
    fs::path path = temp_file("typo.tile", "const B = -9223372036854775807 - 1;\nconst C = B % -1;\n"
                                           "kernel v(X: tensor<N, f32>, Z: tensor<N, f32>) grid tiles(" + grid +
                                           ") as (q) {\n  x = load X[q] : <128>;\n" + body + "\n  store Z[q] = x;\n}\n");
    CommandResult r = run_command(tilec("compile " + path.string() + " -o /dev/null"));
    fs::remove(path);
    return r;
  };
  EXPECT_EQ(compile("").status, 0);
  EXPECT_THAT(compile("  stor Z[q] = x;").err, HasSubstr(":5:3: error: unknown statement 'stor'; did you mean 'store'?"));
  EXPECT_THAT(compile("  fro j in 0 .. 2 { }").err, HasSubstr("unknown statement 'fro'; did you mean 'for'?"));
  // One error per bad character or number: `x + $` went on to "expected an expression", and
  // 1.2.3 read as 1.2 then ".3".
  CommandResult lexed = compile("  y = x + $;\n  w = 1.2.3 + 1e+;");
  EXPECT_EQ(occurrences(lexed.err, "error:"), 3u) << lexed.err;
  EXPECT_THAT(lexed.err, HasSubstr("malformed number '1.2.3'"));
  EXPECT_THAT(lexed.err, HasSubstr("malformed number '1e+'"));
  EXPECT_THAT(compile("  y = x + zero<128, f32>();").err,
              HasSubstr(":5:11: error: unknown tile constructor 'zero'; did you mean 'zeros'?"));
  fs::path typed = temp_file("typed.tile", "kernel v(X: Tensor<N, f32>) grid tiles(1) as (i) {\n}\n");
  EXPECT_THAT(run_command(tilec("compile " + typed.string())).err,
              HasSubstr(":1:13: error: unknown parameter type 'Tensor<'; a tensor parameter is tensor<dims..., TYPE> "
                        "(did you mean 'tensor'?)"));
  fs::remove(typed);
  fs::path kernal = temp_file("kernal.tile", "kernal v(X: tensor<N, f32>) grid tiles(1) as (i) {\n}\n");
  EXPECT_THAT(run_command(tilec("compile " + kernal.string())).err,
              HasSubstr("expected 'const', 'assert' or 'kernel' at the top level (did you mean 'kernel'?)"));
  fs::remove(kernal);
  EXPECT_THAT(run_command(tilec("run samples/vector_add.tile --dims N=99999999999999999999")).err,
              HasSubstr("--dims N=99999999999999999999: the extent is past 2^63 - 1"));
  // Errors about a store's or load's tensor point at its name, not at `store` / `load`.
  EXPECT_THAT(compile("  store W[q] = x;").err, HasSubstr(":5:9: error: unknown tensor 'W'"));
  EXPECT_THAT(compile("  y = load X[q, 0] : <128>;").err, HasSubstr(":5:12: error: 2 tile coordinates given"));
  EXPECT_THAT(compile("  y = lod X[q] : <128>;").err, HasSubstr(":5:7: error: unknown name 'lod' before 'X'; did you "
                                                                   "mean 'load'?"));
  CommandResult cdiv = compile("", "cdiv(N, 128.0)");
  EXPECT_EQ(cdiv.status, 1);
  EXPECT_THAT(cdiv.err, HasSubstr("cdiv() takes integers (an index or an integer type)"));
  EXPECT_THAT(cdiv.err, Not(HasSubstr("cast(N, f32)")));
  CommandResult bound = compile("  for j in 0 .. 4.5 carry (x) { x = x + 1.0; }");
  EXPECT_THAT(bound.err, HasSubstr("the number 4.5 is not an integer"));
  EXPECT_THAT(bound.err, Not(HasSubstr("never runs")));
  // A constant refused for a -D value names the -D, and its uses say nothing more ("unknown name
  // 'TILES'" blamed the grid).
  fs::path tiles = temp_file("tiles.tile", "const BM = 64;\nconst TILES = cdiv(4096, BM);\nkernel v(X: tensor<N, f32>, "
                                           "Z: tensor<N, f32>) grid tiles(TILES) as (i) {\n  store Z[i] = load X[i] "
                                           ": <128>;\n}\n");
  CommandResult refused = run_command(tilec("compile " + tiles.string() + " -D BM=0 -o /dev/null"));
  fs::remove(tiles);
  EXPECT_EQ(refused.status, 1);
  EXPECT_THAT(refused.err, HasSubstr("cdiv() needs a non-negative integer and a positive integer; these are 4096 and "
                                     "0 (with -D BM=0)"));
  EXPECT_THAT(refused.err, Not(HasSubstr("unknown name")));
}

TEST(Cli, ATirThatFailsTheVerifierIsAnInputError) {
  fs::path bad = temp_file("bad.tir", "module\nkernel @k() {\n  %0 = add : index loc(3:3)\n  return\n}\n");
  CommandResult r = run_command(tilec("compile " + bad.string() + " --emit ir"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr(":3:3: error: 'add': has 0 operands, expected 2"));
  fs::remove(bad);
}

TEST(Cli, DiagnosticsCarryFileLineColumnAndCaret) {
  fs::path bad = temp_file("bad.tile", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = nope;\n}\n");
  CommandResult r = run_command(tilec("compile " + bad.string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr(bad.string() + ":2:16: error: unknown name 'nope'\n    store X[i] = nope;\n                 ^\n"));
  fs::remove(bad);
}

// IR that tilec printed from a .tile keeps the .tile's positions in loc(): a diagnostic about it
// names the .tile and quotes the .tile's line (it used to name the .tir and quote whatever line
// of the .tir had that number). Where the .tile cannot be read, nothing is quoted; syntax errors
// in the .tir text stay at the .tir's lines.
TEST(Cli, DiagnosticsAboutPrintedIrPointIntoTheTileItCameFrom) {
  CommandResult printed = run_command(tilec("compile samples/gemm.tile --emit ir --stop-after parse"));
  ASSERT_EQ(printed.status, 0) << printed.err;
  std::string ir = printed.out;
  const std::string result_type = ": tile<128x256xf32, reg> loc(14:11)";
  ASSERT_NE(ir.find(result_type), std::string::npos);
  ir.replace(ir.find(result_type), result_type.size(), ": tile<128x7xf32, reg> loc(14:11)");
  fs::path path = temp_file("printed.tir", ir);
  CommandResult r = run_command(tilec("compile " + path.string() + " -o /dev/null"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("samples/gemm.tile:14:11: error: 'mma': the result has the accumulator's type\n"
                               "      acc = mma(a, b, acc);\n            ^\n"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr(path.string())));
  CommandResult elsewhere = run_command("cd / && " + tilec_binary() + " compile " + path.string() + " -o /dev/null");
  EXPECT_EQ(elsewhere.status, 1);
  EXPECT_THAT(elsewhere.err, HasSubstr("samples/gemm.tile:11:3: error: 'for': yields tile<128x7xf32, reg> for a result "
                                       "of type tile<128x256xf32, reg>\nsamples/gemm.tile:14:11: error: 'mma': "));
  write_file(path, ir + "kernel @\n");
  CommandResult syntax = run_command(tilec("compile " + path.string() + " -o /dev/null"));
  EXPECT_EQ(syntax.status, 1);
  EXPECT_THAT(syntax.err, HasSubstr(path.string() + ":"));
  fs::remove(path);
}

// A loop without mma is not software-pipelined (docs/passes/generate_schedule.md), so the plain
// CUDA backend can emit it: the GEMV compiles, and `pipeline(4)` on its loop only earns a note.
TEST(Cli, ALoopWithoutMmaCompilesWithThePlainBackend) {
  const std::string gemv =
      "const BM = 4;\nconst BK = 256;\n"
      "kernel gemv(A: tensor<M, K, bf16>, X: tensor<1, K, bf16>, Y: tensor<M, 1, f32>) grid tiles(cdiv(M, BM)) as (m) {\n"
      "  acc = zeros<BM, 1, f32>();\n"
      "  for k in 0 .. cdiv(K, BK) PIPELINEcarry (acc) {\n"
      "    a = cast(load A[m, k] : <BM, BK>, f32);\n"
      "    x = cast(load X[0, k] : <1, BK>, f32);\n"
      "    acc = acc + sum(a * x, axis = 1);\n"
      "  }\n"
      "  store Y[m, 0] = acc;\n"
      "}\n";
  auto with_pipeline = [&](const std::string& pipeline) {
    std::string text = gemv;
    text.replace(text.find("PIPELINE"), 8, pipeline);
    return text;
  };
  fs::path plain = temp_file("gemv.tile", with_pipeline(""));
  CommandResult r = run_command(tilec("compile " + plain.string()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("gemv"));
  fs::remove(plain);

  fs::path pipelined = temp_file("gemv4.tile", with_pipeline("pipeline(4) "));
  CommandResult four = run_command(tilec("compile " + pipelined.string()));
  EXPECT_EQ(four.status, 0) << four.err;
  EXPECT_THAT(four.err, HasSubstr(pipelined.string() + ":5:3: note: pipeline(4) has no effect on a loop without mma"));
  fs::remove(pipelined);
}

TEST(Cli, StageOptionsPrintWhatTheySay) {
  CommandResult tokens = run_command(tilec("compile samples/vector_add.tile --emit tokens"));
  EXPECT_EQ(tokens.status, 0);
  EXPECT_THAT(tokens.out, HasSubstr("4:1 'kernel' kernel"));
  CommandResult ast = run_command(tilec("compile samples/vector_add.tile --emit ast"));
  EXPECT_EQ(ast.status, 0);
  EXPECT_THAT(ast.out, HasSubstr("kernel vector_add @4:1"));
  CommandResult after = run_command(tilec("compile samples/vector_add.tile --emit ir --print-ir-after fold-constants"));
  EXPECT_EQ(after.status, 0);
  EXPECT_THAT(after.err, HasSubstr("// ----- IR after fold-constants -----"));
  CommandResult timed = run_command(tilec("compile samples/vector_add.tile --time-passes -o /dev/null"));
  EXPECT_EQ(timed.status, 0);
  EXPECT_THAT(timed.err, HasSubstr("pass timings"));
  EXPECT_THAT(timed.err, HasSubstr("fold-constants"));
  CommandResult defined = run_command(tilec("compile samples/vector_add.tile -D BLOCK=256 --emit ir --stop-after parse"));
  EXPECT_EQ(defined.status, 0);
  EXPECT_THAT(defined.out, HasSubstr("tile<256xf32, reg>"));
  CommandResult undeclared = run_command(tilec("compile samples/vector_add.tile -D NOPE=1"));
  EXPECT_EQ(undeclared.status, 1);
  EXPECT_THAT(undeclared.err, HasSubstr("no constant named 'NOPE'"));
  // A dimension given with -D is bound at launch: the message says how (a CLI hunt).
  CommandResult dimension = run_command(tilec("compile samples/vector_add.tile -D N=5"));
  EXPECT_EQ(dimension.status, 1);
  EXPECT_THAT(dimension.err, HasSubstr("-D N: the program declares no constant named 'N'; N is a dimension, bound at "
                                       "launch: give it to tilec run or emulate as --dims N=5"));
  // A leading + is the value's sign (it was "not a number").
  CommandResult plus = run_command(tilec("compile samples/vector_add.tile -D BLOCK=+64 -o /dev/null"));
  EXPECT_EQ(plus.status, 0) << plus.err;
  // A -D value that is wrong says why, and only that: the constant keeps its declared value, so
  // its uses are not reported too.
  CommandResult wide = run_command(tilec("compile samples/vector_add.tile -D BLOCK=99999999999999999999"));
  EXPECT_EQ(wide.status, 1);
  EXPECT_THAT(wide.err, HasSubstr("-D BLOCK=99999999999999999999: the integer is too large (limit 2^63 - 1)"));
  CommandResult word = run_command(tilec("compile samples/vector_add.tile -D BLOCK=abc"));
  EXPECT_EQ(word.status, 1);
  EXPECT_THAT(word.err, HasSubstr("-D BLOCK=abc: the value is not a number"));
  // A value that underflows is too small, not "too large"; NaN is no value (found by a helper).
  CommandResult tiny = run_command(tilec("compile samples/vector_add.tile -D BLOCK=1e-400"));
  EXPECT_EQ(tiny.status, 1);
  EXPECT_THAT(tiny.err, HasSubstr("-D BLOCK=1e-400: the number is too small to represent"));
  CommandResult nan = run_command(tilec("compile samples/vector_add.tile -D BLOCK=nan"));
  EXPECT_EQ(nan.status, 1);
  EXPECT_THAT(nan.err, HasSubstr("-D BLOCK=nan: NaN is not a constant value"));
  for (const CommandResult* r : {&wide, &word}) {
    EXPECT_THAT(r->err, Not(HasSubstr("unknown name")));
    EXPECT_THAT(r->err, Not(HasSubstr("not an integer")));
  }
  // A value that is a number but the wrong one names the -D that set it; a float where cdiv()
  // takes integers says to write the integer (it advised cast(x, index), which refuses floats);
  // and a kernel whose stores failed through a constant is not also said to store nothing
  // (found by a helper writing kernels from the docs).
  CommandResult zero = run_command(tilec("compile samples/vector_add.tile -D BLOCK=0 -o /dev/null"));
  EXPECT_EQ(zero.status, 1);
  EXPECT_THAT(zero.err, HasSubstr("a tile dimension must be at least 1, got 0 (with -D BLOCK=0)"));
  CommandResult fraction = run_command(tilec("compile samples/vector_add.tile -D BLOCK=32.0 -o /dev/null"));
  EXPECT_EQ(fraction.status, 1);
  EXPECT_THAT(fraction.err, HasSubstr("cdiv() takes integers (an index or an integer type), and BLOCK is the number "
                                      "32.0 (with -D BLOCK=32.0): write an integer (32)"));
  for (const CommandResult* r : {&zero, &fraction}) EXPECT_THAT(r->err, Not(HasSubstr("stores nothing")));
  // A space after the '=' (CLI11 said only "The following arguments were not expected: 32").
  CommandResult spaced = run_command(tilec("compile samples/vector_add.tile -D BLOCK= 256 -o /dev/null"));
  EXPECT_EQ(spaced.status, 1);
  EXPECT_THAT(spaced.err, HasSubstr("tilec: error: -D BLOCK= has no value (the next word, '256', is not part of it); "
                                    "write -D NAME=VALUE as one word (-D BLOCK=256)"));
}

// What a user types that CLI11 alone answered badly (found auditing the docs and the command line).
TEST(Cli, CommandLineSlipsGetClearAnswers) {
  CommandResult unknown = run_command(tilec("frobnicate samples/gemm.tile"));
  EXPECT_EQ(unknown.status, 1);
  EXPECT_THAT(unknown.err, HasSubstr("unknown subcommand 'frobnicate' (the subcommands: compile, run"));
  CommandResult zero = run_command(tilec("run samples/vector_add.tile --sms 0"));
  EXPECT_EQ(zero.status, 1);
  EXPECT_THAT(zero.err, HasSubstr("--sms: Value 0 not in range 1 to 4096"));
  // --dims given twice adds up.
  CommandResult twice = run_command(tilec("run samples/gemm.tile --dims M=64 --dims N=72,K=40"));
  EXPECT_EQ(twice.status, 0) << twice.err;
  EXPECT_THAT(twice.out, HasSubstr("[K=40,M=64,N=72]"));
  // A name given two values takes the last, with a warning (it was silent; a helper).
  CommandResult again = run_command(tilec("run samples/vector_add.tile --dims N=10,N=20 -D BLOCK=512 -D BLOCK=256"));
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("warning: --dims N is given twice (10, then 20); 20 is used"));
  EXPECT_THAT(again.err, HasSubstr("warning: -D BLOCK is given twice (512, then 256); 256 is used"));
  // An option the chosen output never reaches is an error (--report and --emit-harness were
  // silently dropped beside --emit tokens, ast or ir; a helper).
  for (const auto& [given, message] :
       {std::pair{" --emit tokens --report /dev/null", "--emit tokens writes what the front end reads, before any pass; "
                                                       "--report applies to --emit ir and cu"},
        std::pair{" --emit ast --emit-harness", "--emit ast writes what the front end reads, before any pass; "
                                                "--emit-harness applies to --emit cu"},
        std::pair{" --emit ir --emit-harness", "--emit-harness adds a checking main() to the .cu; it applies to --emit "
                                               "cu, not --emit ir"}}) {
    CommandResult r = run_command(tilec(std::string("compile samples/gemm.tile -o /dev/null") + given));
    EXPECT_EQ(r.status, 1) << given;
    EXPECT_THAT(r.err, HasSubstr(message)) << given;
  }
  // A pass to print after the one the pipeline stops at never runs: a warning, not silence.
  CommandResult late = run_command(
      tilec("compile samples/gemm.tile --emit ir --stop-after parse-constraints --print-ir-after insert-sync -o /dev/null"));
  EXPECT_EQ(late.status, 0);
  EXPECT_THAT(late.err, HasSubstr("warning: --print-ir-after insert-sync: the pipeline stops after parse-constraints"));
  CommandResult tokens = run_command(tilec("compile samples/gemm.tile --emit tokens --stop-after insert-sync"));
  EXPECT_EQ(tokens.status, 1);
  EXPECT_THAT(tokens.err, HasSubstr("--stop-after applies to --emit ir"));
  CommandResult ast = run_command(tilec("compile samples/gemm.tile --emit ast --print-ir-after-all"));
  EXPECT_EQ(ast.status, 1) << "the passes' IR would never be printed";
  EXPECT_THAT(ast.err, HasSubstr("--print-ir-after-all applies to --emit ir and cu"));
  // --stop-after with --emit cu: before the last pass it is refused, naming --emit ir; after the
  // last one it is the whole pipeline (it was refused too, as "stops before code generation").
  CommandResult early = run_command(tilec("compile samples/gemm.tile --stop-after insert-sync -o /dev/null"));
  EXPECT_EQ(early.status, 1);
  EXPECT_THAT(early.err, HasSubstr("--stop-after insert-sync stops before code generation; use --emit ir"));
  CommandResult whole = run_command(tilec("compile samples/gemm.tile --stop-after issuer-only-waits"));
  EXPECT_EQ(whole.status, 0) << whole.err;
  EXPECT_EQ(whole.out, run_command(tilec("compile samples/gemm.tile")).out);
  // IR text on stdin is read as IR (its first line says so), as a .tir file is.
  CommandResult piped = run_command("(" + tilec("compile samples/vector_add.tile --emit ir --stop-after parse | ") +
                                    tilec_binary() + " compile - --emit ir --stop-after fold-constants)");
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_THAT(piped.out, HasSubstr("passes = [\"parse\", \"promote-mma-operands\", \"fold-constants\"]"));
  // IR printed from a .tile on stdin, broken and piped back: its positions are the .tile's, which
  // is gone, so the error quotes no line (it quoted the IR text's line of that number: a hunt).
  const fs::path stdin_ir = temp_file("from_stdin.tir", run_command("(" + tilec("compile - --emit ir --stop-after parse") +
                                                                    " < samples/vector_add.tile)").out);
  std::string broken = read_file(stdin_ir);
  const size_t add = broken.find("= add ");
  ASSERT_NE(add, std::string::npos) << broken;
  const size_t type = broken.find(": tile<", add);
  broken.replace(type, broken.find('>', type) - type + 1, ": tile<7xf32, reg>");
  write_file(stdin_ir, broken);
  CommandResult back = run_command("(" + tilec("compile - -o /dev/null") + " < " + stdin_ir.string() + ")");
  EXPECT_EQ(back.status, 1);
  EXPECT_THAT(back.err, HasSubstr("<stdin>:"));
  EXPECT_THAT(back.err, Not(HasSubstr("^"))) << "no line of the IR text is quoted";
  // IR text recording later passes is not the IR after parse: a warning, as for the other
  // recorded passes (it printed the input under that heading: a hunt).
  CommandResult parse_of_tir = run_command(
      tilec("compile tests/golden/issuer-only-waits/gemm.tir --print-ir-after parse -o /dev/null"));
  EXPECT_EQ(parse_of_tir.status, 0) << parse_of_tir.err;
  EXPECT_THAT(parse_of_tir.err, HasSubstr("--print-ir-after parse: the input already records 'parse'"));
  EXPECT_THAT(parse_of_tir.err, Not(HasSubstr("IR after parse")));
  // IR that records its target goes on for it without --target (it was refused: "compile it with
  // --target sm_100a").
  CommandResult recorded = run_command(tilec("compile tests/golden/issuer-only-waits/gemm.tir -o /dev/null"));
  EXPECT_EQ(recorded.status, 0) << recorded.err;
  // An empty -o wrote to standard output and an empty --kernel ran every kernel (a helper).
  CommandResult no_path = run_command(tilec("compile samples/vector_add.tile -o ''"));
  EXPECT_EQ(no_path.status, 1);
  EXPECT_THAT(no_path.err, HasSubstr("--output: an empty path: give a file name, or - for standard output"));
  CommandResult negative_seed = run_command(tilec("run samples/vector_add.tile --seed -1"));  // it wrapped to 2^64 - 1
  EXPECT_EQ(negative_seed.status, 1);
  EXPECT_THAT(negative_seed.err, HasSubstr("--seed: a seed is 0 to 2^64 - 1"));
  // 2^64 and more became 2^64 - 1, and --timeout nan stopped the run at once (a helper's CLI hunt).
  CommandResult huge_seed = run_command(tilec("run samples/vector_add.tile --seed 18446744073709551616"));
  EXPECT_EQ(huge_seed.status, 1);
  EXPECT_THAT(huge_seed.err, HasSubstr("--seed: a seed is 0 to 2^64 - 1"));
  for (const char* command : {"run", "emulate"}) {
    CommandResult nan_timeout = run_command(tilec(std::string(command) + " samples/vector_add.tile --timeout nan"));
    EXPECT_EQ(nan_timeout.status, 1);
    EXPECT_THAT(nan_timeout.err, HasSubstr("--timeout: nan is not a number of seconds from 0.1 to 86400"));
  }
  CommandResult no_kernel = run_command(tilec("run samples/vector_add.tile --kernel ''"));
  EXPECT_EQ(no_kernel.status, 1);
  EXPECT_THAT(no_kernel.err, HasSubstr("--kernel: an empty kernel name"));
}

// -D SCALE=1 of `const SCALE = 0.5` made SCALE an integer, and SCALE / 2 an integer division
// (a helper's CLI hunt): an integer value of a float constant is that float.
TEST(Cli, AnIntegerDefineOfAFloatConstantIsAFloat) {
  fs::path source = temp_file("float_define.tile",
      "const SCALE = 0.5;\nconst HALF = SCALE / 2;\n"
      "kernel k(X: tensor<N, f32>, Z: tensor<N, f32>) grid tiles(cdiv(N, 4)) as (i) {\n"
      "  store Z[i] = load X[i] : <4> * 0.0 + HALF;\n}\n");
  fs::path outputs = fs::temp_directory_path() / ("tilec_float_define_" + std::to_string(::getpid()));
  fs::create_directories(outputs);
  CommandResult r = run_command(tilec("run " + source.string() + " --dims N=4 -D SCALE=1 --outputs " + outputs.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string bytes = read_file(outputs / "Z.bin");
  ASSERT_EQ(bytes.size(), 16u);
  float z[4];
  std::memcpy(z, bytes.data(), sizeof z);
  for (float value : z) EXPECT_EQ(value, 0.5f);
  fs::remove_all(outputs);
}

// Static extents past 2^30 elements: the 32-bit instantiation could never run, and nvcc warned of
// the extents it truncated there (#69-D, fatal under -Werror: a hunt).
TEST(Cli, StaticExtentsPast2To30KeepOnlyThe64BitKernel) {
  fs::path source = temp_file("static_huge.tile",
      "kernel k(X: tensor<4294967296, 64, f32>, Z: tensor<4294967296, 64, f32>) grid tiles(4) as (i) {\n"
      "  store Z[i, 0] = load X[i, 0] : <4, 64>;\n}\n");
  CommandResult r = run_command(tilec("compile " + source.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("A tensor of more than 2^30 elements by its static extents: the 64-bit instantiation only."));
  EXPECT_THAT(r.out, Not(HasSubstr("k_kernel<int32_t>")));
}

// A column sum over rows spread across threads exchanges threads x slots partials in shared
// memory; past the budget the kernel compiled and its launch failed (an adversarial review: two
// column sums of 16 x 2048).
TEST(Cli, RegisterTilesWhoseExchangePassesSharedMemoryAreRefused) {
  fs::path source = temp_file("colsum.tile",
      "kernel colsum(X: tensor<R, C, f32>, DY: tensor<R, C, f32>, DG: tensor<1, C, f32>, DB: tensor<1, C, f32>)\n"
      "    grid tiles(cdiv(R, 16), cdiv(C, 2048)) as (r, c) {\n"
      "  dy = load DY[r, c] : <16, 2048>;\n  store DG[0, c] += sum(dy * load X[r, c] : <16, 2048>, axis = 0);\n"
      "  store DB[0, c] += sum(dy, axis = 0);\n}\n");
  CommandResult r = run_command(tilec("compile " + source.string() + " -o /dev/null"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("error: kernel @colsum keeps its tiles in registers, but its threads exchange 262144 "
                               "bytes of partial results in shared memory"));
  EXPECT_THAT(r.err, HasSubstr("the sm_90a budget is 232448 bytes (227 KiB): use tiles of fewer columns"));
}

// rand, randn and randint as a user reads them back (--outputs): 64 Ki draws of rand are uniform
// on [0, 1) (mean 1/2, variance 1/12, multiples of 2^-24), of randn standard normal (mean 0,
// variance 1, 5 % beyond ±1.96), each within several standard errors; randint(0, 0) is
// Philox4x32-10's known answer 0x6627e8d5; and two seeds give different draws.
TEST(Cli, RandomNumbersHaveTheirDistributions) {
  fs::path source = temp_file("random.tile",
      "kernel k(U: tensor<N, f32>, G: tensor<N, f32>, W: tensor<N, u32>, V: tensor<N, f32>)\n"
      "    grid tiles(cdiv(N, 1024)) as (i) {\n"
      "  offset = iota<1024, i32>(0) + cast(i * 1024, i32);\n"
      "  store U[i] = rand(7, offset);\n  store G[i] = randn(7, offset);\n"
      "  store W[i] = randint(0, offset);\n  store V[i] = rand(8, offset);\n}\n");
  fs::path outputs = fs::temp_directory_path() / ("tilec_random_" + std::to_string(::getpid()));
  fs::create_directories(outputs);
  constexpr size_t kCount = 65536;
  CommandResult r = run_command(tilec("run " + source.string() + " --dims N=65536 --outputs " + outputs.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  auto read = [&](const char* name, auto* values) {
    const std::string bytes = read_file(outputs / name);
    ASSERT_EQ(bytes.size(), kCount * 4) << name;
    std::memcpy(values, bytes.data(), bytes.size());
  };
  std::vector<float> u(kCount), g(kCount), v(kCount);
  std::vector<uint32_t> w(kCount);
  read("U.bin", u.data());
  read("G.bin", g.data());
  read("W.bin", w.data());
  read("V.bin", v.data());
  EXPECT_EQ(w[0], 0x6627e8d5u);
  double u_sum = 0, u_squares = 0, g_sum = 0, g_squares = 0;
  size_t tails = 0, same = 0;
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_TRUE(u[i] >= 0.0f && u[i] < 1.0f) << i;
    ASSERT_EQ(std::ldexp(u[i], 24), std::trunc(std::ldexp(u[i], 24))) << i;
    ASSERT_TRUE(std::isfinite(g[i])) << i;
    u_sum += u[i];
    u_squares += (u[i] - 0.5) * (u[i] - 0.5);
    g_sum += g[i];
    g_squares += double(g[i]) * g[i];
    tails += std::fabs(g[i]) > 1.959964;
    same += u[i] == v[i];
  }
  const double n = kCount;
  EXPECT_NEAR(u_sum / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(u_squares / n, 1.0 / 12, 5 * std::sqrt(1.0 / 180 / n));  // Var((u - 1/2)^2) = 1/180
  EXPECT_NEAR(g_sum / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(g_squares / n, 1.0, 5 * std::sqrt(2 / n));
  EXPECT_NEAR(tails / n, 0.05, 5 * std::sqrt(0.05 * 0.95 / n));
  EXPECT_LT(same, 16u) << "seeds 7 and 8 drew the same numbers";
  // randn is independent of rand at the same seed and offset: the normals where rand kept an
  // element (dropout plus noise) still have variance 1 (0.31 when randn's radius was rand's word).
  double kept_squares = 0;
  size_t kept = 0;
  for (size_t i = 0; i < kCount; ++i)
    if (u[i] >= 0.5f) kept_squares += double(g[i]) * g[i], ++kept;
  EXPECT_NEAR(kept_squares / kept, 1.0, 5 * std::sqrt(2.0 / kept));
  fs::remove_all(outputs);
}

// IR text with an event_wait moved up from the tile loop to after grid_ids (a hunt's line-move
// mutant): the tensor-core emitter took the result of an op that has none and aborted; it is
// refused at the op, as anything but a scalar before the agents split is.
TEST(Cli, AnOpOfNoResultBeforeTheAgentsSplitIsRefused) {
  CommandResult ir = run_command(tilec("compile samples/gemm.tile --emit ir --stop-after insert-sync"));
  ASSERT_EQ(ir.status, 0) << ir.err;
  std::string text = ir.out;
  const size_t wait = text.find("  event_wait ");
  const size_t grid = text.find("= grid_ids");
  ASSERT_TRUE(wait != std::string::npos && grid != std::string::npos && grid < wait);
  const size_t wait_end = text.find('\n', wait) + 1;
  const std::string line = text.substr(wait, wait_end - wait);
  text.erase(wait, wait_end - wait);
  text.insert(text.find('\n', grid) + 1, line);
  const fs::path moved = temp_file("event_wait_up.tir", text);
  CommandResult r = run_command(tilec("compile " + moved.string() + " -o /dev/null"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("does not support 'event_wait' before the warp_specialize"));
}

TEST(Cli, RunReportsBadDimsUnknownKernelsAndRaces) {
  CommandResult dims = run_command(tilec("run samples/softmax.tile --dims R=abc"));
  EXPECT_EQ(dims.status, 1);
  EXPECT_THAT(dims.err, HasSubstr("expected NAME=INTEGER (0 or more: an empty extent)"));
  CommandResult kernel = run_command(tilec("run samples/softmax.tile --kernel nope"));
  EXPECT_EQ(kernel.status, 1);
  EXPECT_THAT(kernel.err, HasSubstr("has no kernel named 'nope'"));
  // Every tile stores to tile 0 of Y: two tiles write the same elements.
  fs::path racy = temp_file("racy.tile",
      "kernel racy(X: tensor<N, f32>, Y: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {\n"
      "  x = load X[i] : <8>;\n  store Y[0] = x;\n}\n");
  CommandResult race = run_command(tilec("run " + racy.string() + " --dims N=64"));
  EXPECT_EQ(race.status, 1);
  EXPECT_THAT(race.err, HasSubstr("race"));
  fs::remove(racy);
  // Tile 4 writes what tile 0 read, in a persistent grid whose 4 CTAs walk 10 tiles: CTA 0 walks
  // both, and run (the pipeline's IR, without --check) counted CTAs, so saw no race (a helper's
  // hunt). It counts the tiles each CTA walks.
  fs::path walked = temp_file("walked.tile",
      "kernel p(X: tensor<N, f32>, Y: tensor<N, f32>) grid persistent(cdiv(N, 32)) as (i) {\n"
      "  if i == 0 {\n    store Y[0] = load X[0] : <32>;\n  }\n"
      "  if i == 4 {\n    store X[0] = full<32, f32>(1.0);\n  }\n}\n");
  CommandResult walked_race = run_command(tilec("run " + walked.string() + " --dims N=300 --sms 4"));
  EXPECT_EQ(walked_race.status, 1);
  EXPECT_THAT(walked_race.err, HasSubstr(":6:5: error: kernel p: 'store': race: tile 4 stores element [0] of %X, "
                                         "which tile 0 reads"));
  fs::remove(walked);
}

// A mean of f16 or bf16 elements is taken in f32 and rounded once (a helper found both): the sum
// of 64 f16 2000s is past f16 (the mean was inf), and 257 is a bf16 256 (three bf16 3s gave
// 3.015625).
TEST(Cli, AMeanOfNarrowFloatsIsTakenInF32) {
  fs::path source = fs::temp_directory_path() / ("tilec_cli_mean_" + std::to_string(::getpid()) + ".tile");
  fs::path outputs = fs::temp_directory_path() / ("tilec_cli_mean_out_" + std::to_string(::getpid()));
  write_file(source, "kernel means(Y: tensor<2, f32>) grid tiles(1) as (i) {\n"
                     "  store Y at [0] = cast(mean(full<64, f16>(2000.0)), f32);\n"
                     "  store Y at [1] = cast(mean(full<257, bf16>(3.0)), f32);\n}\n");
  CommandResult r = run_command(tilec("run " + source.string() + " --check --outputs " + outputs.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(outputs / "Y.bin", std::ios::binary);
  float y[2] = {0, 0};
  in.read(reinterpret_cast<char*>(y), sizeof(y));
  EXPECT_EQ(y[0], 2000.0f);
  EXPECT_EQ(y[1], 3.0f);
  fs::remove(source);
  fs::remove_all(outputs);
}

// Scalar parameters (issue 18, defect 3): --scalar sets them, an integer one must be given, a
// float one not given is random, and every value used is printed (tilec emulate: emulate_cli_test).
TEST(Cli, RunTakesScalarParametersAndReportsThem) {
  fs::path scaled = temp_file("scaled.tile",
      "kernel scaled(X: tensor<N, i32>, Y: tensor<N, f32>, n: i32, alpha: f32) grid tiles(cdiv(N, 8)) as (i) {\n"
      "  x = load X[i] : <8>;\n  store Y[i] = cast(x * n, f32) * alpha;\n}\n");
  CommandResult missing = run_command(tilec("run " + scaled.string() + " --dims N=16"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("the i32 scalar parameter %n needs a value: give --scalar n=VALUE"));
  CommandResult given = run_command(tilec("run " + scaled.string() + " --dims N=16 --check --scalar n=-3 --scalar alpha=0.25"));
  EXPECT_EQ(given.status, 0) << given.err;
  EXPECT_THAT(given.out, HasSubstr("scalars: n=-3, alpha=0.25"));
  CommandResult random = run_command(tilec("run " + scaled.string() + " --dims N=16 --scalar n=2,unused=1"));
  EXPECT_EQ(random.status, 0) << random.err;
  EXPECT_THAT(random.out, HasSubstr("scalars: n=2, alpha="));
  EXPECT_THAT(random.out, HasSubstr(" (random)"));
  EXPECT_THAT(random.err, HasSubstr("--scalar unused: no kernel run has a scalar parameter named unused"));
  CommandResult by_dims = run_command(tilec("run " + scaled.string() + " --dims N=16,n=4 --scalar alpha=1"));
  EXPECT_EQ(by_dims.status, 0) << by_dims.err;
  EXPECT_THAT(by_dims.out, HasSubstr("scalars: n=4, alpha=1"));
  EXPECT_THAT(by_dims.err, ::testing::Not(HasSubstr("warning")));  // --dims n= binds the scalar n
  CommandResult fractional = run_command(tilec("run " + scaled.string() + " --dims N=16 --scalar n=0.5"));
  EXPECT_EQ(fractional.status, 1);
  EXPECT_THAT(fractional.err, HasSubstr("--scalar n=0.5: %n is i32; give an integer"));
  CommandResult malformed = run_command(tilec("run " + scaled.string() + " --scalar n=two"));
  EXPECT_EQ(malformed.status, 1);
  EXPECT_THAT(malformed.err, HasSubstr("--scalar n=two: expected NAME=NUMBER"));
  // A value outside the parameter's type is refused (it was wrapped: n=99999999999 ran as 1215752191).
  CommandResult wide = run_command(tilec("run " + scaled.string() + " --dims N=16 --scalar n=99999999999"));
  EXPECT_EQ(wide.status, 1);
  EXPECT_THAT(wide.err, HasSubstr("--scalar n=99999999999: %n is i32, whose values are -2147483648 to 2147483647"));
  // Past 64 bits an integer is out of range (it was echoed as a float, "give an integer"); a float
  // past f32's range is refused (1e300 ran as inf).
  CommandResult beyond = run_command(tilec("run " + scaled.string() + " --dims N=16 --scalar n=9223372036854775808"));
  EXPECT_EQ(beyond.status, 1);
  EXPECT_THAT(beyond.err, HasSubstr("--scalar n=9223372036854775808: the integer is outside the 64-bit range"));
  CommandResult overflow = run_command(tilec("run " + scaled.string() + " --dims N=16 --scalar n=1,alpha=1e300"));
  EXPECT_EQ(overflow.status, 1);
  EXPECT_THAT(overflow.err, HasSubstr("%alpha is f32, whose finite values are at most 3.4028235e+38 in magnitude"));
  // A value that rounds to the largest finite one is taken: 3.4028235e+38, as the message spells
  // that one, was refused by that very message.
  CommandResult largest = run_command(tilec("run " + scaled.string() + " --dims N=16 --scalar n=1,alpha=3.4028235e38"));
  EXPECT_EQ(largest.status, 0) << largest.err;
  EXPECT_THAT(largest.out, HasSubstr("alpha=3.40282347e+38"));
  CommandResult past = run_command(tilec("run " + scaled.string() + " --dims N=16 --scalar n=1,alpha=3.4028236e38"));
  EXPECT_EQ(past.status, 1);
  fs::remove(scaled);
  // e4m3 has no infinity: a value past 448 saturated to it silently, where f16's past 65504 was refused.
  fs::path eight = fs::temp_directory_path() / ("tilec_cli_e4m3_scalar_" + std::to_string(::getpid()) + ".tile");
  write_file(eight, "kernel k(X: tensor<N, f32>, g: f8e4m3) grid tiles(1) as (i) {\n"
                    "  store X[i] = full<8, f32>(cast(g, f32));\n}\n");
  CommandResult saturated = run_command(tilec("run " + eight.string() + " --dims N=8 --scalar g=1000"));
  EXPECT_EQ(saturated.status, 1) << saturated.out;
  EXPECT_THAT(saturated.err, HasSubstr("--scalar g=1000: %g is f8e4m3, whose finite values are at most 448 in magnitude"));
  fs::remove(eight);
  // f16: 65519 rounds to 65504 and is taken; 65520 rounds to infinity.
  fs::path half = fs::temp_directory_path() / ("tilec_cli_f16_scalar_" + std::to_string(::getpid()) + ".tile");
  write_file(half, "kernel k(X: tensor<N, f32>, h: f16) grid tiles(1) as (i) {\n"
                   "  store X[i] = full<8, f32>(cast(h, f32));\n}\n");
  CommandResult rounded = run_command(tilec("run " + half.string() + " --dims N=8 --scalar h=65519"));
  EXPECT_EQ(rounded.status, 0) << rounded.err;
  EXPECT_THAT(rounded.out, HasSubstr("scalars: h=65504"));
  CommandResult infinite = run_command(tilec("run " + half.string() + " --dims N=8 --scalar h=65520"));
  EXPECT_EQ(infinite.status, 1);
  EXPECT_THAT(infinite.err, HasSubstr("--scalar h=65520: %h is f16, whose finite values are at most 65504 in magnitude"));
  // Rounded once, as a number in the source: 1 + 2^-11 + 2^-40 is 1 + 2^-10 (through f32 it was 1).
  CommandResult once = run_command(tilec("run " + half.string() + " --dims N=8 --scalar h=1.000488281250909494701772928237915039062"));
  EXPECT_EQ(once.status, 0) << once.err;
  EXPECT_THAT(once.out, HasSubstr("scalars: h=1.00097656"));
  fs::remove(half);
}

// Found by a helper: --dims whose tensors overflow 64 bits of bytes crashed `run` and `emulate`
// (SIGSEGV), and ones past the machine's memory were internal errors (std::bad_alloc) or ran for
// minutes; both are input errors that name the tensor.
TEST(Cli, DimsTooLargeForTheMachineAreInputErrors) {
  for (const char* dims : {"N=4611686018427387904", "N=17179869184000"}) {
    SCOPED_TRACE(dims);
    CommandResult r = run_command(tilec(std::string("run samples/vector_add.tile --dims ") + dims));
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("kernel vector_add: %X of "));
    EXPECT_THAT(r.err, HasSubstr("half of its memory): give smaller --dims"));
  }
}

// Under an address-space limit (ulimit -v) the budget is half of it: the run filled tensors for
// a minute, then ended in std::bad_alloc, an internal error (found by a helper). ASan reserves
// far more address space than any limit leaves, so a sanitized build cannot run under one.
TEST(Cli, DimsPastTheAddressSpaceLimitAreInputErrors) {
  // The tilec under test, not this program: the sanitizer build compiles test sources without
  // sanitizers (meson.build: TILEC_SANITIZE, instrument_tests).
#ifdef TILEC_SANITIZE
  if (std::string_view(TILEC_SANITIZE).find("address") != std::string_view::npos)
    GTEST_SKIP() << "AddressSanitizer cannot run under ulimit -v";
#endif
  // 100M f32: X 0.8 GB (with its --check copy), Y 1.6 GB (and its race-check owners), over the
  // 1.5 GB that half of a 3 GB limit leaves.
  CommandResult r = run_command("ulimit -v 3000000 && " + tilec("run samples/vector_add.tile --dims N=100000000"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("(half of the process's address-space limit, ulimit -v): give smaller --dims"));
}

// IR resumed after build-resources with a footprint the machine model lacks: a located input
// error from generate-schedule (it was "internal error", exit 2; found by a helper).
TEST(Cli, AnEditedFootprintIsAnInputError) {
  CommandResult ir = run_command(tilec("compile samples/gemm.tile --emit ir --stop-after build-resources"));
  ASSERT_EQ(ir.status, 0) << ir.err;
  std::string text = ir.out;
  const std::string from = "[\"tma\", 0,";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "[\"zzz\", 0,");
  fs::path path = temp_file("footprint.tir", text);
  CommandResult r = run_command(tilec("compile " + path.string() + " -o /dev/null"));
  fs::remove(path);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("samples/gemm.tile:12:9: error: 'tma_load' uses the slot 'zzz', which the sm_90a machine "
                               "model does not have"));
}

// A row stored on its own from a tensor-core epilogue is refused saying so and what to write
// instead (it said "1 rows (64 per compute warpgroup: 128)"; found by a helper).
TEST(Cli, ARowStoredFromATensorCoreEpilogueIsRefusedSayingWhy) {
  fs::path source = temp_file("rowstore.tile",
      "kernel rowstore(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, Bias: tensor<N, f32>, C: tensor<M, N, f32>,\n"
      "                Bo: tensor<1, N, f32>) grid persistent(cdiv(M, 128), cdiv(N, 64)) as (m, n) {\n"
      "  acc = zeros<128, 64, f32>();\n"
      "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {\n"
      "    acc = mma(load A[m, k] : <128, 64>, load B[k, n] : <64, 64>, acc);\n"
      "  }\n"
      "  bias = load Bias[n] : <1, 64>;\n"
      "  store C[m, n] = acc + bias;\n"
      "  store Bo[0, n] = bias * 2.0;\n"
      "}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult r = run_command(tilec("compile " + source.string() + " --target " + target + " -o /dev/null"));
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(":9:3: error: the tensor-core CUDA backend"));
    EXPECT_THAT(r.err, HasSubstr("a single row (one value per column)"));
    EXPECT_THAT(r.err, HasSubstr("store or reduce a row on its own in a plain kernel"));
  }
  fs::remove(source);
}

// IR text is read as IR wherever its first word past comments is `module`: on stdin without the
// `// tilec IR` header or after a blank line, and in a file with another extension (found by a
// helper: a cascade of .tile lexer errors).
TEST(Cli, IrTextIsRecognisedByItsModuleLine) {
  CommandResult ir = run_command(tilec("compile samples/vector_add.tile --emit ir --stop-after parse"));
  ASSERT_EQ(ir.status, 0) << ir.err;
  const std::string body = ir.out.substr(ir.out.find('\n') + 1);  // without "// tilec IR"
  fs::path saved = temp_file("vector_add_ir.txt", "\n" + body);
  CommandResult from_file = run_command(tilec("compile " + saved.string() + " -o /dev/null"));
  EXPECT_EQ(from_file.status, 0) << from_file.err;
  CommandResult from_stdin = run_command("(" + tilec("compile - -o /dev/null") + " < " + saved.string() + ")");
  EXPECT_EQ(from_stdin.status, 0) << from_stdin.err;
  fs::remove(saved);
}

// Issue 18, defect 2: a tile grid with mma compiles; where the backend still refuses one (IR
// resumed after scheduling), it says what to write instead.
TEST(Cli, TileGridMmaKernelsCompileAndAScheduledOneSaysWhatToWrite) {
  std::string gemm = read_file(source_dir() / "samples" / "gemm.tile");
  size_t grid = gemm.find("grid persistent(");
  ASSERT_NE(grid, std::string::npos);
  size_t close = gemm.find(") as (m, n)", grid);
  fs::path tiles = temp_file("gemm_tiles.tile", gemm.substr(0, grid) + "grid tiles(cdiv(M, BM), cdiv(N, BN)" + gemm.substr(close));
  // A tile grid with mma compiles (one worker CTA per tile)...
  for (const char* target : {"sm_90a", "sm_100a"})
    EXPECT_EQ(run_command(tilec("compile " + tiles.string() + " --target " + std::string(target) + " -o /dev/null")).status, 0)
        << target;
  // IR that records a later pass but not persistent-tiles is refused by the pass manager (before,
  // persistent-tiles ran after the scheduler and silently did nothing)...
  fs::path scheduled = temp_file("gemm_tiles_scheduled.tir", "");
  CommandResult stopped =
      run_command(tilec("compile " + tiles.string() + " --emit ir --stop-after promote-mma-operands -o " + scheduled.string()));
  ASSERT_EQ(stopped.status, 0) << stopped.err;
  const std::string promoted = read_file(scheduled);
  auto with_passes = [&](const std::string& passes) {
    std::string tir = promoted;
    const std::string recorded = "passes = [\"parse\", \"promote-mma-operands\"]";
    size_t at = tir.find(recorded);
    EXPECT_NE(at, std::string::npos) << tir;
    if (at != std::string::npos) tir.replace(at, recorded.size(), "passes = [" + passes + "]");
    write_file(scheduled, tir);
    return run_command(tilec("compile " + scheduled.string() + " -o /dev/null"));
  };
  CommandResult gap = with_passes("\"parse\", \"promote-mma-operands\", \"fold-constants\", \"generate-schedule\"");
  EXPECT_EQ(gap.status, 1);
  EXPECT_THAT(gap.err, HasSubstr("error: the input records 'generate-schedule' but not 'persistent-tiles', which runs "
                                 "before it; IR can resume only where the pipeline stopped"));
  // ...and IR that records persistent-tiles but keeps a tile grid (written by hand) reaches the
  // backend, which says what to write, at the grid.
  CommandResult tile_grid = with_passes("\"parse\", \"promote-mma-operands\", \"fold-constants\", \"persistent-tiles\"");
  EXPECT_EQ(tile_grid.status, 1);
  EXPECT_THAT(tile_grid.err, HasSubstr("runs mma kernels as persistent CTAs only: write `grid persistent(...)`"));
  // A one-extent tile grid in clusters (IR only: the language has no cluster option on tile
  // grids) is refused by persistent-tiles with the persistent form to write.
  fs::path column = temp_file("column_tiles.tile",
      "kernel rows(A: tensor<M, 64, bf16>, B: tensor<64, 64, bf16>, C: tensor<M, 64, f32>) grid tiles(cdiv(M, 128)) as (m) {\n"
      "  store C[m, 0] = mma(load A[m, 0] : <128, 64>, load B[0, 0] : <64, 64>, zeros<128, 64, f32>());\n}\n");
  ASSERT_EQ(run_command(tilec("compile " + column.string() + " --emit ir --stop-after parse -o " + scheduled.string())).status, 0);
  std::string tir = read_file(scheduled);
  size_t grid_ids = tir.find("{schedule = \"tiles\"}");
  ASSERT_NE(grid_ids, std::string::npos) << tir;
  tir.replace(grid_ids, std::string("{schedule = \"tiles\"}").size(), "{cluster = 2, schedule = \"tiles\"}");
  write_file(scheduled, tir);
  fs::remove(column);
  CommandResult clustered = run_command(tilec("compile " + scheduled.string() + " -o /dev/null"));
  EXPECT_EQ(clustered.status, 1);
  EXPECT_THAT(clustered.err, HasSubstr("a tile grid of a kernel with mma in clusters of 2 CTAs; write `grid persistent(..., "
                                       "cluster = 2)` instead"));
  fs::remove(tiles);
  fs::remove(scheduled);
}

// `tilec run` of the .tile `source`, written to a temporary file named `name` and removed after.
CommandResult run_tile(const std::string& name, const std::string& source, const std::string& options) {
  fs::path path = temp_file(name, source);
  CommandResult result = run_command(tilec("run " + path.string() + " " + options));
  fs::remove(path);
  return result;
}

// argmax / argmin (issue 18): the first index of the extreme, NaNs skipped, a row of NaNs gives
// 0. The inputs are built from iota so the expected indices are known: row 0 peaks at column 2,
// row 1 at 3; row 2 is 0 0 0 1 1 1 2 2 (first maximum 6, first minimum 0); row 3 is all NaN.
TEST(Cli, ArgmaxAndArgminGiveTheFirstIndexOfTheExtreme) {
  CommandResult r = run_tile("argsem.tile",
      "kernel argsem(I: tensor<4, 1, i32>, J: tensor<4, 1, i32>) grid tiles(1) as (t) {\n"
      "  c = cast(iota<4, 8, i32>(1), f32);\n  r = cast(iota<4, 8, i32>(0), f32);\n"
      "  peak = -((c - r - 2.0) * (c - r - 2.0));\n"
      "  x = where(r == 2.0, cast(iota<4, 8, i32>(1) / 3, f32), where(r == 3.0, log(-1.0 - c), peak));\n"
      "  store I[0, 0] = argmax(x, axis = 1);\n  store J[0, 0] = argmin(x, axis = 1);\n}\n", "--check");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("output %I tensor<4x1xi32>: checksum 11\n"));  // 2 + 3 + 6 + 0
  EXPECT_THAT(r.out, HasSubstr("output %J tensor<4x1xi32>: checksum 14\n"));  // 7 + 7 + 0 + 0
}

// sign, isnan, isinf and isfinite (issue 18) on -2, -0.0, 0, 3, inf, -inf, NaN and 1e-30:
// sign keeps the zeros' signs and NaN (R counts the negative signs: -2, -0.0 and -inf); the
// classes are 1 (NaN), 2 (±inf) and 4 (finite); in f16, 3·40000 and -2·40000 overflow to inf as
// well; f8e4m3 has no inf (its largest, 448, is where inf saturates) and keeps NaN.
TEST(Cli, SignAndTheFloatClassesGiveTheDocumentedValues) {
  CommandResult r = run_tile("classes.tile",
      "kernel classes(S: tensor<8, f32>, R: tensor<8, i32>, F: tensor<8, i32>, G: tensor<8, i32>, E: tensor<8, i32>,\n"
      "               N: tensor<8, i32>, U: tensor<8, u8>) grid tiles(1) as (t) {\n"
      "  c = iota<8, i32>(0);\n"
      "  x = where(c == 0, -2.0, where(c == 1, -0.0, where(c == 2, 0.0, where(c == 3, 3.0, where(c == 4, exp(1000.0),\n"
      "      where(c == 5, -exp(1000.0), where(c == 6, log(-1.0), 1.0e-30)))))));\n"
      "  s = sign(x);\n"
      "  store S[0] = where(isnan(x), 100.0, s);\n"
      "  store R[0] = cast(s < 0.0 || 1.0 / s < 0.0, i32);\n"
      "  store F[0] = cast(isnan(x), i32) + 2 * cast(isinf(x), i32) + 4 * cast(isfinite(x), i32);\n"
      "  store G[0] = cast(isinf(cast(x * 40000.0, f16)), i32);\n"
      "  e = cast(x, f8e4m3);\n"
      "  store E[0] = 2 * cast(isinf(e), i32) + cast(isnan(e), i32);\n"
      "  store N[0] = sign(c - 2);\n"
      "  store U[0] = sign(cast(c, u8));\n}\n", "--check");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("output %S tensor<8xf32>: checksum 101\n"));  // -1 - 0 + 0 + 1 + 1 - 1 + 100 + 1
  EXPECT_THAT(r.out, HasSubstr("output %R tensor<8xi32>: checksum 3\n"));
  EXPECT_THAT(r.out, HasSubstr("output %F tensor<8xi32>: checksum 25\n"));   // 4 + 4 + 4 + 4 + 2 + 2 + 1 + 4
  EXPECT_THAT(r.out, HasSubstr("output %G tensor<8xi32>: checksum 4\n"));    // -80000, 120000, ±inf
  EXPECT_THAT(r.out, HasSubstr("output %E tensor<8xi32>: checksum 1\n"));    // the NaN only
  EXPECT_THAT(r.out, HasSubstr("output %N tensor<8xi32>: checksum 3\n"));    // -1 - 1 + 0 + 5 · 1
  EXPECT_THAT(r.out, HasSubstr("output %U tensor<8xu8>: checksum 7\n"));     // 0 + 7 · 1
  CommandResult integer = run_tile("isnan_int.tile",
      "kernel k(X: tensor<8, i32>, Y: tensor<8, i32>) grid tiles(1) as (t) {\n"
      "  store Y[0] = cast(isnan(load X[0] : <8>), i32);\n}\n", "");
  EXPECT_EQ(integer.status, 1);
  EXPECT_THAT(integer.err, HasSubstr("isnan() needs a floating-point operand, not tile<8, i32> (integers are always "
                                     "finite)"));
}

// cast of a number converts it as a value of its type would (docs/language.md): an integer
// wraps (cast(-1, u8) is 255, cast(300, u8) is 44), a float truncates and saturates
// (cast(-1.0, u8) is 0, cast(1000.5, i8) is 127, cast(-2.9, i8) is -2). It was refused before.
TEST(Cli, CastOfANumberWrapsOrSaturatesAsDocumented) {
  CommandResult r = run_tile("castnum.tile",
      "kernel castnum(U: tensor<4, u8>, V: tensor<4, u8>, W: tensor<4, u8>, I: tensor<4, i8>, J: tensor<4, i8>)\n"
      "    grid tiles(1) as (t) {\n"
      "  store U[0] = full<4, u8>(cast(-1, u8));\n  store V[0] = full<4, u8>(cast(-1.0, u8));\n"
      "  store W[0] = full<4, u8>(cast(300, u8));\n  store I[0] = full<4, i8>(cast(1000.5, i8));\n"
      "  store J[0] = full<4, i8>(cast(-2.9, i8));\n}\n", "--check");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("output %U tensor<4xu8>: checksum 1020\n"));  // 4 · 255
  EXPECT_THAT(r.out, HasSubstr("output %V tensor<4xu8>: checksum 0\n"));
  EXPECT_THAT(r.out, HasSubstr("output %W tensor<4xu8>: checksum 176\n"));  // 4 · 44
  EXPECT_THAT(r.out, HasSubstr("output %I tensor<4xi8>: checksum 508\n"));  // 4 · 127
  EXPECT_THAT(r.out, HasSubstr("output %J tensor<4xi8>: checksum -8\n"));   // 4 · -2
}

// --timeout stops a run that would not end (a loop of 2^63 - 1 trips) with exit 1 and says so.
TEST(Cli, RunStopsAtItsTimeout) {
  CommandResult r = run_tile("endless.tile",
      "kernel endless(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[0] : <8>;\n"
      "  for j in 0 .. 9223372036854775807 carry (x) {\n    x = x + 1.0;\n  }\n  store X[0] = x;\n}\n", "--timeout 0.5");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("the run did not finish in 0.5 s (--timeout)"));
  CommandResult quick = run_command(tilec("run samples/vector_add.tile --dims N=100 --timeout 60"));
  EXPECT_EQ(quick.status, 0) << quick.err;
}

// clamp(x, lo, hi) is min(max(x, lo), hi) on floats, integers and numbers (a constant folds it).
TEST(Cli, ClampBoundsEachElement) {
  CommandResult r = run_tile("clamp.tile",
      "const TOP = clamp(9, 0, 2);\n"
      "kernel clamped(F: tensor<8, f32>, I: tensor<8, i32>) grid tiles(1) as (t) {\n"
      "  x = cast(iota<8, i32>(0), f32) - 3.5;\n"
      "  store F[0] = clamp(x, -1.0, TOP);\n"
      "  store I[0] = clamp(iota<8, i32>(0) - 3, -1, 2);\n}\n", "--check");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("output %F tensor<8xf32>: checksum 2.5\n"));  // -1 -1 -1 -0.5 0.5 1.5 2 2
  EXPECT_THAT(r.out, HasSubstr("output %I tensor<8xi32>: checksum 4\n"));    // -1 -1 -1 0 1 2 2 2
  // An integer output's checksum is exact (it printed 2.14748365e+09 for one INT_MAX).
  CommandResult exact = run_tile("big.tile", "kernel big(X: tensor<4, i32>) grid tiles(1) as (t) {\n"
                                             "  store X[0] = full<4, i32>(2147483647);\n}\n", "");
  EXPECT_THAT(exact.out, HasSubstr("output %X tensor<4xi32>: checksum 8589934588\n"));
}

// An assert in a kernel refuses the launch when it does not hold, naming the dims and scalars it
// read; one on constants refuses the compile, naming the -D that set the value.
TEST(Cli, AssertsRefuseLaunchesAndCompilesThatBreakThem) {
  const std::string source = "const BLOCK = 128;\nassert BLOCK % 32 == 0;\n"
                             "kernel scale(X: tensor<N, f32>, Y: tensor<N, f32>, s: f32)\n"
                             "    grid tiles(cdiv(N, BLOCK)) as (i) {\n"
                             "  assert N % BLOCK == 0 && s > 0.0;\n"
                             "  store Y[i] = load X[i] : <BLOCK> * s;\n}\n";
  CommandResult bad = run_tile("scale_assert.tile", source, "--dims N=1000 --scalar s=0.5");
  EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("scale_assert.tile:5:3: error: kernel scale: assert N % BLOCK == 0 && s > 0.0 does "
                                 "not hold at launch (N = 1000, s = 0.5)"));
  CommandResult negative = run_tile("scale_assert.tile", source, "--dims N=1024 --scalar s=-1");
  EXPECT_THAT(negative.err, HasSubstr("(N = 1024, s = -1)"));
  CommandResult good = run_tile("scale_assert.tile", source, "--dims N=1024 --scalar s=0.5 --check");
  EXPECT_EQ(good.status, 0) << good.err;
  EXPECT_THAT(good.out, HasSubstr("check %Y: ok"));
  CommandResult defined = run_tile("scale_assert.tile", source, "-D BLOCK=100 --dims N=1000");
  EXPECT_EQ(defined.status, 1);
  EXPECT_THAT(defined.err, HasSubstr(":2:1: error: assert BLOCK % 32 == 0 fails (BLOCK = 100 from -D)"));
}

// A loop whose bounds fold to an empty range is warned about, naming the -D that emptied it
// (causal_attention's key loop computed nothing at -D BQ=64 -D BKV=128, silently).
TEST(Cli, ALoopThatNeverRunsIsWarnedAbout) {
  fs::path path = temp_file("never.tile", "const BQ = 128;\nconst BKV = 64;\n"
                                          "kernel never(X: tensor<N, f32>) grid tiles(1) as (i) {\n"
                                          "  x = load X[0] : <8>;\n"
                                          "  for j in 0 .. BQ / BKV carry (x) {\n    x = x + 1.0;\n  }\n"
                                          "  store X[0] = x;\n}\n");
  CommandResult fine = run_command(tilec("compile " + path.string() + " -o /dev/null"));
  EXPECT_EQ(fine.status, 0) << fine.err;
  EXPECT_THAT(fine.err, Not(HasSubstr("never runs")));
  CommandResult empty = run_command(tilec("compile " + path.string() + " -D BQ=32 -o /dev/null"));
  EXPECT_EQ(empty.status, 0) << empty.err;
  EXPECT_THAT(empty.err, HasSubstr(":5:3: warning: this loop never runs: its bounds fold to 0 .. 0 (with -D BQ=32)"));
  fs::remove(path);
}

// Two 128x256 accumulators need 256 registers per compute thread on sm_90a, more than the 232 it
// has: nvcc spilled 2 KB and serialized the WGMMAs, silently. Now a warning says so and what to
// change; sm_100a keeps accumulators in tensor memory and says nothing.
TEST(Cli, AccumulatorsPastTheRegisterBudgetAreWarnedAbout) {
  CommandResult hopper = run_command(tilec("compile samples/gate_up.tile -D BN=256 -D STAGES=2 -o /dev/null"));
  EXPECT_EQ(hopper.status, 0) << hopper.err;
  EXPECT_THAT(hopper.err, HasSubstr("gate_up.tile:16:9: warning: the mma accumulators need 256 registers per compute "
                                    "thread (128x256 f32: 128, 128x256 f32: 128), more than the 232 a compute thread "
                                    "has on sm_90a"));
  CommandResult blackwell =
      run_command(tilec("compile samples/gate_up.tile -D BN=256 -D STAGES=2 --target sm_100a -o /dev/null"));
  EXPECT_EQ(blackwell.status, 0) << blackwell.err;
  EXPECT_EQ(blackwell.err, "");
  CommandResult fits = run_command(tilec("compile samples/gate_up.tile -o /dev/null"));
  EXPECT_EQ(fits.err, "");
  // Two such accumulators in loops one after another are live in turn (nvcc: no spills).
  fs::path two = temp_file("two_loops.tile",
      "kernel two(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>, D: tensor<M, N, f32>)\n"
      "    grid tiles(cdiv(M, 128), cdiv(N, 256)) as (m, n) {\n"
      "  c = zeros<128, 256, f32>();\n"
      "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (c) {\n"
      "    c = mma(load A[m, k] : <128, 64>, load B[k, n] : <64, 256>, c);\n  }\n"
      "  store C[m, n] = c;\n  d = zeros<128, 256, f32>();\n"
      "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (d) {\n"
      "    d = mma(load A[m, k] : <128, 64>, load B[k, n] : <64, 256>, d);\n  }\n"
      "  store D[m, n] = d;\n}\n");
  CommandResult in_turn = run_command(tilec("compile " + two.string() + " -o /dev/null"));
  EXPECT_EQ(in_turn.status, 0) << in_turn.err;
  EXPECT_EQ(in_turn.err, "");
  // Stored after the second loop, the first accumulator lives through it (nvcc spilled 2.5 KB).
  std::string late = read_file(two);
  late.replace(late.find("  store C[m, n] = c;\n"), 20, "");
  late.replace(late.find("  store D[m, n] = d;\n"), 20, "  store D[m, n] = d;\n  store C[m, n] = c;\n");
  write_file(two, late);
  CommandResult together = run_command(tilec("compile " + two.string() + " -o /dev/null"));
  EXPECT_THAT(together.err, HasSubstr("warning: the mma accumulators need 256 registers per compute thread"));
  fs::remove(two);
}

// Register tiles other than accumulators count too (found by helpers writing kernels from the
// docs, nvcc spilling with no word from tilec): DeepSeek-style blockwise FP8 scaling, a 128x256
// product per K block added into a 128x256 register tile (ptxas: 524 bytes of spill stores on
// sm_90a); a plain kernel's four loaded 64x256 tiles live at once (704 bytes). Each is warned
// about at the line where the tiles are live; at BN = 128 neither is. Elementwise results are
// not counted: nvcc computes them element by element where they are read.
TEST(Cli, RegisterTilesLiveAtOncePastTheBudgetAreWarnedAbout) {
  fs::path blockwise = temp_file("blockwise.tile",
      "const BN = 256;\n"
      "kernel r(A: tensor<M, K, f8e4m3>, B: tensor<N, K, f8e4m3>, SA: tensor<M, KB, f32>, Y: tensor<M, N, bf16>)\n"
      "    grid persistent(cdiv(M, 128), cdiv(N, BN)) as (m, n) {\n"
      "  acc = zeros<128, BN, f32>();\n"
      "  for k in 0 .. cdiv(K, 128) pipeline(2) carry (acc) {\n"
      "    part = mma(load A[m, k] : <128, 128>, transpose(load B[n, k] : <BN, 128>), zeros<128, BN, f32>());\n"
      "    acc = acc + part * load SA[m, k] : <128, 1>;\n  }\n"
      "  store Y[m, n] = cast(acc, bf16);\n}\n");
  CommandResult wide = run_command(tilec("compile " + blockwise.string() + " -o /dev/null"));
  EXPECT_EQ(wide.status, 0) << wide.err;
  EXPECT_THAT(wide.err, HasSubstr(":6:80: warning: the register tiles live here need 256 registers per compute thread "
                                  "(acc_1 128x256 f32: 128, t11 128x256 f32: 128), more than the 232 a compute thread "
                                  "has on sm_90a: nvcc is likely to spill them"));
  CommandResult narrow = run_command(tilec("compile " + blockwise.string() + " -D BN=128 -o /dev/null"));
  EXPECT_EQ(narrow.err, "");
  fs::path plain = temp_file("four_tiles.tile",
      "const BN = 256;\n"
      "kernel spill(Y: tensor<M, N, f32>, A: tensor<M, N, f32>, B: tensor<M, N, f32>, C: tensor<M, N, f32>)\n"
      "    grid tiles(cdiv(M, 64), cdiv(N, BN)) as (i, j) {\n"
      "  a = load A[i, j] : <64, BN>;\n  b = load B[i, j] : <64, BN>;\n  c = load C[i, j] : <64, BN>;\n"
      "  d = load Y[i, j] : <64, BN>;\n"
      "  store Y[i, j] = a * b + c * d + sum(a, axis = 1) + sum(b, axis = 1) + sum(c, axis = 1) + sum(d, axis = 1);\n}\n");
  CommandResult many = run_command(tilec("compile " + plain.string() + " -o /dev/null"));
  EXPECT_EQ(many.status, 0) << many.err;
  EXPECT_THAT(many.err, HasSubstr(": warning: 4 tiles live here take 256 registers per thread in the register form "
                                  "(tile<64, 256, f32> (line 4), tile<64, 256, f32> (line 5), tile<64, 256, f32> (line "
                                  "6), tile<64, 256, f32> (line 7)), more than the 232 a thread can spare in a CTA of 256 "
                                  "threads: nvcc is "
                                  "likely to spill some"));
  // The shared form's four 64 KiB buffers do not fit either: it is not offered (a hunt followed
  // that advice into the shared-memory error).
  EXPECT_THAT(many.err, HasSubstr("use smaller tiles, or keep fewer live at once\n"));
  EXPECT_THAT(many.err, Not(HasSubstr("--plain-tiles shared")));
  EXPECT_EQ(run_command(tilec("compile " + plain.string() + " -D BN=128 -o /dev/null")).err, "");
  fs::remove(blockwise);
  fs::remove(plain);
}

// An mma loop whose operands are both computed has nothing TMA copies: it is refused at the mma,
// saying what makes one (it listed mbarrier_create, stage_buffer, ... "which the plain CUDA
// backend cannot emit", ops the user never wrote; found by a helper writing kernels from the docs).
TEST(Cli, AnMmaLoopWithoutATmaOperandSaysWhatToLoad) {
  fs::path path = temp_file("both_computed.tile",
      "kernel both(X: tensor<M, K, bf16>, Q: tensor<K, N, i32>, Y: tensor<M, N, f32>)\n"
      "    grid persistent(cdiv(M, 128), cdiv(N, 128)) as (m, n) {\n"
      "  acc = zeros<128, 128, f32>();\n"
      "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {\n"
      "    a = load X[m, k] : <128, 64> * 2.0;\n"
      "    b = cast(cast(load Q[k, n] : <64, 128> & 15, f32), bf16);\n"
      "    acc = mma(a, b, acc);\n  }\n"
      "  store Y[m, n] = acc;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult r = run_command(tilec("compile " + path.string() + " --target " + target + " -o /dev/null"));
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.err, HasSubstr(":7:11: error: this mma's loop has no operand TMA copies"));
    EXPECT_THAT(r.err, Not(HasSubstr("mbarrier_create")));
  }
  // An accumulator nothing reads: the mma is dropped, and its loads are said to feed nothing, at
  // the load (it was "a stage buffer mma does not read", at the grid).
  write_file(path, "kernel dead(X: tensor<M, K, bf16>, W: tensor<K, N, bf16>, E: tensor<M, N, f32>)\n"
                   "    grid persistent(cdiv(M, 128), cdiv(N, 128)) as (m, n) {\n"
                   "  acc = zeros<128, 128, f32>();\n"
                   "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {\n"
                   "    acc = mma(load X[m, k] : <128, 64>, load W[k, n] : <64, 128>, acc);\n  }\n"
                   "  store E[m, n] = zeros<128, 128, f32>();\n}\n");
  CommandResult dead = run_command(tilec("compile " + path.string() + " -o /dev/null"));
  EXPECT_EQ(dead.status, 1);
  EXPECT_THAT(dead.err, HasSubstr(":5:15: error: the tensor-core CUDA backend (sm_90a) does not support a tile loaded "
                                  "for an mma whose result nothing reads"));
  fs::remove(path);
}

// A grid coordinate the kernel never reads is marked used in the CUDA (nvcc's warning #177
// "declared but never referenced" otherwise; found by a helper writing kernels from the docs).
TEST(Cli, AnUnusedGridCoordinateDrawsNoNvccWarning) {
  fs::path path = temp_file("unused_coordinate.tile",
      "kernel k(X: tensor<8, f32>, Y: tensor<8, f32>) grid tiles(1, 1) as (i, j) {\n"
      "  store Y[j] = cumsum(load X[0] : <8>);\n}\n");
  CommandResult r = run_command(tilec("compile " + path.string()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(void)i;"));
  EXPECT_THAT(r.out, Not(HasSubstr("(void)j;")));
  fs::remove(path);
  // Nor does a kernel that reads no thread position (thread_row was declared but never referenced).
  fs::path empty = temp_file("empty_kernel.tile", "kernel k() grid tiles(1) as (i) {\n}\n");
  CommandResult nothing = run_command(tilec("compile " + empty.string()));
  EXPECT_EQ(nothing.status, 0) << nothing.err;
  EXPECT_THAT(nothing.out, HasSubstr("const int thread_row = threadIdx.x / 1;  (void)thread_row;"));
  fs::remove(empty);
}

// pipeline(1) on an mma loop whose cost-based schedule needs 17 stages: bounded to one stage it
// takes the serial schedule (it kept 17 with a warning and ran out of shared memory).
TEST(Cli, PipelineOneKeepsOneStage) {
  fs::path path = temp_file("pipe1.tile",
      "kernel pipe1(A: tensor<M, K, f32>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>)\n"
      "    grid tiles(cdiv(M, 128), cdiv(N, 128)) as (m, n) {\n"
      "  acc = zeros<128, 128, f32>();\n"
      "  for k in 0 .. cdiv(K, 64) pipeline(1) carry (acc) {\n"
      "    a = load A[m, k] : <128, 64>;\n    b = load B[k, n] : <64, 128>;\n"
      "    acc = mma(cast(a, bf16), b, acc);\n    acc = mma(cast(a * 2.0, bf16), b, acc);\n  }\n"
      "  store C[m, n] = acc;\n}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult r = run_command(tilec("compile " + path.string() + " --target " + target + " --emit ir"));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_THAT(r.out, HasSubstr("generator = \"serial\", ii = 521, order = 7, pipeline = 1, stage = 0, stages = 1"));
  }
  fs::remove(path);
}

// The interpreter runs kernels the CUDA backend refuses; `tilec run` says so, located, as a
// warning naming the target, so that a passing --check is not read as "this compiles" (found by a
// helper writing kernels from the docs: a tensor-core kernel dividing by its accumulator's
// maximum ran and checked, and compile refused it). A kernel the backend takes gets no warning.
TEST(Cli, RunWarnsWhereCompileWouldRefuse) {
  fs::path source = temp_file("refused.tile",
                              "kernel scaled(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>)\n"
                              "    grid persistent(cdiv(M, 128), cdiv(N, 64)) as (m, n) {\n"
                              "  acc = zeros<128, 64, f32>();\n"
                              "  for k in 0 .. cdiv(K, 64) pipeline(2) carry (acc) {\n"
                              "    acc = mma(load A[m, k] : <128, 64>, load B[k, n] : <64, 64>, acc);\n"
                              "  }\n"
                              "  store C[m, n] = acc / item(max(acc));\n}\n");
  CommandResult r = run_command(tilec("run " + source.string() + " --check --dims M=128,N=64,K=64 --target sm_100a"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("check %C: ok"));
  EXPECT_THAT(r.err, HasSubstr("refused.tile:7:30: warning: tilec compile --target sm_100a refuses this: the "
                               "tensor-core CUDA backend (sm_100a) does not support a max() along axis 0"));
  CommandResult stopped = run_command(tilec("run " + source.string() + " --dims M=128,N=64,K=64 --stop-after parse"));
  EXPECT_EQ(stopped.err.find("refuses"), std::string::npos) << "no backend after a partial pipeline";
  CommandResult gemm = run_command(tilec("run samples/gemm.tile --dims M=128,N=256,K=64"));
  EXPECT_EQ(gemm.status, 0) << gemm.err;
  EXPECT_EQ(gemm.err.find("warning"), std::string::npos) << gemm.err;
  fs::remove(source);
}

// --inputs DIR gives a tensor parameter the bytes of DIR/X.bin, --outputs DIR writes each output
// to DIR/Y.bin: a kernel checked against the user's own data. A file of the wrong size is refused.
TEST(Cli, RunReadsGivenInputsAndWritesOutputs) {
  fs::path dir = fs::temp_directory_path() / ("tilec_run_io_" + std::to_string(::getpid()));
  fs::create_directories(dir / "in");
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  {
    std::ofstream out(dir / "in" / "X.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
  }
  fs::path source = temp_file("twice.tile", "kernel twice(X: tensor<N, f32>, Y: tensor<N, f32>)\n"
                                            "    grid tiles(cdiv(N, 8)) as (i) {\n"
                                            "  store Y[i] = load X[i] : <8> * 2.0;\n}\n");
  CommandResult r = run_command(tilec("run " + source.string() + " --dims N=10 --check --inputs " +
                                      (dir / "in").string() + " --outputs " + (dir / "out").string()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("input %X tensor<10xf32>: read from "));
  EXPECT_THAT(r.out, HasSubstr("output %Y tensor<10xf32>: checksum 110\n"));
  EXPECT_THAT(r.out, HasSubstr("output %Y: written to "));
  std::ifstream in(dir / "out" / "Y.bin", std::ios::binary);
  std::vector<float> y(10);
  in.read(reinterpret_cast<char*>(y.data()), static_cast<std::streamsize>(y.size() * sizeof(float)));
  EXPECT_EQ(in.gcount(), 40);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], 2 * x[i]) << i;
  CommandResult wrong = run_command(tilec("run " + source.string() + " --dims N=12 --inputs " + (dir / "in").string()));
  EXPECT_EQ(wrong.status, 1);
  EXPECT_THAT(wrong.err, HasSubstr("X.bin holds 40 bytes, but %X tensor<12xf32> is 48 bytes (12 elements of 4 bytes"));
  fs::remove(source);
  fs::remove_all(dir);
}

// A <BQ, 1> column stored at [b, h, i] of [B, H, S] lies along H (a tile's dims are the tensor's
// last), though the grid runs h over every head: it wrote heads h·128.. silently. A warning says
// so and what to write; the vector form the user meant gets none.
TEST(Cli, ATileAlongADimensionTheGridRunsPerElementIsWarnedAbout) {
  const std::string head = "const BQ = 128;\n"
                           "kernel lse(X: tensor<B, H, S, f32>, L: tensor<B, H, S, f32>)\n"
                           "    grid tiles(cdiv(S, BQ), H, B) as (i, h, b) {\n"
                           "  x = reshape<BQ, 1>(load X[b, h, i] : <BQ>);\n";
  fs::path column = temp_file("column.tile", head + "  store L[b, h, i] = x + 1.0;\n}\n");
  CommandResult warned = run_command(tilec("compile " + column.string() + " -o /dev/null"));
  EXPECT_EQ(warned.status, 0) << warned.err;
  EXPECT_THAT(warned.err, HasSubstr(":5:3: warning: this store writes 128 elements along L's dimension H at tile "
                                    "coordinate h (elements h·128 .. h·128 + 127), but the grid runs h over every "
                                    "element of that dimension"));
  // The same with the heads a constant (a fixed extent) and the grid running over it.
  fs::path fixed = temp_file("fixed.tile", "const BQ = 128;\nconst NH = 8;\n"
                                           "kernel lse(X: tensor<B, NH, S, f32>, L: tensor<B, NH, S, f32>)\n"
                                           "    grid tiles(cdiv(S, BQ), NH, B) as (i, h, b) {\n"
                                           "  x = reshape<BQ, 1>(load X[b, h, i] : <BQ>);\n"
                                           "  store L[b, h, i] = x;\n}\n");
  CommandResult constant = run_command(tilec("compile " + fixed.string() + " -o /dev/null"));
  EXPECT_THAT(constant.err, HasSubstr(":6:3: warning: this store writes 128 elements along L's dimension 1 (of "
                                      "extent 8) at tile coordinate h"));
  fs::remove(fixed);
  fs::path vector = temp_file("vector.tile", head + "  store L[b, h, i] = reshape<BQ>(x + 1.0);\n}\n");
  CommandResult quiet = run_command(tilec("compile " + vector.string() + " -o /dev/null"));
  EXPECT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  fs::remove(column);
  fs::remove(vector);
}

// A one-kernel .tile program whose loop header, tile shape or names the limit tests vary.
std::string kernel_with(const std::string& shape, const std::string& stages, const std::string& name = "x") {
  return "kernel k(X: tensor<N, f32>, Y: tensor<N, f32>) grid tiles(1) as (i) {\n"
         "  for j in 0 .. 2 pipeline(" + stages + ") {\n"
         "    " + name + " = load X[i] : <" + shape + ">;\n"
         "    store Y[i] = " + name + ";\n  }\n}\n";
}

TEST(CliLimits, HostileSizesAreInputErrorsWithALocation) {
  struct Case {
    std::string name, text, message;
  };
  std::string deep_tile = "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = " + std::string(300, '(') + "1" +
                          std::string(300, ')') + ";\n}\n";
  std::vector<Case> cases = {
      {"long_name.tile", kernel_with("8", "2", std::string(300, 'v')), ":3:5: error: identifier of 300 characters; at most 256"},
      {"stages.tile", kernel_with("8", "17"), ":2:28: error: the pipeline stage count is 17; at most 16 stages"},
      {"deep.tile", deep_tile, ":2:"},
  };
  // Products of dimensions past 2^30 elements (the byte size would overflow 32 bits) and past
  // 2^63 (the element count would overflow 64 bits), in the DSL and in IR text.
  std::string wide = "kernel k(X: tensor<N, N, f32>, Y: tensor<N, N, f32>) grid tiles(1) as (i) {\n"
                     "  x = load X[i, i] : <65536, 65536>;\n  store Y[i, i] = x;\n}\n";
  cases.push_back({"wide.tile", wide, ":2:30: error: tile of more than 2^30 elements (dimension 65536)"});
  std::string huge = wide;
  huge.replace(huge.find("65536, 65536"), 12, "4294967296, 4294967296");
  cases.push_back({"huge.tile", huge, ":2:23: error: a tile dimension of 4294967296: at most 2^24 (16777216) are allowed"});
  cases.push_back({"huge.tir", "module\nkernel @k() {\n  %0 = zeros : tile<4294967296x4294967296xf32, reg>\n  return\n}\n",
                   ":3:21: error: a tile dimension of 4294967296: at most 2^24 (16777216) are allowed"});
  cases.push_back({"zero.tir", "module\nkernel @k() {\n  %0 = zeros : tile<0x8xf32, reg>\n  return\n}\n",
                   ":3:21: error: a tile dimension must be at least 1"});
  // pipeline(S) in IR text has the DSL's bound; the verifier names the loop's location.
  std::string loop_tir = "module\nkernel @k() {\n  %0 = constant {value = 0} : index\n"
                         "  %1 = constant {value = 4} : index\n  %2 = constant {value = 1} : index\n"
                         "  for %0, %1, %2 {pipeline = STAGES} loc(6:3) {\n    ^(%i: index):\n    yield\n  }\n"
                         "  return\n}\n";
  std::string stages_tir = loop_tir;
  stages_tir.replace(stages_tir.find("STAGES"), 6, "17");
  cases.push_back({"stages.tir", stages_tir, ":6:3: error: 'for': the pipeline stage count is 17; at most 16 stages"});
  std::string huge_stages_tir = loop_tir;
  huge_stages_tir.replace(huge_stages_tir.find("STAGES"), 6, "4294967296");
  cases.push_back({"huge_stages.tir", huge_stages_tir, ":6:3: error: 'for': the pipeline stage count is 4294967296; at most 16"});
  std::string deep_tir = "module {a = " + std::string(1000, '[') + std::string(1000, ']') + "}\n";
  cases.push_back({"deep.tir", deep_tir, ":1:"});
  for (const Case& c : cases) {
    fs::path path = temp_file(c.name, c.text);
    CommandResult r = run_command(tilec("compile " + path.string() + " -o /dev/null"));
    EXPECT_EQ(r.status, 1) << c.name << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(path.string() + c.message)) << c.name;
    fs::remove(path);
  }
  std::string sixteen_tir = loop_tir;
  sixteen_tir.replace(sixteen_tir.find("STAGES"), 6, "16");
  fs::path sixteen = temp_file("sixteen.tir", sixteen_tir);
  CommandResult at_limit = run_command(tilec("compile " + sixteen.string() + " --emit ir --stop-after parse"));
  EXPECT_EQ(at_limit.status, 0) << at_limit.err;
  EXPECT_THAT(at_limit.out, HasSubstr("pipeline = 16"));
  fs::remove(sixteen);
  fs::path deep = temp_file("deep_nesting.tile", deep_tile);
  EXPECT_THAT(run_command(tilec("compile " + deep.string())).err, HasSubstr("nesting deeper than 200 levels"));
  fs::remove(deep);
  fs::path deep_ir = temp_file("deep_nesting.tir", deep_tir);
  EXPECT_THAT(run_command(tilec("compile " + deep_ir.string())).err, HasSubstr("nesting deeper than 200 levels"));
  fs::remove(deep_ir);
}

TEST(CliLimits, SharedMemoryBudgetIsNamedWithTheFigure) {
  // 128 rows of 1024 f32 elements: 512 KiB for one tile buffer alone, and 128 registers a thread
  // even over 1024 threads (64 rows take the register form over 1024, with a spill warning).
  CommandResult r = run_command(tilec("compile samples/softmax.tile -D BR=128 -D D=1024 -o /dev/null"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("samples/softmax.tile:6:1: error: kernel @softmax needs "));
  EXPECT_THAT(r.err, ::testing::MatchesRegex("(.|\n)*needs [0-9]+ bytes of shared memory(.|\n)*budget is 232448 bytes(.|\n)*"));
}

// A kernel whose arguments overflow CUDA's 32764-byte parameter space is refused with the figure:
// 5000 tensors compiled, and nvcc refused the .cu ("Formal parameter space overflowed"; found by
// a helper). 4091 pointers and one extent (32736 bytes) still compile, with nvcc too.
TEST(CliLimits, KernelArgumentsPastCudasParameterSpaceAreRefused) {
  auto kernel_of = [](int tensors) {
    std::string source = "kernel k(";
    for (int i = 0; i < tensors; ++i) source += "X" + std::to_string(i) + ": tensor<N, f32>, ";
    return source + "Y: tensor<N, f32>) grid tiles(cdiv(N, 128)) as (i) {\n  store Y[i] = load X0[i] : <128>;\n}\n";
  };
  fs::path many = temp_file("many_parameters.tile", kernel_of(5000));
  CommandResult r = run_command(tilec("compile " + many.string() + " -o /dev/null"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr(":1:1: error: kernel @k takes 5001 parameters and 1 extent, up to 40016 bytes of kernel "
                               "arguments; CUDA passes at most 32764"));
  write_file(many, kernel_of(4090));
  EXPECT_EQ(run_command(tilec("compile " + many.string() + " -o /dev/null")).status, 0);
  fs::remove(many);
}

TEST(CliLimits, UnknownTargetNamesTheChoices) {
  CommandResult r = run_command(tilec("compile samples/vector_add.tile --target sm_80"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("sm_80"));
  EXPECT_THAT(r.err, HasSubstr("sm_90a"));
}

// An option of one value given twice is an error that says so (it was CLI11's "--seed: At Most 1
// required but received 2"), where --dims, --scalar and -D repeat with a warning.
TEST(CliLimits, AnOptionOfOneValueGivenTwiceIsNamed) {
  CommandResult r = run_command(tilec("run samples/vector_add.tile --seed 1 --seed 2"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("tilec: error: --seed is given more than once; give it once"));
}

// IR a target-reading pass (build-resources, ...) has run on belongs to that target; IR before
// them (the front end's) compiles for either.
TEST(CliLimits, IrCompiledForOneTargetIsRefusedForAnother) {
  fs::path scheduled = source_dir() / "tests" / "golden" / "insert-sync" / "gemm_sm100a.tir";
  CommandResult r = run_command(tilec("compile " + scheduled.string() + " --target sm_90a -o /dev/null"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("gemm_sm100a.tir: error: the input was compiled for sm_100a (it records "
                               "'generate-schedule', which decides by the target); compile it with --target sm_100a"));
  EXPECT_EQ(run_command(tilec("compile " + scheduled.string() + " --target sm_100a -o /dev/null")).status, 0);
  fs::path parsed = temp_file("vector_add_sm100a.tir", "");
  ASSERT_EQ(run_command(tilec("compile samples/vector_add.tile --target sm_100a --emit ir --stop-after parse -o " +
                              parsed.string())).status, 0);
  EXPECT_THAT(read_file(parsed), HasSubstr("target = \"sm_100a\""));
  EXPECT_EQ(run_command(tilec("compile " + parsed.string() + " --target sm_90a -o /dev/null")).status, 0);
}

// The module header's own attributes are checked before the pipeline trusts them: an unknown
// target was read as the default (and later named as the --target to give), `passes = "parse"`
// as no pass run, and an unknown or repeated pass was kept (found by a helper).
TEST(CliLimits, AHandEditedModuleHeaderIsCheckedLikeTheOptions) {
  fs::path parsed = temp_file("header.tir", "");
  ASSERT_EQ(run_command(tilec("compile samples/vector_add.tile --emit ir --stop-after parse -o " + parsed.string())).status, 0);
  const std::string text = read_file(parsed);
  const std::string header = "passes = [\"parse\"]";
  ASSERT_THAT(text, HasSubstr(header));
  struct Case {
    std::string from, to, message;
  };
  for (const Case& c : {Case{"target = \"sm_90a\"", "target = \"sm_80\"",
                             "error: the module's 'target' is \"sm_80\", which is not a target of tilec (sm_90a or sm_100a)"},
                        Case{header, "passes = \"parse\"", "error: the module's 'passes' must be an array of pass names"},
                        Case{header, "passes = [\"parse\", \"bogus\"]",
                             "error: the module's 'passes' lists \"bogus\", which is not a pass of the pipeline (parse, "},
                        Case{header, "passes = [\"parse\", \"parse\"]", "error: the module's 'passes' lists \"parse\" twice"}}) {
    std::string edited = text;
    ASSERT_NE(edited.find(c.from), std::string::npos) << c.from;
    edited.replace(edited.find(c.from), c.from.size(), c.to);
    write_file(parsed, edited);
    for (const char* command : {"compile ", "run "}) {
      CommandResult r = run_command(tilec(command + parsed.string() + (command[0] == 'c' ? " -o /dev/null" : "")));
      EXPECT_EQ(r.status, 1) << c.to;
      EXPECT_THAT(r.err, HasSubstr(c.message)) << command << c.to;
    }
  }
  fs::remove(parsed);
}

// Options aimed at passes a .tir already records: --stop-after one of them printed the IR after
// the last recorded pass as if it were the IR after that one; --print-ir-after and --generator
// did nothing, silently (found by a helper).
TEST(CliLimits, OptionsForPassesTheIrAlreadyRecordsAreNamed) {
  const std::string materialized = (source_dir() / "tests" / "golden" / "insert-sync" / "gemm_sm90a.tir").string();
  CommandResult stop = run_command(tilec("compile " + materialized + " --emit ir --stop-after generate-schedule -o /dev/null"));
  EXPECT_EQ(stop.status, 1);
  EXPECT_THAT(stop.err, HasSubstr("error: --stop-after generate-schedule: the input already records the passes after "
                                  "'generate-schedule', up to 'materialize-schedule', so its IR after "
                                  "'generate-schedule' is not there to stop at"));
  EXPECT_EQ(run_command(tilec("compile " + materialized + " --emit ir --stop-after materialize-schedule -o /dev/null")).status, 0);
  CommandResult ignored =
      run_command(tilec("compile " + materialized + " --print-ir-after build-resources --generator serial -o /dev/null"));
  EXPECT_EQ(ignored.status, 0) << ignored.err;
  EXPECT_THAT(ignored.err, HasSubstr("warning: --print-ir-after build-resources: the input already records "
                                     "'build-resources', which does not run again"));
  EXPECT_THAT(ignored.err, HasSubstr("warning: --generator serial: the input already records 'generate-schedule'"));
}

TEST(CliLimits, BytesOutsideAsciiAreRefusedOutsideCommentsOnly) {
  std::string body = kernel_with("8", "2");
  fs::path code = temp_file("latin1.tile", "// caf\xe9\n" + body.insert(body.find("store"), "\xff"));
  CommandResult r = run_command(tilec("compile " + code.string() + " -o /dev/null"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr(code.string() + ":5:5: error: unexpected byte 0xff"));
  fs::remove(code);
  // Invalid UTF-8 (a lone continuation byte, a truncated sequence) inside both comment forms.
  fs::path comments = temp_file("comments.tile", "// \x80\xc3\n/* \xfe\xff \xe2\x82 */\n" + kernel_with("8", "2"));
  CommandResult ok = run_command(tilec("compile " + comments.string() + " -o /dev/null"));
  EXPECT_EQ(ok.status, 0) << ok.err;
  fs::remove(comments);
}

TEST(CliLimits, EveryReaderRefusesEmptyFilesAndDirectories) {
  fs::path empty_ir = temp_file("empty.tir", "");
  CommandResult ir = run_command(tilec("compile " + empty_ir.string()));
  EXPECT_EQ(ir.status, 1);
  EXPECT_THAT(ir.err, HasSubstr("the file is empty"));
  fs::remove(empty_ir);
  fs::path empty_json = temp_file("empty.json", "");
  for (const char* lab : {"sched", "reorder"}) {
    CommandResult json = run_command(tilec(std::string(lab) + " " + empty_json.string()));
    EXPECT_EQ(json.status, 1) << lab;
    EXPECT_THAT(json.err, HasSubstr(empty_json.string())) << lab;
    CommandResult directory = run_command(tilec(std::string(lab) + " samples"));
    EXPECT_EQ(directory.status, 1) << lab;
    EXPECT_THAT(directory.err, HasSubstr("is a directory")) << lab;
  }
  fs::remove(empty_json);
  CommandResult run_directory = run_command(tilec("run samples"));
  EXPECT_EQ(run_directory.status, 1);
  EXPECT_THAT(run_directory.err, HasSubstr("is a directory"));
  CommandResult into_directory = run_command(tilec("compile samples/vector_add.tile -o samples"));
  EXPECT_EQ(into_directory.status, 1);
  EXPECT_THAT(into_directory.err, HasSubstr("cannot write 'samples': it is a directory"));
  // A module without kernels compiled to an empty .cu, emulated "ok" and ran as "no kernel named ''"
  // (a CLI hunt): every command says it defines no kernel.
  fs::path no_kernel = temp_file("no_kernel.tir", "module {}\n");
  for (const char* command : {"compile", "run", "emulate"}) {
    CommandResult r = run_command(tilec(std::string(command) + " " + no_kernel.string()));
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_THAT(r.err, HasSubstr(":1:1: error: the module defines no kernel")) << command;
  }
  fs::remove(no_kernel);
}

// A .cu whose --header could not be written stayed behind, up to date to make (a CLI hunt): it is
// removed, as when the dependency file fails. -D under --emit tokens or ast, which show the source
// before constants are computed, was ignored: it is refused.
TEST(CliLimits, AFailedHeaderRemovesTheCudaAndDefinesNeedConstants) {
  fs::path cu = fs::temp_directory_path() / ("tilec_header_" + std::to_string(::getpid()) + ".cu");
  CommandResult header = run_command(tilec("compile samples/vector_add.tile -o " + cu.string() +
                                           " --header /nonexistent/directory/h.h"));
  EXPECT_EQ(header.status, 1);
  EXPECT_THAT(header.err, HasSubstr("so that the build reruns this compile"));
  EXPECT_FALSE(fs::exists(cu));
  // Only a regular file is removed: -o /dev/null lost /dev/null itself (a learner's hunt), and a
  // link stays a link. An output name of 250 bytes is written (its temporary's name was longer
  // than NAME_MAX).
  const fs::path target = fs::temp_directory_path() / ("tilec_link_target_" + std::to_string(::getpid()) + ".cu");
  const fs::path link = fs::temp_directory_path() / ("tilec_link_" + std::to_string(::getpid()) + ".cu");
  write_file(target, "old\n");
  fs::create_symlink(target, link);
  CommandResult linked = run_command(tilec("compile samples/vector_add.tile -o " + link.string() +
                                           " --header /nonexistent/directory/h.h"));
  EXPECT_EQ(linked.status, 1);
  EXPECT_THAT(linked.err, ::testing::Not(HasSubstr("removed")));
  EXPECT_TRUE(fs::is_symlink(link));
  fs::remove(link);
  fs::remove(target);
  const fs::path long_name = fs::temp_directory_path() / (std::string(250, 'k') + ".cu");
  CommandResult named = run_command(tilec("compile samples/vector_add.tile -o " + long_name.string()));
  EXPECT_EQ(named.status, 0) << named.err;
  EXPECT_TRUE(fs::exists(long_name));
  fs::remove(long_name);
  // A dimension named like the harness's integers=1 flag was set by it too.
  fs::path flags = temp_file("harness_flags.tile", "kernel k(X: tensor<integers, f32>) grid tiles(cdiv(integers, 8)) as (i) {\n"
                                                   "  store X[i] = zeros<8, f32>();\n}\n");
  CommandResult harness = run_command(tilec("compile " + flags.string() + " --emit-harness -o /dev/null"));
  EXPECT_EQ(harness.status, 1);
  EXPECT_THAT(harness.err, HasSubstr("--emit-harness: kernel @k has a dimension named 'integers', which the harness's "
                                     "own integers=1 flag also sets; rename it"));
  for (const char* emit : {"tokens", "ast"}) {
    CommandResult r = run_command(tilec(std::string("compile samples/vector_add.tile --emit ") + emit + " -D BLOCK=64"));
    EXPECT_EQ(r.status, 1) << emit;
    EXPECT_THAT(r.err, HasSubstr("-D applies to --emit ir and cu")) << emit;
  }
}

}  // namespace
}  // namespace tilec::testing
