// tests/reorder/test_cli.cpp — `tilec reorder` end to end: every scenario file through the
// command line (output identical to the library's, exit 0), --max-events overriding the file,
// stdin input, and each kind of bad input giving a clear message and exit 1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "passes/reorder/reorder_lab.h"

namespace tilec::reorder {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream stream(path);
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

struct Outcome {
  int status;
  std::string out;
  std::string err;
};

// Runs `tilec reorder ARGS`, with `input` on stdin when given.
Outcome run_tilec(const std::string& arguments, const std::string& input = "") {
  const char* tilec = std::getenv("TILEC");
  EXPECT_NE(tilec, nullptr) << "TILEC must name the tilec executable (set by meson)";
  fs::path directory = fs::path(testing::TempDir());
  fs::path in = directory / "reorder_cli_in.json";
  fs::path out = directory / "reorder_cli_out.txt";
  fs::path err = directory / "reorder_cli_err.txt";
  std::ofstream(in) << input;
  std::string command = std::string("'") + tilec + "' reorder " + arguments + " < '" + in.string() + "' > '" +
                        out.string() + "' 2> '" + err.string() + "'";
  int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_text(out), read_text(err)};
}

std::string expected_output(const std::string& text, std::optional<int> max_events = std::nullopt) {
  LabParse parse = parse_reorder_lab(text);
  EXPECT_TRUE(parse.input.has_value()) << parse.error;
  ReorderOptions options;
  options.max_events = max_events.value_or(parse.input->max_events);
  return format_reorder_lab(parse.input->segment, reorder_events(parse.input->segment, options));
}

TEST(ReorderCli, EveryScenarioMatchesTheLibrary) {
  int scenarios = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(TILEC_REORDER_SCENARIOS)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    if (file.extension() != ".json") continue;
    ++scenarios;
    Outcome outcome = run_tilec("'" + file.string() + "'");
    EXPECT_EQ(outcome.status, 0) << file << "\n" << outcome.err;
    EXPECT_EQ(outcome.out, expected_output(read_text(file))) << file;
    EXPECT_EQ(outcome.err, "") << file;
    auto json = nlohmann::json::parse(outcome.out);
    EXPECT_TRUE(json["feasible"].get<bool>()) << file;
  }
  EXPECT_GE(scenarios, 10);
}

TEST(ReorderCli, DesignExampleGivesTheDocumentedShape) {
  Outcome outcome = run_tilec("'" + std::string(TILEC_REORDER_SCENARIOS) + "/design_example.json'");
  ASSERT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_EQ(outcome.out,
            "{\n"
            "  \"order\": [\n    \"s0\",\n    \"s1\",\n    \"if0\",\n    \"ev\"\n  ],\n"
            "  \"feasible\": true,\n"
            "  \"strategy\": \"original\",\n"
            "  \"max_peak\": 1,\n"
            "  \"peak\": {\n    \"MTE2->V\": 1,\n    \"V->S\": 1\n  }\n"
            "}\n");
}

TEST(ReorderCli, MaxEventsOverridesTheFileAndStdinWorks) {
  fs::path file = fs::path(TILEC_REORDER_SCENARIOS) / "reduction_tree_twelve_loads.json";
  std::string text = read_text(file);
  Outcome tight = run_tilec("- --max-events 2", text);
  EXPECT_EQ(tight.status, 0) << tight.err;
  EXPECT_EQ(tight.out, expected_output(text, 2));
  auto json = nlohmann::json::parse(tight.out);
  EXPECT_TRUE(json["feasible"].get<bool>());
  EXPECT_EQ(json["max_peak"].get<int>(), 2);

  Outcome impossible = run_tilec("- --max-events 1", text);
  EXPECT_EQ(impossible.status, 0);
  EXPECT_FALSE(nlohmann::json::parse(impossible.out)["feasible"].get<bool>());
  EXPECT_NE(impossible.err.find("<stdin>: warning: cannot keep MTE2->V within 1 live events: peak 2"),
            std::string::npos)
      << impossible.err;
}

TEST(ReorderCli, BadInputIsAClearMessageAndExitOne) {
  struct Case {
    std::string input;
    std::string message;
  };
  const Case cases[] = {
      {R"({"stmts": [{"name": "a", "pipe": "VEC"}]})", "<stdin>: error: stmts[0]: 'a': unknown pipe 'VEC'"},
      {R"({"stmts": [{"name": "a", "pipe": "V"}, {"name": "a", "pipe": "S"}]})",
       "<stdin>: error: stmts[1]: duplicate statement name 'a'"},
      {R"({"stmts": [{"pipe": "V"}]})", "<stdin>: error: stmts[0]: missing field \"name\""},
      {R"({"stmts": [{"name": "a"}]})", "<stdin>: error: stmts[0]: 'a': missing field \"pipe\""},
      {R"({"max_events": 8})", "<stdin>: error: missing field \"stmts\""},
      {R"({"max_events": -1, "stmts": []})", "<stdin>: error: \"max_events\" must be an integer from 1 to 1000000"},
      // A misspelled field was read as absent (a learner's hunt: "reeds" gave no dependences).
      {R"({"stmts": [{"name": "a", "pipe": "V", "reeds": ["x"]}]})",
       "<stdin>: error: stmts[0]: unknown field \"reeds\" (did you mean \"reads\"?); known: name, pipe, reads"},
      {R"({"max_event": 2, "stmts": []})", "<stdin>: error: unknown field \"max_event\" (did you mean \"max_events\"?)"},
      {R"({"stmts": [{"name": "a", "pipe": "V", "reads": "x"}]})",
       "<stdin>: error: stmts[0]: 'a': \"reads\" must be a list of strings"},
      {R"({"stmts": [{"name": "a", "pipe": "V", "kind": "loop"}]})",
       "<stdin>: error: stmts[0]: 'a': \"kind\" must be"},
      {"{\"stmts\": [\n  {\"name\": \"a\",}]}", "<stdin>:2:16: error: malformed JSON"},
  };
  for (const Case& bad : cases) {
    Outcome outcome = run_tilec("-", bad.input);
    EXPECT_EQ(outcome.status, 1) << bad.input;
    EXPECT_EQ(outcome.out, "") << bad.input;
    EXPECT_EQ(outcome.err.rfind(bad.message, 0), 0u) << bad.input << "\ngot: " << outcome.err;
  }
  Outcome missing = run_tilec("/nonexistent/reorder.json");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace tilec::reorder
