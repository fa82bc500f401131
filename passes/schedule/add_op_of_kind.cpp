// passes/schedule/add_op_of_kind.cpp — footprint lookup by kind and resource interning.
// Cost O(uses · resources) per op.
#include "passes/schedule/add_op_of_kind.h"

namespace tilec::schedule {

int add_op_of_kind(LoopGraph& graph, const target::MachineModel& model, std::string name,
                   std::string_view kind) {
  const target::OpFootprint* footprint = model.find_footprint(kind);
  if (!footprint) return -1;
  LoopOp op;
  op.name = std::move(name);
  op.kind = std::string(kind);
  op.latency = footprint->latency;
  op.async = footprint->async;
  for (const target::SlotUse& use : footprint->uses) {
    int resource = -1;
    for (int r = 0; r < static_cast<int>(graph.resources.size()); ++r)
      if (graph.resources[r].name == use.slot) resource = r;
    if (resource < 0) {
      const target::Slot* slot = model.find_slot(use.slot);
      resource = graph.add_resource(std::string(use.slot), slot ? slot->capacity : 1);
    }
    op.uses.push_back({resource, use.at, use.duration, use.occupancy});
  }
  return graph.add_op(std::move(op));
}

}  // namespace tilec::schedule
