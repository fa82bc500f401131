// backend/cuda/emit_tensor_core_mma.cpp — mma on the tensor cores, what the families share: the
// shared-memory matrix descriptors of the operands, a register A written to shared memory for
// the instructions that read A from there only, the mma op's comment before its family's
// instructions (WgmmaKernel, Tcgen05Kernel), and the choice of family. A part of
// TensorCoreKernel (tensor_core_kernel.h).
// Layout facts (the 128-byte swizzle, W = 128): a stage tile R x C as stored is C/P panels of R
// rows x W bytes (P = 64 16-bit or 128 8-bit elements), panel p at p·R·W bytes; TMA fills one
// panel per box. K-major operands (A as loaded, a transposed B): stride 8·W bytes between 8-row
// groups, a K step (16 16-bit or 32 8-bit elements) is +32 bytes inside the panel. MN-major ones
// (B as loaded, a transposed A): leading offset = panel bytes (the next W bytes of M or N),
// stride 8·W (next 8 K rows), a K step is +16 rows = +16·W bytes. A K-major tile whose rows
// are 64 or 32 bytes of K (bf16 BK = 32 or 16) is one panel with W = 64 or 32 (the 64- or
// 32-byte swizzle; StageBuffer::swizzle_bytes).
#include <fmt/core.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "backend/cuda/cuda_syntax.h"
#include "backend/cuda/tensor_core_kernel.h"
#include "backend/target.h"
#include "ir/ir.h"

