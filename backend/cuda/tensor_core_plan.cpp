// backend/cuda/tensor_core_plan.cpp — the plan's lookups, and its summary for tests
// (emit_tensor_core.h: TensorCorePlan).
#include "backend/cuda/tensor_core_plan.h"

#include <fmt/core.h>

#include <stdexcept>

#include "backend/cuda/emit_tensor_core.h"

namespace tilec::cuda::tensor_core {

const Fragment* Plan::fragment(const Value* value) const {
  auto it = fragment_of.find(value);
  return it == fragment_of.end() ? nullptr : &fragments[it->second];
}

const Fragment* Plan::a_fragment(const Operation& mma) const {
  auto transposed = transposed_a.find(mma.operand(0));
  return fragment(transposed == transposed_a.end() ? mma.operand(0) : transposed->second);
}

bool Plan::is_stage_read(const Value* value) const {
  const Operation* read = value->defining_op();
  return read && read->kind() == OpKind::stage_read && stage_of.count(read->operand(0));
}

const StageBuffer& Plan::read_stage(const Value* value) const {
  if (!is_stage_read(value)) throw std::logic_error("Plan::read_stage: the value is not a read of a stage buffer");
  return stages[stage_of.at(value->defining_op()->operand(0))];
}

const Accumulator* Plan::accumulator(const Value* value) const {
  auto it = accumulator_of.find(value);
  return it == accumulator_of.end() ? nullptr : &accumulators[it->second];
}

TensorCorePlan summarize(const Plan& tc) {
  TensorCorePlan summary;
  for (const StageBuffer& stage : tc.stages)
    summary.stages.push_back({.name = stage.name, .tile = stage.tile.to_string(), .depth = stage.depth,
                              .slot_bytes = stage.slot_bytes, .offset = stage.offset, .k_major = stage.k_major()});
  for (const Barrier& barrier : tc.barriers)
    summary.barriers.push_back({.name = barrier.name, .purpose = barrier.purpose, .slots = barrier.slots,
                                .arrivals = barrier.arrivals, .offset = barrier.offset});
  for (const Operation* op : tc.mma_ops) {
    const MmaPlan& mma = tc.mma_plans.at(op);
    int64_t column = -1;
    if (mma.registers && tc.tmem_columns > 0) column = mma.tmem_column;  // through TMEM into registers
    else if (const Accumulator* chain = tc.accumulator(op->operand(2))) column = chain->tmem_column;
    summary.mmas.push_back({.kind = std::string(mma.instruction->kind),
                            .m = mma.instruction->m,
                            .k = mma.instruction->k,
                            .n = op->result()->type().shape()[1],
                            .a_registers = mma.a_registers,
                            .registers = mma.registers,
                            .tmem_column = column,
                            .staging_offset = mma.staging_bytes > 0 ? mma.staging_offset : -1,
                            .staging_bytes = mma.staging_bytes});
  }
  for (const Fragment& fragment : tc.fragments)
    summary.fragments.push_back({.name = fragment.name,
                                 .rows = fragment.rows,
                                 .columns = fragment.columns,
                                 .accumulator = fragment.accumulator});
  for (const Operation* op : tc.store_ops) {
    const StorePlan& store = tc.store_plans.at(op);
    summary.stores.push_back({.tma = store.tma, .box_rows = store.box_rows, .chunk_columns = store.chunk_columns,
                              .warpgroup_columns = store.warpgroup_columns, .accumulators = store.accumulators.size()});
  }
  summary.compute_threads = tc.compute_threads;
  summary.shared_bytes = tc.shared_bytes;
  summary.tmem_columns = tc.tmem_columns;
  summary.store_staging_offset = tc.store_staging_offset;
  summary.exchange_offset = tc.exchange_offset;
  summary.exchange_bytes = tc.exchange_bytes;
  return summary;
}

int64_t operand_element_shift(const Operation& op, size_t k, int64_t shift) {
  const Type& operand = op.operand(k)->type();
  const Type& result = op.result()->type();
  if (op.info().has(kElementwise) && !column_is_pinned(shift) && operand.is_tile() && operand.rank() == 2 &&
      operand.shape()[1] == 1 && result.rank() == 2 && result.shape()[1] > 1)
    return kPinnedColumn;
  return shift + operand_column_shift(op, k);
}

bool moves_positions(const Operation& op) {
  if (op.kind() == OpKind::interleave) return true;
  if (op.kind() == OpKind::concat) return op.int_attr("axis", -1) == 0;
  if (op.kind() != OpKind::slice || op.result()->type().rank() != 2) return false;
  const std::vector<int64_t> starts = slice_starts(op), steps = slice_steps(op);
  return starts[0] != 0 || steps[0] != 1 || steps[1] != 1 ||
         op.result()->type().shape()[0] != op.operand(0)->type().shape()[0];
}

size_t concat_part_at(const Operation& concat, int64_t column) {
  size_t k = 0;
  while (k + 1 < concat.num_operands() && column + operand_column_shift(concat, k) >= concat.operand(k)->type().shape()[1])
    ++k;
  return k;
}

int64_t operand_column_shift(const Operation& op, size_t k) {
  if (op.kind() == OpKind::slice) return slice_starts(op)[1];
  if (op.kind() != OpKind::concat) return 0;
  int64_t offset = 0;
  for (size_t i = 0; i < k; ++i) offset += op.operand(i)->type().shape()[1];
  return -offset;
}

}  // namespace tilec::cuda::tensor_core
