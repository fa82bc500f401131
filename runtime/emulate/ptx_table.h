// runtime/emulate/ptx_table.h — which emulation function stands for each PTX instruction tilec emits.
//
// Every helper in a generated .cu that wraps inline PTX (backend/cuda/tensor_core_prelude.cpp)
// has two bodies: the asm nvcc compiles, inside `#ifndef TILEC_EMULATE`, and an `#else` branch
// that calls tilec_emu::ptx::* (runtime/emulate/include/tilec_emulate.h §5). This table is the
// one place that says which function emulates which instruction: a row is a PTX spelling prefix
// (an instruction of an asm string starts with it, followed by its end, a space or a `.`; the
// longest prefix wins) and the function's name in tilec_emu::ptx. A row with an empty function is
// glue inside a helper's asm (a predicate set or read, the branch of a wait loop): the emulation
// call it sits beside covers it, and it has no call of its own.
//
// tests/cuda/emulation_contract_test.cpp reads every expected .cu: each instruction of a helper's
// asm must have a row, and the helper's `#else` branch must call the rows' functions in the same
// order (and for WGMMA, with the shape, type and immediates of the PTX text). Adding an
// instruction to the emitter means adding its row here and its function to tilec_emulate.h.
#pragma once

#include <array>
#include <string_view>

namespace tilec_emu {

struct PtxInstruction {
  std::string_view spelling;  // prefix of the PTX instruction, e.g. "mbarrier.init.shared::cta.b64"
  std::string_view function;  // tilec_emu::ptx::<function>, or "" for glue (see above)
};

inline constexpr auto kPtxTable = std::to_array<PtxInstruction>({
    // mbarrier
    {"mbarrier.init.shared::cta.b64", "mbarrier_init"},
    {"fence.mbarrier_init.release.cluster", "fence_mbarrier_init"},
    {"mbarrier.try_wait.parity.shared::cta.b64", "mbarrier_wait_parity"},  // in a try/branch loop
    {"mbarrier.arrive.shared::cta.b64", "mbarrier_arrive"},
    {"mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier_arrive_expect_tx"},
    // TMA and bulk groups
    {"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", "tma_load_2d"},
    {"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "tma_store_2d"},
    {"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", "tma_load_3d"},
    {"cp.async.bulk.tensor.3d.global.shared::cta.bulk_group", "tma_store_3d"},
    {"cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", "tma_load_4d"},
    {"cp.async.bulk.tensor.4d.global.shared::cta.bulk_group", "tma_store_4d"},
    {"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group", "tma_reduce_add_2d"},
    {"cp.async.bulk.commit_group", "bulk_commit_group"},
    {"cp.async.bulk.wait_group.read", "bulk_wait_group_read"},
    {"cp.async.bulk.wait_group", "bulk_wait_group"},
    {"fence.proxy.async.shared::cta", "fence_proxy_async"},
    // warps, named barriers, registers
    {"elect.sync", "elect_one"},
    {"bar.sync", "named_barrier_sync"},
    {"bar.arrive", "named_barrier_arrive"},
    {"setmaxnreg.inc.sync.aligned.u32", "setmaxnreg"},  // increase = true
    {"setmaxnreg.dec.sync.aligned.u32", "setmaxnreg"},  // increase = false
    // WGMMA (sm_90a)
    {"wgmma.fence.sync.aligned", "wgmma_fence"},
    {"wgmma.commit_group.sync.aligned", "wgmma_commit_group"},
    {"wgmma.wait_group.sync.aligned", "wgmma_wait_group"},
    {"wgmma.mma_async.sync.aligned", "wgmma_mma_async"},  // .m64nNkK.{f32|s32}.T.T: shape and types as arguments
    // tcgen05 (sm_100a)
    {"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "tcgen05_alloc"},
    {"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned", "tcgen05_relinquish_alloc_permit"},
    {"tcgen05.dealloc.cta_group::1.sync.aligned.b32", "tcgen05_dealloc"},
    {"tcgen05.fence::before_thread_sync", "tcgen05_fence_before_thread_sync"},
    {"tcgen05.fence::after_thread_sync", "tcgen05_fence_after_thread_sync"},
    {"tcgen05.mma.cta_group::1.kind::f16", "tcgen05_mma"},     // MmaKind::f16
    {"tcgen05.mma.cta_group::1.kind::tf32", "tcgen05_mma"},    // MmaKind::tf32
    {"tcgen05.mma.cta_group::1.kind::f8f6f4", "tcgen05_mma"},  // MmaKind::f8f6f4
    {"tcgen05.mma.cta_group::1.kind::i8", "tcgen05_mma"},      // MmaKind::i8
    {"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64", "tcgen05_commit"},
    {"tcgen05.ld.sync.aligned.32x32b", "tcgen05_ld_32x32b"},  // .xN.b32: count N as an argument
    {"tcgen05.wait::ld.sync.aligned", "tcgen05_wait_ld"},
    // glue: part of the sequence a call above emulates
    {"setp.ne.b32", ""},  // a predicate from a register (WGMMA scale-d, tcgen05.mma accumulate)
    {"selp.u32", ""},     // elect.sync's predicate as 0 or 1
    {"bra", ""},          // the mbarrier.try_wait loop's branch back
});

// The row whose spelling is the longest prefix of `instruction` (ending there, or followed by a
// space or a `.`), or nullptr.
constexpr const PtxInstruction* find_ptx_instruction(std::string_view instruction) {
  const PtxInstruction* best = nullptr;
  for (const PtxInstruction& row : kPtxTable) {
    if (!instruction.starts_with(row.spelling)) continue;
    if (instruction.size() > row.spelling.size()) {
      char next = instruction[row.spelling.size()];
      if (next != ' ' && next != '.' && next != '\t') continue;
    }
    if (!best || row.spelling.size() > best->spelling.size()) best = &row;
  }
  return best;
}

}  // namespace tilec_emu
