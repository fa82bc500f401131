// backend/cuda/emit_tensor_core_mma.cpp — mma on the tensor cores, what the families share: the
// shared-memory matrix descriptors of the operands, the mma op's comment before its family's
// instructions (WgmmaKernel, Tcgen05Kernel), and the choice of family. A part of
// TensorCoreKernel (tensor_core_kernel.h).
// Layout facts (128-byte swizzle): a stage tile R x C as stored is C/P panels of R rows x 128
// bytes (P = 64 16-bit or 128 8-bit elements), panel p at p·R·128 bytes; TMA fills one panel per
// box. K-major operands (A as loaded, a transposed B): stride 1024 bytes between 8-row groups, a
// K step (16 16-bit or 32 8-bit elements) is +32 bytes inside the panel. MN-major ones (B as
// loaded, a transposed A): leading offset = panel bytes (the next 128 bytes of M or N), stride
// 1024 (next 8 K rows), a K step is +16 rows = +2048 bytes.
#include <fmt/core.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "backend/cuda/tensor_core_kernel.h"
#include "backend/target.h"
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

void TensorCoreKernel::emit_mma(const Operation& op, int indent) {
  comment(indent, op);
  issue_mma(op, mma_plans_.at(&op), indent);
}

std::unique_ptr<TensorCoreKernel> make_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs,
                                                          DiagnosticEngine& diagnostics) {
  switch (needs.target->mma) {
    case target::MmaFamily::wgmma: return std::make_unique<WgmmaKernel>(plan, needs, diagnostics);
    case target::MmaFamily::tcgen05: return std::make_unique<Tcgen05Kernel>(plan, needs, diagnostics);
  }
  throw std::logic_error("make_tensor_core_kernel: a target of an MMA family without a kernel writer");
}

}  // namespace tilec::cuda::tensor_core
