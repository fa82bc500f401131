// ir/program_order.cpp — see the header.
#include "ir/program_order.h"

#include <algorithm>
#include <vector>

namespace tilec {

namespace {

// The loops around `op` inside `scope`, innermost first, but those directly in `tile_walk`.
std::vector<const Operation*> loops_around(const Operation& op, const Region& scope, const Region* tile_walk) {
  std::vector<const Operation*> loops;
  for (const Region* region = op.parent_region(); region && region != &scope;) {
    const Operation* parent = region->parent_op();
    if (!parent) break;
    if (parent->kind() == OpKind::for_ && parent->parent_region() != tile_walk) loops.push_back(parent);
    region = parent->parent_region();
  }
  return loops;
}

}  // namespace

ProgramOrder::ProgramOrder(const Region& scope, const Region* tile_walk) : scope_(scope), tile_walk_(tile_walk) {
  walk(scope, [&](const Operation& op) { position_.emplace(&op, position_.size()); });
}

ProgramOrder::Before ProgramOrder::runs_before(const Operation& first, const Operation& second) const {
  Before before;
  before.earlier = position_.at(&first) < position_.at(&second);
  if (before.earlier) return before;
  const std::vector<const Operation*> around_second = loops_around(second, scope_, tile_walk_);
  for (const Operation* loop : loops_around(first, scope_, tile_walk_))
    if (std::find(around_second.begin(), around_second.end(), loop) != around_second.end()) {
      before.loop = loop;
      break;
    }
  return before;
}

}  // namespace tilec
