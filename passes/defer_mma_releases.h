// passes/defer_mma_releases.h — the defer-mma-releases pass: on a target whose MMAs complete in
// groups a warpgroup waits for (sm_90a's WGMMA), every mma of an agent becomes asynchronous with
// an explicit `mma_wait`, and a pipelined k loop keeps one step's MMAs in flight, releasing each
// stage slot one iteration late (docs/passes/defer_mma_releases.md).
//
// Before this pass an `mma` completes where it stands, so the stage slots it read may be
// released right after it. WGMMA is issued and committed, then waited for with
// `wgmma.wait_group N` (at most N groups still in flight): waiting for all (N = 0) after each
// step leaves the tensor cores idle while the next step's loads are checked. This pass writes
// the protocol that ships into the IR, where the interpreter checks it:
//   - every mma in an agent gets `async` and is followed by `mma_wait {pending = 0}`;
//   - in a loop whose body reads A and B from stage buffers at least 2 slots deep, carries the
//     accumulator only to the next iteration, and releases both slots after the mma, the wait
//     becomes `pending = 1` and each release moves one iteration later: the loop carries the
//     slot still read (`held`, -1 before the first step), the body releases the held slot when
//     there is one and holds its own, and after the loop `mma_wait {pending = 0}` and the last
//     held slots' releases follow.
#pragma once

namespace tilec {
class Module;
struct PassContext;

// Rewrites every kernel as above when ctx.target's MMA family waits for groups (wgmma); leaves
// the module unchanged otherwise (tcgen05.mma completes through tcgen05.commit on the barriers).
bool defer_mma_releases(Module& module, PassContext& ctx);

}  // namespace tilec
