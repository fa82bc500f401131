// tools/command_sched.cpp — `tilec sched IN.json|- [--generator auto|serial|cost-based]`:
// the modulo-scheduling lab (DESIGN.md §4.1). Reads a loop dependence graph as JSON, prints
// the schedule as JSON on stdout. Input errors go to stderr as "IN.json: error: ..." with
// exit status 1; warnings (constraints not honoured, fallbacks) go to stderr as well and are
// also listed in the output's "warnings".
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <iterator>
#include <memory>
#include <string>

#include "passes/schedule/generate_schedule.h"
#include "passes/schedule/schedule_lab.h"
#include "tools/commands.h"
#include "tools/load_input.h"

namespace tilec::tools {
namespace {

struct SchedOptions {
  std::string input;
  std::string generator = "auto";
};

int run_sched(const SchedOptions& options) {
  std::string label = options.input == "-" ? "<stdin>" : options.input;
  auto source = read_source_file(options.input);
  if (!source) return 1;
  const std::string& text = *source;
  schedule::LabInput input = schedule::parse_schedule_lab(text);
  if (!input.errors.empty()) {
    const std::string where = input.position.empty() ? label : label + ":" + input.position;
    for (const std::string& error : input.errors) fmt::print(stderr, "{}: error: {}\n", where, error);
    return 1;
  }
  schedule::ScheduleOptions schedule_options;
  if (options.generator == "serial") schedule_options.generator = schedule::Generator::serial;
  else if (options.generator == "cost-based") schedule_options.generator = schedule::Generator::cost_based;
  schedule::ScheduleResult result = schedule::generate_schedule(input.graph, schedule_options);
  if (!result.ok()) {
    for (const std::string& error : result.errors) fmt::print(stderr, "{}: error: {}\n", label, error);
    return 1;
  }
  for (const std::string& warning : result.warnings) fmt::print(stderr, "{}: warning: {}\n", label, warning);
  std::string output = schedule::format_schedule_lab(input.graph, result);
  fwrite(output.data(), 1, output.size(), stdout);
  return 0;
}

}  // namespace

void add_sched_command(CLI::App& app, CommandRunner& run) {
  auto options = std::make_shared<SchedOptions>();
  CLI::App* command = app.add_subcommand(
      "sched", "Modulo-schedule a loop dependence graph given as JSON (the scheduling lab)");
  command->add_option("input", options->input, "loop dependence graph (JSON, docs/passes/generate_schedule.md), or - for stdin")->required();
  command->add_option("--generator", options->generator, "schedule generator: auto (default: serial for a forced-serial loop, one of fewer than 8 ops, or one with no asynchronous or limited-resource op; cost-based otherwise), serial (one iteration after another) or cost-based (modulo scheduling)")
      ->check(CLI::IsMember({"auto", "serial", "cost-based"}));
  command->callback([options, &run] { run = [options] { return run_sched(*options); }; });
}

}  // namespace tilec::tools
