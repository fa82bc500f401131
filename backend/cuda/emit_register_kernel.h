// backend/cuda/emit_register_kernel.h — plain kernels with their tiles in registers.
//
// A plain kernel whose tiles fit one frame (register_layout.h) is written as straight-line
// register code: each tile value is a small per-thread array (its slots in the layout), each
// elementwise op one unrolled loop over those slots, with no shared memory and no barrier
// between ops; loads and stores move 16-byte vectors where the tensor's row pitch and pointer
// allow (a scalar, masked path otherwise, chosen per vector at run time); a reduction combines
// a thread's own slots, then the threads of a warp with __shfl_xor_sync, then, only where a
// reduced row spans warps, the warps' partials through shared memory (one barrier; two inside
// a loop). The kernel is a template on its index type: the launcher runs the 32-bit
// instantiation when every tensor has at most 2^30 elements, the 64-bit one otherwise.
// docs/backend_cuda.md, "Register tiles", describes the emitted code and its numerics.
#pragma once

#include <string>

#include "backend/cuda/kernel_plan.h"
#include "backend/cuda/register_layout.h"

namespace tilec::cuda {

// The helpers register kernels use (vector loads and stores, index arithmetic), once per file.
std::string_view register_tile_prelude();

// Appends the kernel template and its launcher. Returns the shared memory the kernel uses.
int64_t emit_register_kernel(const KernelPlan& plan, const RegisterLayout& layout, std::string& out);

}  // namespace tilec::cuda
