// tools/subprocess.h — running other programs for `tilec emulate`: the host compiler, `ar`,
// and the emulated program.
//
// Every child gets /dev/null as stdin. run_capturing sends its stdout and stderr to one file
// and returns the text (compiler diagnostics, `--version`); run_all runs several such commands
// at once (the runtime's sources); run_forwarding lets the child write to tilec's stderr (both
// its streams: tilec's stdout carries only tilec's own results) and kills it after a timeout.
// No shell is involved: arguments are passed as they are.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tilec::tools {

struct ProcessOutcome {
  bool started = false;    // false: the program could not be executed (`output` says why)
  bool timed_out = false;  // killed after the timeout
  int exit_status = -1;    // when it exited
  int signal = 0;          // when a signal ended it
  std::string output;      // run_capturing / run_all: stdout and stderr together

  bool succeeded() const { return started && !timed_out && signal == 0 && exit_status == 0; }
};

ProcessOutcome run_capturing(const std::vector<std::string>& arguments, const std::filesystem::path& scratch);

// Runs every command, at most `jobs` at a time; one outcome per command, in order.
std::vector<ProcessOutcome> run_all(const std::vector<std::vector<std::string>>& commands, unsigned jobs,
                                    const std::filesystem::path& scratch);

// `timeout_seconds` <= 0: no limit.
ProcessOutcome run_forwarding(const std::vector<std::string>& arguments, double timeout_seconds);

// Children started after this get TMPDIR=`directory` (tilec's own environment is unchanged):
// `emulate` points the compilers' temporary files (gcc's cc*.s) into its working directory, which
// a signal removes once they are gone. Empty: children inherit tilec's TMPDIR.
void set_children_temporary_directory(const std::filesystem::path& directory);

// The command as a user would type it in a shell (arguments quoted where needed).
std::string shell_words(const std::vector<std::string>& arguments);

// While one lives, SIGINT, SIGTERM or SIGHUP (Ctrl-C, a build system stopping tilec) first
// passes the signal on to the children the functions above are running and waits for them (two
// seconds, then SIGKILL), then removes the directory with everything in it, then ends tilec by
// that signal. `emulate`'s working directory and the build cache's scratch directories hold
// one: a stopped run left them behind (the data files of large --dims are gigabytes). A signal
// tilec was started ignoring (nohup's SIGHUP) stays ignored. At most eight at a time; past that
// a directory is not registered.
class RemovedOnSignal {
 public:
  explicit RemovedOnSignal(const std::filesystem::path& directory);
  ~RemovedOnSignal();
  RemovedOnSignal(const RemovedOnSignal&) = delete;
  RemovedOnSignal& operator=(const RemovedOnSignal&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace tilec::tools
