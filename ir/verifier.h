// ir/verifier.h — checks the IR's invariants (the list opens ir/verifier.cpp).
#pragma once

#include <cstdint>

namespace tilec {

// A loop's `pipeline` attribute (the DSL's pipeline(S)) asks for at most this many stages: no
// target keeps more buffers in flight. The front end refuses a larger S at its token; the
// verifier refuses the attribute in IR text or from a pass.
inline constexpr int64_t kMaxPipelineStages = 16;

class DiagnosticEngine;
class Module;

// Reports every broken invariant to `diagnostics`; returns true when there is none.
bool verify_module(const Module& module, DiagnosticEngine& diagnostics);

}  // namespace tilec
