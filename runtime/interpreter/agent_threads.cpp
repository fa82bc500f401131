// runtime/interpreter/agent_threads.cpp — warp_specialize: registers the agents, runs each on
// its own thread under the baton, and turns "nobody can run" into a deadlock report.
//
// Cost: one thread per agent per warp_specialize run and two condition-variable hand-overs
// per park; the work inside an agent runs at the interpreter's normal speed.
#include "runtime/interpreter/agent_threads.h"

#include <fmt/core.h>

#include <exception>
#include <memory>

#include "runtime/interpreter/cta_state.h"

namespace tilec::runtime::detail {

void AgentThreads::add(TileExecution& execution, const Region& body) {
  Slot slot;
  slot.execution = &execution;
  slot.body = &body;
  slots_.push_back(std::move(slot));
}

size_t AgentThreads::slot_of(const TileExecution& execution) const {
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].execution == &execution) return i;
  return kScheduler;
}

void AgentThreads::agent_main(size_t index) {
  Slot& slot = slots_[index];
  bool aborted;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return running_ == index; });
    aborted = abort_;
  }
  bool ok = false;
  std::string crash;
  if (!aborted) {
    try {
      std::vector<RuntimeValue> yielded;
      ok = slot.execution->run_ops(*slot.body, 0, &yielded);
    } catch (const std::exception& e) {
      crash = fmt::format("internal error in the interpreter: {}", e.what());
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  slot.finished = true;
  slot.ok = ok;
  slot.crash = std::move(crash);
  running_ = kScheduler;
  changed_.notify_all();
}

bool AgentThreads::park(TileExecution& execution, const Operation& op, std::function<bool()> ready,
                        std::function<std::string()> blocked) {
  size_t index = slot_of(execution);
  if (index == kScheduler) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  if (abort_) return false;
  Slot& slot = slots_[index];
  slot.parked = true;
  slot.waiting_op = &op;
  slot.ready = std::move(ready);
  slot.blocked = std::move(blocked);
  running_ = kScheduler;
  changed_.notify_all();
  changed_.wait(lock, [&] { return running_ == index; });
  slot.parked = false;
  return !abort_;
}

void AgentThreads::hand_over(size_t index) {
  std::unique_lock<std::mutex> lock(mutex_);
  running_ = index;
  changed_.notify_all();
  changed_.wait(lock, [&] { return running_ == kScheduler; });
}

bool AgentThreads::run(OpError& error) {
  bool ok = true;
  size_t started = 0;
  try {
    for (; started < slots_.size(); ++started)
      slots_[started].thread = std::thread([this, started] { agent_main(started); });
  } catch (const std::exception& e) {
    ok = false;
    error = {{}, fmt::format("internal error in the interpreter: cannot start an agent thread: {}", e.what())};
  }
  try {
    schedule(ok, error);
  } catch (const std::exception& e) {  // never leave a thread unjoined
    ok = false;
    error = {{}, fmt::format("internal error in the interpreter: {}", e.what())};
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    abort_ = !ok;
  }
  for (size_t i = 0; i < started; ++i)
    if (!slots_[i].finished) hand_over(i);
  for (size_t i = 0; i < started; ++i) slots_[i].thread.join();
  return ok;
}

void AgentThreads::schedule(bool& ok, OpError& error) {
  while (ok) {
    bool progressed = false, unfinished = false;
    for (size_t i = 0; i < slots_.size() && ok; ++i) {
      Slot& slot = slots_[i];
      if (slot.finished) continue;
      unfinished = true;
      if (slot.parked && !slot.ready()) continue;
      progressed = true;
      hand_over(i);
      if (slot.finished && !slot.ok) {
        ok = false;
        CtaState& cta = slot.execution->cta();
        const std::string& name = cta.agents[static_cast<size_t>(slot.execution->agent())].name;
        std::string message = slot.crash.empty() ? slot.execution->error().message : slot.crash;
        if (message.rfind("race:", 0) != 0 && message.rfind("deadlock:", 0) != 0)
          message = fmt::format("agent '{}': {}", name, message);
        error = {slot.execution->error().location, std::move(message)};
      }
    }
    if (!ok || !unfinished) break;
    if (progressed) continue;
    ok = false;
    std::string report = "deadlock:";
    bool first = true;
    for (const Slot& slot : slots_) {
      if (!slot.parked) continue;
      const std::string& name = slot.execution->cta().agents[static_cast<size_t>(slot.execution->agent())].name;
      Location at = slot.waiting_op->location();
      if (first) error.location = at;
      report += fmt::format("{} agent '{}' at {}:{} {}", first ? "" : ";", name, at.line, at.column, slot.blocked());
      first = false;
    }
    error.message = std::move(report);
  }
}

bool TileExecution::execute_warp_specialize(const Operation& op) {
  if (cta_->threads) return fail(op, "cannot run inside another warp_specialize");
  if (op.num_regions() != 1) return fail(op, "needs one region");
  std::vector<std::unique_ptr<TileExecution>> executions;
  AgentThreads threads;
  for (const auto& inner : op.region().operations()) {
    if (inner->kind() == OpKind::yield) break;
    if (inner->kind() != OpKind::agent || inner->num_regions() != 1)
      return fail(*inner, "only agent ops (with one region) may sit in a warp_specialize");
    std::string name = inner->string_attr("name");
    int64_t agent_threads = inner->int_attr("threads", 128);
    if (name.empty() || agent_threads < 1) return fail(*inner, "needs a 'name' and a positive 'threads'");
    // An agent keeps its observations across runs of the same warp_specialize (by name).
    size_t index = 1;
    while (index < cta_->agents.size() && cta_->agents[index].name != name) ++index;
    if (index == cta_->agents.size()) cta_->agents.push_back({name, agent_threads, {}, {}});
    for (const auto& other : executions)
      if (other->agent() == static_cast<int>(index)) return fail(*inner, fmt::format("agent '{}' appears twice", name));
    executions.push_back(std::make_unique<TileExecution>(*this, static_cast<int>(index)));
    threads.add(*executions.back(), inner->region());
  }
  cta_->threads = &threads;
  OpError error;
  bool ok = threads.run(error);
  cta_->threads = nullptr;
  if (ok)
    for (const auto& execution : executions) {
      const AgentState& agent = cta_->agents[static_cast<size_t>(execution->agent())];
      if (!agent.in_flight.empty())
        return fail(op, fmt::format("agent '{}' finished with {} async mma(s) in flight (no mma_wait {{pending = 0}} "
                                    "after its last)", agent.name, agent.in_flight.size()));
    }
  if (ok) return true;
  if (!error.location.known()) error.location = op.location();
  return fail_report(error.location, std::move(error.message));
}

}  // namespace tilec::runtime::detail
