// runtime/interpreter/cta_state.h — the synchronization objects of one CTA while the interpreter
// runs it: pipes and mutexes (materialize-schedule), mbarriers, stage buffers, events and named
// barriers (insert-sync), and what each agent has observed of them (for the race check).
//
// Only one agent runs at a time (agent_threads.h hands a baton over), so this state needs no
// locking of its own. docs/interpreter.md, "Pipes, barriers and agents", states the model.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/interpreter/tile_arithmetic.h"

namespace tilec {
class Operation;
}

namespace tilec::runtime::detail {

class AgentThreads;

// A Pipe_ run in program order: at most `depth` slots acquired, published or waited for.
struct PipeState {
  std::string name;
  int64_t depth = 1;
  int64_t acquired = 0;               // reserved by the producer, not yet committed
  std::deque<TileValue> published;    // committed, not yet waited for (oldest first)
  int64_t waited = 0;                 // waited for, not yet released
  int64_t occupied() const { return acquired + static_cast<int64_t>(published.size()) + waited; }
};

struct MutexState {
  std::string name;
  bool locked = false;
};

struct MbarrierSlot {
  int64_t phase = 0;    // the phase in progress
  int64_t missing = 0;  // arrivals it still misses
  int64_t bytes = 0;    // transaction bytes it still waits for (negative: completed early)
};

struct MbarrierState {
  std::string name;
  int64_t arrivals = 1;
  std::vector<MbarrierSlot> slots;
};

struct StageSlot {
  std::optional<TileValue> value;
  int64_t fills = 0;                          // fills so far; the current one is number `fills`
  int64_t full_phase = 0;                     // the full[i] phase the current fill completes
  int filler = -1;                            // the agent of the current fill
  std::optional<int64_t> release_phase;       // the empty[i] phase its release arrived on
};

struct StageBufferState {
  std::string name;
  int64_t full = -1, empty = -1;  // mbarrier indices
  std::vector<StageSlot> slots;
};

struct NamedBarrierState {
  int64_t arrived = 0;  // threads arrived in the phase in progress
  int64_t phase = 0;
};

// A view of a stage slot: a stage_read result, or an async mma's operand while it is in flight.
struct SlotView {
  int64_t buffer = -1;  // index into CtaState::stage_buffers; -1: not a view
  int64_t slot = 0;
  int64_t fill = 0;     // the fill the view was read from
};

// An async mma (defer-mma-releases) not yet retired: the stage slots its operands read.
struct InFlightMma {
  const Operation* op = nullptr;
  int64_t number = 0;                                  // the agent's issue count when issued
  std::vector<std::pair<SlotView, std::string>> reads;  // (view, operand name)
};

struct AgentState {
  std::string name;
  int64_t threads = 128;
  // (mbarrier, slot) → the last phase this agent saw complete through a wait (-1: the phase
  // "before" a fresh barrier, which a wait for parity 1 observes).
  std::map<std::pair<int64_t, int64_t>, int64_t> observed;
  // The (mbarrier, slot) pairs whose last wait was an `issuer` wait (issuer-only-waits): only the
  // MMA issuer observed it, so only an mma may read what it guards.
  std::set<std::pair<int64_t, int64_t>> issuer_observed;
  // (stage buffer, slot) → the fill this agent last released by arriving on empty[slot].
  std::map<std::pair<int64_t, int64_t>, int64_t> released;
  // Async mmas issued and not retired, oldest first; `retired` is the number of the next to
  // retire (every async mma numbered below it has retired).
  std::deque<InFlightMma> in_flight;
  int64_t issued = 0, retired = 0;
};

class CtaState {
 public:
  CtaState() { agents.push_back({"main", 128, {}, {}}); }

  std::vector<PipeState> pipes;
  std::vector<MutexState> mutexes;
  std::vector<MbarrierState> mbarriers;
  std::vector<StageBufferState> stage_buffers;
  std::map<std::tuple<std::string, std::string, int64_t>, bool> live_events;  // (from, to, id)
  std::map<int64_t, NamedBarrierState> named_barriers;
  std::vector<AgentState> agents;
  AgentThreads* threads = nullptr;  // set while a warp_specialize runs its agents
};

}  // namespace tilec::runtime::detail
