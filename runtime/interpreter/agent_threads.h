// runtime/interpreter/agent_threads.h — the agents of a warp_specialize as coroutines: one
// std::thread per agent and a baton, so exactly one agent (or the scheduler) runs at a time.
//
// The scheduler resumes the agents round-robin in region order; an agent runs until it
// finishes or parks at a wait that cannot pass (TileExecution::wait_until). A parked agent is
// resumed only once its wait can pass. When no agent can run and some have not finished, the
// run is a deadlock: the report names every parked agent, its op and what it waits for. Then
// every unfinished agent is resumed with the abort flag set (its wait fails, it unwinds) and
// every thread is joined, so a failed run leaks nothing. The order never depends on the OS
// scheduler or the executor's worker count: the baton makes the interleaving a function of the
// program alone.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/interpreter/tile_execution.h"

namespace tilec::runtime::detail {

class AgentThreads {
 public:
  // One agent: its execution (over the tile's) and the region it runs.
  void add(TileExecution& execution, const Region& body);
  // Runs every agent to completion; false with `error` set on a deadlock or an agent's failure.
  bool run(OpError& error);
  // Called on an agent's thread: parks it until `ready()` holds. False when the run is aborted.
  bool park(TileExecution& execution, const Operation& op, std::function<bool()> ready,
            std::function<std::string()> blocked);

 private:
  struct Slot {
    TileExecution* execution = nullptr;
    const Region* body = nullptr;
    std::thread thread;
    bool parked = false, finished = false, ok = true;
    std::string crash;  // an exception escaping the agent
    const Operation* waiting_op = nullptr;
    std::function<bool()> ready;
    std::function<std::string()> blocked;
  };
  void agent_main(size_t index);
  // The round-robin loop: returns when every agent finished (ok stays true), one failed, or
  // none can run (a deadlock); sets `error` for the last two.
  void schedule(bool& ok, OpError& error);
  // Gives the baton to slot `index` and waits until it parks or finishes.
  void hand_over(size_t index);
  size_t slot_of(const TileExecution& execution) const;

  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  static constexpr size_t kScheduler = static_cast<size_t>(-1);
  size_t running_ = kScheduler;
  bool abort_ = false;
};

}  // namespace tilec::runtime::detail
