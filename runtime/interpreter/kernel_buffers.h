// runtime/interpreter/kernel_buffers.h — buffers for every parameter of a kernel, made from its
// IR alone: what `tilec run [--dims M=256,...] [--seed S] [--check]` needs.
//
// Tensor parameters are sized from their types under the symbol bindings. A tensor the kernel
// loads (or both loads and stores) is an input and is filled by fill_random from a seed derived
// from the run's seed and the parameter's position; a tensor it only stores to is an output and
// starts as zeros. A scalar parameter takes its value from `scalars` (`tilec run --scalar
// alpha=0.5`), else, for integers and index, the symbol binding of its own name (`%K` ← K, as
// --dims K=64 gives it); a float scalar with neither gets a random value in [-1, 1); an integer
// scalar with neither is an error. `scalar_sources` says which, for the report.
// The buffers are plain values: copy a KernelBuffers to run the same inputs twice (before and
// after the pipeline) and compare the outputs with compare_outputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "runtime/interpreter/compare_buffers.h"
#include "runtime/interpreter/interpreter.h"

namespace tilec::runtime {

struct KernelBuffers {
  std::vector<std::string> names;        // "%A", or "argument 3" without a name
  std::vector<HostBuffer> tensors;       // per parameter; unused (empty) for scalars
  std::vector<KernelArgument> scalars;   // per parameter; unused for tensors
  std::vector<bool> is_tensor;
  std::vector<size_t> outputs;           // positions of the tensors the kernel stores to
  std::vector<bool> added;               // per parameter: some store adds to it (`+=`, in any tile order)
  std::vector<std::string> scalar_sources;  // per parameter: "given", "dims", "random"; "" for tensors

  // "alpha=0.25 (random), n=5" for the scalar parameters (names without '%'); "" when none.
  std::string describe_scalars() const;

  // The arguments for run_kernel, pointing into this object's tensors.
  std::vector<KernelArgument> arguments();

  // Whether tiles add (`+=`) to a float tensor: its sum rounds differently in another tile order,
  // so `tilec run` and `tilec emulate` run such a kernel's tiles in index order on one worker
  // (reproducible runs; --check's two runs then differ only where the pipeline reorders tiles).
  bool adds_floats() const;
};

// Values given for scalar parameters by name (without '%').
using ScalarBindings = std::map<std::string, std::variant<int64_t, double>>;

// False (with `message`) when an extent or an integer scalar has no binding, or a float value
// is given for an integer scalar.
bool make_kernel_buffers(const Operation& kernel, const SymbolBindings& symbols, uint64_t seed,
                         KernelBuffers& buffers, std::string& message, const ScalarBindings& scalars = {});

struct OutputComparison {
  std::string name;
  BufferComparison comparison;
};

// The tolerance an output is compared with: `tolerance` (its type's default when none), made
// normwise where tiles add to the tensor (`+=`): the GPU adds them in whatever order its CTAs
// run, so a sum that cancels is only as exact as its largest terms.
Tolerance output_tolerance(const KernelBuffers& buffers, size_t position, std::optional<Tolerance> tolerance = {});

// Compares the outputs of two runs that started from the same KernelBuffers.
std::vector<OutputComparison> compare_outputs(const KernelBuffers& expected,
                                              const KernelBuffers& actual);

}  // namespace tilec::runtime
