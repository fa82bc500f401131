// tools/emulate_driver.h — the main() `tilec emulate` builds around the launchers of a file.
//
// The driver #includes the .cu and calls one of its `extern "C" launch_NAME(...)` with the
// parameters in the order and C++ types the backend emits them (cuda::launch_parameters): one
// program runs every kernel of the file (each compile of it compiles the whole .cu). Protocol:
//   PROGRAM CU_PATH DATA_DIR KERNEL [NAME=VALUE]... [--policy P] [--seed S] [--sms N]
//           [--workers N] [--no-hazards] [--bounds end|start]
//   CU_PATH            the .cu its reports name (tilec_emu::configure's third argument)
//   KERNEL             the kernel (KernelPlan::name) whose launcher it calls
//   DATA_DIR/argI.in   the bytes of tensor parameter I (kernel parameter position I), exactly
//                      runtime::HostBuffer::bytes(); read into memory between guard pages
//                      (tilec_emu::allocate_global, named "tensor X" in its reports)
//   DATA_DIR/argI.out  written back, after a successful launch, for every tensor the kernel stores to
//   NAME=VALUE         every dimension and scalar by its launcher parameter name: integers in
//                      decimal, floats as C hex floats (exact)
// The --options are tilec_emu::configure's (tilec_emulate.h §6). The exit status is
// tilec_emu::finish's, or 1 when an argument or file is wrong.
#pragma once

#include <string>
#include <vector>

#include "backend/cuda/kernel_plan.h"
#include "runtime/interpreter/kernel_buffers.h"

namespace tilec::tools {

// The driver's text for `plans` (a file's kernels); `cu_include` is the path in its #include line
// (empty: the text used as the cache key, which must not depend on where the .cu lies).
std::string driver_source(const std::vector<const cuda::KernelPlan*>& plans, const std::string& cu_include);

// PROGRAM's NAME=VALUE arguments for `buffers` (made by make_kernel_buffers for plan.kernel).
std::vector<std::string> driver_value_arguments(const cuda::KernelPlan& plan, const runtime::KernelBuffers& buffers);

// "arg3.in" / "arg3.out": the data file of kernel parameter `position`.
std::string driver_input_file(size_t position);
std::string driver_output_file(size_t position);

}  // namespace tilec::tools
