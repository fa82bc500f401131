// passes/promote_mma_operands.cpp — the promote-mma-operands pass.
//
// What: loads feeding only mma operands become tma_loads into shared memory (see the header).
// Phases, per kernel:
//   1. Count each value's uses as an mma `a`/`b` operand and its other uses.
//   2. A transpose used only as mma operands, of a load used only by it, becomes one
//      `tma_load {transposed}` of the loaded box (the load and the transpose go).
//   3. Every other load used only as mma operands becomes a tma_load with a shared-memory result.
// A load with `elements` (element coordinates) keeps them: its TMA box starts at that element.
// Invariants kept: results are unchanged (a tma_load reads what the load read; the interpreter
// checks it before and after); the replacement sits at the replaced op's position, so SSA
// dominance holds. Runs first: the scheduler and the sync passes see the TMA loads.
// Cost: O(ops) per kernel, plus a use rewrite per promoted load.
#include "passes/promote_mma_operands.h"

#include <functional>
#include <unordered_map>

#include "ir/ir.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

void promote_kernel(Region& body) {
  std::unordered_map<const Value*, int> mma_uses, other_uses, uses;
  walk(body, [&](Operation& op) {
    for (size_t i = 0; i < op.num_operands(); ++i) {
      (op.kind() == OpKind::mma && i < 2 ? mma_uses : other_uses)[op.operand(i)]++;
      uses[op.operand(i)]++;
    }
  });
  // transpose(load T[n, k] : <BN, BK>) used only as mma operands becomes one
  // `tma_load T, n, k {transposed} : tile<BK x BN, smem>`: the box is read as stored and the
  // descriptors say so (a K-major B, an MN-major A); no element moves.
  std::function<void(Region&)> fold_transposes = [&](Region& region) {
    auto& ops = region.operations();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      for (size_t r = 0; r < op.num_regions(); ++r) fold_transposes(op.region(r));
      if (op.kind() != OpKind::transpose || !mma_uses.count(op.result()) || mma_uses[op.result()] != uses[op.result()])
        continue;
      Operation* load = op.operand(0)->defining_op();
      if (!load || load->kind() != OpKind::load || uses[load->result()] != 1) continue;
      auto replacement = std::make_unique<Operation>(OpKind::tma_load, load->location());
      for (Value* operand : load->operands()) replacement->add_operand(operand);
      for (const auto& [name, value] : load->attributes()) replacement->set_attr(name, value);
      replacement->set_attr("transposed", Attribute());
      Value* result = replacement->add_result(op.result()->type().with_space(MemorySpace::smem));
      result->set_name_hint(op.result()->name_hint().empty() ? load->result()->name_hint() : op.result()->name_hint());
      Value* old = op.result();
      std::unique_ptr<Operation> taken = region.take(i);
      region.insert(i, std::move(replacement));
      replace_all_uses(body, old, result);
      Region* load_region = load->parent_region();
      size_t load_position = load_region->position_of(load);
      load_region->take(load_position);
      if (load_region == &region && load_position < i) --i;
    }
  };
  fold_transposes(body);
  std::function<void(Region&)> visit = [&](Region& region) {
    auto& ops = region.operations();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      for (size_t r = 0; r < op.num_regions(); ++r) visit(op.region(r));
      if (op.kind() != OpKind::load || !mma_uses.count(op.result()) || other_uses.count(op.result())) continue;
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

}  // namespace

bool promote_mma_operands(Module& module, PassContext&) {
  for (auto& kernel : module.kernels()) promote_kernel(kernel->region());
  return true;
}

}  // namespace tilec
