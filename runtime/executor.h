// runtime/executor.h — the process executor: workers, an immediate list, compute slots.
//
// Usage: construct with a worker count, submit processes, wait on them (Process::wait), tear
// down with shutdown(timeout) or the destructor. There is no coordinator thread: whoever makes a
// process runnable (submit, a completing dependency, a semaphore signal) activates it inline —
// budget 1 onto the immediate list (lock-free MPSC FIFO), larger budgets into one of 16 compute
// slots claimed by CAS (an overflow list holds the rest) — and wakes parked workers: one directly,
// the rest through a wake tree in which each woken worker wakes `wake_fanout` more.
// Activation allocates nothing. See docs/runtime.md for the states and memory orders.
//
// A host thread that waits for a process (Process::wait) works meanwhile, as oneTBB's wait and
// OpenMP's fork/join do: it takes the executor's one helping seat and drains runnable work
// (its own launch's tiles first of all) until the process completes, spinning briefly when
// nothing is runnable and blocking only after `help_spin` without work. So a launch and wait
// costs no thread wake on the caller's side. Waiting threads that find the seat taken, and
// workers, block. The helper may run any runnable process of the executor: do not wait while
// holding a lock that some drain function takes.
//
// Executor::run(process) is submit and wait in one call, and it can do more than the two: a
// ready budget-1 process runs on the calling thread at once, never queued, so no worker is
// disturbed. A ready compute process is queued, and when the previous run() launch took less
// than `help_alone`, no worker is told yet (no epoch bump, no wake): the caller drains alone,
// and announces the work (epoch bump, wakes) only once it has worked `help_alone` with work
// left, or the process reports work left after a drain call, or the caller stops helping.
// Otherwise it is announced at once. So a small launch involves no other thread (sharing 100
// tiles of 12 ns costs more in cache-line transfers than it saves), and a launch of heavy tiles
// (its predecessor was long) is shared from the start.
//
// Teardown cancels everything: workers complete each process they meet as cancelled (its
// dependents inherit that), in-flight drain calls finish, and shutdown waits at most `timeout`
// for the submitted processes to complete before stopping the workers. Processes still
// suspended then (e.g. on a semaphore nobody signals) are reported, never run; they must not be
// woken after the executor is destroyed.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "runtime/immediate_list.h"

