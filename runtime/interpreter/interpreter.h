// runtime/interpreter/interpreter.h — runs a kernel of the tilec IR on the CPU.
//
// run_kernel binds the kernel's parameters to host buffers and scalars, checks each tensor's
// extents against its type (static extents, and symbols bound in `symbols` or by an earlier
// tensor), evaluates the scalar ops before `grid_ids` once, then runs the body once per grid
// coordinate tuple through a TileRunner (serial by default; the executor supplies a parallel
// one). The meaning of every op is docs/ir.md; what the interpreter adds (error cases, the race
// check, NaN and overflow choices) is docs/interpreter.md.
//
// Bad programs never crash the interpreter: an op it cannot run (unknown kind, missing or
// malformed attribute, operands of the wrong kind or shape, integer division by zero) ends the
// launch with a LaunchResult naming the op's location. When several tiles fail, the error of
// the lowest tile index is reported, so the result does not depend on the runner.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "ir/diagnostic.h"
#include "runtime/interpreter/host_buffer.h"

namespace tilec {
class Operation;
class Type;
}  // namespace tilec

namespace tilec::runtime {

class TileRunner;

// One kernel argument, in parameter order: a tensor (the caller owns the buffer, which the
// kernel may write) or a scalar (an integer for integer/index parameters, a double for floats).
using KernelArgument = std::variant<HostBuffer*, int64_t, double>;

// Values of the symbolic tensor extents (`tensor<M, K, bf16>`), e.g. {"M": 256}.
using SymbolBindings = std::map<std::string, int64_t>;

struct LaunchOptions {
  TileRunner* runner = nullptr;  // null: tiles run serially in index order
  // Report a race when two tiles store to the same element (costs 8 bytes per stored element).
  bool detect_store_races = true;
  // A `for` running more iterations than this ends the launch with an error instead of hanging;
  // so do a tile's loops together past max_tile_iterations (nested loops, each under the first).
  int64_t max_loop_iterations = int64_t{1} << 24;
  int64_t max_tile_iterations = int64_t{1} << 24;
  // When set, a launch still running then ends with an error naming `deadline_seconds` (tilec
  // emulate's --timeout for its reference run: the interpreter checks it between iterations).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  double deadline_seconds = 0;
  // What `sm_count` gives when it has no `workers` attribute (`tilec run --sms N`).
  int64_t sm_count = 4;
};

struct LaunchResult {
  bool ok = true;
  Location location;   // the failing op (unknown when the arguments themselves are wrong)
  std::string message;
  int64_t tile = -1;   // the failing tile's linear index, -1 outside the grid
  int64_t tile_count = 0;
  // An assert of the kernel's does not hold, or a grid extent is negative: the launch is refused,
  // as the CUDA launcher refuses it (cudaErrorInvalidValue); the message says which assert and
  // the values it read, or which extent.
  bool refused_launch = false;

  // "line:col: message" (or just the message when the location is unknown).
  std::string describe() const;
};

// Runs `kernel` (an op of kind `kernel`). Symbols not given in `symbols` are taken from the
// first tensor argument that has them.
LaunchResult run_kernel(const Operation& kernel, std::span<const KernelArgument> arguments,
                        const SymbolBindings& symbols = {}, const LaunchOptions& options = {});

// The extents of a tensor type under `symbols`; false (with `message`) when a symbol is unbound
// or an extent is `?`. Callers use it to allocate buffers for `tilec run --dims`.
bool resolve_tensor_dims(const Type& tensor, const SymbolBindings& symbols,
                         std::vector<int64_t>& dims, std::string& message);

}  // namespace tilec::runtime
