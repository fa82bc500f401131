// backend/cuda/emit_harness.h — `--emit-harness`: a main() that checks and times each kernel.
#pragma once

#include <string>
#include <vector>

#include "backend/cuda/kernel_plan.h"

namespace tilec::cuda {

// Appends, for every kernel, a naive reference kernel and a check function, then main().
// A tensor-core kernel's reference is made from the kernel of the same name in `reference`
// (the module before the scheduling passes); without one, or when that kernel's parameters
// differ, it reports the error at the kernel and returns false.
bool emit_harness(const std::vector<KernelPlan>& plans, const Module* reference, DiagnosticEngine& diagnostics,
                  std::string& out);

// Whether an integer `tensor` of `kernel` is stored elementwise from a float the GPU may sum in
// another order than the reference (an mma's result, or with `register_sums` a float reduce_sum)
// and made whole (a cast, a floor): it may land one step off. Every other integer output is exact.
// The harness and `tilec emulate` compare integers so.
bool stores_rounded_floats(const Operation& kernel, const Value* tensor, bool register_sums);

}  // namespace tilec::cuda