namespace tilec::runtime {

class Process;
class Worker;

struct ExecutorOptions {
  unsigned worker_count = 0;  // 0: one per hardware thread; at most 64
  // Spin after the last drain before parking, when little work is announced (aggregate budget
  // at most the number of busy workers) and when much is (more budget than busy workers).
  std::chrono::nanoseconds warm_spin{10'000};
  std::chrono::nanoseconds busy_spin{50'000};
  // A helping waiter with nothing runnable spins this long (watching for completion and new
  // work) before it blocks.
  std::chrono::nanoseconds help_spin{50'000};
  // Executor::run: how long the caller works alone on a launch before announcing it to the
  // workers: a woken worker arrives about 7 us after a wake that costs its waker 4-5 us here
  // (bench/README.md), so sharing pays only when more than about that much is left.
  std::chrono::nanoseconds help_alone{10'000};
  unsigned wake_fanout = 1;  // workers each woken worker wakes before draining
};

struct TeardownReport {
  bool drained = true;          // every submitted process completed before the deadline
  std::uint64_t unfinished = 0;  // submitted processes that had not completed
  std::chrono::nanoseconds elapsed{0};
};

class Executor {
 public:
  static constexpr unsigned compute_slot_count = 16;
  static constexpr unsigned max_workers = 64;

  explicit Executor(ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  unsigned worker_count() const { return static_cast<unsigned>(workers_.size()); }
  // Distinct DrainContext::worker_index values: the workers and the helping seat.
  unsigned drainer_count() const { return worker_count() + 1; }

  // Releases the submission hold of `process` (and makes this its executor). It runs once its
  // dependencies and semaphore waits are satisfied. The process must outlive its completion.
  void submit(Process& process);

  // submit(process) then process.wait(), with the fast paths described above. Returns when the
  // process completed.
  void run(Process& process);

  const ExecutorOptions& options() const { return options_; }

  // Cancels all work, waits up to `timeout` for submitted processes to complete, stops the
  // workers. Idempotent; the destructor calls it with a one-second timeout.
  TeardownReport shutdown(std::chrono::milliseconds timeout);

 private:
  friend class Process;
  friend class Worker;
  friend class Drainer;

  // Process::wait: help drain until `process` completes (see the header comment), or block.
  void wait_helping(const Process& process);
  // The helping seat: taken by at most one host thread at a time.
  bool take_helper_seat();
  // Holding the seat: drain until `process` completed; gives the seat back.
  void help_until_done(const Process& process);
  // The activation of `process` deferred its announcement: announce it now (once).
  void release_deferred_wakes(const Process& process);

  struct alignas(64) ComputeSlot {
    std::atomic<Process*> process{nullptr};  // occupant, or retiring_marker() while retiring
    std::atomic<std::uint32_t> visitors{0};  // workers between loading `process` and leaving
  };
  static Process* retiring_marker() { return reinterpret_cast<Process*>(std::uintptr_t{1}); }

  // The suspend count of `process` reached zero: queue it and announce it (wake workers).
  // With `caller_helps` (Executor::run) the announcement may be deferred (see above).
  void activate(Process& process, bool caller_helps = false);
  // The one thread that moved `process` to `completing` calls this: signal semaphores, release
  // dependents, store `completed`. `process` must be off every list and slot already.
  void finish(Process& process);
  // Moves overflow processes into free compute slots (at most one caller at a time).
  void promote_overflow();
  bool try_place_in_slot(Process& process);
  // Any runnable work visible to a worker about to park?
  bool has_work(std::uint64_t seen_epoch) const;
  // New work was published (activation, promotion, budget increase): bump the epoch that idle
  // workers compare against before parking, then wake up to `count` workers.
  void announce_work(std::uint32_t count);
  // Wake up to `count` parked workers: one now, the rest through the wake tree.
  void request_wake(std::uint32_t count);
  bool wake_one_parked();
  void wake_all();

  ExecutorOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;

  // Immediate work (budget 1) and compute work that found no free slot.
  ImmediateList immediate_;
  ImmediateList overflow_;
  alignas(64) std::array<ComputeSlot, compute_slot_count> slots_;

  // Wake bookkeeping, written by activators and workers.
  alignas(64) std::atomic<std::uint64_t> parked_mask_{0};
  std::atomic<std::uint32_t> spinning_{0};
  std::atomic<std::uint32_t> pending_wakes_{0};
  std::atomic<std::int64_t> aggregate_budget_{0};
  std::atomic<std::uint64_t> work_epoch_{0};  // bumped whenever new work becomes visible
  // Submitted minus completed is what teardown waits for. Two counters on two lines: the
  // submitting thread and the completing workers never write the same line.
  alignas(64) std::atomic<std::int64_t> submitted_{0};
  alignas(64) std::atomic<std::int64_t> completed_{0};
  std::int64_t unfinished() const;
  std::atomic<bool> stopping_{false};                      // cancel everything met from now on
  std::atomic<bool> exit_requested_{false};  // workers leave their loop
  std::atomic<bool> shut_down_{false};
  TeardownReport teardown_report_;
  std::atomic<std::uint32_t> slot_hint_{0};
  alignas(64) std::atomic<bool> helper_seat_taken_{false};
  // How long the last compute launch of Executor::run took, activation to completion (unknown
  // at first: the first launch is announced at once).
  std::atomic<std::int64_t> last_launch_ns_{std::numeric_limits<std::int64_t>::max()};
};

}  // namespace tilec::runtime
