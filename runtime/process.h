// runtime/process.h — the process: the one unit of work the executor knows (seeds/002).
//
// A process is drained incrementally by workers: drain() does a bounded amount of work and
// returns; it reports `completed` exactly once, from the call that finished the last piece of
// work. Around drain() a process carries:
//   - a suspend count: runnable when it reaches zero. It starts at one (the submission hold that
//     Executor::submit releases); add_dependent and wait_on add one each. The thread whose
//     decrement reaches zero activates the process on its executor (direct wake, no coordinator).
//   - a wake budget: how many workers it can keep busy. Budget 1 goes to the executor's
//     immediate list (one drainer at a time); more goes to a compute slot (many drainers).
//   - dependents, activated when it completes, and semaphore values signalled when it completes.
//   - a cancellation flag and a first-error-wins status. Either one makes the next drain entry
//     complete the process without calling drain(); dependents and signalled semaphores inherit
//     the status, so they complete (or fail) without running their own drain either.
// States: suspended → runnable → completing → completed. Only `completed` releases wait(); the
// executor touches the process no more after storing it, so the owner may then destroy it.
// Set-up calls (add_dependent, signal_on_completion) happen before submission; wait_on also
// from inside drain() of a budget-1 process; set_wake_budget at any time.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/immediate_list.h"
#include "runtime/status.h"

namespace tilec::runtime {

class Executor;
class Process;
class TimelineSemaphore;

// What drain() is given: the worker calling it and the process itself.
struct DrainContext {
  Executor& executor;
  Process& process;
  unsigned worker_index;
};

struct DrainResult {
  bool completed = false;  // the last piece of work is done; exactly one call says so
  bool did_work = false;   // false: nothing to do right now (the worker moves on)
};

enum class ProcessState : std::uint32_t { suspended, runnable, completing, completed };

class alignas(64) Process {
 public:
  explicit Process(std::string name = {}, std::uint32_t wake_budget = 1);
  virtual ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  const std::string& name() const { return name_; }

  // Set-up, before this process and `dependent` are submitted: `dependent` waits for this one.
  void add_dependent(Process& dependent);
  // Set-up (or from drain() of a budget-1 process): suspend until `semaphore` reaches `value`.
  void wait_on(TimelineSemaphore& semaphore, std::uint64_t value);
  // Set-up: when this completes, signal `semaphore` to `value` (or fail it with our error).
  void signal_on_completion(TimelineSemaphore& semaphore, std::uint64_t value);

  // Wake budget: a hint for how many workers to wake, and where the process is queued (read at
  // each activation: 1 → immediate list, one drainer at a time; more → a compute slot, many
  // drainers). Raising it while the process runs wakes workers for the extra share.
  std::uint32_t wake_budget() const { return wake_budget_.load(std::memory_order_relaxed); }
  void set_wake_budget(std::uint32_t budget);

  // Any thread, any time. Takes effect at the next drain entry (a suspended process completes
  // as cancelled once its suspend count reaches zero; fail its semaphores to end a wait early).
  void cancel();
  bool cancel_requested() const { return cancelled_.load(std::memory_order_acquire); }

  // Records `status` as this process's error unless one is already recorded (first wins).
  void fail(Status status);
  bool has_error() const { return error_.load(std::memory_order_acquire) != nullptr; }

  ProcessState state() const { return state_.load(std::memory_order_acquire); }
  // True while Executor::run's caller drains alone: no worker has been told about the process.
  bool wakes_deferred() const { return deferred_wakes_.load(std::memory_order_relaxed) != 0; }
  bool done() const { return state() == ProcessState::completed; }
  // Returns once the process completed. A host thread helps the executor drain meanwhile (see
  // executor.h); a worker thread, or one that finds the helping seat taken, blocks.
  void wait() const;
  // Valid after completion: ok, or the first error / cancellation recorded.
  Status status() const;

 protected:
  virtual DrainResult drain(DrainContext& context) = 0;

 private:
  friend class Executor;
  friend class Drainer;
  friend class TimelineSemaphore;

  // Drops one suspension; the thread that reaches zero activates the process.
  void release_suspension();
  void inherit(const Status& status);
  // Blocks the calling thread (a futex wait on the state) until the process completed.
  void block_until_done() const;

  // Cache line 0: fixed once submitted.
  std::string name_;
  std::vector<Process*> dependents_;
  std::vector<std::pair<TimelineSemaphore*, std::uint64_t>> signals_;
  Executor* executor_ = nullptr;
  bool submitted_ = false;

  // Cache line 1: activation and completion, written by signalling threads.
  alignas(64) std::atomic<std::int32_t> suspend_count_{1};
  std::atomic<ProcessState> state_{ProcessState::suspended};
  std::atomic<bool> cancelled_{false};
  std::atomic<Status*> error_{nullptr};

  // Cache line 2: scheduling, written by drain functions.
  alignas(64) std::atomic<std::uint32_t> wake_budget_;
  std::uint32_t accounted_budget_ = 0;  // budget counted in the executor while in a slot
  // Workers Executor::run has not told about this process yet (its caller drains alone first);
  // announced by the first of: a drain call that leaves work behind, the caller ceasing to help.
  mutable std::atomic<std::uint32_t> deferred_wakes_{0};

  // Cache line 3: the immediate/overflow list link.
  alignas(64) ListNode link_;
};

// A process whose drain is a callable: DrainResult(DrainContext&). Handy for tests and tools.
template <typename Function>
class FunctionProcess final : public Process {
 public:
  FunctionProcess(std::string name, std::uint32_t wake_budget, Function function)
      : Process(std::move(name), wake_budget), function_(std::move(function)) {}

 protected:
  DrainResult drain(DrainContext& context) override { return function_(context); }

 private:
  Function function_;
};

}  // namespace tilec::runtime