namespace tilec::cuda::tensor_core {

namespace {

// The descriptor helper's arguments after the address: leading and stride bytes, and the swizzle
// when it is not the 128-byte one (the helper's default).
std::string descriptor_strides(int64_t leading_bytes, int64_t swizzle_bytes) {
  return swizzle_bytes == kPanelRowBytes ? fmt::format("{}, {}", leading_bytes, 8 * swizzle_bytes)
                                         : fmt::format("{}, {}, {}", leading_bytes, 8 * swizzle_bytes, swizzle_bytes);
}

}  // namespace

std::string TensorCoreKernel::swizzle_row_bits(const std::string& row, int64_t swizzle_bytes) {
  if (swizzle_bytes == kPanelRowBytes) return row + " % 8";
  return fmt::format("{} / {} % {}", row, kPanelRowBytes / swizzle_bytes, swizzle_bytes / 16);
}

std::string TensorCoreKernel::swizzled_offset(const std::string& row, const std::string& byte, int64_t swizzle_bytes) {
  return fmt::format("{0} * {1} + (({2} / 16) ^ ({3})) * 16 + {2} % 16", row, swizzle_bytes, byte,
                     swizzle_row_bits(row, swizzle_bytes));
}

std::string TensorCoreKernel::k_major_descriptor(const std::string& base, int64_t panel_bytes, int64_t step,
                                                 const std::string& row_offset, int64_t swizzle_bytes) {
  int64_t byte = step * kMmaKBytes;
  int64_t offset = byte / swizzle_bytes * panel_bytes + byte % swizzle_bytes;
  return fmt::format("tilec_matrix_descriptor({} + {}{}, {})", base, offset, row_offset,
                     descriptor_strides(16, swizzle_bytes));
}

// MN-major operands (B as loaded, a transposed A): leading offset = panel bytes (the next 128
// bytes of M or N), a K step = its K rows of the stored tile; `mn_offset`: bytes to the
// first panel. K-major ones (A as loaded, a transposed B): k_major_descriptor.
std::string TensorCoreKernel::operand_descriptor(const StageBuffer& operand, const std::string& slot, int64_t step,
                                                 const std::string& k_major_row_offset, const std::string& mn_offset) {
  const int64_t swizzle = operand.swizzle_bytes;
  if (operand.k_major()) return k_major_descriptor(slot, operand.panel_bytes(), step, k_major_row_offset, swizzle);
  return mn_major_descriptor(slot, operand.panel_bytes(), step, operand.tile.element(), mn_offset, swizzle);
}

// K step `step` of an MN-major operand at `base`: K rows of `swizzle` bytes per panel of M (or N)
// columns, `panel` bytes apart; the step's first row is mma_k rows further.
std::string TensorCoreKernel::mn_major_descriptor(const std::string& base, int64_t panel, int64_t step,
                                                  ScalarKind element, const std::string& mn_offset, int64_t swizzle) {
  return fmt::format("tilec_matrix_descriptor({} + {}{}, {})", base, step * mma_k(element) * swizzle, mn_offset,
                     descriptor_strides(panel, swizzle));
}

TensorCoreKernel::StagedA TensorCoreKernel::stage_register_a(const Fragment& a, int64_t staging_offset,
                                                             std::string_view reader) {
  // Rows of W = 128 bytes per panel, or one panel of 64 or 32 bytes when K is that short, in the
  // W-byte swizzle (swizzle_row_bits).
  const int64_t element_bytes = byte_size(a.element), k_bytes = a.columns * element_bytes;
  StagedA staged;
  staged.swizzle = k_bytes < kPanelRowBytes ? k_bytes : kPanelRowBytes;
  staged.panel = a.rows * staged.swizzle;
  staged.base = fmt::format("(shared_base + {})", staging_offset);
  const int64_t panel_columns = staged.swizzle / element_bytes;
  {
    CodeWriter::Block staging = writer_.block(fmt::format(
        "{{  // A to shared memory in the {}-byte swizzle: 16-byte chunk c of row r goes to chunk c ^ ({})",
        staged.swizzle, swizzle_row_bits("r", staged.swizzle)));
    writer_.line(FragmentLayout::position_variables());
    writer_.line(fmt::format("unsigned char* const staging = shared_aligned + {};", staging_offset));
    const std::string owner = tc_.layout.owner(a.rows);  // 64 rows on sm_100a: lanes 16..31 stand in, not write
    std::optional<CodeWriter::Block> owners;
    if (!owner.empty()) owners.emplace(writer_.block(fmt::format("if ({}) {{", owner)));
    writer_.line("#pragma unroll");
    CodeWriter::Block loop = writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", tc_.layout.count(a.columns)));
    writer_.line(fmt::format("const int row = {}, column = {};", tc_.layout.row("i", false, a.rows),
                             tc_.layout.column("i", a.columns)));
    writer_.line(fmt::format(
        "*reinterpret_cast<{}*>(staging + column / {} * {} + {}) = {}[i];", element_type(a.element), panel_columns,
        staged.panel,
        swizzled_offset("row", fmt::format("column % {} * {}", panel_columns, element_bytes), staged.swizzle), a.name));
  }
  writer_.line(fmt::format("tilec_fence_proxy_async();  // the writes above are read by {}", reader));
  writer_.line(fmt::format("tilec_named_barrier_sync({}, {});", tc_.private_barrier, tc_.compute_threads));
  return staged;
}

std::string TensorCoreKernel::stage_computed_b(const Operation& mma, const MmaPlan& plan, std::string_view reader,
                                               const std::string& buffer) {
  // B, or for B = transpose(x) the [N, K] tile x, written as it is: a K-major B.
  const Value* b = plan.computed_b.transposed ? mma.operand(1)->defining_op()->operand(0) : mma.operand(1);
  const std::vector<int64_t>& shape = b->type().shape();
  const ScalarKind element = b->type().element();
  const int64_t columns = plan.computed_b.panel_columns(), swizzle = plan.computed_b.swizzle_bytes;
  // The staging's offset in shared memory: the buffer `buffer` names, each of whole swizzle atoms.
  const std::string offset =
      buffer.empty() ? std::to_string(plan.b_staging_offset)
                     : fmt::format("{} + {} * {}", plan.b_staging_offset, buffer, plan.b_staging_buffer_bytes());
  {
    CodeWriter::Block staging = writer_.block(fmt::format(
        "{{  // B computed: each compute thread writes its elements as TMA would load the tile ({}, 16-byte "
        "chunk c of row r at chunk c ^ ({}))",
        plan.computed_b.transposed ? "[N, K], K-major" : "MN-major", swizzle_row_bits("r", swizzle)));
    writer_.line(fmt::format("unsigned char* const staging = shared_aligned + {};", offset));
    writer_.line("#pragma unroll 4");
    CodeWriter::Block loop =
        writer_.block(fmt::format("for (int e = 0; e < {}; ++e) {{", shape[0] * shape[1] / tc_.compute_threads));
    writer_.line(fmt::format("const int row = (e * {0} + compute_thread) / {1}, column = (e * {0} + compute_thread) % {1};",
                             tc_.compute_threads, shape[1]));
    writer_.line("(void)row, (void)column;");
    const ElementContext named = hoist_repeated_elements(b, ElementContext{.index = ""});
    writer_.line(fmt::format("*reinterpret_cast<{}*>(staging + column / {} * {} + {}) = {};", element_type(element),
                             columns, plan.computed_b.panel_bytes(),
                             swizzled_offset("row", fmt::format("column % {} * {}", columns, byte_size(element)),
                                             swizzle),
                             this->element(b, named)));
  }
  writer_.line(fmt::format("tilec_fence_proxy_async();  // the writes above are read by {}", reader));
  writer_.line(fmt::format("tilec_named_barrier_sync({}, {});", tc_.private_barrier, tc_.compute_threads));
  return fmt::format("(shared_base + {})", offset);
}

std::string TensorCoreKernel::shared_element(const StageBuffer& buffer, const std::string& slot, const std::string& row,
                                             const std::string& column) {
  const int64_t columns = buffer.panel_columns(), bytes = byte_size(buffer.tile.element());
  needs_.shared_read = true;
  return fmt::format("tilec_shared_read<{}>(shared_aligned + ({} - shared_base) + {} / {} * {} + {})",
                     element_type(buffer.tile.element()), slot, column, columns, buffer.panel_bytes(),
                     swizzled_offset(row, fmt::format("{} % {} * {}", column, columns, bytes), buffer.swizzle_bytes));
}

void TensorCoreKernel::emit_mma(const Operation& op) {
  comment(op);
  issue_mma(op, tc_.mma_plans.at(&op));
}

std::unique_ptr<TensorCoreKernel> make_tensor_core_kernel(const KernelPlan& plan, const Plan& tc,
                                                          TensorCoreNeeds& needs) {
  switch (needs.target->mma) {
    case target::MmaFamily::wgmma: return std::make_unique<WgmmaKernel>(plan, tc, needs);
    case target::MmaFamily::tcgen05: return std::make_unique<Tcgen05Kernel>(plan, tc, needs);
  }
  throw std::logic_error("make_tensor_core_kernel: a target of an MMA family without a kernel writer");
}

}  // namespace tilec::cuda::tensor_core
