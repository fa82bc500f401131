// report/line_diff.h — which lines of a text are new since a previous version of it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tilec::report {

// Splits text at '\n' (a final newline does not open an empty line).
std::vector<std::string> split_lines(std::string_view text);

// For each line of `after`, true when it is not part of a longest common subsequence of the
// two line lists, i.e. the line was added or changed. Deterministic (ties keep the earliest
// match). Cost O(n·m) time and memory; past 4000×4000 lines it compares only common prefix and
// suffix and marks the middle changed.
std::vector<bool> changed_lines(const std::vector<std::string>& before, const std::vector<std::string>& after);

}  // namespace tilec::report
