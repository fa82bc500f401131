// ir/verifier.h — checks the IR's invariants (the list opens ir/verifier.cpp).
#pragma once

#include <cstdint>

namespace tilec {

// A loop's `pipeline` attribute (the DSL's pipeline(S)) asks for at most this many stages: no
// target keeps more buffers in flight. The front end refuses a larger S at its token; the
// verifier refuses the attribute in IR text or from a pass.
inline constexpr int64_t kMaxPipelineStages = 16;
// A published schedule's `stages` (generate-schedule's; a loop's pipeline asks for fewer) is at
// most this many, an mbarrier's slots (verify_sync_ops): a count past it in IR text overflowed the
// depth of the pipes materialize-schedule makes, or the barriers insert-sync makes.
inline constexpr int64_t kMaxScheduleStages = 1024;
// An op's `latency` and the cycles of its `resources` (build-resources' footprint) are at most
// this many: within the scheduler's limits (passes/schedule/loop_graph.cpp), far above any model's.
inline constexpr int64_t kMaxOpLatency = 1 << 16;

class DiagnosticEngine;
class Module;

// Reports every broken invariant to `diagnostics`; returns true when there is none.
bool verify_module(const Module& module, DiagnosticEngine& diagnostics);

}  // namespace tilec
