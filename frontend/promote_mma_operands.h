// frontend/promote_mma_operands.h — the last step of lowering a kernel.
//
// A `load` whose every use is an `a` or `b` operand of `mma` becomes a `tma_load` into shared
// memory (same operands and attributes), because the tensor cores read their operands there.
// `transpose(load T[n, k] : <BN, BK>)` used only as mma's `b` becomes one
// `tma_load T, n, k {transposed} : tile<BKxBN, smem>` (B stored K-major; no data moves).
#pragma once

namespace tilec {
class Region;
}

namespace tilec::frontend {

void promote_mma_operands(Region& kernel_body);

}  // namespace tilec::frontend
