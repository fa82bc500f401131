// passes/schedule/place_with_arms.h — the seed's placement driver at one ii: ready groups,
// the four placement arms (permute, fuse, retry, cost-based) and the gates G1–G4.
#pragma once

#include <vector>

#include "passes/schedule/cost_evaluators.h"
#include "passes/schedule/iterative_modulo_schedule.h"
#include "passes/schedule/loop_graph.h"

namespace tilec::schedule {

enum class ArmSet {
  all,              // initial placement: permute, fuse, retry, then cost-based
  cost_based_only,  // cost-based placement: only the exhaustive (op, cycle) arm
};

// What survives between ladder rungs at one ii: ops the cost-based arm found no seat for.
// Clearing it is the ladder's "clear intermediate schedule state".
struct PlacementSnapshot {
  std::vector<char> dead;
  void clear() { std::fill(dead.begin(), dead.end(), 0); }
};

// Seats every op at this ii inside its distance-closure window (so no dependence can break),
// or fails. heights rank the ready ops (highest first, then lowest index).
ModuloAttempt place_with_arms(const LoopGraph& graph, const LoopGraphIndex& index,
                              const DistanceClosure& closure, const std::vector<long>& heights,
                              int ii, ArmSet arms, PlacementSnapshot& snapshot);

}  // namespace tilec::schedule
