// backend/machine_model.h — machine models as data: issue slots, their capacities, and the
// footprint of each op kind, one table per target (sm_90a, sm_100a); a Target (target.h)
// names its model.
//
// A footprint is what the scheduler reserves when it seats an op: a list of slot uses
// (slot, at, duration, occupancy) — the op claims `occupancy` units of `slot` in each of the
// cycles at .. at + duration − 1 after its start — and a dependence latency. Latency and
// occupancy are separate on purpose: an MMA holds the tensor core for 8 cycles but its
// accumulator is ready only after 16. Passes look footprints up by kind name ("tma_load",
// "mma", "smem_read", ...); the tables live in machine_model_sm90a.cpp and
// machine_model_sm100a.cpp, each documenting where its figures come from.
#pragma once

#include <span>
#include <string_view>

namespace tilec::target {

struct Slot {
  std::string_view name;
  int capacity = 1;               // units available in one cycle
  std::string_view description;
};

struct SlotUse {
  std::string_view slot;          // a Slot name of the same model
  int at = 0;                     // first cycle, relative to the op's start
  int duration = 1;               // cycles held
  int occupancy = 1;              // units held in each of those cycles
};

struct OpFootprint {
  std::string_view kind;          // "tma_load", "mma", ...
  int latency = 0;                // cycles until a dependent op may start
  bool async = false;             // TMA, tensor-core or other asynchronous pipeline op
  std::span<const SlotUse> uses;
  std::string_view description;
};

struct MachineModel {
  std::string_view target;        // "sm_90a", "sm_100a"
  std::span<const Slot> slots;
  std::span<const OpFootprint> footprints;

  // The slot or footprint with this name, or nullptr.
  const Slot* find_slot(std::string_view name) const;
  const OpFootprint* find_footprint(std::string_view kind) const;
};

const MachineModel& sm90a_machine_model();
const MachineModel& sm100a_machine_model();

}  // namespace tilec::target
