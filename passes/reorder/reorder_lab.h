// passes/reorder/reorder_lab.h — the `tilec reorder` lab format (DESIGN.md §4.2): JSON in, JSON out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "passes/reorder/reorder_events.h"

namespace tilec::reorder {

struct LabInput {
  Segment segment;
  int max_events = 8;
};

// Either an input or one error message (without file name) saying what is wrong and where;
// `position` is "line:col" when the JSON itself is malformed.
struct LabParse {
  std::optional<LabInput> input;
  std::string error;
  std::string position;
};

LabParse parse_reorder_lab(std::string_view text);

// {"order": [...], "feasible": ..., "strategy": ..., "max_peak": ..., "peak": {...}}, keys in that
// order, two-space indented, "peak" sorted by pair name; the same result gives the same bytes.
std::string format_reorder_lab(const Segment& segment, const ReorderResult& result);

}  // namespace tilec::reorder
