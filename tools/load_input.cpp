// tools/load_input.cpp — input reading and output writing for the subcommands.
#include "tools/load_input.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cctype>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "frontend/lexer.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tilec::tools {

namespace {
constexpr uintmax_t kMaxInputBytes = 16u << 20;  // 16 MiB: far beyond any real kernel

std::string read_all(std::istream& in) {
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// At most kMaxInputBytes of `in` into `text`; false when there is more (standard input, or a
// device such as /dev/zero, has no size to check first: it was read until memory ran out).
bool read_within_limit(std::istream& in, std::string& text) {
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) return false;
  }
  return true;
}

// IR text that tilec printed from a .tile names it (`module {source = "F"}`), and its loc()
// positions are lines and columns of F, not of the .tir: located diagnostics from here on name
// F and quote F's line when F can be read here (else they quote nothing rather than a wrong
// line). A hand-written .tir names itself, or nothing, and keeps its own lines.
void report_against_origin(const Module& module, const std::string& path, DiagnosticEngine& diagnostics) {
  auto source = module.attributes().find("source");
  if (source == module.attributes().end() || !source->second.is_string()) return;
  const std::string& origin = source->second.as_string();
  // A .tile read from standard input: gone, also when this IR comes back on standard input (its
  // own lines are not the positions' lines: a hunt saw an unrelated op quoted).
  if (origin == "-") {
    diagnostics.locate_in("<stdin>", "");
    return;
  }
  std::error_code ec;
  if (origin.empty() || origin == path || std::filesystem::equivalent(origin, path, ec)) return;
  std::string text;
  if (std::filesystem::is_regular_file(origin, ec) && std::filesystem::file_size(origin, ec) <= kMaxInputBytes && !ec) {
    std::ifstream in(origin, std::ios::binary);
    text = read_all(in);
  }
  diagnostics.locate_in(origin, text);
}
}  // namespace

bool is_ir_file(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".tir") == 0;
}

std::optional<std::string> read_source_file(const std::string& path) {
  std::error_code ec;
  auto too_large = [&](const std::string& name) {
    fmt::print(stderr, "tilec: error: '{}' is more than {} bytes, the limit\n", name, kMaxInputBytes);
    return std::nullopt;
  };
  if (path == "-") {
    std::string text;
    if (!read_within_limit(std::cin, text)) return too_large("<stdin>");
    return text;
  }
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    // Say why: a missing file, but also a directory on the way that cannot be searched, a path
    // too long, a loop of symlinks.
    const bool missing = !ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory;
    fmt::print(stderr, "tilec: error: cannot open '{}': {}\n", path, missing ? std::string("no such file") : ec.message());
    return std::nullopt;
  }
  if (std::filesystem::is_directory(status)) {
    fmt::print(stderr, "tilec: error: '{}' is a directory, not a source file\n", path);
    return std::nullopt;
  }
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputBytes) {
    fmt::print(stderr, "tilec: error: '{}' is {} bytes; the limit is {} bytes\n", path, size, kMaxInputBytes);
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "tilec: error: cannot read '{}': {}\n", path, std::strerror(errno));
    return std::nullopt;
  }
  std::string text;
  if (!read_within_limit(in, text)) return too_large(path);
  return text;
}

// Whether `source` reads as IR text: its first word, past blank lines and `//` comments, is
// `module` (no .tile program starts so: it starts with `const` or `kernel`).
bool looks_like_ir(const std::string& source) {
  size_t at = 0;
  while (at < source.size()) {
    at = source.find_first_not_of(" \t\r\n", at);
    if (at == std::string::npos) return false;
    if (source.compare(at, 2, "//") != 0) break;
    at = source.find('\n', at);
  }
  return at != std::string::npos && source.compare(at, 6, "module") == 0 &&
         (at + 6 == source.size() || !(std::isalnum(static_cast<unsigned char>(source[at + 6])) || source[at + 6] == '_'));
}

