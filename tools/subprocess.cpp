// tools/subprocess.cpp — fork/exec, waiting, timeouts (see header).
//
//   1. spawn: fork; the child points stdin at /dev/null and stdout/stderr at a file (captured)
//      or at tilec's stderr (forwarded), then execvp; a failed exec exits 127 after writing
//      why to a pipe the parent reads, so "not found" is told apart from the program's own 127.
//   2. wait: waitpid; with a timeout, poll every few milliseconds and SIGKILL at the deadline.
#include "tools/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace tilec::tools {

namespace {

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Phase 1. `output_path` empty: stdout and stderr go to tilec's stderr.
pid_t spawn(const std::vector<std::string>& arguments, const std::string& output_path, std::string& error) {
  int report[2];
  if (pipe(report) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  fcntl(report[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    close(report[0]);
    close(report[1]);
    return -1;
  }
  if (pid == 0) {
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
    std::vector<char*> argv;
    for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::string why = std::strerror(errno);
    ssize_t ignored = write(report[1], why.data(), why.size());
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  char buffer[256];
  ssize_t n = read(report[0], buffer, sizeof buffer);
  close(report[0]);
  if (n > 0) {
    error = "cannot run " + arguments[0] + ": " + std::string(buffer, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid, &status, 0);
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
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
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
    pid_t done = waitpid(-1, &status, 0);
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
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      record(status, outcome);
      return outcome;
    }
    if (done < 0 && errno != EINTR) return outcome;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
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

}  // namespace tilec::tools
