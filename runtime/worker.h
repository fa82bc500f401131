// runtime/worker.h — one executor thread: drain, spin, park (seeds/002 worker model).
//
// Loop: one Drainer step (drainer.h: scan the compute slots starting where this worker last
// found work, so workers spread out; after a compute drain, or when no compute process had work,
// pop one process from the immediate list if it holds any); when nothing is found,
// spin for an adaptive time (long while the aggregate wake budget exceeds the busy workers,
// short otherwise) watching the executor's work epoch, then park on a futex-style word
// (std::atomic::wait). A worker woken from parking first wakes its share of the pending wake
// count (the wake tree), then scans. Per-worker state lives here; nothing is shared but atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "runtime/drainer.h"

namespace tilec::runtime {

class Executor;

class alignas(64) Worker {
 public:
  Worker(Executor& executor, unsigned index);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void start();
  void join();
  unsigned index() const { return index_; }
  // True on the threads of every executor's workers (they never help in Executor::wait_helping).
  static bool current_thread_is_worker();

  // 0 while parked; a waker stores 1 and notifies. Written by wakers, read by this worker.
  alignas(64) std::atomic<std::uint32_t> park_word{0};

 private:
  void run();
  void idle(std::uint64_t seen_epoch);
  void park(std::uint64_t seen_epoch);
  void take_wake_share();

  Executor& executor_;
  unsigned index_;
  Drainer drainer_;
  std::thread thread_;
};

}  // namespace tilec::runtime
