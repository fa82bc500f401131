// tests/cli/cli_test.cpp — the tilec command line: help, exit statuses, bad inputs and paths,
// the stage options of compile, and run's error reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

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

TEST(Cli, UsageErrorsExitOne) {
  EXPECT_EQ(run_command(tilec("")).status, 1);
  EXPECT_EQ(run_command(tilec("frobnicate")).status, 1);
  EXPECT_EQ(run_command(tilec("compile samples/vector_add.tile --target sm_80")).status, 1);
  EXPECT_EQ(run_command(tilec("compile samples/vector_add.tile --stop-after no-such-pass")).status, 1);
  EXPECT_EQ(run_command(tilec("compile samples/vector_add.tile -D BLOCK")).status, 1);
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
}

TEST(Cli, RunReportsBadDimsUnknownKernelsAndRaces) {
  CommandResult dims = run_command(tilec("run samples/softmax.tile --dims R=abc"));
  EXPECT_EQ(dims.status, 1);
  EXPECT_THAT(dims.err, HasSubstr("expected NAME=POSITIVE_INTEGER"));
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
}

}  // namespace
}  // namespace tilec::testing
