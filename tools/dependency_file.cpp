// tools/dependency_file.cpp — writes make-style dependency files (see dependency_file.h).
#include "tools/dependency_file.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tilec::tools {

std::string escape_make_path(const std::string& path) {
  std::string escaped;
  escaped.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == ' ' || c == '\t') {
      // Make's rule for blanks: 2N+1 backslashes before one are N backslashes and the blank, so
      // the backslashes already written before it are doubled, then one more escapes it.
      for (size_t j = i; j > 0 && path[j - 1] == '\\'; --j) escaped += '\\';
      escaped += '\\';
    }
    if (c == '#') escaped += '\\';
    if (c == '$') escaped += '$';
    escaped += c;
  }
  return escaped;
}

std::string format_dependency_file(const std::string& target, const std::vector<std::string>& dependencies) {
  std::string rule = escape_make_path(target) + ":";
  for (const auto& dependency : dependencies) {
    if (dependency.empty() || dependency == "-") continue;
    rule += " " + escape_make_path(dependency);
  }
  return rule + "\n";
}

std::string dependency_file_next_to(const std::string& output) { return output + ".d"; }

bool write_dependency_file(const std::string& path, const std::string& target,
                           const std::vector<std::string>& dependencies) {
  // A newline cannot be written in a make rule at all.
  for (const std::string& name : dependencies)
    if (name.find_first_of("\n\r") != std::string::npos || target.find_first_of("\n\r") != std::string::npos) {
      fmt::print(stderr, "tilec: error: cannot write dependency file '{}': a make rule cannot name a path with a "
                         "line break in it; rename the file\n", path);
      return false;
    }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << format_dependency_file(target, dependencies)) || !out.flush()) {
    fmt::print(stderr, "tilec: error: cannot write dependency file '{}': {}\n", path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace tilec::tools
