// passes/build_resources.cpp — the build-resources pass.
//
// What: maps each IR op to an op kind of the module target's machine model
// (backend/machine_model.h) and publishes that kind's footprint on the op, visible in IR text:
//   resource_kind = "tma_load", latency = 8,
//   resources = [["tma", 0, 8, 1], ["tp_smem_wr", 0, 8, 1]]   // [slot, start, duration, occupancy]
// Ops with no footprint (structure, constants, dims, scalar index arithmetic) get none of them.
// Phases:
//   1. Take the machine model of ctx.target (the driver resolved the target: backend/target.h).
//   2. Walk every kernel; choose a kind per op with the table in kind_of (documented in
//      docs/passes/build_resources.md): tma_load → tma_load, mma → mma, load → global_load,
//      store → global_store, the SFU ops (exp, sqrt, tanh, pow, ...) → exp, reductions → reduce, cast → convert,
//      other elementwise tile ops and tile fills → fma (float) or alu (integer), scalar ops → none.
//   3. Look the kind up in the model; a kind the model lacks is an internal error naming it
//      (the table and the models must agree), thrown as std::logic_error (exit status 2).
// Invariants: never changes what a kernel computes; rerunning replaces the three attributes.
// Cost: O(ops · footprint size).
#include "passes/build_resources.h"

#include <fmt/core.h>

#include <stdexcept>

#include "backend/machine_model.h"
#include "backend/target.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

bool produces_tile(const Operation& op) {
  return op.num_results() == 1 && !op.result()->type().is_scalar();
}

// The machine-model kind of an op, or "" when the op occupies no modelled hardware.
std::string_view kind_of(const Operation& op) {
  switch (op.kind()) {
    case OpKind::tma_load: return "tma_load";
    case OpKind::mma: return "mma";
    case OpKind::load: return "global_load";
    case OpKind::store: return "global_store";
    case OpKind::cast: return produces_tile(op) ? "convert" : "";
    default: break;
  }
  if (op.info().pipe == Pipe::SFU) return produces_tile(op) ? "exp" : "";  // exp, tanh, pow, ...
  if (op.info().has(kReduction)) return "reduce";
  bool fills = op.kind() == OpKind::zeros || op.kind() == OpKind::full || op.kind() == OpKind::iota;
  if ((op.info().has(kElementwise) || fills) && produces_tile(op))
    return is_integer(op.result()->type().element()) ? "alu" : "fma";
  return "";
}

}  // namespace

bool build_resources(Module& module, PassContext& ctx) {
  const target::MachineModel& model = ctx.target.machine_model;
  walk(module, [&](Operation& op) {
    op.remove(attr::resource_kind);
    op.remove(attr::resources);
    op.remove(attr::latency);
    std::string_view kind = kind_of(op);
    if (kind.empty()) return;
    const target::OpFootprint* footprint = model.find_footprint(kind);
    if (!footprint)
      throw std::logic_error(fmt::format("build-resources: the {} machine model has no op kind '{}' (for '{}' at {}:{})",
                                         model.target, kind, op.name(), op.location().line, op.location().column));
    Attribute::Array uses;
    for (const target::SlotUse& use : footprint->uses)
      uses.push_back(Attribute(Attribute::Array{Attribute(std::string(use.slot)), Attribute(use.at),
                                                Attribute(use.duration), Attribute(use.occupancy)}));
    op.set(attr::resource_kind, std::string(kind));
    op.set(attr::resources, Attribute(std::move(uses)));
    op.set(attr::latency, footprint->latency);
  });
  return true;
}

}  // namespace tilec
