// tools/kernel_arguments.h — the symbolic extents a kernel runs with, for `tilec run` and
// `tilec emulate`.
//
//   1. parse_dims reads --dims M=256,N=128 into bindings (every value a positive integer).
//   2. kernel_symbols lists the dimension symbols of a kernel's tensor parameters.
//   3. bind_kernel_symbols gives each of them its --dims value, or kDefaultExtent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/interpreter/interpreter.h"

namespace tilec::tools {

// The extent of a dimension --dims does not name.
inline constexpr int64_t kDefaultExtent = 256;

// False after printing what is malformed ("--dims M: expected NAME=POSITIVE_INTEGER, ...").
bool parse_dims(const std::string& text, runtime::SymbolBindings& out);

// Every symbolic dim of the kernel's tensors, in parameter order.
std::vector<std::string> kernel_symbols(const Operation& kernel);

// The kernel's symbols bound to their value in `given`, else kDefaultExtent; `described` gets
// them as "K=128,M=256,N=256" (sorted by name).
runtime::SymbolBindings bind_kernel_symbols(const Operation& kernel, const runtime::SymbolBindings& given,
                                            std::string& described);

// Prints a warning for each --dims name that no kernel in `kernels` has.
void warn_unused_dims(const runtime::SymbolBindings& given, const std::vector<const Operation*>& kernels);

}  // namespace tilec::tools
