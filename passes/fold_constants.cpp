// passes/fold_constants.cpp — the fold-constants pass.
//
// What: integer/index arithmetic whose operands are all `constant`s becomes one `constant`;
// then pure ops whose results are never used are erased.
// Phases:
//   1. Walk every region in program order; fold add, sub, mul, div, rem, cdiv, max, min, and,
//      or, xor, shl and shr over integer constants with ir/fold.h, the semantics of docs/ir.md
//      (div truncates; a zero divisor, an overflow, or a result outside the type's range is left
//      unfolded, so the kernel keeps its meaning).
//   2. Count uses; erase unused pure region-free ops from the end of each region backwards,
//      decrementing their operands' counts, until nothing changes. `grid_ids` is kept: it
//      defines the launch even when no coordinate is read.
// Invariants kept: SSA dominance (replacements are inserted at the folded op's position);
// results are unchanged. Floats are not folded (their rounding belongs to the target types).
// Cost: O(ops) per phase; phase 2 runs once per region with a reverse sweep.
#include "passes/fold_constants.h"

#include <optional>
#include <unordered_map>

#include "ir/fold.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

void fold_region(Region& region, Region& kernel_body) {
  auto& ops = region.operations();
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation& op = *ops[i];
    for (size_t r = 0; r < op.num_regions(); ++r) fold_region(op.region(r), kernel_body);
    if (op.num_operands() != 2 || op.num_results() != 1 || !op.result()->type().is_scalar()) continue;
    auto a = constant_integer(op.operand(0)), b = constant_integer(op.operand(1));
    if (!a || !b) continue;
    auto value = fold_integer(op.kind(), *a, *b);
    if (!value) continue;
    // A value past a narrower type's range would wrap at run time: left for run time.
    if (auto range = integer_range(op.result()->type().element());
        range && (*value < range->lowest || *value > range->highest))
      continue;
    auto folded = std::make_unique<Operation>(OpKind::constant, op.location());
    folded->set_attr("value", Attribute(*value));
    Value* result = folded->add_result(op.result()->type());
    result->set_name_hint(op.result()->name_hint());
    Value* old = op.result();
    std::unique_ptr<Operation> taken = region.take(i);
    region.insert(i, std::move(folded));
    replace_all_uses(kernel_body, old, result);
  }
}

void erase_unused(Region& region, std::unordered_map<const Value*, int>& uses) {
  auto& ops = region.operations();
  for (size_t i = ops.size(); i-- > 0;) {
    Operation& op = *ops[i];
    for (size_t r = 0; r < op.num_regions(); ++r) erase_unused(op.region(r), uses);
    if (!op.info().has(kPure) || op.num_regions() || op.kind() == OpKind::grid_ids) continue;
    bool used = false;
    for (size_t r = 0; r < op.num_results(); ++r) used |= uses[op.result(r)] > 0;
    if (used) continue;
    for (Value* operand : op.operands()) --uses[operand];
    region.take(i);
  }
}

}  // namespace

bool fold_constants(Module& module, PassContext&) {
  for (auto& kernel : module.kernels()) {
    Region& body = kernel->region();
    fold_region(body, body);
    std::unordered_map<const Value*, int> uses;
    walk(body, [&](Operation& op) {
      for (Value* operand : op.operands()) ++uses[operand];
    });
    erase_unused(body, uses);
  }
  return true;
}

}  // namespace tilec
