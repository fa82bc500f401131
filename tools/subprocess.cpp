// tools/subprocess.cpp — fork/exec, waiting, timeouts (see header).
//
//   1. spawn: fork; the child leads a process group of its own (so a signal reaches the compiler
//      driver's own children too: cc1plus, as), points stdin at /dev/null and stdout/stderr at a
//      file (captured) or at tilec's stderr (forwarded), then execvp; a failed exec exits 127
//      after writing why to a pipe the parent reads, so "not found" is told apart from the
//      program's own 127.
//   2. wait: waitpid; with a timeout, poll every few milliseconds and SIGKILL the group at the
//      deadline.
//   3. RemovedOnSignal: running children are kept in a fixed table from fork to reaping; the
//      handler (installed by the first spawn, so a Ctrl-C, which reaches only tilec's own group,
//      is passed on to every child's) uses only async-signal-safe calls (kill, waitpid,
//      nanosleep, openat, getdents64, unlinkat) on fixed tables, since it may interrupt anything,
//      malloc included.
#include "tools/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

namespace tilec::tools {

namespace {

// Phase 3's tables: a child's slot is in use while its pid is non-zero, a directory's while its
// directory_used flag is set (the path is written before the flag).
constexpr int kSlots = 64, kDirectories = 8;
std::array<volatile pid_t, kSlots> running_children{};
std::array<std::array<char, 4096>, kDirectories> removed_directories{};
std::array<volatile sig_atomic_t, kDirectories> directory_used{};
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
std::string children_temporary_directory;  // set_children_temporary_directory

// The signal to the process group `pid` leads (spawn made one), or to `pid` alone should it not.
void signal_group(pid_t pid, int signal_number) {
  if (kill(-pid, signal_number) != 0) kill(pid, signal_number);
}

void note_child(pid_t pid) {
  for (volatile pid_t& slot : running_children)
    if (slot == 0) {
      slot = pid;
      return;
    }
}

// waitpid, and the child leaves the table once reaped.
pid_t reap(pid_t pid, int* status, int options) {
  pid_t done = waitpid(pid, status, options);
  if (done > 0)
    for (volatile pid_t& slot : running_children)
      if (slot == done) slot = 0;
  return done;
}

// `name` under the directory `parent` and, if it is a directory, everything in it (to a depth of
// 16; emulate's directories are two deep). Entries are read again from the start after each
// pass, since removing while reading may skip some.
void remove_tree(int parent, const char* name, int depth) {
  if (unlinkat(parent, name, 0) == 0 || (errno != EISDIR && errno != EPERM)) return;
  int directory = depth < 16 ? openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (directory >= 0) {
    for (int pass = 0; pass < 64; ++pass) {
      lseek(directory, 0, SEEK_SET);
      bool removed = false;
      alignas(8) char entries[4096];
      for (ssize_t n; (n = getdents64(directory, entries, sizeof entries)) > 0;)
        for (ssize_t at = 0; at < n;) {
          const auto* entry = reinterpret_cast<const struct dirent64*>(entries + at);
          at += entry->d_reclen;
          const char* entry_name = entry->d_name;
          if (entry_name[0] == '.' && (entry_name[1] == 0 || (entry_name[1] == '.' && entry_name[2] == 0))) continue;
          remove_tree(directory, entry_name, depth + 1);
          removed = true;
        }
      if (!removed) break;
    }
    close(directory);
  }
  unlinkat(parent, name, AT_REMOVEDIR);
}

extern "C" void remove_and_end(int signal_number) {
  // The children's groups get the same signal and two seconds to end (the compiler driver removes
  // its temporary files), then SIGKILL.
  for (volatile pid_t& slot : running_children)
    if (slot > 0) signal_group(slot, signal_number);
  const struct timespec tick = {0, 10'000'000};
  for (int waited = 0; waited < 200; ++waited) {
    bool left = false;
    for (volatile pid_t& slot : running_children) {
      pid_t pid = slot;
      if (pid <= 0) continue;
      pid_t done = waitpid(pid, nullptr, WNOHANG);
      if (done == pid || (done < 0 && errno == ECHILD)) slot = 0;
      else left = true;
    }
    if (!left) break;
    nanosleep(&tick, nullptr);
  }
  for (volatile pid_t& slot : running_children) {
    pid_t pid = slot;
    if (pid <= 0) continue;
    signal_group(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  for (int i = 0; i < kDirectories; ++i)
    if (directory_used[i]) remove_tree(AT_FDCWD, removed_directories[i].data(), 0);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);  // delivered when the handler returns: tilec ends as the signal says
}

void install_handlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  for (int signal_number : kSignals) {
    struct sigaction action {};
    if (sigaction(signal_number, nullptr, &action) == 0 && action.sa_handler == SIG_IGN) continue;
    action = {};
    action.sa_handler = remove_and_end;
    sigemptyset(&action.sa_mask);
    for (int blocked : kSignals) sigaddset(&action.sa_mask, blocked);
    sigaction(signal_number, &action, nullptr);
  }
}

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Phase 1. `output_path` empty: stdout and stderr go to tilec's stderr.
pid_t spawn(const std::vector<std::string>& arguments, const std::string& output_path, std::string& error) {
  install_handlers();
  int report[2];
  if (pipe(report) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  fcntl(report[1], F_SETFD, FD_CLOEXEC);
  // The child's argv and environment, built before the fork: after it only exec-safe calls.
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> variables;
  if (!children_temporary_directory.empty()) variables.push_back("TMPDIR=" + children_temporary_directory);
  std::vector<char*> environment;
  for (std::string& variable : variables) environment.push_back(variable.data());
  for (char** variable = environ; *variable; ++variable)
    if (variables.empty() || std::strncmp(*variable, "TMPDIR=", 7) != 0) environment.push_back(*variable);
  environment.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    close(report[0]);
    close(report[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    close(report[0]);
    int input = open("/dev/null", O_RDONLY);
    if (input >= 0) dup2(input, 0);
    if (!output_path.empty()) {
      int output = open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (output >= 0) {
        dup2(output, 1);
        dup2(output, 2);
      }
    } else {
      dup2(2, 1);
    }
    execvpe(argv[0], argv.data(), environment.data());
    std::string why = std::strerror(errno);
    ssize_t ignored = write(report[1], why.data(), why.size());
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before a signal
  note_child(pid);
  close(report[1]);
  char buffer[256];
  ssize_t n = read(report[0], buffer, sizeof buffer);
  close(report[0]);
  if (n > 0) {
    error = "cannot run " + arguments[0] + ": " + std::string(buffer, static_cast<size_t>(n));
    int status = 0;
    reap(pid, &status, 0);
    return -1;
  }
  return pid;
}

void record(int status, ProcessOutcome& outcome) {
  if (WIFEXITED(status)) outcome.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (reap(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::filesystem::path output_file(const std::filesystem::path& scratch, size_t index) {
  return scratch / ("output." + std::to_string(getpid()) + "." + std::to_string(index) + ".txt");
}

}  // namespace

ProcessOutcome run_capturing(const std::vector<std::string>& arguments, const std::filesystem::path& scratch) {
  return run_all({arguments}, 1, scratch).front();
}

std::vector<ProcessOutcome> run_all(const std::vector<std::vector<std::string>>& commands, unsigned jobs,
                                    const std::filesystem::path& scratch) {
  std::vector<ProcessOutcome> outcomes(commands.size());
  std::vector<std::pair<pid_t, size_t>> running;
  size_t next = 0;
  auto finish = [&](size_t slot, int status) {
    size_t index = running[slot].second;
    record(status, outcomes[index]);
    std::filesystem::path path = output_file(scratch, index);
    outcomes[index].output = read_whole(path);
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(slot));
  };
  while (next < commands.size() || !running.empty()) {
    while (next < commands.size() && running.size() < std::max(jobs, 1u)) {
      std::string error;
      pid_t pid = spawn(commands[next], output_file(scratch, next).string(), error);
      if (pid < 0) {
        outcomes[next].output = error;
      } else {
        outcomes[next].started = true;
        running.emplace_back(pid, next);
      }
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    pid_t done = reap(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      // No child left to wait for (should not happen): take the rest as failed.
      while (!running.empty()) finish(0, 0);
      break;
    }
    for (size_t slot = 0; slot < running.size(); ++slot)
      if (running[slot].first == done) {
        finish(slot, status);
        break;
      }
  }
  return outcomes;
}

ProcessOutcome run_forwarding(const std::vector<std::string>& arguments, double timeout_seconds) {
  ProcessOutcome outcome;
  pid_t pid = spawn(arguments, "", outcome.output);
  if (pid < 0) return outcome;
  outcome.started = true;
  if (timeout_seconds <= 0) {
    record(wait_for(pid), outcome);
    return outcome;
  }
  // Phase 2: poll until the deadline.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    int status = 0;
    pid_t done = reap(pid, &status, WNOHANG);
    if (done == pid) {
      record(status, outcome);
      return outcome;
    }
    if (done < 0 && errno != EINTR) return outcome;
    if (std::chrono::steady_clock::now() >= deadline) {
      signal_group(pid, SIGKILL);
      wait_for(pid);
      outcome.timed_out = true;
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string shell_words(const std::vector<std::string>& arguments) {
  std::string out;
  for (const std::string& argument : arguments) {
    if (!out.empty()) out += ' ';
    bool plain = !argument.empty() && argument.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
                                          std::string::npos;
    if (plain) {
      out += argument;
      continue;
    }
    out += '\'';
    for (char c : argument) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

void set_children_temporary_directory(const std::filesystem::path& directory) {
  children_temporary_directory = directory.string();
}

RemovedOnSignal::RemovedOnSignal(const std::filesystem::path& directory) {
  std::error_code error;
  const std::string path = std::filesystem::absolute(directory, error).string();
  for (int i = 0; i < kDirectories && slot_ < 0; ++i)
    if (!directory_used[i] && !error && path.size() < removed_directories[i].size()) {
      std::memcpy(removed_directories[i].data(), path.c_str(), path.size() + 1);
      directory_used[i] = 1;
      slot_ = i;
    }
  install_handlers();
}

RemovedOnSignal::~RemovedOnSignal() {
  if (slot_ >= 0) directory_used[slot_] = 0;
}

}  // namespace tilec::tools
