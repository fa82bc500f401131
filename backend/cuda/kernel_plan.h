// backend/cuda/kernel_plan.h — what the CUDA emitter decides about one kernel before writing it.
//
// compute_kernel_plan walks a kernel once and fixes: the C++ name of every value (from its name
// hint where it has one), the launch parameters (tensors as device pointers, scalars by value,
// then one int64_t per dimension symbol), the scalar ops the host evaluates to size the grid,
// the cluster size, and the shared-memory layout (one buffer per tile value, 16-byte aligned; a
// `for`'s results share the buffers of its carried values; buffers whose live ranges do not
// overlap share bytes). It reports, at the op's location, every op or type the backend does not
// support yet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/cuda/cuda_syntax.h"
#include "ir/ir.h"

namespace tilec::cuda {

struct ParamPlan {
  const Value* value = nullptr;
  std::string name;      // C++ parameter name
  bool written = false;  // a tensor some `store` writes (so not a pointer to const)
  bool added = false;    // a tensor some `store ... +=` adds to (atomically, in any CTA order)
  bool float_extrema = false;  // a float tensor some `store ... max=` or `min=` combines into
                               // (tilec_atomic_max / _min, a compare-and-swap loop)
};

struct BufferPlan {
  const Value* value = nullptr;  // the tile value (or `for` carried argument) it holds
  std::string name;
  int64_t offset = 0;  // bytes from the start of the CTA's shared memory
  int64_t bytes = 0;
  // Live range in ops numbered in pre-order (inclusive): buffers whose ranges overlap never
  // share bytes; others may.
  int64_t first_use = 0, last_use = 0;
};

struct KernelPlan {
  const Operation* kernel = nullptr;
  std::string name;              // the kernel's name as a C++ identifier
  std::vector<ParamPlan> params;  // in the kernel's parameter order
  std::vector<std::string> dim_params;  // int64_t launch arguments: symbols, then `?` dims
  std::vector<std::string> dim_names;   // per dim_params: the symbol as the source spells it (the harness's NAME=)
  const Operation* grid = nullptr;      // the grid_ids op; null: a single CTA
  std::vector<const Operation*> pre_grid;  // the pure scalar ops and asserts before grid_ids
  // The asserts and the ops before the grid only they read: the launcher checks them (its
  // BodyEmitter in BodyMode::host), device code leaves them out.
  std::unordered_set<const Operation*> launch_checks;
  // CTAs per cluster: a `tiles` grid's `cluster` attribute (persistent-tiles writes it for
  // `cluster = C > 1`). Above 1 the launcher launches clusters of (C, 1, 1) CTAs, so the CTAs
  // of a cluster sit at consecutive blockIdx.x; the grid is then a multiple of C.
  int64_t cluster_size = 1;
  std::vector<BufferPlan> buffers;
  int64_t shared_bytes = 0;
  int block_threads = 256;
  // The kernel holds a warp_specialize (its IR went through insert-sync and warp-specialize):
  // emit_tensor_core.cpp writes it. Its tile, pipe and barrier values get names but no buffers;
  // that emitter checks the ops and lays out shared memory itself.
  bool tensor_core = false;
  // A plain kernel emit_cuda wrote in the register form (emit_register_kernel.h).
  bool register_tiles = false;

  // C++ expression of each scalar value (a variable, a literal or a dimension) and the name
  // of each tile value's buffer.
  std::unordered_map<const Value*, std::string> expressions;
  // C++ expression of each tensor parameter's extent along each axis.
  std::unordered_map<const Value*, std::vector<std::string>> tensor_dims;

  // Every identifier handed out so far; the emitter draws its temporaries from a copy.
  NameTable names;

  const std::string& expression(const Value* value) const { return expressions.at(value); }
};

// One parameter of the kernel's `extern "C" launch_NAME(...)` launcher (before its trailing
// `cudaStream_t`), in launcher order: parameter_list(plan) (emit_kernel_body.h) is exactly
// `type name` of each, joined with ", ". A tensor or scalar names its kernel parameter
// (`param`, an index into plan.params); a dimension (`int64_t`) names a tensor parameter and
// the axis whose extent it is. `tilec emulate`'s driver calls launchers through this list.
struct LaunchParameter {
  std::string type;  // C++ type: `const float*`, `__nv_bfloat16`, `int64_t`
  std::string name;
  int param = -1;                     // tensors and scalars: index into plan.params
  int dim_tensor = -1, dim_axis = -1;  // dimensions: index into plan.params and the axis
};
std::vector<LaunchParameter> launch_parameters(const KernelPlan& plan);

// Whether `op` (a load or store) moves a column [R, 1] (R > 1) through a box whose last extent
// is R: the column's rows lie along the tensor's last dimension, one element apart, and it has
// no column dimension (a per-row scale read from an [M] vector, attention's log-sum-exp stored
// into [B, H, S]: `reshape<BM, 1>(load S[m] : <BM>)`, `store L[b, h, i] = reshape<BQ>(lse)`).
bool column_box(const Operation& op, size_t rank);
// The tensor dimension holding the rows of a TMA box, a stored tile or a tile moved through a
// box: rank - 2; with a `box` attribute (memory_box) the last dimension before the columns whose
// box extent is not 1 (the S of a [B, S, H, D] tensor read as [BQ, 1, D]), or the last one for a
// column_box. The dimensions between it and the last are the box's unit *middle* dimensions,
// and those before it the batch.
size_t row_dimension(const Operation& op, size_t rank);
// "" when the backend moves `op`'s tile of stored shape [rows, columns] through its box: the
// columns are the tensor's last dimension, the rows row_dimension(), every other extent 1; or a
// column_box.
std::string box_problem(const Operation& op, const std::vector<int64_t>& stored, size_t rank);

// The plan, or std::nullopt after reporting what the backend does not support; `name` is the
// kernel's KernelPlan::name, from kernel_names.
std::optional<KernelPlan> compute_kernel_plan(const Operation& kernel, DiagnosticEngine& diagnostics,
                                              const std::string& name);
// Each kernel's KernelPlan::name, in the module's order: its own name where C++ leaves it free,
// else a fresh one (`main_1` for `main`) whose NAME_kernel and launch_NAME no other kernel's
// functions take. Every kernel of a file, so its functions do not collide. `prefix` (--kernel-prefix,
// a C++ identifier's start) goes in front of every name: `sm90_` gives sm90_gemm_kernel and
// launch_sm90_gemm, so files compiled from one source for two targets link into one program.
std::vector<std::string> kernel_names(const Module& module, const std::string& prefix = "");

}  // namespace tilec::cuda
