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
  for (char c : path) {
    if (c == ' ' || c == '#') escaped += '\\';
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
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << format_dependency_file(target, dependencies)) || !out.flush()) {
    fmt::print(stderr, "tilec: error: cannot write dependency file '{}': {}\n", path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace tilec::tools
