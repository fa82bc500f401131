// passes/prune_named_barriers.h — the prune-named-barriers pass: after warp-specialize, a named
// barrier whose id only one agent takes is removed (docs/passes/prune_named_barriers.md).
//
// insert-sync makes each mutex a named barrier (lock → named_barrier_sync, unlock →
// named_barrier_arrive); warp-specialize then splits the body into agents. Where every op of a
// barrier id sits in one agent, the mutex was between ops of that agent alone, which its program
// order already serializes: the barrier orders nothing and costs a bar.sync per lock.
#pragma once

namespace tilec {
class Module;
struct PassContext;

// Removes, in every kernel with a warp_specialize, the named_barrier_sync/arrive ops of each id
// that ops in a single agent use. Barriers outside agents, and ids two agents share, stay.
bool prune_named_barriers(Module& module, PassContext& ctx);

}  // namespace tilec
