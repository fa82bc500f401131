// runtime/worker.h — one executor thread: drain, spin, park (seeds/002 worker model).
//
// Loop: scan the compute slots (starting where this worker last found work, so workers spread
// out); after a compute drain, or when no compute process had work, pop one process from the
// immediate list if it holds any (one atomic load when empty); when nothing is found,
// spin for an adaptive time (long while the aggregate wake budget exceeds the busy workers,
// short otherwise) watching the executor's work epoch, then park on a futex-style word
// (std::atomic::wait). A worker woken from parking first wakes its share of the pending wake
// count (the wake tree), then scans. Per-worker state lives here; nothing is shared but atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace tilec::runtime {

class Executor;
class Process;

class alignas(64) Worker {
 public:
  Worker(Executor& executor, unsigned index);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void start();
  void join();
  unsigned index() const { return index_; }

  // 0 while parked; a waker stores 1 and notifies. Written by wakers, read by this worker.
  alignas(64) std::atomic<std::uint32_t> park_word{0};

 private:
  void run();
  bool drain_compute();
  bool drain_immediate();
  // One drain call of a compute-slot process; true when it did (or finished) work.
  bool run_compute(Process& process, unsigned slot_index);
  void run_immediate(Process& process);
  // Take `process` (state already `completing`) out of its slot and finish it.
  void retire(Process& process, unsigned slot_index);
  void idle(std::uint64_t seen_epoch);
  void park(std::uint64_t seen_epoch);
  void take_wake_share();

  Executor& executor_;
  unsigned index_;
  unsigned scan_position_;
  std::thread thread_;
};

}  // namespace tilec::runtime
