// runtime/process.cpp — suspension, dependents, cancellation and status of a process.
#include "runtime/process.h"

#include <cassert>

#include "runtime/executor.h"
#include "runtime/timeline_semaphore.h"

namespace tilec::runtime {

Process::Process(std::string name, std::uint32_t wake_budget)
    : name_(std::move(name)), wake_budget_(wake_budget == 0 ? 1 : wake_budget) {
  link_.owner = this;
}

Process::~Process() { delete error_.load(std::memory_order_acquire); }

void Process::add_dependent(Process& dependent) {
  assert(!submitted_ && !dependent.submitted_ && "dependencies are set before submission");
  dependent.suspend_count_.fetch_add(1, std::memory_order_relaxed);
  dependents_.push_back(&dependent);
}

void Process::wait_on(TimelineSemaphore& semaphore, std::uint64_t value) {
  // The caller holds a suspension (the submission hold before submit, the drain hold inside
  // drain), so the count cannot reach zero between this increment and the registration.
  suspend_count_.fetch_add(1, std::memory_order_relaxed);
  semaphore.add_timepoint(*this, value);
}

void Process::signal_on_completion(TimelineSemaphore& semaphore, std::uint64_t value) {
  assert(!submitted_ && "signals are set before submission");
  signals_.emplace_back(&semaphore, value);
}

void Process::set_wake_budget(std::uint32_t budget) {
  if (budget == 0) budget = 1;
  const std::uint32_t previous = wake_budget_.exchange(budget, std::memory_order_relaxed);
  // Raised while running (e.g. a drain entering a wider region): wake workers for the extra
  // share. Where the process is queued (immediate list or compute slot) is fixed at activation.
  if (budget > previous && executor_ != nullptr && state() == ProcessState::runnable) {
    executor_->announce_work(budget - previous);
  }
}

void Process::cancel() {
  if (!cancelled_.exchange(true, std::memory_order_acq_rel)) {
    inherit(Status::cancelled("process '" + name_ + "' was cancelled"));
  }
}

void Process::fail(Status status) {
  if (status.ok()) status = Status::failed("process '" + name_ + "' failed");
  inherit(status);
}

void Process::inherit(const Status& status) {
  if (error_.load(std::memory_order_acquire) != nullptr) return;
  auto* error = new Status(status);
  Status* expected = nullptr;
  if (!error_.compare_exchange_strong(expected, error, std::memory_order_acq_rel)) delete error;
}

void Process::wait() const {
  if (executor_ != nullptr && !done()) {
    executor_->wait_helping(*this);
    return;
  }
  block_until_done();
}

void Process::block_until_done() const {
  ProcessState state = state_.load(std::memory_order_acquire);
  while (state != ProcessState::completed) {
    state_.wait(state, std::memory_order_acquire);
    state = state_.load(std::memory_order_acquire);
  }
}

Status Process::status() const {
  const Status* error = error_.load(std::memory_order_acquire);
  return error ? *error : Status::success();
}

void Process::release_suspension() {
  // acq_rel: the decrement that reaches zero sees every write made before the other decrements,
  // and the activation below publishes them to the worker that pops/scans the process.
  if (suspend_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) executor_->activate(*this);
}

}  // namespace tilec::runtime
