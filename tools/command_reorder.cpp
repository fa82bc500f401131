// tools/command_reorder.cpp — `tilec reorder IN.json|- [--max-events N]`: the reorder lab.
//
// Reads a statement list (DESIGN.md §4.2), runs the event-limited reorder engine and prints
// the order, feasibility, strategy and peaks as JSON on stdout; warnings (no order within the
// limit) go to stderr. Bad input is a message on stderr and exit 1.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <iterator>
#include <memory>
#include <optional>

#include "passes/reorder/reorder_lab.h"
#include "tools/commands.h"
#include "tools/load_input.h"

namespace tilec::tools {

namespace {

struct ReorderArguments {
  std::string input;
  std::optional<int> max_events;
};

int run_reorder(const ReorderArguments& arguments) {
  std::string display_name = arguments.input == "-" ? "<stdin>" : arguments.input;
  auto source = read_source_file(arguments.input);
  if (!source) return 1;
  const std::string& text = *source;
  reorder::LabParse parse = reorder::parse_reorder_lab(text);
  if (!parse.input) {
    std::string where = parse.position.empty() ? display_name : display_name + ":" + parse.position;
    fmt::print(stderr, "{}: error: {}\n", where, parse.error);
    return 1;
  }
  reorder::ReorderOptions options;
  options.max_events = arguments.max_events.value_or(parse.input->max_events);
  reorder::ReorderResult result = reorder::reorder_events(parse.input->segment, options);
  for (const std::string& warning : result.warnings) fmt::print(stderr, "{}: warning: {}\n", display_name, warning);
  fmt::print("{}", reorder::format_reorder_lab(parse.input->segment, result));
  return 0;
}

}  // namespace

void add_reorder_command(CLI::App& app, CommandRunner& run) {
  auto arguments = std::make_shared<ReorderArguments>();
  CLI::App* command = app.add_subcommand(
      "reorder", "Event-limited reorder lab: reorder a JSON statement list so no pipe pair holds more than "
                 "N live cross-pipe events; prints the order as JSON.");
  command->add_option("input", arguments->input, "statement list (JSON, docs/passes/reorder_events.md), or - for stdin")->required();
  command->add_option("--max-events", arguments->max_events, "live events allowed per pipe pair (overrides the file's \"max_events\"; default 8, the hardware's event ids per pipe pair)")
      ->check(CLI::Range(1, 1 << 20));
  command->callback([arguments, &run] { run = [arguments] { return run_reorder(*arguments); }; });
}

}  // namespace tilec::tools
