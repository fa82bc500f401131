// backend/machine_model_sm100a.cpp — the Blackwell (sm_100a) machine model as one table.
//
// Source: the public notes on NVIDIA's tileiras scheduler (shared/reference/
// tileiras-scheduler.md, "Blackwell slot model"). Slots keep that model's names and ids in
// comments. Figures copied from the notes: the footprints of tiled_tma_load (tma + tp_smem_wr
// for 8 cycles), mma (tc_and_mma + tp_mma for 8 cycles, accumulator latency 16), smem_write
// and smem_read (7 cycles), the latency families (dual ALU 2, ALU / FMA-heavy 4, SMEM / TMEM /
// gnic / MMA transports 7, tensor-core issue 8), the issue caps (ALU-or-FMA-heavy 4, dual
// issue 3) and "transports act as singletons" (capacity 1).
// Estimates (marked "estimate" below): the exp, reduce and convert footprints, the global
// memory latency (the notes give an anchor of up to 5000 cycles; 500 keeps lab stages
// readable), the TMA store and the TMEM transports' footprints by symmetry with the loads.
#include "backend/machine_model.h"

namespace tilec::target {
namespace {

constexpr Slot slots[] = {
    {"issue", 1, "id 1: instruction issue of one warp scheduler"},
    {"xu", 1, "id 2: transcendental unit (MUFU: exp2, rcp, rsqrt)"},
    {"alu", 4, "id 5: integer / logic ALU, pool cap 4"},
    {"alu_or_fmaheavy", 4, "id 6: ALU-or-FMA-heavy issue, pool cap 4"},
    {"dual_alu", 3, "id 7: dual-issue ALU, pool cap 3"},
    {"lsu", 1, "id 8: load/store unit"},
    {"tmem", 1, "id 9: tensor memory allocator"},
    {"tc_and_mma", 1, "id 11: tensor-core issue (tcgen05.mma)"},
    {"tma", 1, "id 12: tensor memory accelerator (bulk copies)"},
    {"tp_gnic_rd", 1, "id 13: global memory read transport"},
    {"tp_gnic_wr", 1, "id 14: global memory write transport"},
    {"tp_smem_rd", 1, "id 15: shared memory read transport"},
    {"tp_smem_wr", 1, "id 16: shared memory write transport"},
    {"tp_tmem_rd", 1, "id 17: tensor memory read transport"},
    {"tp_tmem_wr", 1, "id 18: tensor memory write transport"},
    {"tp_mma", 1, "id 19: MMA operand transport"},
};

constexpr SlotUse tma_load_uses[] = {{"tma", 0, 8, 1}, {"tp_smem_wr", 0, 8, 1}};
constexpr SlotUse tma_store_uses[] = {{"tma", 0, 8, 1}, {"tp_smem_rd", 0, 8, 1}};  // estimate
constexpr SlotUse mma_uses[] = {{"tc_and_mma", 0, 8, 1}, {"tp_mma", 0, 8, 1}};
constexpr SlotUse smem_read_uses[] = {{"tp_smem_rd", 0, 7, 1}};
constexpr SlotUse smem_write_uses[] = {{"tp_smem_wr", 0, 7, 1}};
constexpr SlotUse tmem_read_uses[] = {{"tp_tmem_rd", 0, 7, 1}};   // estimate (symmetry)
constexpr SlotUse tmem_write_uses[] = {{"tp_tmem_wr", 0, 7, 1}};  // estimate (symmetry)
constexpr SlotUse alu_uses[] = {{"alu", 0, 1, 1}};
constexpr SlotUse fma_uses[] = {{"alu_or_fmaheavy", 0, 1, 1}};
constexpr SlotUse dual_alu_uses[] = {{"dual_alu", 0, 1, 1}};
constexpr SlotUse exp_uses[] = {{"xu", 0, 2, 1}};                  // estimate
constexpr SlotUse reduce_uses[] = {{"alu_or_fmaheavy", 0, 2, 1}};  // estimate
constexpr SlotUse convert_uses[] = {{"alu", 0, 1, 1}};             // estimate
constexpr SlotUse global_load_uses[] = {{"lsu", 0, 1, 1}, {"tp_gnic_rd", 0, 7, 1}};
constexpr SlotUse global_store_uses[] = {{"lsu", 0, 1, 1}, {"tp_gnic_wr", 0, 7, 1}};
constexpr SlotUse barrier_uses[] = {{"issue", 0, 1, 1}};

constexpr OpFootprint footprints[] = {
    {"tma_load", 8, true, tma_load_uses, "TMA tile load into shared memory"},
    {"tma_store", 8, true, tma_store_uses, "TMA tile store from shared memory"},
    {"mma", 16, true, mma_uses, "tcgen05.mma; holds the core 8 cycles, accumulator ready after 16"},
    {"smem_read", 7, false, smem_read_uses, "shared memory read (transport family, 7)"},
    {"smem_write", 7, false, smem_write_uses, "shared memory write (transport family, 7)"},
    {"tmem_read", 7, false, tmem_read_uses, "tcgen05.ld from tensor memory"},
    {"tmem_write", 7, false, tmem_write_uses, "tcgen05.st to tensor memory"},
    {"alu", 4, false, alu_uses, "integer / logic / compare (ALU family, 4)"},
    {"fma", 4, false, fma_uses, "floating-point add / mul / fma (FMA-heavy family, 4)"},
    {"dual_alu", 2, false, dual_alu_uses, "dual-issued simple ALU op (family 2)"},
    {"exp", 8, false, exp_uses, "exp2 on the transcendental unit (estimate)"},
    {"reduce", 8, false, reduce_uses, "row reduction: max or sum across a tile row (estimate)"},
    {"convert", 4, false, convert_uses, "type conversion (estimate)"},
    {"global_load", 500, false, global_load_uses, "ld.global (latency: estimate)"},
    {"global_store", 7, false, global_store_uses, "st.global"},
    {"barrier_wait", 1, false, barrier_uses, "mbarrier try_wait"},
    {"barrier_arrive", 1, false, barrier_uses, "mbarrier arrive / release"},
};

constexpr MachineModel model{"sm_100a", slots, footprints};

}  // namespace

const MachineModel& sm100a_machine_model() { return model; }

}  // namespace tilec::target
