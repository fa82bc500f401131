// passes/reorder_events_pass.h — the reorder-events pass: applies the event-limited reorder
// engine (passes/reorder/) to every region of every kernel.
#pragma once

namespace tilec {
class Module;
struct PassContext;

// Reorders the ops of each region so that no pipe pair needs more than ctx.max_events live
// cross-pipe events, keeping every dependence. Warns (never fails) when no such order is found;
// returns false only after reporting an internal error.
bool reorder_events(Module& module, PassContext& ctx);
}  // namespace tilec
