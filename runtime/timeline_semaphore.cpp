// runtime/timeline_semaphore.cpp — see timeline_semaphore.h.
#include "runtime/timeline_semaphore.h"

#include <algorithm>

#include "runtime/process.h"

namespace tilec::runtime {

TimelineSemaphore::TimelineSemaphore(std::uint64_t initial_value) : value_(initial_value) {}

TimelineSemaphore::~TimelineSemaphore() { delete failure_.load(std::memory_order_acquire); }

Status TimelineSemaphore::failure() const {
  const Status* failure = failure_.load(std::memory_order_acquire);
  return failure ? *failure : Status::success();
}

void TimelineSemaphore::add_timepoint(Process& process, std::uint64_t value) {
  const Status* failure = nullptr;
  {
    std::lock_guard lock(mutex_);
    // Count the waiter before reading the value: a concurrent signal() either stored its value
    // before our load (we see it) or reads a non-zero count afterwards and takes the lock.
    waiter_count_.fetch_add(1, std::memory_order_seq_cst);
    failure = failure_.load(std::memory_order_acquire);
    if (failure == nullptr && value_.load(std::memory_order_seq_cst) < value) {
      timepoints_.push_back({&process, value});
      return;
    }
    waiter_count_.fetch_sub(1, std::memory_order_relaxed);
  }
  if (failure) process.inherit(*failure);
  process.release_suspension();
}

void TimelineSemaphore::signal(std::uint64_t value) {
  std::uint64_t current = value_.load(std::memory_order_relaxed);
  while (current < value &&
         !value_.compare_exchange_weak(current, value, std::memory_order_seq_cst,
                                       std::memory_order_relaxed)) {
  }
  if (current >= value) return;  // someone else already signalled this far
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  if (waiter_count_.load(std::memory_order_seq_cst) == 0) return;

  // Collect satisfied timepoints under the lock, release them outside it: a released process may
  // run (and register new waits here) on another thread right away.
  std::vector<Process*> ready;
  {
    std::lock_guard lock(mutex_);
    const std::uint64_t reached = value_.load(std::memory_order_acquire);
    auto satisfied = std::stable_partition(timepoints_.begin(), timepoints_.end(),
                                           [&](const Timepoint& t) { return t.value > reached; });
    for (auto it = satisfied; it != timepoints_.end(); ++it) ready.push_back(it->process);
    timepoints_.erase(satisfied, timepoints_.end());
    waiter_count_.fetch_sub(static_cast<std::uint32_t>(ready.size()), std::memory_order_relaxed);
  }
  for (Process* process : ready) process->release_suspension();
}

void TimelineSemaphore::fail(Status status) {
  if (status.ok()) status = Status::failed("semaphore failed");
  auto* failure = new Status(std::move(status));
  Status* expected = nullptr;
  if (!failure_.compare_exchange_strong(expected, failure, std::memory_order_acq_rel)) {
    delete failure;
    return;
  }
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  std::vector<Timepoint> waiting;
  {
    std::lock_guard lock(mutex_);
    waiting.swap(timepoints_);
    waiter_count_.store(0, std::memory_order_relaxed);
  }
  for (const Timepoint& timepoint : waiting) {
    timepoint.process->inherit(*failure);
    timepoint.process->release_suspension();
  }
}

Status TimelineSemaphore::wait_until(std::uint64_t value) const {
  for (;;) {
    const std::uint32_t generation = generation_.load(std::memory_order_acquire);
    if (const Status* failure = failure_.load(std::memory_order_acquire)) return *failure;
    if (value_.load(std::memory_order_acquire) >= value) return Status::success();
    generation_.wait(generation, std::memory_order_acquire);
  }
}

}  // namespace tilec::runtime
