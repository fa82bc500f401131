// backend/cuda/emit_tensor_core_mma.cpp — mma on the tensor cores, one family each: WGMMA into
// register tiles (sm_90a); tcgen05.mma into TMEM, or through it into register tiles (sm_100a).
// A part of TensorCoreKernel (tensor_core_kernel.h).
// Layout facts (128-byte swizzle): a stage tile R x C as stored is C/P panels of R rows x 128
// bytes (P = 64 16-bit or 128 8-bit elements), panel p at p·R·128 bytes; TMA fills one panel per
// box. K-major operands (A as loaded, a transposed B): stride 1024 bytes between 8-row groups, a
// K step (16 16-bit or 32 8-bit elements) is +32 bytes inside the panel. MN-major ones (B as
// loaded, a transposed A): leading offset = panel bytes (the next 128 bytes of M or N), stride
// 1024 (next 8 K rows), a K step is +16 rows = +2048 bytes.
#include <fmt/core.h>

#include <string>

#include "backend/cuda/tensor_core_kernel.h"
#include "ir/ir.h"

namespace tilec::cuda::tensor_core {

// The A operand of K step `step` (32 bytes of K) in a 128-byte-swizzled K-major tile at `base`
// whose panels (128 bytes of each row) are `panel_bytes` apart, for rows starting `row_offset`
// bytes in.
std::string TensorCoreKernel::a_address(const std::string& base, int64_t panel_bytes, int64_t step,
                                        const std::string& row_offset) {
  int64_t byte = step * kMmaKBytes;
  int64_t offset = byte / kPanelRowBytes * panel_bytes + byte % kPanelRowBytes;
  return fmt::format("{} + {}{}", base, offset, row_offset);
}

// MN-major operands (B as loaded, a transposed A): leading offset = panel bytes (the next 128
// bytes of M or N), a K step = its K rows of the stored tile; `mn_offset`: bytes to the
// first panel. K-major ones (A as loaded, a transposed B) start at a_address.
std::string TensorCoreKernel::operand_descriptor(const StageBuffer& operand, const std::string& slot, int64_t step,
                                                 const std::string& k_major_row_offset, const std::string& mn_offset) {
  if (operand.k_major())
    return fmt::format("tilec_matrix_descriptor({}, 16, 1024)", a_address(slot, operand.panel_bytes(), step, k_major_row_offset));
  return fmt::format("tilec_matrix_descriptor({} + {}{}, {}, 1024)", slot, step * mma_k(operand.tile.element()) * kPanelRowBytes,
                     mn_offset, operand.panel_bytes());
}

uint32_t TensorCoreKernel::tcgen05_instruction(const MmaPlan& plan, int64_t rows, int64_t columns, bool b_k_major,
                                               bool a_k_major) {
  return (1u << 4) | (plan.instruction->input(plan.input)->format << 7) |
         (plan.instruction->input(plan.input_b)->format << 10) | (a_k_major ? 0u : 1u << 15) |
         (b_k_major ? 0u : 1u << 16) | (static_cast<uint32_t>(columns >> 3) << 17) | (static_cast<uint32_t>(rows >> 4) << 24);
}

std::string TensorCoreKernel::tcgen05_function(const target::MmaInstruction& instruction) {
  return instruction.kind == "f16" ? "tilec_tcgen05_mma" : "tilec_tcgen05_mma_" + std::string(instruction.kind);
}

void TensorCoreKernel::emit_mma(const Operation& op, int indent) {
  const MmaPlan& plan = mma_plans_.at(&op);
  comment(indent, op);
  if (!tcgen05()) emit_wgmma(op, plan, indent);
  else if (plan.registers) emit_tcgen05_into_registers(op, plan, indent);
  else emit_tcgen05_into_tmem(op, plan, indent);
}

// sm_100a, an accumulator kept in TMEM: the first mma overwrites it, the others add.
void TensorCoreKernel::emit_tcgen05_into_tmem(const Operation& op, const MmaPlan& plan, int indent) {
  const Accumulator& accumulator = accumulators_[accumulator_of_.at(op.result())];
  const StageBuffer& a = stages_[stage_of_.at(op.operand(0)->defining_op()->operand(0))];
  const StageBuffer& b = stages_[stage_of_.at(op.operand(1)->defining_op()->operand(0))];
  line(indent, "if (compute_thread == 0) {");
  line(indent + 1, "tilec_tcgen05_after_sync();");
  for (int64_t step = 0; step < a.tile.shape()[1] / plan.instruction->k; ++step)
    line(indent + 1, fmt::format("{}(tmem_base + {}, {}, {}, 0x{:08x}u, {});", tcgen05_function(*plan.instruction),
                                 accumulator.tmem_column, operand_descriptor(a, plan_.expression(op.operand(0)), step),
                                 operand_descriptor(b, plan_.expression(op.operand(1)), step),
                                 tcgen05_instruction(plan, accumulator.rows, accumulator.columns, b.transposed, a.k_major()),
                                 step == 0 ? accumulator.name + "_started" : "true"));
  line(indent, "}");
  line(indent, fmt::format("{}_started = true;", accumulator.name));
}

// sm_100a, D in registers: A·B into TMEM columns of this mma's own (A from registers is
// first written to shared memory as TMA would have), then D = C + A·B read back.
void TensorCoreKernel::emit_tcgen05_into_registers(const Operation& op, const MmaPlan& plan, int indent) {
  const Fragment& result = *fragment(op.result());
  const Fragment& acc = *fragment(op.operand(2));
  const StageBuffer& b = stages_[stage_of_.at(op.operand(1)->defining_op()->operand(0))];
  int64_t per_warpgroup = result.columns * kWarpgroup / compute_threads_;
  std::string a_base = plan_.expression(op.operand(0));
  int64_t a_panel = 0, k = 0;
  const StageBuffer* a_stage = nullptr;  // A from a stage buffer (else staged from registers, K-major)
  if (const Fragment* a = fragment(op.operand(0))) {
    int64_t a_columns = a->columns * kWarpgroup / compute_threads_;
    a_panel = a->rows * kPanelRowBytes;
    k = a->columns;
    a_base = fmt::format("(shared_base + {})", plan.staging_offset);
    line(indent, "{  // A to shared memory in the 128-byte swizzle: 16-byte chunk c of row r goes to chunk c ^ (r % 8)");
    line(indent + 1, FragmentLayout::position_variables());
    line(indent + 1, fmt::format("unsigned char* const staging = shared_aligned + {};", plan.staging_offset));
    line(indent + 1, "#pragma unroll");
    line(indent + 1, fmt::format("for (int i = 0; i < {}; ++i) {{", a_columns));
    line(indent + 2, fmt::format("const int row = {}, column = {};", layout_.row("i", false), layout_.column("i", a->columns)));
    line(indent + 2, fmt::format("*reinterpret_cast<{}*>(staging + column / 64 * {} + row * 128 + ((column % 64 / 8) ^ (row % 8)) * 16 + "
                                 "column % 8 * 2) = {}[i];", element_type(a->element), a_panel, a->name));
    line(indent + 1, "}");
    line(indent, "}");
    line(indent, "tilec_fence_proxy_async();  // the writes above are read by tcgen05.mma");
    line(indent, fmt::format("tilec_named_barrier_sync({}, {});", private_barrier_, compute_threads_));
  } else {
    a_stage = &stages_[stage_of_.at(op.operand(0)->defining_op()->operand(0))];
    a_panel = a_stage->panel_bytes();
    k = a_stage->tile.shape()[1];
  }
  line(indent, "if (compute_thread == 0) {");
  line(indent + 1, "tilec_tcgen05_after_sync();");
  for (int64_t step = 0; step < k / plan.instruction->k; ++step)
    line(indent + 1, fmt::format("{}(tmem_base + {}, {}, {}, 0x{:08x}u, {});", tcgen05_function(*plan.instruction), plan.tmem_column,
                                 a_stage ? operand_descriptor(*a_stage, a_base, step)
                                         : fmt::format("tilec_matrix_descriptor({}, 16, 1024)", a_address(a_base, a_panel, step, "")),
                                 operand_descriptor(b, plan_.expression(op.operand(1)), step),
                                 tcgen05_instruction(plan, result.rows, result.columns, b.transposed,
                                                     !a_stage || a_stage->k_major()),
                                 step == 0 ? "false" : "true"));
  line(indent + 1, "tilec_tcgen05_commit(accumulator_barrier);");
  line(indent, "}");
  line(indent, "tilec_mbarrier_wait(accumulator_barrier, accumulator_parity);");
  line(indent, "accumulator_parity ^= 1;");
  line(indent, "tilec_tcgen05_after_sync();");
  if (plan.copy) declare_fragment(indent, result);
  line(indent, "{");
  line(indent + 1, FragmentLayout::position_variables());
  line(indent + 1, fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", per_warpgroup / 32));
  line(indent + 2, "uint32_t values[32];");
  line(indent + 2, fmt::format("tilec_tmem_load_32(tmem_base + (static_cast<uint32_t>(warp * 32) << 16) + {} + "
                               "static_cast<uint32_t>(compute_warpgroup * {} + chunk * 32), values);",
                               plan.tmem_column, per_warpgroup));
  line(indent + 2, "#pragma unroll");
  line(indent + 2, fmt::format("for (int i = 0; i < 32; ++i) {0}[chunk * 32 + i] = add_f32({1}[chunk * 32 + i], __uint_as_float(values[i]));",
                               result.name, acc.name));
  line(indent + 1, "}");
  line(indent, "}");
  emit_tmem_release(indent);
}

// sm_90a: WGMMA into the register tile, A from shared memory or from registers.
void TensorCoreKernel::emit_wgmma(const Operation& op, const MmaPlan& plan, int indent) {
  const Fragment& result = *fragment(op.result());
  const StageBuffer& b = stages_[stage_of_.at(op.operand(1)->defining_op()->operand(0))];
  const std::string& b_slot = plan_.expression(op.operand(1));
  const Fragment* a_registers = fragment(op.operand(0));
  if (plan.copy) {
    declare_fragment(indent, result);
    copy_fragment(indent, result, *fragment(op.operand(2)));
  }
  const StageBuffer* a_stage = a_registers ? nullptr : &stages_[stage_of_.at(op.operand(0)->defining_op()->operand(0))];
  const std::string function = wgmma_function(plan.wgmma);
  std::string packed;
  if (a_registers) {
    // Columns 16s..16s+15 of A are registers 8s..8s+7 of its fragment, two per 32-bit register;
    // packed before the fence so that no instruction touches WGMMA registers between the MMAs.
    packed = names_.unique(a_registers->name + "_pairs");
    line(indent, fmt::format("uint32_t {}[{}];", packed, a_registers->columns / 4));
    line(indent, "#pragma unroll");
    line(indent, fmt::format("for (int i = 0; i < {}; ++i) {}[i] = tilec_pack_pair({}[2 * i], {}[2 * i + 1]);",
                             a_registers->columns / 4, packed, a_registers->name, a_registers->name));
  }
  line(indent, "tilec_wgmma_fence();");
  if (a_registers) {
    for (int64_t step = 0; step < a_registers->columns / plan.instruction->k; ++step)
      line(indent, fmt::format("{0}({1}, {2}[{3}], {2}[{4}], {2}[{5}], {2}[{6}], {7});", function, result.name, packed, 4 * step,
                               4 * step + 1, 4 * step + 2, 4 * step + 3, operand_descriptor(b, b_slot, step)));
  } else {
    // Each warpgroup's 64 rows of A: 64 rows further in a K-major A, one panel (128 bytes of M)
    // further in an MN-major one.
    const StageBuffer& a = *a_stage;
    for (int64_t step = 0; step < a.tile.shape()[1] / plan.instruction->k; ++step)
      line(indent, fmt::format("{}({}, {}, {});", function, result.name,
                               operand_descriptor(a, plan_.expression(op.operand(0)), step,
                                                  fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", 64 * kPanelRowBytes),
                                                  fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", a.panel_bytes())),
                               operand_descriptor(b, b_slot, step)));
  }
  line(indent, "tilec_wgmma_commit();");
  if (deferred_mma_.count(&op))
    line(indent, "tilec_wgmma_wait<1>();  // this step's WGMMAs stay in flight; the previous step's are done");
  else
    line(indent, "tilec_wgmma_wait<0>();  // the stage may be released once its last reader is done");
}

}  // namespace tilec::cuda::tensor_core
