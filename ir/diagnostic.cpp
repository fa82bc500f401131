// ir/diagnostic.cpp — rendering of diagnostics with their source line and caret.
#include "ir/diagnostic.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>

namespace tilec {

DiagnosticEngine::DiagnosticEngine(std::string file_name, std::string_view source) : file_name_(file_name) {
  locate_in(std::move(file_name), source);
}

void DiagnosticEngine::locate_in(std::string file_name, std::string_view source) {
  located_file_name_ = std::move(file_name);
  source_ = source;
  line_starts_.assign(1, 0);
  for (size_t i = 0; i < source_.size(); ++i)
    if (ends_line(source_, i)) line_starts_.push_back(i + 1);
}

void DiagnosticEngine::error(Location location, std::string message) {
  add(Severity::error, location, std::move(message));
}
void DiagnosticEngine::warning(Location location, std::string message) {
  add(Severity::warning, location, std::move(message));
}
void DiagnosticEngine::note(Location location, std::string message) {
  add(Severity::note, location, std::move(message));
}

void DiagnosticEngine::add(Severity severity, Location location, std::string message) {
  if (severity == Severity::error) ++error_count_;
  diagnostics_.push_back({severity, location, std::move(message)});
  if (echo_) fmt::print(stderr, "{}", render(diagnostics_.back()));
}

std::string_view DiagnosticEngine::source_line(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  size_t begin = line_starts_[line - 1];
  size_t end = line < line_starts_.size() ? line_starts_[line] - 1 : source_.size();
  std::string_view text(source_.data() + begin, end - begin);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

std::string DiagnosticEngine::render(const Diagnostic& diagnostic) const {
  const char* label = diagnostic.severity == Severity::error     ? "error"
                      : diagnostic.severity == Severity::warning ? "warning"
                                                                 : "note";
  std::string out;
  if (diagnostic.location.known())
    out = fmt::format("{}:{}:{}: {}: {}\n", located_file_name_, diagnostic.location.line,
                      diagnostic.location.column, label, diagnostic.message);
  else
    out = fmt::format("{}: {}: {}\n", file_name_, label, diagnostic.message);
  std::string_view line = source_line(diagnostic.location.line);
  if (!line.empty()) {
    // A long line is quoted in part: kQuotedBytes around the column, "..." where text is left
    // out (a generated 400 KB line gave 400 KB of stderr per error). Cuts fall between UTF-8
    // characters.
    constexpr size_t kQuotedBytes = 160;
    const auto continuation = [&](size_t at) { return at < line.size() && (static_cast<unsigned char>(line[at]) & 0xC0) == 0x80; };
    const size_t at = std::min<size_t>(diagnostic.location.column > 0 ? diagnostic.location.column - 1 : 0, line.size());
    size_t begin = 0, end = line.size();
    if (line.size() > kQuotedBytes) {
      begin = std::min(at > kQuotedBytes / 2 ? at - kQuotedBytes / 2 : 0, line.size() - kQuotedBytes);
      end = begin + kQuotedBytes;
      while (begin > 0 && continuation(begin)) --begin;
      while (continuation(end)) --end;
    }
    const std::string_view before = begin > 0 ? "..." : "", after = end < line.size() ? "..." : "";
    out += fmt::format("  {}{}{}\n  {}", before, line.substr(begin, end - begin), after, before.empty() ? "" : "   ");
    // Columns count bytes (as clang's do); the caret pads one space per character, so UTF-8
    // continuation bytes add none, and keeps tabs, so it lines up in a terminal.
    for (size_t i = begin; i < at && i < end; ++i)
      if (!continuation(i)) out += line[i] == '\t' ? '\t' : ' ';
    out += "^\n";
  } else if (diagnostic.location.known() && diagnostic.location.line == line_starts_.size() && !source_.empty() &&
             source_line(diagnostic.location.line).empty()) {
    out += "  (the end of the file)\n  ^\n";  // past the last line: nothing to quote, but where it is
  }
  return out;
}

std::string DiagnosticEngine::render_all() const {
  std::string out;
  for (const auto& diagnostic : diagnostics_) out += render(diagnostic);
  return out;
}

}  // namespace tilec
