// runtime/interpreter/kernel_buffers.cpp — parameter buffers from a kernel's types (see header).
#include "runtime/interpreter/kernel_buffers.h"

#include <fmt/core.h>

#include "ir/ir.h"
#include "runtime/interpreter/random_fill.h"

namespace tilec::runtime {

std::vector<KernelArgument> KernelBuffers::arguments() {
  std::vector<KernelArgument> result;
  for (size_t i = 0; i < names.size(); ++i)
    result.push_back(is_tensor[i] ? KernelArgument{&tensors[i]} : scalars[i]);
  return result;
}

bool make_kernel_buffers(const Operation& kernel, const SymbolBindings& symbols, uint64_t seed,
                         KernelBuffers& buffers, std::string& message) {
  if (kernel.kind() != OpKind::kernel || kernel.num_regions() != 1) {
    message = "not a kernel";
    return false;
  }
  const Region& body = kernel.region();
  std::vector<bool> loaded(body.num_arguments(), false), stored(body.num_arguments(), false);
  walk(const_cast<Region&>(body), [&](Operation& op) {
    if (op.num_operands() == 0 || !op.operand(0)->is_argument() || op.operand(0)->owner_region() != &body)
      return;
    size_t position = op.operand(0)->index();
    if (op.kind() == OpKind::store) stored[position] = true;
    else if (op.kind() == OpKind::load || op.kind() == OpKind::tma_load) loaded[position] = true;
  });
  buffers = KernelBuffers{};
  for (size_t i = 0; i < body.num_arguments(); ++i) {
    const Value* parameter = body.argument(i);
    const Type& type = parameter->type();
    const std::string& hint = parameter->name_hint();
    buffers.names.push_back(hint.empty() ? fmt::format("argument {}", i) : "%" + hint);
    buffers.is_tensor.push_back(type.is_tensor());
    buffers.tensors.emplace_back();
    buffers.scalars.emplace_back(int64_t{0});
    uint64_t stream_seed = derive_seed(seed, i);
    if (type.is_tensor()) {
      std::vector<int64_t> dims;
      std::string problem;
      if (!resolve_tensor_dims(type, symbols, dims, problem)) {
        message = fmt::format("{}: {}", buffers.names.back(), problem);
        return false;
      }
      buffers.tensors.back() = HostBuffer(type.element(), dims);
      if (loaded[i] || !stored[i]) fill_random(buffers.tensors.back(), stream_seed);
      if (stored[i]) buffers.outputs.push_back(i);
      continue;
    }
    if (!type.is_scalar()) {
      message = fmt::format("{} has type {}, which cannot be a launch argument", buffers.names.back(), type.to_string());
      return false;
    }
    auto binding = symbols.find(hint);
    if (is_float(type.element())) {
      buffers.scalars.back() = binding != symbols.end() ? static_cast<double>(binding->second)
                                                        : SplitMix64(stream_seed).next_unit() * 2 - 1;
    } else if (binding != symbols.end()) {
      buffers.scalars.back() = binding->second;
    } else {
      message = fmt::format("the scalar parameter {} needs a value (give {}=...)", buffers.names.back(), hint);
      return false;
    }
  }
  return true;
}

std::vector<OutputComparison> compare_outputs(const KernelBuffers& expected,
                                              const KernelBuffers& actual) {
  std::vector<OutputComparison> results;
  for (size_t position : expected.outputs) {
    OutputComparison output{expected.names[position], {}};
    if (position < actual.tensors.size())
      output.comparison = compare_buffers(expected.tensors[position], actual.tensors[position]);
    else
      output.comparison.shapes_match = false;
    results.push_back(std::move(output));
  }
  return results;
}

}  // namespace tilec::runtime
