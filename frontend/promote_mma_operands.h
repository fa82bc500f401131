// frontend/promote_mma_operands.h — the last step of lowering a kernel.
//
// A `load` whose every use is an `a` or `b` operand of `mma` becomes a `tma_load` into shared
// memory (same operands and attributes), because the tensor cores read their operands there.
// `transpose(load T[n, k] : <BN, BK>)` used only as mma operands becomes one
// `tma_load T, n, k {transposed} : tile<BKxBN, smem>` (no data moves: as b, a K-major B; as a,
// an MN-major A).
#pragma once

namespace tilec {
class Region;
}

namespace tilec::frontend {

void promote_mma_operands(Region& kernel_body);

}  // namespace tilec::frontend