LoadedInput load_input(const std::string& path, const std::map<std::string, std::string>& defines) {
  LoadedInput input;
  auto source = read_source_file(path);
  if (!source) return input;
  input.source = std::move(*source);
  input.diagnostics = std::make_unique<DiagnosticEngine>(path, input.source);
  DiagnosticEngine& diagnostics = *input.diagnostics;
  if (input.source.find_first_not_of(" \t\r\n") == std::string::npos) {
    diagnostics.error({}, "the file is empty");
  } else if (is_ir_file(path) || looks_like_ir(input.source)) {
    // IR text: a .tir file, or anything that starts with `module` past comments (what `--emit ir`
    // prints, on stdin or saved under another name).
    if (!defines.empty()) diagnostics.error({}, "-D applies to .tile sources, not to IR text");
    else if ((input.module = parse_module(input.source, diagnostics))) {
      report_against_origin(*input.module, path, diagnostics);
      if (input.module->kernels().empty()) diagnostics.error({1, 1}, "the module defines no kernel");
      else if (!verify_module(*input.module, diagnostics)) input.module.reset();
    }
  } else {
    auto tokens = frontend::lex(input.source, diagnostics);
    auto program = frontend::parse_program(tokens, diagnostics);
    if (!diagnostics.has_errors())
      input.module = frontend::lower_program(program, {path, defines}, diagnostics);
    if (input.module && !verify_module(*input.module, diagnostics)) {
      diagnostics.error({}, "internal error: lowering produced IR that does not verify");
      input.internal_error = true;
      input.module.reset();
    }
  }
  if (diagnostics.has_errors()) {
    fmt::print(stderr, "{}", diagnostics.render_all());
    input.module.reset();
  }
  return input;
}

bool parse_defines(const std::vector<std::string>& items, std::map<std::string, std::string>& out) {
  for (const auto& item : items) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      fmt::print(stderr, "tilec: error: -D {}: expected NAME=VALUE\n", item);
      return false;
    }
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    if (auto given = out.find(name); given != out.end() && given->second != value)
      fmt::print(stderr, "tilec: warning: -D {} is given twice ({}, then {}); {} is used\n", name, given->second, value,
                 value);
    out[name] = value;
  }
  return true;
}

bool write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    // A failed write leaves stdout's error flag set; main() reports it (once) and exits 1.
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (fs::is_directory(status)) {
    fmt::print(stderr, "tilec: error: cannot write '{}': it is a directory\n", path);
    return false;
  }
  // A regular file (or a new one) is written beside it and renamed into place, so a failed write
  // (a full disk) never leaves a truncated file that make would take as up to date. Anything else
  // (/dev/null, a FIFO, a symlink) is written where it is.
  const bool in_place = fs::exists(status) && !fs::is_regular_file(status);
  // The temporary's name is short, not the output's plus a suffix: an output name of 240 to 255
  // bytes (NAME_MAX) is written too.
  const std::string target =
      in_place ? path : (fs::path(path).parent_path() / fmt::format(".tilec-{}.tmp", ::getpid())).string();
  bool written = false;
  int error = 0;
  if (std::FILE* out = std::fopen(target.c_str(), "wb")) {
    written = std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0;
    error = errno;
    written = (std::fclose(out) == 0) && written;
    if (!written && !error) error = errno;
  } else {
    error = errno;
  }
  if (written && !in_place && std::rename(target.c_str(), path.c_str()) != 0) {
    written = false;
    error = errno;
  }
  if (!written) {
    if (!in_place) std::remove(target.c_str());
    fmt::print(stderr, "tilec: error: cannot write '{}': {}\n", path, std::strerror(error ? error : EIO));
  }
  return written;
}

bool write_binary_file(const std::filesystem::path& path, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.close();
  if (!out) fmt::print(stderr, "tilec: error: cannot write '{}'\n", path.string());
  return static_cast<bool>(out);
}

std::optional<std::vector<uint8_t>> read_binary_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;  // a directory, a device: no bytes to take
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace tilec::tools
