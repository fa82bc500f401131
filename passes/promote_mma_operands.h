// passes/promote_mma_operands.h — the promote-mma-operands pass: tile operands of mma come
// through shared memory.
//
// A `load` whose every use is an `a` or `b` operand of `mma` becomes a `tma_load` into shared
// memory (same operands and attributes), because the tensor cores read their operands there.
// `transpose(load T[n, k] : <BN, BK>)` used only as mma operands becomes one
// `tma_load T, n, k {transposed} : tile<BKxBN, smem>` (no data moves: as b, a K-major B; as a,
// an MN-major A). `reshape<R, C>(load T[..] : <R, 1, C>)` becomes a load {box = [R, 1, C]} (in
// a kernel with mma, only where it feeds mma), and a store of reshape<R, 1, C>(x) a store {box}
// of x (a tile between its tensor's dimensions). An 8- or 16-bit 2-D load that only elementwise
// ops, slices, concats and interleaves carry into mmas' B (a quantized weight) becomes a
// tma_load too, where its stages fit the target's shared memory, which those ops read there.
// docs/passes/promote_mma_operands.md.
#pragma once

namespace tilec {
class Module;
class Operation;
class Value;
struct PassContext;

bool promote_mma_operands(Module& module, PassContext& ctx);

// Whether `user` carries its operand `input` on the way into a computed B, which the tensor-core
// backend computes element by element: an elementwise op of `input`'s shape, or a 2-D slice or
// concat (columns of it, or it beside other parts). Phase 4 follows such ops from a quantized
// weight to mmas' B; materialize-schedule releases the weight's shared-memory slot after the
// last mma they reach.
bool carries_into_computed_b(const Operation& user, const Value& input);
}  // namespace tilec
