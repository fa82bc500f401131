// runtime/timeline_semaphore.h — a monotonically increasing 64-bit value that orders launches.
//
// signal(v) raises the value to v (never lowers it); every process waiting for a value ≤ v has
// one suspension released — by the signalling thread itself, inline (direct wake). fail(status)
// makes the semaphore permanently failed: all waiters, present and future, inherit the status
// and are released, so a failed producer makes its consumers complete with its error instead of
// hanging. Host threads block in wait_until(v).
//
// Timepoints (process, value) are registered at set-up (Process::wait_on), kept sorted by value
// under a mutex; signal() takes the mutex only when a waiter is registered. Registration reads the
// value under the mutex and signal() stores it before taking the mutex, so no wake is lost.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/status.h"

namespace tilec::runtime {

class Process;

class TimelineSemaphore {
 public:
  explicit TimelineSemaphore(std::uint64_t initial_value = 0);
  ~TimelineSemaphore();
  TimelineSemaphore(const TimelineSemaphore&) = delete;
  TimelineSemaphore& operator=(const TimelineSemaphore&) = delete;

  std::uint64_t value() const { return value_.load(std::memory_order_acquire); }
  bool failed() const { return failure_.load(std::memory_order_acquire) != nullptr; }
  // The failure status (ok when not failed).
  Status failure() const;

  // Raises the value to `value` (no effect if already higher) and releases satisfied waiters.
  void signal(std::uint64_t value);
  // Fails the semaphore (first failure wins) and releases every waiter with that status.
  void fail(Status status);
  // Blocks until the value reaches `value` or the semaphore fails; returns the failure or ok.
  Status wait_until(std::uint64_t value) const;

 private:
  friend class Process;
  struct Timepoint {
    Process* process;
    std::uint64_t value;
  };
  // Process::wait_on: the caller already added one suspension; it is released now if the value
  // is reached (or the semaphore failed), later by signal()/fail() otherwise.
  void add_timepoint(Process& process, std::uint64_t value);

  alignas(64) std::atomic<std::uint64_t> value_;
  std::atomic<Status*> failure_{nullptr};
  std::atomic<std::uint32_t> waiter_count_{0};
  std::atomic<std::uint32_t> generation_{0};  // bumped on every change, for host waiters
  mutable std::mutex mutex_;
  std::vector<Timepoint> timepoints_;  // guarded by mutex_
};

}  // namespace tilec::runtime
