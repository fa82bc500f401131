// runtime/interpreter/agent_scheduler.h — the seam for warp-specialized kernels: the agents of
// one CTA run as coroutines over shared barriers, and a missing arrive becomes a reported
// deadlock instead of a hang.
//
// Model. A CTA owns barriers with mbarrier semantics: each has an expected arrival count per
// phase; when that many arrivals have come, the phase completes (phase numbers 0, 1, 2, ...)
// and the count resets. A named barrier (bar.sync) is the same object where every participant
// arrives and then waits for the current phase. An Agent (a producer warp group issuing TMA, a
// consumer issuing MMA, ...) is resumed by the scheduler and runs until it finishes or reaches a
// wait on a phase that has not completed; it then returns "blocked on (barrier, phase)" and is
// not resumed before that phase completes.
//
// Scheduling. CtaScheduler::run resumes runnable agents round-robin in the order they were
// added (deterministic). When no agent is runnable and some have not finished, it reports a
// deadlock naming every blocked agent with the barrier, the phase it waits for, and how many
// arrivals that phase still misses. An agent that fails (e.g. a stage-buffer race reported by
// StageBufferMonitor) stops the run with its message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilec::runtime {

struct BarrierState {
  std::string name;
  int64_t expected_arrivals = 1;
  int64_t pending_arrivals = 1;  // arrivals still missing for the current phase
  int64_t completed_phases = 0;  // phases 0 .. completed_phases-1 have completed
};

class CtaBarriers {
 public:
  // Adds a barrier; returns its id.
  int add(std::string name, int64_t expected_arrivals);
  // Counts `count` arrivals on the current phase; completes it (and starts the next) when the
  // expected number has arrived.
  void arrive(int barrier, int64_t count = 1);
  bool phase_completed(int barrier, int64_t phase) const {
    return barriers_[static_cast<size_t>(barrier)].completed_phases > phase;
  }
  // The phase arrivals currently count toward.
  int64_t current_phase(int barrier) const { return barriers_[static_cast<size_t>(barrier)].completed_phases; }
  const BarrierState& state(int barrier) const { return barriers_[static_cast<size_t>(barrier)]; }
  size_t size() const { return barriers_.size(); }

 private:
  std::vector<BarrierState> barriers_;
};

enum class AgentStatus { runnable, blocked, finished, failed };

struct AgentStep {
  AgentStatus status = AgentStatus::finished;
  int barrier = -1;  // when blocked: the barrier and the phase it waits for
  int64_t phase = 0;
  std::string error;  // when failed (a race, an op that cannot run): what happened

  static AgentStep yielded() { return {AgentStatus::runnable, -1, 0, {}}; }
  static AgentStep blocked_on(int barrier, int64_t phase) { return {AgentStatus::blocked, barrier, phase, {}}; }
  static AgentStep finished() { return {AgentStatus::finished, -1, 0, {}}; }
  static AgentStep failed(std::string error) { return {AgentStatus::failed, -1, 0, std::move(error)}; }
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string name() const = 0;
  // Continues from where the agent last stopped (the scheduler resumes a blocked agent only
  // after the phase it waited for has completed). Returns why it stopped.
  virtual AgentStep resume(CtaBarriers& barriers) = 0;
};

struct BlockedAgent {
  std::string agent;
  std::string barrier;
  int64_t phase = 0;             // the phase it waits for
  int64_t current_phase = 0;     // the barrier's phase in progress
  int64_t missing_arrivals = 0;  // arrivals the current phase still needs
};

struct DeadlockReport {
  std::vector<BlockedAgent> blocked;
  // "deadlock: agent 'producer' waits for phase 0 of barrier 'empty[1]' (...); ..."
  std::string describe() const;
};

struct CtaRunResult {
  bool ok = true;
  std::optional<DeadlockReport> deadlock;
  // The deadlock description, "agent 'x': <its error>" for a failed agent, or the resume limit.
  std::string message;
  int64_t resumes = 0;
};

// Watches the multi-stage shared-memory buffers of a pipelined CTA. Each stage cycles
// empty → filling → full → (read by `readers` agents, each releasing it) → empty. Each call
// returns an empty string when the access is legal and otherwise describes the race: a read of
// a stage that is not full (read before it is filled), a fill of a stage that is not empty
// (overwritten while in use), a release by an agent that did not read it.
class StageBufferMonitor {
 public:
  int add(std::string name, int stages, int readers = 1);
  std::string begin_fill(int buffer, int stage, const std::string& agent);
  std::string end_fill(int buffer, int stage, const std::string& agent);
  std::string read(int buffer, int stage, const std::string& agent);
  std::string release(int buffer, int stage, const std::string& agent);

 private:
  enum class StageState { empty, filling, full };
  struct Stage {
    StageState state = StageState::empty;
    std::string writer;                // the agent filling it
    std::vector<std::string> readers;  // agents that read the current fill and have not released
    int released = 0;
    int64_t fills = 0;                 // completed fills, for messages
  };
  struct Buffer {
    std::string name;
    int readers;
    std::vector<Stage> stages;
  };
  Stage* find(int buffer, int stage, std::string& error);
  std::string where(int buffer, int stage) const;
  std::vector<Buffer> buffers_;
};

class CtaScheduler {
 public:
  explicit CtaScheduler(CtaBarriers& barriers) : barriers_(barriers) {}
  void add_agent(Agent& agent);
  // Runs every agent to completion or to a deadlock. `max_resumes` bounds agents that keep
  // yielding without ever blocking or finishing (reported as an error, not a deadlock).
  CtaRunResult run(int64_t max_resumes = 1'000'000);

 private:
  struct Slot {
    Agent* agent;
    AgentStep last;
  };
  CtaBarriers& barriers_;
  std::vector<Slot> slots_;
};

}  // namespace tilec::runtime
