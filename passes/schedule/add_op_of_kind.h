// passes/schedule/add_op_of_kind.h — the bridge from a machine model to a loop graph: adds an
// op whose latency, async flag and reservation table come from its kind's footprint. This is
// what the generate-schedule IR pass calls for each op of a loop body once it has mapped the
// IR op to a kind ("tma_load", "mma", ...).
#pragma once

#include <string>
#include <string_view>

#include "backend/machine_model.h"
#include "passes/schedule/loop_graph.h"

namespace tilec::schedule {

// Adds the op and returns its index, or −1 when the model has no such kind. Slots the
// footprint names become resources of the graph (with the model's capacity) the first time
// they are used; a resource the graph already has under that name is reused as it is.
int add_op_of_kind(LoopGraph& graph, const target::MachineModel& model, std::string name,
                   std::string_view kind);

}  // namespace tilec::schedule
