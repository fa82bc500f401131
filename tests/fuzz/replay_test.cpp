// tests/fuzz/replay_test.cpp — the fuzz targets' inputs, replayed in the normal test suite.
//
// 1. Every file in tests/fuzz/regressions/NAME (an input a fuzz target once crashed on) and
//    every seed of NAME's corpus runs through the same check as fuzz_NAME: no internal error.
// 2. The same files through the tilec binary (compile to CUDA for .tile and .tir, sched,
//    reorder) never exit with status 2 (internal error) nor by a signal.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "../cli_runner.h"
#include "tests/fuzz/corpus_folders.h"
#include "tests/fuzz/fuzz_entry.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

using Check = std::function<std::optional<std::string>(std::string_view)>;

const std::map<std::string, Check>& checks() {
  static const std::map<std::string, Check> table = {
      {"tile_source", fuzz::check_tile_source},
      {"ir_text", fuzz::check_ir_text},
      {"schedule_lab", fuzz::check_schedule_lab},
      {"reorder_lab", fuzz::check_reorder_lab},
  };
  return table;
}

// Seeds with the target's extension, then every regression file; sorted, source-relative.
std::vector<fs::path> inputs_of(const fuzz::TargetFolders& folders, bool with_seeds) {
  std::vector<fs::path> files;
  auto collect = [&](const fs::path& folder, const std::string& extension) {
    if (!fs::is_directory(source_dir() / folder)) return;
    for (const auto& entry : fs::recursive_directory_iterator(source_dir() / folder))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.' &&
          (extension.empty() || entry.path().extension() == extension))
        files.push_back(fs::relative(entry.path(), source_dir()));
  };
  if (with_seeds)
    for (const std::string& seed : folders.seeds) collect(seed, folders.extension);
  collect(fs::path("tests/fuzz/regressions") / folders.target, "");
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzTarget : public ::testing::TestWithParam<fuzz::TargetFolders> {};

TEST_P(FuzzTarget, NoInputIsAnInternalError) {
  const fuzz::TargetFolders& folders = GetParam();
  std::vector<fs::path> files = inputs_of(folders, true);
  ASSERT_FALSE(files.empty()) << "no seed found for " << folders.target;
  for (const fs::path& file : files) {
    std::optional<std::string> problem = checks().at(folders.target)(read_file(source_dir() / file));
    EXPECT_FALSE(problem.has_value()) << file << ": " << problem.value_or("");
  }
}

// The subcommand that reads a target's inputs; regression files of the text targets carry no
// extension tilec knows, so they go through a copy with the right one.
std::string tilec_command(const std::string& target, const fs::path& input) {
  if (target == "schedule_lab") return "sched " + input.string();
  if (target == "reorder_lab") return "reorder " + input.string();
  return "compile " + input.string() + " -o /dev/null";
}

TEST_P(FuzzTarget, TilecNeverExitsWithAnInternalError) {
  const fuzz::TargetFolders& folders = GetParam();
  fs::path scratch = fs::temp_directory_path() / ("tilec_replay_" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  for (const fs::path& file : inputs_of(folders, true)) {
    fs::path input = source_dir() / file;
    if (file.extension() != folders.extension) {
      input = scratch / (file.filename().string() + folders.extension);
      fs::copy_file(source_dir() / file, input, fs::copy_options::overwrite_existing);
    }
    CommandResult result = run_command(tilec_binary() + " " + tilec_command(folders.target, input));
    EXPECT_TRUE(result.status == 0 || result.status == 1)
        << file << ": exit status " << result.status << "\n" << result.err;
  }
  fs::remove_all(scratch);
}

INSTANTIATE_TEST_SUITE_P(Fuzz, FuzzTarget, ::testing::ValuesIn(fuzz::target_folders()),
                         [](const auto& info) { return info.param.target; });

}  // namespace
}  // namespace tilec::testing
