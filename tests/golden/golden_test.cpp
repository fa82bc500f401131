// tests/golden/golden_test.cpp — golden tests, one folder per stage.
//
// tests/golden/STAGE/NAME.tile (or .tir) is compiled with `tilec compile --emit ir
// --stop-after STAGE`; the output must equal NAME.expected byte for byte. The first comment
// line of each input says what should happen. tests/golden/errors/NAME.tile must fail: every
// diagnostic must sit on a line carrying `// error: TEXT` (TEXT a substring of the message),
// and every such comment must be matched by a diagnostic on its line. A line
// `// tilec-args: ARGS` in an input adds ARGS to its command (e.g. --target sm_100a).
//
// Bless: `TILEC_BLESS=1 meson test -C build golden` rewrites the .expected files; review the
// diff before committing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".tile" || entry.path().extension() == ".tir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The extra command-line arguments an input asks for with `// tilec-args: ARGS`.
std::string extra_args(const fs::path& input) {
  std::istringstream lines(read_file(input));
  std::string line, args;
  const std::string marker = "// tilec-args:";
  while (std::getline(lines, line))
    if (auto at = line.find(marker); at != std::string::npos) args += " " + line.substr(at + marker.size());
  return args;
}

TEST(Golden, IrAfterEachStageMatchesTheExpectedFile) {
  fs::path root = source_dir() / "tests" / "golden";
  int checked = 0;
  for (const auto& stage_dir : fs::directory_iterator(root)) {
    if (!stage_dir.is_directory() || stage_dir.path().filename() == "errors") continue;
    std::string stage = stage_dir.path().filename().string();
    for (const fs::path& input : inputs_in(stage_dir.path())) {
      SCOPED_TRACE(input.string());
      // Paths relative to the source dir keep the recorded `source` attribute stable.
      std::string relative = fs::relative(input, source_dir()).string();
      CommandResult r = run_command("cd " + source_dir().string() + " && " + tilec_binary() +
                                    " compile " + relative + " --emit ir --stop-after " + stage +
                                    extra_args(input));
      ASSERT_EQ(r.status, 0) << r.err;
      fs::path expected = input;
      expected.replace_extension(".expected");
      if (blessing()) write_file(expected, r.out);
      ASSERT_TRUE(fs::exists(expected)) << "missing " << expected << " (run with TILEC_BLESS=1)";
      EXPECT_EQ(r.out, read_file(expected));
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(Golden, ExpectedErrorsSitOnTheirLines) {
  fs::path dir = source_dir() / "tests" / "golden" / "errors";
  const std::regex expectation(R"(// error: (.*)$)");
  const std::regex diagnostic(R"(^[^:\n]+:(\d+):\d+: error: (.*)$)");
  int checked = 0;
  for (const fs::path& input : inputs_in(dir)) {
    SCOPED_TRACE(input.string());
    std::map<int, std::vector<std::string>> expected;
    std::istringstream lines(read_file(input));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      std::smatch m;
      if (std::regex_search(line, m, expectation)) expected[number].push_back(m[1]);
    }
    ASSERT_FALSE(expected.empty()) << "an errors/ input needs // error: comments";
    CommandResult r = run_command(tilec_binary() + " compile " + input.string() + " --emit ir" + extra_args(input));
    EXPECT_EQ(r.status, 1) << r.err;
    std::map<int, std::vector<std::string>> reported;
    std::istringstream err(r.err);
    while (std::getline(err, line)) {
      std::smatch m;
      if (std::regex_match(line, m, diagnostic)) reported[std::stoi(m[1])].push_back(m[2]);
    }
    for (const auto& [number, messages] : expected)
      for (const auto& text : messages) {
        bool found = false;
        for (const auto& message : reported[number]) found |= message.find(text) != std::string::npos;
        EXPECT_TRUE(found) << "line " << number << ": no diagnostic containing '" << text << "'\n" << r.err;
      }
    for (const auto& [number, messages] : reported)
      EXPECT_TRUE(expected.count(number)) << "unexpected diagnostic on line " << number << ": " << messages[0];
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace tilec::testing
