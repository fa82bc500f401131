// ir/builder.cpp — op creation at the insertion point.
#include "ir/builder.h"

namespace tilec {

Operation* Builder::create(OpKind kind, const std::vector<Value*>& operands,
                           const std::vector<Type>& result_types,
                           std::vector<std::pair<std::string, Attribute>> attributes) {
  auto op = std::make_unique<Operation>(kind, location_);
  for (Value* operand : operands) op->add_operand(operand);
  for (const Type& type : result_types) op->add_result(type);
  for (auto& [name, value] : attributes) op->set_attr(std::move(name), std::move(value));
  for (int r = 0; r < op->info().regions; ++r) op->add_region();
  Operation* created = region_->insert(position_, std::move(op));
  ++position_;
  return created;
}

Value* Builder::constant_index(int64_t value) {
  return constant(Attribute(value), Type::scalar(ScalarKind::index));
}

Value* Builder::constant(Attribute value, Type type) {
  return create(OpKind::constant, {}, {std::move(type)}, {{"value", std::move(value)}})->result();
}

}  // namespace tilec
