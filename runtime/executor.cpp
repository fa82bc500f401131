// runtime/executor.cpp — activation, completion, wake fan-out and teardown; see executor.h.
#include "runtime/executor.h"

#include <algorithm>
#include <bit>
#include <thread>

#include "runtime/drainer.h"
#include "runtime/process.h"
#include "runtime/spin.h"
#include "runtime/timeline_semaphore.h"
#include "runtime/worker.h"

namespace tilec::runtime {

Executor::Executor(ExecutorOptions options) : options_(options) {
  unsigned count = options_.worker_count;
  if (count == 0) count = std::max(1u, std::thread::hardware_concurrency());
  count = std::min(count, max_workers);
  options_.worker_count = count;
  workers_.reserve(count);
  for (unsigned index = 0; index < count; ++index) {
    workers_.push_back(std::make_unique<Worker>(*this, index));
  }
  for (auto& worker : workers_) worker->start();
}

Executor::~Executor() { shutdown(std::chrono::seconds(1)); }

void Executor::submit(Process& process) {
  process.executor_ = this;
  process.submitted_ = true;
  submitted_.fetch_add(1, std::memory_order_relaxed);
  process.release_suspension();
}

void Executor::activate(Process& process, bool caller_helps) {
  if (exit_requested_.load(std::memory_order_acquire)) {
    // No worker will ever look at it again: complete it here, as cancelled.
    process.cancel();
    process.state_.store(ProcessState::completing, std::memory_order_release);
    finish(process);
    return;
  }
  process.state_.store(ProcessState::runnable, std::memory_order_release);
  const std::uint32_t budget = process.wake_budget();
  const std::uint32_t wakes = std::min<std::uint32_t>(budget, worker_count());
  // Executor::run's caller starts alone when the last launch it ran was short: no worker is
  // told (no epoch bump, no wake) until the caller releases the deferred announcement. Set
  // before queueing: whoever drains the process may release it at once.
  const bool alone = caller_helps && budget > 1 &&
                     last_launch_ns_.load(std::memory_order_relaxed) <= options_.help_alone.count();
  if (alone) process.deferred_wakes_.store(wakes, std::memory_order_relaxed);
  if (budget <= 1) {
    immediate_.push(process.link_);  // `process` may already be running elsewhere after this
  } else {
    process.accounted_budget_ = budget;
    aggregate_budget_.fetch_add(budget, std::memory_order_relaxed);
    if (!try_place_in_slot(process)) overflow_.push(process.link_);
  }
  if (alone) return;
  if (budget <= 1) {
    // The push's seq_cst increment of `pending` is the announcement (Worker::park reads it),
    // so the epoch line, which every worker reads on every loop, is left alone.
    if (parked_mask_.load(std::memory_order_seq_cst) != 0) request_wake(wakes);
  } else {
    announce_work(wakes);
  }
}

void Executor::release_deferred_wakes(const Process& process) {
  if (process.deferred_wakes_.load(std::memory_order_relaxed) == 0) return;
  const std::uint32_t wakes = process.deferred_wakes_.exchange(0, std::memory_order_relaxed);
  if (wakes != 0) announce_work(wakes);
}

void Executor::run(Process& process) {
  if (Worker::current_thread_is_worker() || exit_requested_.load(std::memory_order_acquire) ||
      !take_helper_seat()) {
    submit(process);
    process.block_until_done();
    return;
  }
  process.executor_ = this;
  process.submitted_ = true;
  submitted_.fetch_add(1, std::memory_order_relaxed);
  // Only the submission hold left (no dependency or semaphore holds one): nobody else can
  // touch the suspend count, so this thread is the activator.
  if (process.suspend_count_.load(std::memory_order_acquire) == 1) {
    process.suspend_count_.store(0, std::memory_order_relaxed);
    if (process.wake_budget() <= 1) {
      process.state_.store(ProcessState::runnable, std::memory_order_relaxed);
      Drainer(*this, worker_count()).run_now(process);  // completes, or suspends and requeues
    } else {
      // Timed, from activation to completion: it decides whether the next launch starts alone.
      const auto start = std::chrono::steady_clock::now();
      activate(process, /*caller_helps=*/true);
      help_until_done(process);
      last_launch_ns_.store((std::chrono::steady_clock::now() - start).count(), std::memory_order_relaxed);
      return;
    }
  } else {
    process.release_suspension();  // activated later, by whoever releases the last hold
  }
  help_until_done(process);
}

bool Executor::take_helper_seat() {
  return !helper_seat_taken_.load(std::memory_order_relaxed) &&
         !helper_seat_taken_.exchange(true, std::memory_order_acquire);
}

void Executor::wait_helping(const Process& process) {
  if (Worker::current_thread_is_worker() || !take_helper_seat()) {
    process.block_until_done();
    return;
  }
  help_until_done(process);
}

void Executor::help_until_done(const Process& process) {
  Drainer drainer(*this, worker_count());
  while (!process.done()) {
    // As in Worker::run: the epoch read before the scan tells whether work came in after it.
    const std::uint64_t seen_epoch = work_epoch_.load(std::memory_order_seq_cst);
    if (drainer.step()) continue;
    // Nothing runnable: the rest of the process is in workers' hands, or it is suspended.
    const auto deadline = std::chrono::steady_clock::now() + options_.help_spin;
    unsigned round = 0;
    while (!process.done() && !has_work(seen_epoch)) {
      if ((++round & 15) == 0 && std::chrono::steady_clock::now() >= deadline) {
        // Going to sleep: nobody may be left waiting for this thread's help.
        release_deferred_wakes(process);
        helper_seat_taken_.store(false, std::memory_order_release);
        process.block_until_done();
        return;
      }
      cpu_relax();
      if ((round & 255) == 0) std::this_thread::yield();
    }
  }
  helper_seat_taken_.store(false, std::memory_order_release);
}

bool Executor::try_place_in_slot(Process& process) {
  const unsigned start = slot_hint_.fetch_add(1, std::memory_order_relaxed);
  for (unsigned step = 0; step < compute_slot_count; ++step) {
    ComputeSlot& slot = slots_[(start + step) % compute_slot_count];
    Process* expected = nullptr;
    // release: a worker that loads the pointer sees the process fully set up.
    if (slot.process.compare_exchange_strong(expected, &process, std::memory_order_seq_cst,
                                             std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void Executor::promote_overflow() {
  if (overflow_.pending() == 0 || !overflow_.try_acquire_consumer()) return;
  std::uint32_t placed = 0;
  while (Process* process = overflow_.pop()) {
    // Read before placing: once in a slot the process may run, complete and be destroyed.
    const std::uint32_t budget = process->accounted_budget_;
    if (!try_place_in_slot(*process)) {
      overflow_.push(process->link_);  // all slots busy: the next retirement promotes it
      break;
    }
    placed += budget;
  }
  overflow_.release_consumer();
  if (placed > 0) announce_work(std::min<std::uint32_t>(placed, worker_count()));
}

void Executor::finish(Process& process) {
  const Status* error = process.error_.load(std::memory_order_acquire);
  for (const auto& [semaphore, value] : process.signals_) {
    if (error) {
      semaphore->fail(*error);
    } else {
      semaphore->signal(value);
    }
  }
  for (Process* dependent : process.dependents_) {
    if (error) dependent->inherit(*error);
    dependent->release_suspension();
  }
  completed_.fetch_add(1, std::memory_order_acq_rel);
  // Last touch: after this store the owner may destroy the process. notify_all only hands the
  // address to the futex call; it reads no memory of the process.
  process.state_.store(ProcessState::completed, std::memory_order_release);
  process.state_.notify_all();
}

std::int64_t Executor::unfinished() const {
  // Completed first: every process counted there was counted as submitted before it ran.
  const std::int64_t completed = completed_.load(std::memory_order_acquire);
  return std::max<std::int64_t>(0, submitted_.load(std::memory_order_acquire) - completed);
}

bool Executor::has_work(std::uint64_t seen_epoch) const {
  return work_epoch_.load(std::memory_order_seq_cst) != seen_epoch || immediate_.pending() > 0 ||
         overflow_.pending() > 0;
}

void Executor::announce_work(std::uint32_t count) {
  count = std::min(count, worker_count());
  // Dekker pairing with Worker::park, all seq_cst (no fences, so ThreadSanitizer follows it):
  // bump the epoch, then look for parked workers; a parker sets its bit, then reads the epoch.
  work_epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (parked_mask_.load(std::memory_order_seq_cst) == 0) return;  // all awake: they see the epoch
  request_wake(count);
}

void Executor::request_wake(std::uint32_t count) {
  const std::uint32_t spinning = spinning_.load(std::memory_order_seq_cst);
  if (spinning >= count) return;  // spinning workers see the new epoch before they park
  count -= spinning;
  if (count > 1) {
    // Leave the rest to the wake tree: every woken worker wakes `wake_fanout` more.
    std::uint32_t pending = pending_wakes_.load(std::memory_order_relaxed);
    std::uint32_t wanted;
    do {
      wanted = std::min<std::uint32_t>(pending + count - 1, worker_count());
    } while (!pending_wakes_.compare_exchange_weak(pending, wanted, std::memory_order_acq_rel));
  }
  wake_one_parked();
}

bool Executor::wake_one_parked() {
  std::uint64_t mask = parked_mask_.load(std::memory_order_seq_cst);
  while (mask != 0) {
    const unsigned index = static_cast<unsigned>(std::countr_zero(mask));
    const std::uint64_t bit = std::uint64_t{1} << index;
    if (parked_mask_.fetch_and(~bit, std::memory_order_seq_cst) & bit) {
      Worker& worker = *workers_[index];
      worker.park_word.store(1, std::memory_order_release);
      worker.park_word.notify_one();
      return true;
    }
    mask = parked_mask_.load(std::memory_order_seq_cst);
  }
  return false;
}

void Executor::wake_all() {
  parked_mask_.store(0, std::memory_order_seq_cst);
  for (auto& worker : workers_) {
    worker->park_word.store(1, std::memory_order_release);
    worker->park_word.notify_one();
  }
}

TeardownReport Executor::shutdown(std::chrono::milliseconds timeout) {
  if (shut_down_.exchange(true, std::memory_order_acq_rel)) return teardown_report_;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;

  // 1. From now on every process a worker meets completes as cancelled (drain is not called).
  stopping_.store(true, std::memory_order_seq_cst);
  // 2. Processes draining in compute slots stop at their next drain entry.
  for (ComputeSlot& slot : slots_) {
    slot.visitors.fetch_add(1, std::memory_order_seq_cst);
    Process* process = slot.process.load(std::memory_order_seq_cst);
    if (process != nullptr && process != retiring_marker() &&
        process->state_.load(std::memory_order_acquire) == ProcessState::runnable) {
      process->cancel();
    }
    slot.visitors.fetch_sub(1, std::memory_order_release);
  }
  announce_work(worker_count());
  // 3. Wait, boundedly, for the cancellation to sweep through the queued and dependent work.
  while (unfinished() > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  teardown_report_.unfinished =
      static_cast<std::uint64_t>(unfinished());
  teardown_report_.drained = teardown_report_.unfinished == 0;
  // 4. Stop the workers. One still inside a drain() call finishes that call first.
  exit_requested_.store(true, std::memory_order_seq_cst);
  wake_all();
  for (auto& worker : workers_) worker->join();
  teardown_report_.elapsed = std::chrono::steady_clock::now() - start;
  return teardown_report_;
}

}  // namespace tilec::runtime
