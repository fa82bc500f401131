// tools/kernel_arguments.h — the symbolic extents a kernel runs with, for `tilec run` and
// `tilec emulate`.
//
//   1. parse_dims reads --dims M=256,N=128 into bindings (every value an integer, 0 or more).
//   2. kernel_symbols lists the dimension symbols of a kernel's tensor parameters.
//   3. bind_kernel_symbols gives each of them its --dims value, or kDefaultExtent.
//   4. parse_scalars reads --scalar alpha=0.5,n=-3 (integers, or decimal/hex floats) for the
//      kernel's scalar parameters (runtime/interpreter/kernel_buffers.h says what a scalar gets
//      when none is given).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/kernel_buffers.h"

namespace CLI {
class App;
}

namespace tilec::tools {

// --kernel NAME (`what` runs only that kernel; an empty name is refused) and --seed S (`help`;
// a negative one is refused, which would wrap), for `tilec run` and `tilec emulate`.
void add_kernel_option(CLI::App& cmd, std::string& kernel, const char* what);
void add_seed_option(CLI::App& cmd, uint64_t& seed, const char* help);

// --timeout SECONDS, 0.1 to 86400 (NaN is not in that range either).
void add_timeout_option(CLI::App& cmd, double& seconds, const std::string& help);
// --dims M=..,N=.. (repeatable, joined with commas; `example` shows the form) and --scalar
// NAME=VALUE (repeatable), read later by parse_dims and parse_scalars.
void add_extent_options(CLI::App& cmd, std::string& dims, std::vector<std::string>& scalars, const char* example);

// The extent of a dimension --dims does not name.
inline constexpr int64_t kDefaultExtent = 256;

// False after printing what is malformed ("--dims M: expected NAME=INTEGER (0 or more ...), ...").
bool parse_dims(const std::string& text, runtime::SymbolBindings& out);

// False after printing what is malformed; each item of each --scalar option is NAME=NUMBER.
bool parse_scalars(const std::vector<std::string>& items, runtime::ScalarBindings& out);

// Prints a warning for each --scalar name that no kernel in `kernels` has as a scalar parameter.
void warn_unused_scalars(const runtime::ScalarBindings& given, const std::vector<const Operation*>& kernels);

// "tilec: error: IN has no kernel named 'K' (its kernels: a, b)", for --kernel naming none.
void report_unknown_kernel(const std::string& input, const std::string& kernel, const Module& module);

// A failed launch of `kernel` ("K", or "K as parsed" for the reference), at its op's location as
// every diagnostic is (the source line quoted, and for IR text printed from a .tile, that file's:
// a .tir's loc() points into it), with the tile when there is one; the input's name alone when
// the failure has no location.
void report_launch_failure(const DiagnosticEngine& diagnostics, const runtime::LaunchResult& result,
                           const std::string& kernel);

// Every symbolic dim of the kernel's tensors, in parameter order.
std::vector<std::string> kernel_symbols(const Operation& kernel);

// The kernel's symbols bound to their value in `given`, else kDefaultExtent, plus the `given`
// value of each scalar parameter --dims names; `described` gets the extents as
// "K=128,M=256,N=256" (sorted by name).
runtime::SymbolBindings bind_kernel_symbols(const Operation& kernel, const runtime::SymbolBindings& given,
                                            std::string& described);

// Prints a warning for each --dims name that no kernel in `kernels` has.
void warn_unused_dims(const runtime::SymbolBindings& given, const std::vector<const Operation*>& kernels);

// Your own data (`tilec run --inputs/--outputs`, `tilec emulate --inputs`): a tensor parameter X
// is the raw row-major bytes of DIR/X.bin ("%X" names X.bin too).
std::string tensor_file_name(const std::string& parameter);
// A parameter's name as the source spells it ("%X" is X).
std::string source_name(const std::string& parameter);
// --inputs DIR must name a directory (an empty `dir` is no --inputs); false after printing why.
bool check_inputs_directory(const std::string& dir);
// --inputs DIR: each tensor parameter of `buffers` with a DIR/X.bin takes its bytes, which must be
// exactly as many as the tensor has; a tensor `kernel_op` reads without one stays random, and
// says so. False after printing what is wrong ("tilec: error: kernel K: ...").
bool read_given_inputs(const std::string& dir, const Operation& kernel_op, runtime::KernelBuffers& buffers,
                       const std::string& kernel);

}  // namespace tilec::tools
