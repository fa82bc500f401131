// passes/issuer_only_waits.h — the issuer-only-waits pass: on a target where one thread issues
// the MMAs for the CTA (sm_100a's tcgen05.mma), a compute agent's wait on a stage's full barrier
// is made by that thread alone when only MMAs read the stage (docs/passes/issuer_only_waits.md).
//
// The waits this marks `issuer` are the ones the other threads must not make: nothing keeps them
// within a lap of the producer (they never read the stage), and a thread a whole lap behind would
// wait for the parity of a phase that already completed twice, and hang.
#pragma once

namespace tilec {
class Module;
struct PassContext;

// Marks `issuer` every mbarrier_wait in an agent on the full barrier of a stage buffer whose
// stage_reads in that agent are used only as mma A/B operands, when ctx.target's MMAs are issued
// by one thread (tcgen05); leaves the module unchanged otherwise.
bool issuer_only_waits(Module& module, PassContext& ctx);

}  // namespace tilec
