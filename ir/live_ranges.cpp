// ir/live_ranges.cpp — see live_ranges.h.
#include "ir/live_ranges.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace tilec {

PeakLive peak_live(const Region& region, const std::function<const void*(const Value*)>& holder,
                   const std::function<int64_t(const void*)>& weight) {
  std::vector<const Operation*> order;
  std::unordered_map<const Operation*, size_t> position, last;  // a loop's last nested op
  walk(region, [&](const Operation& op) {
    position[&op] = order.size();
    order.push_back(&op);
    for (const Operation* parent = op.parent_op(); parent && position.count(parent); parent = parent->parent_op())
      last[parent] = position[&op];
  });
  std::vector<const void*> holders;  // first-use order, for a deterministic report
  std::unordered_map<const void*, std::pair<size_t, size_t>> live;
  auto touch = [&](const Value* value, size_t at) {
    const void* held = holder(value);
    if (!held) return;
    auto [span, fresh] = live.try_emplace(held, at, at);
    if (fresh) {
      holders.push_back(held);
      return;
    }
    span->second.first = std::min(span->second.first, at);
    span->second.second = std::max(span->second.second, at);
  };
  for (size_t at = 0; at < order.size(); ++at) {
    const Operation& op = *order[at];
    for (const Value* operand : op.operands()) touch(operand, at);
    for (size_t i = 0; i < op.num_results(); ++i) touch(op.result(i), at);
    for (size_t r = 0; r < op.num_regions(); ++r)  // a loop's carried values
      for (size_t i = 0; i < op.region(r).num_arguments(); ++i) touch(op.region(r).argument(i), at);
  }
  for (bool changed = true; changed;) {  // live into a loop: live to its end
    changed = false;
    for (auto& [held, span] : live)
      for (const auto& [loop, end] : last) {
        const size_t start = position.at(loop);
        if (loop->kind() == OpKind::for_ && span.first < start && span.second >= start && span.second < end) {
          span.second = end;
          changed = true;
        }
      }
  }
  // Free at its last use (an op computes each element of its result from its operands' elements,
  // so the result may take the registers they leave); one never used, where it is written.
  auto live_at = [&](const void* held, size_t at) {
    const auto [first, end] = live[held];
    return first == end ? at == first : first <= at && at < end;
  };
  PeakLive peak;
  for (size_t at = 0; at < order.size(); ++at) {
    int64_t total = 0;
    for (const void* held : holders)
      if (live_at(held, at)) total += weight(held);
    if (total <= peak.total) continue;
    peak.total = total;
    peak.at = order[at];
  }
  if (peak.at) {
    const size_t at = position.at(peak.at);
    for (const void* held : holders)
      if (live_at(held, at)) peak.holders.push_back(held);
  }
  return peak;
}

}  // namespace tilec
