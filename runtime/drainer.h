// runtime/drainer.h — one seat at the executor's work: scan the compute slots, pop the
// immediate list, promote overflow. Both kinds of drainer use it: the executor's workers, and a
// host thread helping while it waits for a process (Executor::wait_helping).
//
// A drainer has an index (DrainContext::worker_index): workers are 0 .. worker_count()-1 and the
// helping seat is worker_count(), so at most drainer_count() calls of drain() run at once and
// their indices are distinct.
#pragma once

#include <cstdint>

namespace tilec::runtime {

class Executor;
class Process;

class Drainer {
 public:
  Drainer(Executor& executor, unsigned index);

  unsigned index() const { return index_; }

  // One round of a worker's loop: a compute drain (then one immediate process if any waits),
  // else one immediate process, else an overflow promotion. False when nothing was runnable.
  bool step();

  // Executor::run: drain a ready budget-1 process on this thread now, without queueing it.
  void run_now(Process& process) { run_immediate(process); }

 private:
  enum class ComputeOutcome {
    idle,                // drain found nothing to do
    worked,              // drain did work; the process goes on
    finished_elsewhere,  // it completed, and another drainer retires it
    retired,             // it completed and this drainer retired it (the visit has ended)
  };

  bool drain_compute();
  bool drain_immediate();
  // One drain call of a compute-slot process this drainer is visiting.
  ComputeOutcome run_compute(Process& process, unsigned slot_index);
  void run_immediate(Process& process);
  // Take `process` (state already `completing`) out of its slot, end our visit, finish it.
  void retire(Process& process, unsigned slot_index);

  Executor& executor_;
  unsigned index_;
  unsigned scan_position_;  // where this drainer last found compute work
};

}  // namespace tilec::runtime
