// tools/tilec.cpp — the tilec command line: one CLI11 app, one subcommand per job.
//
// Exit status contract (DESIGN.md §4): 0 success; 1 the input is wrong; 2 an internal error,
// which is a bug in tilec. Any exception that escapes a subcommand is such a bug, so it is
// reported here with "internal error" and exit 2, never as a crash; running out of memory is the
// machine's limit (exit 1, saying so).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>
#include <new>
#include <string>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tilec — a tile kernel compiler: .tile programs to CUDA C++ for sm_90a and sm_100a.\n"
               "Run 'tilec SUBCOMMAND --help' for the options of each subcommand."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tilec 0.1.0");

  tilec::tools::CommandRunner run;
  tilec::tools::add_compile_command(app, run);
  tilec::tools::add_run_command(app, run);
  tilec::tools::add_reorder_command(app, run);
  tilec::tools::add_sched_command(app, run);
  tilec::tools::add_emulate_command(app, run);

  // A first word that names no subcommand (CLI11 would say only "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      fmt::print(stderr, "tilec: error: unknown subcommand '{}' (the subcommands: {}; tilec --help says more)\n",
                 argv[1], names);
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // An option of one value given twice: CLI11 says "--seed: At Most 1 required but received 2".
    const std::string what = e.what();
    if (const size_t at = what.find(": At Most 1 required"); dynamic_cast<const CLI::ArgumentMismatch*>(&e) &&
                                                               at != std::string::npos) {
      fmt::print(stderr, "tilec: error: {} is given more than once; give it once (--dims, --scalar and -D may "
                         "repeat: the last value of a name is used)\n", what.substr(0, at));
      return 1;
    }
    int status = app.exit(e);
    return status == 0 ? 0 : 1;
  }
  try {
    return run ? run() : 1;
  } catch (const std::bad_alloc&) {
    // Past what the budgets foresee (a compile of a vast input, a run under a tight limit): the
    // machine's limit, not a tilec bug.
    fmt::print(stderr, "tilec: error: out of memory: the input needs more than this machine (or its ulimit -v) "
               "gives; give smaller --dims or a smaller kernel\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tilec: internal error: {}\n", e.what());
    return 2;
  }
}
