// tools/tilec.cpp — the tilec command line: one CLI11 app, one subcommand per job.
//
// Exit status contract (DESIGN.md §4): 0 success; 1 the input is wrong; 2 an internal error,
// which is a bug in tilec. Any exception that escapes a subcommand is such a bug, so it is
// reported here with "internal error" and exit 2, never as a crash; running out of memory is the
// machine's limit (exit 1, saying so).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "tools/commands.h"

namespace {

int standard_output_failed() {
  const int error = errno;
  fmt::print(stderr, "tilec: error: cannot write to standard output: {}\n",
             error ? std::strerror(error) : "the write failed");
  return 1;
}

// The command line, run.
int run_tilec(int argc, char** argv) {
  CLI::App app{"tilec — a tile kernel compiler: .tile programs to CUDA C++ for sm_90a and sm_100a.\n"
               "Run 'tilec SUBCOMMAND --help' for the options of each subcommand."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tilec 0.1.0");
  // Command-line errors read as every other error does.
  app.failure_message([](const CLI::App* app, const CLI::Error& e) {
    return "tilec: error: " + CLI::FailureMessage::simple(app, e);
  });

  tilec::tools::CommandRunner run;
  tilec::tools::add_compile_command(app, run);
  tilec::tools::add_run_command(app, run);
  tilec::tools::add_reorder_command(app, run);
  tilec::tools::add_sched_command(app, run);
  tilec::tools::add_emulate_command(app, run);

  // A first word that names no subcommand, or an option tilec itself does not have (CLI11 would
  // say only "A subcommand is required").
  if (argc > 1 && argv[1][0] == '-') {
    const std::string option = argv[1];
    if (option != "-h" && option != "--help" && option != "--version") {
      fmt::print(stderr, "tilec: error: unknown option '{}': tilec takes --help, --version or a subcommand first "
                         "(tilec compile FILE.tile; tilec --help lists them)\n", option);
      return 1;
    }
  }
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
  // `-D B= 32` (a space after '='): CLI11 would take "B=" and say only that 32 was not expected.
  for (int i = 2; i < argc; ++i) {
    const std::string_view word = argv[i], next = i + 1 < argc ? argv[i + 1] : "";
    std::string_view define;
    if (word == "-D") define = next;
    else if (word.starts_with("-D") && word.size() > 2) define = word.substr(2);
    if (define.empty() || !define.ends_with('=')) continue;
    const int value = word == "-D" ? i + 2 : i + 1;
    if (value < argc)
      fmt::print(stderr, "tilec: error: -D {} has no value (the next word, '{}', is not part of it); write -D "
                         "NAME=VALUE as one word (-D {}{})\n", define, argv[value], define, argv[value]);
    else
      fmt::print(stderr, "tilec: error: -D {} has no value; give one: -D {}VALUE\n", define, define);
    return 1;
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
    const int status = run ? run() : 1;
    // Output that could not be written (a full disk, /dev/full, a closed stdout) is the
    // environment's fault: exit 1 saying so, never 0 with the output lost.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) return standard_output_failed();
    return status;
  } catch (const std::bad_alloc&) {
    // Past what the budgets foresee (a compile of a vast input, a run under a tight limit): the
    // machine's limit, not a tilec bug.
    fmt::print(stderr, "tilec: error: out of memory: the input needs more than this machine (or its ulimit -v) "
               "gives; give smaller --dims or a smaller kernel\n");
    return 1;
  } catch (const std::system_error& e) {
    if (std::ferror(stdout)) return standard_output_failed();  // fmt::print's throw on a failed write
    fmt::print(stderr, "tilec: internal error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tilec: internal error: {}\n", e.what());
    return 2;
  }
}

}  // namespace

// A message that cannot be written (standard error closed, or on a full disk) leaves the exit
// status to say what happened: 1, as for the error it carried, never an abort.
int main(int argc, char** argv) {
  try {
    return run_tilec(argc, argv);
  } catch (const std::system_error&) {
    if (std::ferror(stderr)) return 1;
    throw;
  }
}
