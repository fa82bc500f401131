// runtime/worker.cpp — the worker loop; see worker.h and docs/runtime.md.
#include "runtime/worker.h"

#include <bit>
#include <chrono>

#include "runtime/executor.h"
#include "runtime/process.h"

namespace tilec::runtime {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Waits for other threads without burning a shared core forever: pause, then yield.
inline void back_off(unsigned& round) {
  if (++round < 64) {
    cpu_relax();
  } else {
    std::this_thread::yield();
  }
}

}  // namespace

Worker::Worker(Executor& executor, unsigned index)
    : executor_(executor), index_(index), scan_position_(index % Executor::compute_slot_count) {}

void Worker::start() { thread_ = std::thread([this] { run(); }); }

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::run() {
  while (!executor_.exit_requested_.load(std::memory_order_acquire)) {
    // Read the epoch before scanning: work published after this load changes it, so an idle
    // worker that saw nothing cannot miss that work (it compares before parking).
    const std::uint64_t seen_epoch = executor_.work_epoch_.load(std::memory_order_seq_cst);
    if (drain_compute()) {
      // Drain boundary: one load tells whether immediate work waits; take one item if so, so
      // a long compute launch cannot starve queue management or coroutine processes.
      drain_immediate();
      continue;
    }
    if (drain_immediate()) continue;
    if (executor_.overflow_.pending() > 0) {
      executor_.promote_overflow();
      continue;
    }
    idle(seen_epoch);
  }
}

bool Worker::drain_compute() {
  for (unsigned step = 0; step < Executor::compute_slot_count; ++step) {
    const unsigned slot_index = (scan_position_ + step) % Executor::compute_slot_count;
    auto& slot = executor_.slots_[slot_index];
    Process* process = slot.process.load(std::memory_order_relaxed);
    if (process == nullptr || process == Executor::retiring_marker()) continue;
    // Announce the visit before loading the occupant for real: a retiring worker that replaced
    // the occupant afterwards waits for us to leave before finishing (and freeing) it.
    slot.visitors.fetch_add(1, std::memory_order_seq_cst);
    process = slot.process.load(std::memory_order_seq_cst);
    bool worked = false;
    if (process != nullptr && process != Executor::retiring_marker() &&
        process->state_.load(std::memory_order_acquire) == ProcessState::runnable) {
      worked = run_compute(*process, slot_index);
    }
    slot.visitors.fetch_sub(1, std::memory_order_release);
    if (worked) {
      scan_position_ = slot_index;
      return true;
    }
  }
  return false;
}

bool Worker::run_compute(Process& process, unsigned slot_index) {
  if (executor_.stopping_.load(std::memory_order_acquire)) process.cancel();
  if (!process.has_error()) {
    DrainContext context{executor_, process, index_};
    const DrainResult result = process.drain(context);
    if (!result.completed && !process.has_error()) return result.did_work;
  }
  // Completed, failed or cancelled: exactly one worker wins the right to retire it.
  ProcessState expected = ProcessState::runnable;
  if (!process.state_.compare_exchange_strong(expected, ProcessState::completing,
                                              std::memory_order_acq_rel)) {
    return true;
  }
  retire(process, slot_index);
  return true;
}

void Worker::retire(Process& process, unsigned slot_index) {
  auto& slot = executor_.slots_[slot_index];
  // New scanners now skip the slot; wait for those already inside (we are one of them).
  // They only return from drain(): the process reported completion, so no work is left.
  slot.process.store(Executor::retiring_marker(), std::memory_order_seq_cst);
  unsigned round = 0;
  while (slot.visitors.load(std::memory_order_seq_cst) > 1) back_off(round);
  executor_.aggregate_budget_.fetch_sub(process.accounted_budget_, std::memory_order_relaxed);
  executor_.finish(process);  // the owner may destroy `process` from here on
  slot.process.store(nullptr, std::memory_order_release);
  if (executor_.overflow_.pending() > 0) executor_.promote_overflow();
}

bool Worker::drain_immediate() {
  ImmediateList& list = executor_.immediate_;
  if (list.pending() == 0) return false;  // the common case: one load
  if (!list.try_acquire_consumer()) return false;
  Process* process = list.pop();
  list.release_consumer();
  if (process == nullptr) return false;  // a push still linking; idle() sees it pending
  run_immediate(*process);
  return true;
}

void Worker::run_immediate(Process& process) {
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

void Worker::idle(std::uint64_t seen_epoch) {
  executor_.spinning_.fetch_add(1, std::memory_order_seq_cst);
  const auto busy_workers = static_cast<std::int64_t>(
      executor_.worker_count() -
      static_cast<unsigned>(std::popcount(executor_.parked_mask_.load(std::memory_order_relaxed))));
  const auto spin = executor_.aggregate_budget_.load(std::memory_order_relaxed) > busy_workers
                        ? executor_.options_.busy_spin
                        : executor_.options_.warm_spin;
  const auto deadline = std::chrono::steady_clock::now() + spin;
  unsigned round = 0;
  for (;;) {
    if (executor_.has_work(seen_epoch) || executor_.exit_requested_.load(std::memory_order_acquire)) {
      executor_.spinning_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    if ((++round & 15) == 0 && std::chrono::steady_clock::now() >= deadline) break;
    cpu_relax();
    if ((round & 255) == 0) std::this_thread::yield();
  }
  executor_.spinning_.fetch_sub(1, std::memory_order_seq_cst);
  park(seen_epoch);
}

void Worker::park(std::uint64_t seen_epoch) {
  const std::uint64_t bit = std::uint64_t{1} << index_;
  park_word.store(0, std::memory_order_relaxed);
  executor_.parked_mask_.fetch_or(bit, std::memory_order_seq_cst);
  // Dekker pairing with Executor::announce_work (seq_cst RMW, then seq_cst loads on both sides):
  // we publish "parked", then look for work; the announcer publishes work (the epoch), then
  // looks for parked workers. In the single order of seq_cst operations one sees the other.
  if (executor_.has_work(seen_epoch) || executor_.exit_requested_.load(std::memory_order_seq_cst)) {
    if (executor_.parked_mask_.fetch_and(~bit, std::memory_order_seq_cst) & bit) return;
    // A waker claimed us already and is about to store park_word: take its wake below.
  }
  while (park_word.load(std::memory_order_acquire) == 0) {
    park_word.wait(0, std::memory_order_acquire);
  }
  take_wake_share();
}

void Worker::take_wake_share() {
  for (unsigned share = 0; share < executor_.options_.wake_fanout; ++share) {
    std::uint32_t pending = executor_.pending_wakes_.load(std::memory_order_relaxed);
    do {
      if (pending == 0) return;
    } while (!executor_.pending_wakes_.compare_exchange_weak(pending, pending - 1,
                                                             std::memory_order_acq_rel));
    if (!executor_.wake_one_parked()) {
      executor_.pending_wakes_.store(0, std::memory_order_relaxed);  // nobody left to wake
      return;
    }
  }
}

}  // namespace tilec::runtime
