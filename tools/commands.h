// tools/commands.h — the seam between tilec's main() and its subcommands.
//
// Each subcommand lives in tools/command_NAME.cpp and exposes one function that adds its
// CLI11 subcommand to the app. When CLI11 selects it, the subcommand stores the work to do
// in `run`; main() calls it after parsing. A runner returns the process exit status:
// 0 success, 1 the input is wrong (diagnostics already printed), 2 an internal error.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace tilec::tools {

using CommandRunner = std::function<int()>;

void add_compile_command(CLI::App& app, CommandRunner& run);
void add_run_command(CLI::App& app, CommandRunner& run);
void add_reorder_command(CLI::App& app, CommandRunner& run);
void add_sched_command(CLI::App& app, CommandRunner& run);
void add_emulate_command(CLI::App& app, CommandRunner& run);

}  // namespace tilec::tools
