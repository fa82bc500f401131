// ir/clone.cpp — deep copy of operations and modules with value remapping.
#include "ir/clone.h"

#include "ir/ir.h"

namespace tilec {

std::unique_ptr<Operation> clone_operation(const Operation& op, ValueMapping& mapping) {
  auto copy = std::make_unique<Operation>(op.kind(), op.location());
  for (Value* operand : op.operands()) {
    auto it = mapping.find(operand);
    copy->add_operand(it != mapping.end() ? it->second : operand);
  }
  for (const auto& [name, value] : op.attributes()) copy->set_attr(name, value);
  for (size_t r = 0; r < op.num_regions(); ++r) {
    const Region& region = op.region(r);
    Region& region_copy = copy->add_region();
    for (size_t i = 0; i < region.num_arguments(); ++i) {
      Value* arg = region.argument(i);
      mapping[arg] = region_copy.add_argument(arg->type(), arg->name_hint());
    }
    for (const auto& nested : region.operations()) region_copy.append(clone_operation(*nested, mapping));
  }
  for (size_t i = 0; i < op.num_results(); ++i) {
    Value* result = copy->add_result(op.result(i)->type());
    result->set_name_hint(op.result(i)->name_hint());
    mapping[op.result(i)] = result;
  }
  return copy;
}

std::unique_ptr<Module> clone_module(const Module& module) {
  auto copy = std::make_unique<Module>();
  copy->attributes() = module.attributes();
  for (const auto& kernel : module.kernels()) {
    ValueMapping mapping;
    copy->kernels().push_back(clone_operation(*kernel, mapping));
  }
  return copy;
}

}  // namespace tilec
