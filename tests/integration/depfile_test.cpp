// tests/integration/depfile_test.cpp — `tilec compile --depfile FILE` and `-M`: the make rule's
// exact text, where -M puts it, escaping, and the errors (no -o, both options, failed compile,
// unwritable path).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh directory per test, removed afterwards.
class Depfile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() / ("tilec_depfile_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    tile_ = directory_ / "vector_add.tile";
    fs::copy_file(source_dir() / "samples" / "vector_add.tile", tile_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  CommandResult tilec(const std::string& arguments) {
    return run_command("cd '" + directory_.string() + "' && " + tilec_binary() + " " + arguments);
  }

  fs::path directory_;
  fs::path tile_;
};

TEST_F(Depfile, NamesTheOutputAndTheInput) {
  CommandResult r = tilec("compile vector_add.tile -o out.cu --depfile out.cu.d");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(read_file(directory_ / "out.cu"), HasSubstr("launch_vector_add"));
  EXPECT_EQ(read_file(directory_ / "out.cu.d"), "out.cu: vector_add.tile\n");
}

TEST_F(Depfile, KeepsPathsAsGiven) {
  fs::create_directories(directory_ / "gen");
  CommandResult r = tilec("compile " + tile_.string() + " -o gen/k.cu --depfile gen/deps/../k.d --emit ir");
  EXPECT_EQ(r.status, 1) << "gen/deps does not exist, so the depfile cannot be written";
  EXPECT_THAT(r.err, HasSubstr("cannot write dependency file 'gen/deps/../k.d'"));
  EXPECT_FALSE(fs::exists(directory_ / "gen" / "k.cu")) << "an output without its dependency file looks up to date";
  EXPECT_THAT(r.err, HasSubstr("removed 'gen/k.cu'"));
  r = tilec("compile " + tile_.string() + " -o gen/k.tir --depfile gen/k.d --emit ir");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(directory_ / "gen" / "k.d"), "gen/k.tir: " + tile_.string() + "\n");
}

TEST_F(Depfile, ShortFormWritesNextToTheOutput) {
  fs::create_directories(directory_ / "gen");
  CommandResult r = tilec("compile vector_add.tile -o gen/vector_add.cu -M");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(directory_ / "gen" / "vector_add.cu.d"), "gen/vector_add.cu: vector_add.tile\n");
}

TEST_F(Depfile, EscapesSpacesHashesAndDollars) {
  fs::copy_file(tile_, directory_ / "my kernel#1$.tile");
  CommandResult r = tilec("compile 'my kernel#1$.tile' -o 'out put.cu' -M");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(directory_ / "out put.cu.d"), "out\\ put.cu: my\\ kernel\\#1$$.tile\n");
}

// GCC's rule for blanks after backslashes (a helper's hunt: "a\ b.tile" was written "a\\ b.tile",
// which ninja reads as two missing files, so the .cu was rebuilt on every build); a tab is a blank
// too; a line break cannot be written at all.
TEST_F(Depfile, EscapesBackslashesBeforeBlanksAsGccDoes) {
  fs::copy_file(tile_, directory_ / "a\\ b\tc.tile");
  CommandResult r = tilec("compile 'a\\ b\tc.tile' -o k.cu -M");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(directory_ / "k.cu.d"), "k.cu: a\\\\\\ b\\\tc.tile\n");
  fs::copy_file(tile_, directory_ / "line\nbreak.tile");
  r = tilec("compile 'line\nbreak.tile' -o l.cu -M");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("a make rule cannot name a path with a line break in it"));
  EXPECT_FALSE(fs::exists(directory_ / "l.cu"));
}

TEST_F(Depfile, NeedsAnOutputFile) {
  CommandResult r = tilec("compile vector_add.tile --depfile out.d");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--depfile needs -o FILE"));
  EXPECT_TRUE(r.out.empty()) << "nothing is compiled when the options are wrong";
  r = tilec("compile vector_add.tile -o - -M");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("-M needs -o FILE"));
  EXPECT_FALSE(fs::exists(directory_ / "out.d"));
}

TEST_F(Depfile, BothFormsAtOnceIsAUsageError) {
  CommandResult r = tilec("compile vector_add.tile -o out.cu -M --depfile out.d");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("tilec: error: -M and --depfile both name the dependency file: give one"));
  EXPECT_FALSE(fs::exists(directory_ / "out.cu"));
  EXPECT_FALSE(fs::exists(directory_ / "out.d"));
  EXPECT_FALSE(fs::exists(directory_ / "out.cu.d"));
}

TEST_F(Depfile, AFailedCompileWritesNoDependencyFile) {
  write_file(directory_ / "broken.tile", "kernel broken( {\n");
  CommandResult r = tilec("compile broken.tile -o broken.cu --depfile broken.d");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("error"));
  EXPECT_FALSE(fs::exists(directory_ / "broken.d"));
}

}  // namespace
}  // namespace tilec::testing
