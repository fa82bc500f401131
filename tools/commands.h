// tools/commands.h — the seam between tilec's main() and its subcommands.
//
// Each subcommand lives in tools/command_NAME.cpp and exposes one function that adds its
// CLI11 subcommand to the app. When CLI11 selects it, the subcommand stores the work to do
// in `run`; main() calls it after parsing. A runner returns the process exit status:
// 0 success, 1 the input is wrong (diagnostics already printed), 2 an internal error.
#pragma once

#include <functional>
#include <string>

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

// Whether two paths name one file (an existing file by identity, else by canonical path); a
// path that is no regular file (/dev/null, a pipe) is never the same file as another
// (tools/command_compile.cpp).
bool same_file(const std::string& a, const std::string& b);

}  // namespace tilec::tools
