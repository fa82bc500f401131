// ir/diagnostic.h — source locations and the diagnostic engine shared by every reader.
//
// A diagnostic is printed as `file:line:col: error: message`, then the source line and a caret
// under the column (DESIGN.md §4). The engine keeps the source text so any stage that knows a
// Location (the DSL parser, the IR text parser, the verifier, a pass) can report against it.
// It knows no source language: the frontend and the IR parser both use it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

// A position in the input: 1-based line and column; line 0 means "unknown".
struct Location {
  uint32_t line = 0;
  uint32_t column = 0;
  bool known() const { return line != 0; }
  friend bool operator==(const Location&, const Location&) = default;
};

// Whether a line ends at source[at]: "\n", or a "\r" not followed by "\n" (old Mac files; "\r\n"
// ends at its "\n"). The lexer and DiagnosticEngine count lines by it alike.
inline bool ends_line(std::string_view source, size_t at) {
  return source[at] == '\n' || (source[at] == '\r' && (at + 1 >= source.size() || source[at + 1] != '\n'));
}

// How many single-character edits turn `a` into `b` (for "did you mean"). Inline: the labs'
// readers, which link no IR, use it too.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The first of `words` within `within` edits of `name` (a word of 2 letters or fewer: within one),
// or "": the "did you mean" of a misspelled keyword or field.
inline std::string_view spelled_like(std::string_view name, std::initializer_list<std::string_view> words,
                                     size_t within = 2) {
  for (std::string_view word : words)
    if (edit_distance(name, word) <= (word.size() > 2 ? within : std::min<size_t>(within, 1))) return word;
  return {};
}

// The line and column of byte `at` of `text` (lines as ends_line counts them): where a reader
// that reports a byte offset (nlohmann-json's parse errors) went wrong.
inline Location location_of(std::string_view text, size_t at) {
  Location location{1, 1};
  for (size_t index = 0; index < at && index < text.size(); ++index) {
    if (ends_line(text, index)) {
      ++location.line;
      location.column = 1;
    } else {
      ++location.column;
    }
  }
  return location;
}

enum class Severity { error, warning, note };

struct Diagnostic {
  Severity severity = Severity::error;
  Location location;
  std::string message;
};

class DiagnosticEngine {
 public:
  DiagnosticEngine() = default;
  DiagnosticEngine(std::string file_name, std::string_view source);

  void error(Location location, std::string message);
  void warning(Location location, std::string message);
  void note(Location location, std::string message);

  bool has_errors() const { return error_count_ > 0; }
  int error_count() const { return error_count_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const std::string& file_name() const { return file_name_; }  // the input's
  const std::string& located_file_name() const { return located_file_name_; }

  // Renders one diagnostic with its source line and caret.
  std::string render(const Diagnostic& diagnostic) const;
  // Renders every diagnostic collected so far, in order.
  std::string render_all() const;

  // When set, diagnostics are also written to stderr as they arrive.
  void set_echo(bool echo) { echo_ = echo; }

  // Diagnostics with a location name `file_name` and quote lines of `source` (empty: no quote):
  // IR text whose loc() positions point into the .tile it was made from. Those without one
  // (about the whole input) keep the input's name. Diagnostics render against the current
  // files, so call it before the first one.
  void locate_in(std::string file_name, std::string_view source);

 private:
  void add(Severity severity, Location location, std::string message);
  std::string_view source_line(uint32_t line) const;

  std::string file_name_ = "<input>";
  std::string located_file_name_ = "<input>";  // the file located diagnostics name
  std::string source_;
  std::vector<size_t> line_starts_;
  std::vector<Diagnostic> diagnostics_;
  int error_count_ = 0;
  bool echo_ = false;
};

}  // namespace tilec
