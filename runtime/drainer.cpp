// runtime/drainer.cpp — draining compute slots and the immediate list; see drainer.h and
// docs/runtime.md (memory orders).
#include "runtime/drainer.h"

#include "runtime/executor.h"
#include "runtime/process.h"
#include "runtime/spin.h"

namespace tilec::runtime {

Drainer::Drainer(Executor& executor, unsigned index)
    : executor_(executor), index_(index), scan_position_(index % Executor::compute_slot_count) {}

bool Drainer::step() {
  if (drain_compute()) {
    // Drain boundary: one load tells whether immediate work waits; take one item if so, so
    // a long compute launch cannot starve queue management or coroutine processes.
    drain_immediate();
    return true;
  }
  if (drain_immediate()) return true;
  if (executor_.overflow_.pending() > 0) {
    executor_.promote_overflow();
    return true;
  }
  return false;
}

bool Drainer::drain_compute() {
  for (unsigned step = 0; step < Executor::compute_slot_count; ++step) {
    const unsigned slot_index = (scan_position_ + step) % Executor::compute_slot_count;
    auto& slot = executor_.slots_[slot_index];
    Process* process = slot.process.load(std::memory_order_relaxed);
    if (process == nullptr || process == Executor::retiring_marker()) continue;
    // Announce the visit before loading the occupant for real: a retiring drainer that replaced
    // the occupant afterwards waits for us to leave before finishing (and freeing) it.
    slot.visitors.fetch_add(1, std::memory_order_seq_cst);
    process = slot.process.load(std::memory_order_seq_cst);
    ComputeOutcome outcome = ComputeOutcome::idle;
    if (process != nullptr && process != Executor::retiring_marker()) {
      // Stay for further drain calls while they find work and no immediate process waits: one
      // visit (two read-modify-writes on the shared slot) then covers a whole run of calls.
      do {
        if (process->state_.load(std::memory_order_acquire) != ProcessState::runnable) break;
        const ComputeOutcome call = run_compute(*process, slot_index);
        if (call == ComputeOutcome::idle) break;
        outcome = call;
      } while (outcome == ComputeOutcome::worked && executor_.immediate_.pending() == 0);
    }
    if (outcome != ComputeOutcome::retired) slot.visitors.fetch_sub(1, std::memory_order_release);
    if (outcome != ComputeOutcome::idle) {
      scan_position_ = slot_index;
      return true;
    }
  }
  return false;
}

Drainer::ComputeOutcome Drainer::run_compute(Process& process, unsigned slot_index) {
  if (executor_.stopping_.load(std::memory_order_acquire)) process.cancel();
  if (!process.has_error()) {
    DrainContext context{executor_, process, index_};
    const DrainResult result = process.drain(context);
    if (!result.completed && !process.has_error()) {
      if (!result.did_work) return ComputeOutcome::idle;
      // Work is left after a call of Executor::run's caller: time to wake the parked workers.
      if (process.wakes_deferred()) executor_.release_deferred_wakes(process);
      return ComputeOutcome::worked;
    }
  }
  // Completed, failed or cancelled: exactly one drainer wins the right to retire it.
  ProcessState expected = ProcessState::runnable;
  if (!process.state_.compare_exchange_strong(expected, ProcessState::completing,
                                              std::memory_order_acq_rel)) {
    return ComputeOutcome::finished_elsewhere;
  }
  retire(process, slot_index);
  return ComputeOutcome::retired;
}

void Drainer::retire(Process& process, unsigned slot_index) {
  auto& slot = executor_.slots_[slot_index];
  // New scanners now skip the slot; wait for those already inside. They only return from
  // drain(): the process reported completion, so no work is left. Our own visit ends here.
  slot.process.store(Executor::retiring_marker(), std::memory_order_seq_cst);
  unsigned round = 0;
  while (slot.visitors.load(std::memory_order_seq_cst) > 1) back_off(round);
  slot.visitors.fetch_sub(1, std::memory_order_relaxed);
  executor_.aggregate_budget_.fetch_sub(process.accounted_budget_, std::memory_order_relaxed);
  executor_.finish(process);  // the owner may destroy `process` from here on
  slot.process.store(nullptr, std::memory_order_release);
  if (executor_.overflow_.pending() > 0) executor_.promote_overflow();
}

bool Drainer::drain_immediate() {
  ImmediateList& list = executor_.immediate_;
  if (list.pending() == 0) return false;  // the common case: one load
  if (!list.try_acquire_consumer()) return false;
  Process* process = list.pop();
  list.release_consumer();
  if (process == nullptr) return false;  // a push still linking; idle() sees it pending
  run_immediate(*process);
  return true;
}

void Drainer::run_immediate(Process& process) {
  if (executor_.stopping_.load(std::memory_order_acquire)) process.cancel();
  if (!process.has_error()) {
    // The drain hold: waits registered inside drain() cannot reactivate the process before
    // this call returns; releasing it below requeues the process if nothing else holds it.
    process.suspend_count_.fetch_add(1, std::memory_order_relaxed);
    DrainContext context{executor_, process, index_};
    const DrainResult result = process.drain(context);
    if (!result.completed) {
      process.state_.store(ProcessState::suspended, std::memory_order_release);
      process.release_suspension();  // an error recorded meanwhile completes it next entry
      return;
    }
  }
  process.state_.store(ProcessState::completing, std::memory_order_release);
  executor_.finish(process);
}

}  // namespace tilec::runtime
