// backend/cuda/emit_harness.h — `--emit-harness`: a main() that checks and times each kernel.
#pragma once

#include <string>
#include <vector>

#include "backend/cuda/kernel_plan.h"

namespace tilec::cuda {

// Appends, for every kernel, a naive reference kernel and a check function, then main().
void emit_harness(const std::vector<KernelPlan>& plans, std::string& out);

}  // namespace tilec::cuda
