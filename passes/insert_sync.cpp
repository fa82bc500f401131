// passes/insert_sync.cpp — the insert-sync pass (DESIGN.md §1; docs/passes/insert_sync.md).
//
// What: after materialize-schedule a kernel synchronizes with abstract Pipe_ and Mutex_ ops,
// and its cross-pipe dependences are implicit. This pass makes all of it explicit, per kernel:
//   1. Events (passes/sync/insert_events.cpp): every dependence between two pipes where one
//      side is asynchronous (TMA, MMA) and no pipe or mutex carries it gets an event_set after
//      its producer and an event_wait before its first consumer on that pipe (broadcast
//      model, scope crossing, duplicate and transitive pruning); ids per pipe pair, lowest
//      free first, at most ctx.max_events live; running out is a located error. Runs first,
//      on the materialized ops, so dependences through pipes and mutexes are recognized.
//   2. Mutexes (passes/sync/assign_named_barriers.cpp): lock/unlock → named_barrier_sync /
//      named_barrier_arrive with ids 1..15, reused across disjoint lifetimes.
//   3. Pipes (passes/sync/lower_pipes.cpp): full/empty mbarriers, a stage buffer, and
//      (index, phase) pipeline states per side carried through every enclosing for/if.
// Requires materialize-schedule (its pipes and mutexes) and reorder-events (the final order).
// Keeps: what the kernel computes, SSA dominance, the op order (ops are only inserted or
// replaced in place). Deterministic. Cost: see each part; linear in ops for kernels without
// pipes, mutexes or asynchronous ops.
#include "passes/insert_sync.h"

#include <fmt/core.h>

#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "passes/sync/sync_parts.h"

namespace tilec {

bool insert_sync(Module& module, PassContext& ctx) {
  if (ctx.max_events < 1) {
    ctx.diagnostics.error({}, fmt::format("insert-sync: --max-events must be at least 1, not {}", ctx.max_events));
    return false;
  }
  for (auto& kernel : module.kernels()) {
    if (!insert_events(*kernel, ctx.max_events, ctx.diagnostics)) return false;
    if (!assign_named_barriers(*kernel, ctx.diagnostics)) return false;
    if (!lower_pipes(*kernel, ctx.diagnostics)) return false;
  }
  return true;
}

}  // namespace tilec
