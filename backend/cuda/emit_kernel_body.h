// backend/cuda/emit_kernel_body.h — the C++ statements of a kernel's ops.
//
// Two ways to run a tile op, sharing everything else:
//   cta        the kernel: each tile op is a loop over the tile's elements strided by the
//              CTA's threads, then __syncthreads(), so the next op sees the whole tile;
//   reference  the harness's naive kernel: one thread runs each tile op as a plain loop.
//              An `mma` there also adds its work (2·M·N·K) to the __device__ counter
//              NAME_reference_flops and skips its arithmetic when the kernel's `count_only`
//              parameter is set (emit_harness.cpp declares both).
// Scalars are per-thread registers (every thread computes the same value).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/code_writer.h"
#include "backend/cuda/kernel_plan.h"

namespace tilec::cuda {

// cta: a kernel's body; reference: the harness's reference kernel; host: the launcher's scalar
// ops before the grid, its asserts included (KernelPlan::launch_checks, which the others skip).
enum class BodyMode { cta, reference, host };

class BodyEmitter {
 public:
  BodyEmitter(const KernelPlan& plan, BodyMode mode, CodeWriter& out);

  // Writes the statements of `op` (and of its regions) at the writer's depth.
  // `grid_ids` reads the linear tile number from a variable `tile_number` the caller declared.
  void emit_op(const Operation& op);

  // The C++ expression of one result element of the elementwise `op` from its operands'
  // elements (docs/ir.md, Arithmetic): what every tile op of this emitter computes per element.
  std::string element_expression(const Operation& op, const std::vector<std::string>& operands) const {
    return compute(op, operands);
  }

  // The C++ type of `index` values (default int64_t). Another type (the register kernels'
  // template parameter `Index`) makes index arithmetic use the prelude's index helpers
  // (cdiv_index<Index>, ...) in that type instead of the 64-bit ones.
  void set_index_type(std::string type) { index_type_ = std::move(type); }

  // `target = source;` for each (target, source) scalar pair of a yield, through temporaries
  // when there are several (a yield may swap two carried values).
  void emit_scalar_assignments(const std::vector<std::pair<const Value*, const Value*>>& scalars);

  // `// y = add x, b : tile<64x1024xf32, reg>  (line 7)`: the comment above each op's code.
  void emit_comment(const Operation& op) { comment(op); }

 private:
  void comment(const Operation& op);
  // A loop over the tile's `count` elements (`elem`), strided by the CTA's threads and followed
  // by __syncthreads() in `cta` mode, one thread's in `reference` mode; `body` writes its statements.
  void tile_loop(int64_t count, const std::function<void()>& body);

  std::string element_of(const Value* operand, const std::vector<int64_t>& shape) const;
  std::string compute(const Operation& op, const std::vector<std::string>& operands) const;

  void emit_scalar(const Operation& op);
  void emit_elementwise_tile(const Operation& op);
  void emit_fill(const Operation& op);
  void emit_reduction(const Operation& op);
  void emit_transpose(const Operation& op);
  void emit_slice(const Operation& op);
  void emit_concat(const Operation& op);
  void emit_interleave(const Operation& op);
  void emit_scan(const Operation& op);
  void emit_sort(const Operation& op);
  void emit_mma(const Operation& op);
  void emit_load(const Operation& op);
  void emit_store(const Operation& op);
  void emit_grid_ids(const Operation& op);
  void emit_for(const Operation& op);
  void emit_if(const Operation& op);
  void emit_copy(const std::string& destination, const Value* source);
  // The yield of a region: its values go to `targets` (variables or buffers).
  void emit_yield(const Region& region, const std::vector<const Value*>& targets);
  void emit_tensor_index(const Operation& op, const Type& tile);
  void emit_box_index(const Operation& op, const Type& tile);

  const KernelPlan& plan_;
  BodyMode mode_;
  CodeWriter& out_;
  NameTable names_;
  std::string index_type_ = "int64_t";
};

// `const float* X, float* Y, int64_t N`: the kernel's parameters, then its dimension symbols.
// `dimension_type` is the C++ type of the dimensions (register kernels take `Index`).
std::string parameter_list(const KernelPlan& plan, std::string_view dimension_type = "int64_t");
// `X, Y, N`: the same, as arguments.
std::string argument_list(const KernelPlan& plan);
// `float* const x = reinterpret_cast<float*>(shared_memory + 0);` for every tile buffer.
void emit_buffer_declarations(const KernelPlan& plan, CodeWriter& out);
// With `with_scalar_ops`, the pre-grid scalar ops the grid extents need (host or device code);
// with `with_launch_checks` (the launcher) also those its asserts need, and one
// `if (!(condition)) return cudaErrorInvalidValue;` per assert; then
// `const int64_t tile_count = ...;`, the number of tiles (zero when an extent is not positive).
void emit_tile_count(const KernelPlan& plan, bool with_scalar_ops, CodeWriter& out, bool with_launch_checks = false);
// True when the kernel's grid uses the device's SM count (`sm_count` without `workers`): the
// launcher copies it to device code (emit_cuda.cpp's tilec_sm_count helpers).
bool queries_sm_count(const KernelPlan& plan);

// How a kernel is launched; what differs between the plain and the tensor-core emitters.
struct LaunchSpec {
  std::string summary;       // the comment's words after "Launches NAME_kernel on `stream`: "
  std::string setup;         // host statements before the launch (tensor maps), a line each
  // Host statements after a successful launch, a line each; they return the status (the
  // tensor-core launcher copies padded tensors back). Empty: return cudaGetLastError().
  std::string teardown;
  std::string threads;       // threads per CTA, as C++ (`kBlockThreads`, `384`)
  std::string arguments;     // the kernel's arguments
  int64_t shared_bytes = 0;  // dynamic shared memory (opted in above 48 KiB)
  // The kernel to launch (default NAME_kernel); with `narrow_condition`, a host expression,
  // `narrow_kernel` is launched instead where it holds (the 32-bit index instantiation).
  std::string kernel, narrow_kernel, narrow_condition;
  std::string narrow_comment;  // why narrow_condition suffices (or why there is none), one line
};
// The `extern "C" cudaError_t launch_NAME(<parameter_list(plan)>, cudaStream_t)` function: the
// tile count, an empty or oversized grid, `spec.setup`, the shared-memory opt-in, the SM count
// for device code, the launch: `<<<...>>>`, or cudaLaunchKernelEx with a cluster dimension of
// (plan.cluster_size, 1, 1) when that is above 1 (a grid that is not whole clusters fails with
// cudaErrorInvalidConfiguration).
void emit_launcher(const KernelPlan& plan, const LaunchSpec& spec, std::string& out);
// `extern "C" cudaError_t launch_NAME(const float* X, ..., int64_t N, cudaStream_t stream)`: the
// launcher's declaration, as emit_launcher defines it and --header declares it.
std::string launcher_declaration(const KernelPlan& plan);
// The grid extents as a reader would write them: `cdiv(N, 1024) x 4`.
std::string describe_grid(const KernelPlan& plan);

}  // namespace tilec::cuda
