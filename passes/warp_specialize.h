// passes/warp_specialize.h — the warp-specialize pass: a kernel with producer-side work on its
// stage buffers is split into a producer agent and a compute agent (docs/passes/warp_specialize.md).
#pragma once

namespace tilec {
class Module;
struct PassContext;

// Splits the body of every kernel that fills a stage buffer (tma_load_async, stage_write) into
// `warp_specialize { agent "producer" ... agent "compute" ... }`; other kernels are unchanged.
// Returns false after reporting an internal error (a value that would cross agents, creations
// of barriers or stage buffers inside the split body, an empty barrier not expecting one
// arrival per consumer agent).
bool warp_specialize(Module& module, PassContext& ctx);

}  // namespace tilec
