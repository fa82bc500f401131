// report/line_diff.cpp — a longest-common-subsequence line diff for the IR-after-pass view.
//
// 1. Strip the common prefix and suffix (most passes touch a few lines).
// 2. Fill the LCS length table of the middle parts from the bottom right.
// 3. Walk it from the top left: equal lines are kept, the rest of `after` is marked changed.
#include "report/line_diff.h"

#include <algorithm>
#include <cstdint>

namespace tilec::report {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<bool> changed_lines(const std::vector<std::string>& before, const std::vector<std::string>& after) {
  std::vector<bool> changed(after.size(), false);
  size_t prefix = 0;
  while (prefix < before.size() && prefix < after.size() && before[prefix] == after[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < before.size() - prefix && suffix < after.size() - prefix &&
         before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix])
    ++suffix;
  const size_t n = before.size() - prefix - suffix;
  const size_t m = after.size() - prefix - suffix;
  if (m == 0) return changed;
  if (n == 0 || n > 4000 || m > 4000) {
    for (size_t j = 0; j < m; ++j) changed[prefix + j] = true;
    return changed;
  }
  // table[i][j] = LCS length of before[prefix+i ..] and after[prefix+j ..] (middle parts).
  std::vector<std::uint32_t> table((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> std::uint32_t& { return table[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = before[prefix + i] == after[prefix + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
  while (j < m) {
    if (i < n && before[prefix + i] == after[prefix + j]) {
      ++i;
      ++j;
    } else if (i < n && at(i + 1, j) >= at(i, j + 1)) {
      ++i;
    } else {
      changed[prefix + j] = true;
      ++j;
    }
  }
  return changed;
}

}  // namespace tilec::report
