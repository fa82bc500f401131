// backend/cuda/emit_cuda.h — the first CUDA backend: IR module → one self-contained .cu file.
//
// It handles kernels that need no tensor cores: loads and stores, elementwise arithmetic,
// reductions, constants, dims, grid_ids, for/if with carried values and casts (f16, bf16, f8
// through the toolkit's cuda_fp16.h / cuda_bf16.h / cuda_fp8.h). One CTA runs one tile; tile
// values live in registers with a thread layout (emit_register_kernel.h) or, where the tiles fit
// no one layout, in shared-memory buffers; scalars stay in registers. Tensor-core kernels go to
// emit_tensor_core.h. docs/backend_cuda.md describes what is emitted, the memory model and the
// limits.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tilec::target {
struct Target;
const Target& default_target();
}  // namespace tilec::target

namespace tilec {

class DiagnosticEngine;
class Module;

struct CudaEmitOptions {
  const target::Target* target = &target::default_target();  // backend/target.h
  std::string source_name;          // for the header comment (default: the module's `source`)
  std::vector<std::string> passes;  // the pipeline that ran (default: the module's `passes`)
  bool harness = false;             // --emit-harness: add main() checking against a reference
  // With `harness`: the module right after fold-constants, before the scheduling passes; the
  // references of tensor-core kernels are made from its kernels (matched by name).
  const Module* reference = nullptr;
  // How kernels without tensor cores keep their tiles (--plain-tiles): `registers`, a thread
  // layout with vector memory access and shuffle reductions, for every kernel whose tiles fit
  // one frame (the others keep `shared`); `shared`, every tile a shared-memory buffer and every
  // tile op a loop followed by __syncthreads() (the first backend's form, kept for comparison).
  enum class PlainTiles { registers, shared };
  PlainTiles plain_tiles = PlainTiles::registers;
  // When set (--header): receives a header declaring every kernel's launcher, with the CUDA
  // headers its parameter types need. A caller that includes it fails to compile when a kernel's
  // parameters change, where a copied prototype passed wrong arguments at run time.
  std::string* launcher_header = nullptr;
  // --kernel-prefix: put in front of every kernel's name (sm90_gemm_kernel, launch_sm90_gemm),
  // so that files compiled from one source (for two targets, or two -D configurations) link
  // into one program. A C++ identifier's start (cuda::kernel_prefix_problem says why not).
  std::string kernel_prefix;
};

// The .cu text, or std::nullopt after reporting (at the op's location) an op or type this
// backend does not support yet, or a kernel whose shared memory exceeds the target's budget.
std::optional<std::string> emit_cuda(const Module& module, const CudaEmitOptions& options,
                                     DiagnosticEngine& diagnostics);

}  // namespace tilec
