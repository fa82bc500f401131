// ir/verifier.h — checks the IR's invariants (the list opens ir/verifier.cpp).
#pragma once

namespace tilec {

class DiagnosticEngine;
class Module;

// Reports every broken invariant to `diagnostics`; returns true when there is none.
bool verify_module(const Module& module, DiagnosticEngine& diagnostics);

}  // namespace tilec
