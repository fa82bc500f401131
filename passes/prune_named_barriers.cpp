// passes/prune_named_barriers.cpp — the prune-named-barriers pass (see the header).
//
// Phases, per kernel:
//   1. Map each named-barrier id to the agents whose regions hold an op of that id (the nearest
//      enclosing `agent`; an op outside every agent counts as its own, so it is never removed).
//   2. Erase every named_barrier_sync/arrive whose id only one agent uses.
// Invariants kept: results are unchanged (a mutex between ops of one agent orders what that
// agent's program order already orders; the interpreter runs the kernel before and after);
// named barriers have no operands and no results, so no use needs rewriting.
// Cost: O(ops) per kernel.
#include "passes/prune_named_barriers.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/ir.h"
#include "passes/agent_of.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

bool is_named_barrier(const Operation& op) {
  return op.kind() == OpKind::named_barrier_sync || op.kind() == OpKind::named_barrier_arrive;
}

void prune_kernel(Region& body) {
  std::map<int64_t, std::set<const Operation*>> agents_of_id;
  walk(body, [&](Operation& op) {
    if (!is_named_barrier(op)) return;
    const Operation* agent = enclosing_agent(op);
    agents_of_id[op.int_attr("id")].insert(agent ? agent : &op);  // outside agents: its own, never alone
  });
  auto single_agent = [&](const Operation& op) {
    if (!is_named_barrier(op)) return false;
    const std::set<const Operation*>& agents = agents_of_id.at(op.int_attr("id"));
    return agents.size() == 1 && (*agents.begin())->kind() == OpKind::agent;
  };
  walk(body, [&](Operation& op) {
    for (size_t r = 0; r < op.num_regions(); ++r)
      std::erase_if(op.region(r).operations(), [&](const auto& inner) { return single_agent(*inner); });
  });
}

}  // namespace

bool prune_named_barriers(Module& module, PassContext&) {
  for (auto& kernel : module.kernels()) prune_kernel(kernel->region());
  return true;
}

}  // namespace tilec
