// passes/sync/sync_parts.h — the three parts of insert-sync (passes/insert_sync.cpp runs them):
// cross-pipe events, mutexes → named barriers, pipes → mbarriers and stage buffers. Each part
// rewrites one kernel and reports input errors through the diagnostics; each returns false
// after reporting one.
#pragma once

#include <string>
#include <vector>

#include "ir/op_table.h"

namespace tilec {

class DiagnosticEngine;
class Operation;

// True for the ops that synchronize by themselves (the op table's kSync: pipe_*, mutex_*,
// mbarrier_*, stage_*, event_*, named_barrier_*, tma_load_async) and for warp-specialize's
// structure (warp_specialize, agent): dependences through them are carried by their protocol and
// need no event.
bool synchronizes_itself(OpKind kind);

// An event the pass plans: set right after `set_after`, waited right before `wait_before`
// (both in one region), for pipe pair from -> to. Positions number the kernel's ops in a
// pre-order walk, doubled: an op at 2k, a set after an op's subtree at 2·last+1, a wait before
// an op at 2k-1; an id is live over [set_position, wait_position].
struct PlannedEvent {
  Operation* set_after = nullptr;
  Operation* wait_before = nullptr;
  Pipe from = Pipe::none;
  Pipe to = Pipe::none;
  int set_position = 0;
  int wait_position = 0;
  int id = -1;
};

// Gives each event an id of its pipe pair: events in order of their set position take the
// lowest id no live event of the pair holds (an id is freed at its wait); ids 0..max_events-1.
// Returns the index of the first event that finds none free, or -1 when all got one.
int allocate_event_ids(std::vector<PlannedEvent>& events, int max_events);

// Phase 1 of insert-sync: plans, prunes, numbers and inserts event_set/event_wait ops.
bool insert_events(Operation& kernel, int max_events, DiagnosticEngine& diagnostics);
// Phase 2: mutex_create/lock/unlock → named_barrier_sync/arrive with ids 1..15.
bool assign_named_barriers(Operation& kernel, DiagnosticEngine& diagnostics);
// Phase 3: pipe ops → mbarriers, stage buffers and pipeline states carried through loops.
bool lower_pipes(Operation& kernel, DiagnosticEngine& diagnostics);

}  // namespace tilec
