// frontend/promote_mma_operands.cpp — loads feeding only mma become tma_loads (see the header).
#include "frontend/promote_mma_operands.h"

#include <functional>
#include <unordered_map>

#include "ir/ir.h"

namespace tilec::frontend {

void promote_mma_operands(Region& body) {
  std::unordered_map<const Value*, int> mma_uses, other_uses;
  walk(body, [&](Operation& op) {
    for (size_t i = 0; i < op.num_operands(); ++i)
      (op.kind() == OpKind::mma && i < 2 ? mma_uses : other_uses)[op.operand(i)]++;
  });
  std::function<void(Region&)> visit = [&](Region& region) {
    auto& ops = region.operations();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      for (size_t r = 0; r < op.num_regions(); ++r) visit(op.region(r));
      if (op.kind() != OpKind::load || !mma_uses.count(op.result()) || other_uses.count(op.result())) continue;
      if (op.has_attr("elements")) continue;  // TMA boxes here start at tile coordinates
      auto replacement = std::make_unique<Operation>(OpKind::tma_load, op.location());
      for (Value* operand : op.operands()) replacement->add_operand(operand);
      for (const auto& [name, value] : op.attributes()) replacement->set_attr(name, value);
      Value* result = replacement->add_result(op.result()->type().with_space(MemorySpace::smem));
      result->set_name_hint(op.result()->name_hint());
      Value* old = op.result();
      std::unique_ptr<Operation> taken = region.take(i);
      region.insert(i, std::move(replacement));
      replace_all_uses(body, old, result);
    }
  };
  visit(body);
}

}  // namespace tilec::frontend
