// runtime/interpreter/agent_scheduler.cpp — barrier phases and the round-robin CTA scheduler.
//
// Each round visits the agents in insertion order and resumes those that are runnable: never
// started, yielded, or blocked on a phase that has since completed. A round that resumes no
// agent while some are unfinished is a deadlock (no arrival can happen any more, since only
// agents arrive). Cost per round: O(agents); total work is bounded by `max_resumes`.
#include "runtime/interpreter/agent_scheduler.h"

#include <fmt/core.h>

namespace tilec::runtime {

int CtaBarriers::add(std::string name, int64_t expected_arrivals) {
  if (expected_arrivals < 1) expected_arrivals = 1;
  barriers_.push_back({std::move(name), expected_arrivals, expected_arrivals, 0});
  return static_cast<int>(barriers_.size() - 1);
}

void CtaBarriers::arrive(int barrier, int64_t count) {
  BarrierState& state = barriers_[static_cast<size_t>(barrier)];
  state.pending_arrivals -= count;
  while (state.pending_arrivals <= 0) {  // surplus arrivals count toward the next phase
    ++state.completed_phases;
    state.pending_arrivals += state.expected_arrivals;
  }
}

std::string DeadlockReport::describe() const {
  std::string text = "deadlock:";
  for (size_t i = 0; i < blocked.size(); ++i) {
    const BlockedAgent& b = blocked[i];
    text += fmt::format("{} agent '{}' waits for phase {} of barrier '{}' (phase {} in progress, "
                        "{} arrival{} missing)",
                        i ? ";" : "", b.agent, b.phase, b.barrier, b.current_phase,
                        b.missing_arrivals, b.missing_arrivals == 1 ? "" : "s");
  }
  return text;
}

void CtaScheduler::add_agent(Agent& agent) { slots_.push_back({&agent, AgentStep::yielded()}); }

CtaRunResult CtaScheduler::run(int64_t max_resumes) {
  CtaRunResult result;
  while (true) {
    bool resumed_any = false, unfinished = false;
    for (Slot& slot : slots_) {
      if (slot.last.status == AgentStatus::finished) continue;
      unfinished = true;
      if (slot.last.status == AgentStatus::blocked &&
          !barriers_.phase_completed(slot.last.barrier, slot.last.phase))
        continue;
      if (result.resumes >= max_resumes) {
        result.ok = false;
        result.message = fmt::format("agents still running after {} resumes (an agent that never "
                                     "blocks or finishes?)", max_resumes);
        return result;
      }
      ++result.resumes;
      resumed_any = true;
      slot.last = slot.agent->resume(barriers_);
      if (slot.last.status == AgentStatus::blocked &&
          (slot.last.barrier < 0 || static_cast<size_t>(slot.last.barrier) >= barriers_.size())) {
        result.ok = false;
        result.message = fmt::format("agent '{}' waits on unknown barrier {}", slot.agent->name(), slot.last.barrier);
        return result;
      }
    }
    if (!unfinished) return result;
    if (resumed_any) continue;
    DeadlockReport report;
    for (const Slot& slot : slots_) {
      if (slot.last.status != AgentStatus::blocked) continue;
      const BarrierState& state = barriers_.state(slot.last.barrier);
      report.blocked.push_back({slot.agent->name(), state.name, slot.last.phase,
                                state.completed_phases, state.pending_arrivals});
    }
    result.ok = false;
    result.message = report.describe();
    result.deadlock = std::move(report);
    return result;
  }
}

}  // namespace tilec::runtime
