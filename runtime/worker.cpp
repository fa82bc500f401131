// runtime/worker.cpp — the worker loop; see worker.h and docs/runtime.md.
#include "runtime/worker.h"

#include <bit>
#include <chrono>

#include "runtime/executor.h"
#include "runtime/spin.h"

namespace tilec::runtime {
namespace {

thread_local bool this_thread_is_a_worker = false;

}  // namespace

Worker::Worker(Executor& executor, unsigned index)
    : executor_(executor), index_(index), drainer_(executor, index) {}

void Worker::start() { thread_ = std::thread([this] { run(); }); }

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

bool Worker::current_thread_is_worker() { return this_thread_is_a_worker; }

void Worker::run() {
  this_thread_is_a_worker = true;
  while (!executor_.exit_requested_.load(std::memory_order_acquire)) {
    // Read the epoch before scanning: work published after this load changes it, so an idle
    // worker that saw nothing cannot miss that work (it compares before parking).
    const std::uint64_t seen_epoch = executor_.work_epoch_.load(std::memory_order_seq_cst);
    if (drainer_.step()) continue;
    idle(seen_epoch);
  }
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
