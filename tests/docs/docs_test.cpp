// tests/docs/docs_test.cpp — the documentation's examples are real tilec output.
//
// In every docs/**/*.md, a fenced block holding exactly one line `tilec ARGS` is a command; the
// next fenced block is its output. The test runs the command from the source directory and
// requires that block's lines to appear, contiguous and in order, in what the command printed
// (stdout, then stderr), so a page may show an excerpt; a line `...` in the output block stands
// for any lines left out (the parts around it must still appear in order). Synopsis lines
// (with `|` or `[`), commands that write files (-o, --report, --depfile, -M), and a command whose
// next block is another command are skipped.
// When a pass or the printer changes its output, this test names the page to update.
#include <gtest/gtest.h>

#include <sstream>

#include "../cli_runner.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Block {
  size_t line = 0;  // 1-based line of the opening fence
  std::vector<std::string> lines;
};

std::vector<Block> fenced_blocks(const std::string& markdown) {
  std::vector<Block> blocks;
  std::vector<std::string> lines = split_lines(markdown);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    Block block;
    block.line = i + 1;
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) block.lines.push_back(lines[i]);
    blocks.push_back(std::move(block));
  }
  return blocks;
}

bool is_command(const Block& block) {
  return block.lines.size() == 1 && block.lines[0].rfind("tilec ", 0) == 0;
}

bool is_synopsis(const std::string& command) { return command.find_first_of("|[") != std::string::npos; }

bool writes_files(const std::string& command) {
  std::istringstream words(command);
  for (std::string word; words >> word;)
    if (word == "-o" || word == "--report" || word == "--depfile" || word == "-M") return true;
  return false;
}

// Where `needle` (contiguous lines) first appears in `haystack` at or after `from`, or npos.
size_t find_run(const std::vector<std::string>& haystack, const std::vector<std::string>& needle, size_t from) {
  for (size_t start = from; start + needle.size() <= haystack.size(); ++start) {
    size_t k = 0;
    while (k < needle.size() && haystack[start + k] == needle[k]) ++k;
    if (k == needle.size()) return start;
  }
  return std::string::npos;
}

// The block's parts between `...` lines appear in `printed`, each contiguous, in order.
bool shows_output(const std::vector<std::string>& printed, const std::vector<std::string>& block) {
  size_t from = 0;
  std::vector<std::string> part;
  auto match_part = [&] {
    if (part.empty()) return true;
    size_t at = find_run(printed, part, from);
    if (at == std::string::npos) return false;
    from = at + part.size();
    part.clear();
    return true;
  };
  for (const auto& line : block) {
    if (line == "...") {
      if (!match_part()) return false;
    } else {
      part.push_back(line);
    }
  }
  return match_part();
}

TEST(Docs, ExamplesAreRealOutput) {
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() / "docs")) {
    if (entry.path().extension() != ".md") continue;
    std::vector<Block> blocks = fenced_blocks(read_file(entry.path()));
    for (size_t b = 0; b + 1 < blocks.size(); ++b) {
      if (!is_command(blocks[b]) || is_command(blocks[b + 1])) continue;
      std::string command = blocks[b].lines[0];
      if (is_synopsis(command) || writes_files(command)) continue;
      SCOPED_TRACE(entry.path().string() + ":" + std::to_string(blocks[b].line) + ": " + command);
      CommandResult r = run_command("cd " + source_dir().string() + " && " + tilec_binary() + command.substr(5));
      std::vector<std::string> printed = split_lines(r.out);
      std::vector<std::string> errors = split_lines(r.err);
      printed.insert(printed.end(), errors.begin(), errors.end());
      EXPECT_TRUE(shows_output(printed, blocks[b + 1].lines))
          << "the block after this command (line " << blocks[b + 1].line
          << ") is not in its output; rerun the command and update the page";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace tilec::testing
