// backend/machine_model_sm90a.cpp — the Hopper (sm_90a) machine model as one table.
//
// Hopper has no public slot model like Blackwell's, so this table is built in the same units
// (cycles of one SM sub-partition) from what the hardware is known to have: one TMA unit per
// SM, warpgroup MMA (WGMMA) that reads its B operand (and optionally A) from shared memory,
// four SIMT sub-partitions, one special-function unit path, one load/store path, and
// separate shared memory read and write transports. Every figure here is an estimate made to
// be comparable with sm_100a: TMA and SMEM transport figures are taken over from Blackwell
// (the copy engine and shared memory are alike), WGMMA holds the tensor core for 8 cycles
// with a 16-cycle accumulator latency like tcgen05, and it also occupies the shared memory
// read transport because its operands stream from SMEM (Hopper has no tensor memory, so
// tmem_read / tmem_write are absent on purpose).
#include "backend/machine_model.h"

namespace tilec::target {
namespace {

constexpr Slot slots[] = {
    {"issue", 1, "instruction issue of one warp scheduler"},
    {"simt_alu", 4, "SIMT integer / FP32 pipes, four sub-partitions (estimate)"},
    {"sfu", 1, "special-function unit (MUFU: exp2, rcp)"},
    {"lsu", 1, "load/store unit"},
    {"tma", 1, "tensor memory accelerator (bulk copies)"},
    {"wgmma", 1, "warpgroup MMA issue on the tensor cores"},
    {"tp_smem_rd", 1, "shared memory read transport"},
    {"tp_smem_wr", 1, "shared memory write transport"},
    {"tp_gmem_rd", 1, "global memory read transport"},
    {"tp_gmem_wr", 1, "global memory write transport"},
};

constexpr SlotUse tma_load_uses[] = {{"tma", 0, 8, 1}, {"tp_smem_wr", 0, 8, 1}};
constexpr SlotUse tma_store_uses[] = {{"tma", 0, 8, 1}, {"tp_smem_rd", 0, 8, 1}};
constexpr SlotUse mma_uses[] = {{"wgmma", 0, 8, 1}, {"tp_smem_rd", 0, 8, 1}};
constexpr SlotUse smem_read_uses[] = {{"lsu", 0, 1, 1}, {"tp_smem_rd", 0, 7, 1}};
constexpr SlotUse smem_write_uses[] = {{"lsu", 0, 1, 1}, {"tp_smem_wr", 0, 7, 1}};
constexpr SlotUse alu_uses[] = {{"simt_alu", 0, 1, 1}};
constexpr SlotUse exp_uses[] = {{"sfu", 0, 2, 1}};
constexpr SlotUse reduce_uses[] = {{"simt_alu", 0, 2, 1}};
constexpr SlotUse global_load_uses[] = {{"lsu", 0, 1, 1}, {"tp_gmem_rd", 0, 7, 1}};
constexpr SlotUse global_store_uses[] = {{"lsu", 0, 1, 1}, {"tp_gmem_wr", 0, 7, 1}};
constexpr SlotUse barrier_uses[] = {{"issue", 0, 1, 1}};

constexpr OpFootprint footprints[] = {
    {"tma_load", 8, true, tma_load_uses, "cp.async.bulk.tensor load into shared memory"},
    {"tma_store", 8, true, tma_store_uses, "cp.async.bulk.tensor store from shared memory"},
    {"mma", 16, true, mma_uses, "wgmma.mma_async; operands streamed from shared memory"},
    {"smem_read", 7, false, smem_read_uses, "ld.shared"},
    {"smem_write", 7, false, smem_write_uses, "st.shared"},
    {"alu", 4, false, alu_uses, "integer / logic / compare"},
    {"fma", 4, false, alu_uses, "floating-point add / mul / fma"},
    {"dual_alu", 4, false, alu_uses, "no dual issue on Hopper: an ordinary ALU op"},
    {"exp", 8, false, exp_uses, "ex2.approx on the SFU"},
    {"reduce", 8, false, reduce_uses, "row reduction: max or sum across a tile row"},
    {"convert", 4, false, alu_uses, "type conversion"},
    {"global_load", 500, false, global_load_uses, "ld.global"},
    {"global_store", 7, false, global_store_uses, "st.global"},
    {"barrier_wait", 1, false, barrier_uses, "mbarrier try_wait"},
    {"barrier_arrive", 1, false, barrier_uses, "mbarrier arrive / release"},
};

constexpr MachineModel model{"sm_90a", slots, footprints};

}  // namespace

const MachineModel& sm90a_machine_model() { return model; }

// The lookups shared by every model (kept here so each target stays one file).
const Slot* MachineModel::find_slot(std::string_view name) const {
  for (const Slot& slot : slots)
    if (slot.name == name) return &slot;
  return nullptr;
}

const OpFootprint* MachineModel::find_footprint(std::string_view kind) const {
  for (const OpFootprint& footprint : footprints)
    if (footprint.kind == kind) return &footprint;
  return nullptr;
}

}  // namespace tilec::target
