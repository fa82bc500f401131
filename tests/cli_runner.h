// tests/cli_runner.h — runs the tilec binary and captures its output, for end-to-end tests.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "edit_text.h"

namespace tilec::testing {

struct CommandResult {
  int status = -1;  // exit status
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Runs `command` through the shell; stdout and stderr are captured through temporary files.
inline CommandResult run_command(const std::string& command) {
  static int counter = 0;
  auto dir = std::filesystem::temp_directory_path();
  std::string tag = std::to_string(::getpid()) + "_" + std::to_string(counter++);
  auto out_path = dir / ("tilec_test_out_" + tag);
  auto err_path = dir / ("tilec_test_err_" + tag);
  std::string full = command + " >" + out_path.string() + " 2>" + err_path.string() + " </dev/null";
  int raw = std::system(full.c_str());
  CommandResult result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return result;
}

inline std::string tilec_binary() { return TILEC_BINARY; }

// TILEC_BLESS=1: golden tests rewrite their expected files instead of comparing (tests/README.md).
inline bool blessing() {
  const char* bless = std::getenv("TILEC_BLESS");
  return bless && std::string(bless) == "1";
}
inline std::filesystem::path source_dir() { return TILEC_SOURCE_DIR; }

// The host C++ compiler tests build small programs with ($TILEC_HOST_CXX, else c++), or "" when it
// does not run.
inline std::string host_cxx() {
  const char* given = std::getenv("TILEC_HOST_CXX");
  std::string cxx = given && *given ? given : "c++";
  return run_command(cxx + " --version").status == 0 ? cxx : "";
}

// `source` written to DIRECTORY/NAME.cpp and built by the host compiler `cxx` (host_cxx()) into
// DIRECTORY/NAME: the compiler's result.
inline CommandResult build_host_program(const std::string& cxx, const std::filesystem::path& directory,
                                        const std::string& name, const std::string& source) {
  write_file(directory / (name + ".cpp"), source);
  return run_command(cxx + " -std=c++17 -o '" + (directory / name).string() + "' '" +
                     (directory / (name + ".cpp")).string() + "'");
}

// The part of `text` from `head` to the first line after it that is a lone `}`, that line included
// (a function as a generated .cu prints it), or "" when either is missing.
inline std::string definition_text(const std::string& text, const std::string& head) {
  const size_t start = text.find(head);
  if (start == std::string::npos) return "";
  const size_t end = text.find("\n}\n", start);
  return end == std::string::npos ? "" : text.substr(start, end + 3 - start);
}

}  // namespace tilec::testing
