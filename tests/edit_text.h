// tests/edit_text.h — the one-line edits tests make to a sample, a .tile or an IR text, and
// counting what a text holds.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace tilec::testing {

// `text` with the first occurrence of `from` replaced by `to` (a test failure when absent): the
// one-line edits tests make to a sample or an IR text.
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// How many times `part` occurs in `text` (overlapping occurrences each count).
inline size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace tilec::testing
