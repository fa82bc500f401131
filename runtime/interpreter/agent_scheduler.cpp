// runtime/interpreter/agent_scheduler.cpp — barrier phases and the round-robin CTA scheduler.
//
// Each round visits the agents in insertion order and resumes those that are runnable: never
// started, yielded, or blocked on a phase that has since completed. A round that resumes no
// agent while some are unfinished is a deadlock (no arrival can happen any more, since only
// agents arrive). Cost per round: O(agents); total work is bounded by `max_resumes`.
#include "runtime/interpreter/agent_scheduler.h"

#include <fmt/core.h>

#include <algorithm>

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
      if (slot.last.status == AgentStatus::failed) {
        result.ok = false;
        result.message = fmt::format("agent '{}': {}", slot.agent->name(), slot.last.error);
        return result;
      }
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

int StageBufferMonitor::add(std::string name, int stages, int readers) {
  buffers_.push_back({std::move(name), readers < 1 ? 1 : readers,
                      std::vector<Stage>(static_cast<size_t>(stages < 1 ? 1 : stages))});
  return static_cast<int>(buffers_.size() - 1);
}

std::string StageBufferMonitor::where(int buffer, int stage) const {
  return fmt::format("stage {} of buffer '{}'", stage, buffers_[static_cast<size_t>(buffer)].name);
}

StageBufferMonitor::Stage* StageBufferMonitor::find(int buffer, int stage, std::string& error) {
  if (buffer < 0 || static_cast<size_t>(buffer) >= buffers_.size()) {
    error = fmt::format("unknown stage buffer {}", buffer);
    return nullptr;
  }
  auto& stages = buffers_[static_cast<size_t>(buffer)].stages;
  if (stage < 0 || static_cast<size_t>(stage) >= stages.size()) {
    error = fmt::format("buffer '{}' has no stage {}", buffers_[static_cast<size_t>(buffer)].name, stage);
    return nullptr;
  }
  return &stages[static_cast<size_t>(stage)];
}

std::string StageBufferMonitor::begin_fill(int buffer, int stage, const std::string& agent) {
  std::string error;
  Stage* s = find(buffer, stage, error);
  if (!s) return error;
  if (s->state == StageState::filling)
    return fmt::format("race: {} fills {} while {} is filling it", agent, where(buffer, stage), s->writer);
  if (s->state == StageState::full) {
    int readers = buffers_[static_cast<size_t>(buffer)].readers;
    return fmt::format("race: {} overwrites {} while it is in use (fill {} released by {} of {} readers)",
                       agent, where(buffer, stage), s->fills, s->released, readers);
  }
  s->state = StageState::filling;
  s->writer = agent;
  return {};
}

std::string StageBufferMonitor::end_fill(int buffer, int stage, const std::string& agent) {
  std::string error;
  Stage* s = find(buffer, stage, error);
  if (!s) return error;
  if (s->state != StageState::filling || s->writer != agent)
    return fmt::format("{} completes a fill of {} it did not begin", agent, where(buffer, stage));
  s->state = StageState::full;
  s->readers.clear();
  s->released = 0;
  ++s->fills;
  return {};
}

std::string StageBufferMonitor::read(int buffer, int stage, const std::string& agent) {
  std::string error;
  Stage* s = find(buffer, stage, error);
  if (!s) return error;
  if (s->state != StageState::full)
    return fmt::format("race: {} reads {} before it is filled ({})", agent, where(buffer, stage),
                       s->state == StageState::filling ? "its fill is in progress" : "it is empty");
  s->readers.push_back(agent);
  return {};
}

std::string StageBufferMonitor::release(int buffer, int stage, const std::string& agent) {
  std::string error;
  Stage* s = find(buffer, stage, error);
  if (!s) return error;
  auto reader = std::find(s->readers.begin(), s->readers.end(), agent);
  if (s->state != StageState::full || reader == s->readers.end())
    return fmt::format("{} releases {} without having read it", agent, where(buffer, stage));
  s->readers.erase(reader);
  if (++s->released == buffers_[static_cast<size_t>(buffer)].readers) s->state = StageState::empty;
  return {};
}

}  // namespace tilec::runtime
