// runtime/emulate/ptx_barriers.cpp — mbarriers, named barriers, elect, setmaxnreg and fences,
// from the PTX ISA ("Parallel synchronization and communication instructions").
//
// An mbarrier lives in a side table keyed by its shared address: the expected arrival count,
// the arrivals still pending in the current phase, the transaction bytes still expected, and
// the number of completed phases. A phase completes when both pending counts reach zero;
// `try_wait.parity P` succeeds once the current phase's parity differs from P. Each completion
// publishes the joined clocks of its arrivals plus the barrier's own slot (= phases completed),
// which is how the bytes a TMA load completed on the phase become visible to the waiters.
// Named barriers (bar.sync/bar.arrive, id 0 = __syncthreads) count threads per generation.
// Misuse is reported by name: a wait or arrive on an uninitialized barrier, an mbarrier used by
// a thread its initialization is not ordered before, an mbarrier the async proxy uses without
// fence.mbarrier_init / fence.proxy.async after its init, bar.sync counts that disagree within
// a phase or are not whole warps, setmaxnreg outside 24..256 or over the register file.
#include <algorithm>

#include "runtime/emulate/emulator.h"

namespace tilec_emu {

namespace {

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", value);
  return text;
}

void complete_phase(Cta& c, MBarrier& barrier) {
  Clock clock = barrier.accumulating;
  if (clock.size() != c.clock_size) clock.assign(c.clock_size, 0);
  clock[barrier.slot] = static_cast<uint32_t>(barrier.completed_phases + 1);
  barrier.completed[barrier.completed_phases % 2] = std::move(clock);
  ++barrier.completed_phases;
  barrier.pending = barrier.expected;
  barrier.accumulating.assign(c.clock_size, 0);
}

struct MBarrierWait final : Wait {
  MBarrier& barrier;
  uint32_t address;
  uint32_t parity;
  MBarrierWait(MBarrier& b, uint32_t a, uint32_t p) : barrier(b), address(a), parity(p) {}
  bool ready() override { return (barrier.completed_phases & 1) != parity; }
  std::string describe() override {
    return "mbarrier " + barrier_name(address) + " to complete its phase of parity " + std::to_string(parity) +
           " (phase " + std::to_string(barrier.completed_phases) + ": " + std::to_string(barrier.pending) + " of " +
           std::to_string(barrier.expected) + " arrivals and " + std::to_string(barrier.transaction) +
           " transaction bytes outstanding)";
  }
};

struct NamedBarrierWait final : Wait {
  NamedBarrier& barrier;
  uint32_t id;
  uint64_t generation;
  const char* what;
  NamedBarrierWait(NamedBarrier& b, uint32_t i, uint64_t g, const char* w) : barrier(b), id(i), generation(g), what(w) {}
  bool ready() override { return barrier.generation != generation; }
  std::string describe() override {
    return std::string(what) + " (barrier " + std::to_string(id) + ": " + std::to_string(barrier.arrived) + " of " +
           std::to_string(barrier.expected) + " threads arrived)";
  }
};

struct RegisterWait final : Wait {
  Cta& c;
  uint32_t needed;
  RegisterWait(Cta& cta_, uint32_t n) : c(cta_), needed(n) {}
  bool ready() override { return c.register_pool >= static_cast<int>(needed); }
  std::string describe() override {
    return "setmaxnreg.inc to find " + std::to_string(needed) + " free registers (the pool has " +
           std::to_string(c.register_pool) + ")";
  }
};

}  // namespace

MBarrier& mbarrier_at(uint32_t address, int line, const char* what) {
  Cta& c = cta();
  MBarrier& barrier = c.mbarriers[address];
  if (!barrier.initialized) {
    report_fatal("barrier misuse", line,
                 std::string(what) + " on mbarrier " + barrier_name(address) + ", which was never initialized (mbarrier.init)");
    stop_cta();
  }
  return barrier;
}

// The thread must be ordered after the barrier's initialization.
void check_init_visible(ThreadState& thread, MBarrier& barrier, uint32_t address, int line) {
  if (thread.linear != barrier.init_thread && thread.clock[barrier.init_thread] < barrier.init_clock)
    report(HazardKind::race, line,
           "mbarrier " + barrier_name(address) + " is used by " + describe_thread(thread.linear) +
               ", which is not ordered after its initialization by thread " + std::to_string(barrier.init_thread),
           {cu_location(barrier.init_line) + ": note: initialized here; a __syncthreads() between init and use orders them"});
}

void mbarrier_arrive_from(MBarrier& barrier, const Clock& clock, int count) {
  Cta& c = cta();
  if (barrier.accumulating.size() != c.clock_size) barrier.accumulating.assign(c.clock_size, 0);
  join(barrier.accumulating, clock);
  barrier.pending -= count;
  if (barrier.pending <= 0 && barrier.transaction == 0) complete_phase(c, barrier);
}

void mbarrier_complete_tx(MBarrier& barrier, uint32_t bytes, AsyncOp& op) {
  Cta& c = cta();
  op.completion.push_back({barrier.slot, static_cast<uint32_t>(barrier.completed_phases + 1)});
  barrier.transaction -= bytes;
  if (barrier.pending <= 0 && barrier.transaction == 0) complete_phase(c, barrier);
}

namespace {

// A thread's arrival, after telling the barrier to expect `bytes` more transaction bytes.
void mbarrier_arrive_expecting(uint32_t address, uint32_t bytes, int line, const char* what) {
  ThreadState& thread = self();
  MBarrier& barrier = mbarrier_at(address, line, what);
  check_init_visible(thread, barrier, address, line);
  scan_generic_writes(thread, line);
  barrier.transaction += bytes;
  Clock clock = thread.clock;
  ++thread.clock[thread.linear];
  mbarrier_arrive_from(barrier, clock, 1);
}

}  // namespace

namespace ptx {

void mbarrier_init(uint32_t address, uint32_t count, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  if (address % 8 != 0 || address + 8 > c.shared_bytes) {
    report_fatal("barrier misuse", line, "mbarrier.init at shared address " + hex(address) +
                                             ", which is not an 8-byte aligned address inside the CTA's shared memory");
    stop_cta();
  }
  if (count == 0 || count > (1u << 20) - 1)
    report(HazardKind::barrier_misuse, line, "mbarrier.init with an arrival count of " + std::to_string(count) + " (1 to 2^20-1)");
  MBarrier& barrier = c.mbarriers[address];
  if (barrier.initialized && (barrier.pending != barrier.expected || barrier.transaction != 0))
    report(HazardKind::barrier_misuse, line, "mbarrier " + barrier_name(address) + " is initialized again in the middle of a phase");
  const uint32_t slot = barrier.initialized ? barrier.slot : 2 * static_cast<uint32_t>(c.thread_count) + c.next_barrier_slot++;
  if (slot >= c.clock_size) {
    report_fatal("emulator limit", line, "more than 256 mbarriers in one CTA");
    stop_cta();
  }
  barrier = MBarrier{};
  barrier.initialized = true;
  barrier.slot = slot;
  barrier.expected = count;
  barrier.pending = count;
  barrier.init_thread = thread.linear;
  barrier.init_clock = thread.clock[thread.linear];
  barrier.init_line = line;
  barrier.accumulating.assign(c.clock_size, 0);
  thread.initialized_barriers.push_back(address);
  // The barrier's 8 bytes are its state, not data.
  std::memset(c.shared + address, 0, 8);
  refresh_shadow(address, 8);
}

void fence_mbarrier_init(int line) {
  ThreadState& thread = self();
  scan_generic_writes(thread, line);
  Cta& c = cta();
  for (uint32_t address : thread.initialized_barriers) c.mbarriers[address].init_fenced = true;
  thread.initialized_barriers.clear();
}

void mbarrier_wait_parity(uint32_t address, uint32_t parity, int line) {
  ThreadState& thread = self();
  MBarrier& barrier = mbarrier_at(address, line, "mbarrier.try_wait.parity");
  check_init_visible(thread, barrier, address, line);
  scan_generic_writes(thread, line);
  parity &= 1;
  MBarrierWait wait(barrier, address, parity);
  block(wait, line);
  const Clock& completed = barrier.completed[parity];
  if (!completed.empty()) acquire(thread, completed);
}

void mbarrier_arrive(uint32_t address, int line) { mbarrier_arrive_expecting(address, 0, line, "mbarrier.arrive"); }

void mbarrier_arrive_expect_tx(uint32_t address, uint32_t bytes, int line) {
  mbarrier_arrive_expecting(address, bytes, line, "mbarrier.arrive.expect_tx");
}

void named_barrier_sync(uint32_t id, uint32_t threads, int line) {
  named_barrier_wait(id, threads, true, line, "bar.sync");
}

void named_barrier_arrive(uint32_t id, uint32_t threads, int line) {
  named_barrier_wait(id, threads, false, line, "bar.arrive");
}

bool elect_one(int line) {
  // elect.sync with a full mask: every lane takes part; the lowest lane is elected.
  const int lane = self().lane;
  warp_collective(0, 0, "elect.sync", line, nullptr);
  return lane == 0;
}

void setmaxnreg(bool increase, uint32_t registers, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  if (registers < 24 || registers > 256 || registers % 8 != 0) {
    report(HazardKind::register_pool, line,
           "setmaxnreg to " + std::to_string(registers) + " registers (24 to 256, a multiple of 8)");
    return;
  }
  if (increase) {
    if (registers < thread.registers) {
      report(HazardKind::register_pool, line, "setmaxnreg.inc to " + std::to_string(registers) + " registers from " +
                                                 std::to_string(thread.registers) + " (an increase may not lower the count)");
      return;
    }
    const uint32_t needed = registers - thread.registers;
    scan_generic_writes(thread, line);
    RegisterWait wait(c, needed);
    block(wait, line);
    c.register_pool -= static_cast<int>(needed);
  } else {
    if (registers > thread.registers) {
      report(HazardKind::register_pool, line, "setmaxnreg.dec to " + std::to_string(registers) + " registers from " +
                                                 std::to_string(thread.registers) + " (a decrease may not raise the count)");
      return;
    }
    c.register_pool += static_cast<int>(thread.registers - registers);
  }
  thread.registers = registers;
}

void fence_proxy_async(int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  scan_generic_writes(thread, line);
  for (uint32_t chunk : thread.unfenced_chunks) {
    ChunkHistory& history = c.chunks[chunk];
    if (history.generic_writer == thread.linear) history.generic_fenced = true;
  }
  thread.unfenced_chunks.clear();
  // fence.proxy.async after mbarrier.init also makes the barriers visible to the async proxy.
  for (uint32_t address : thread.initialized_barriers) c.mbarriers[address].init_fenced = true;
  thread.initialized_barriers.clear();
}

void tcgen05_fence_before_thread_sync(int line) {
  ThreadState& thread = self();
  (void)line;
  thread.tcgen05_fence_clocks.push_back(thread.clock[thread.linear]);
}

void tcgen05_fence_after_thread_sync(int line) {
  ThreadState& thread = self();
  (void)line;
  thread.tcgen05_clock = thread.clock;
}

}  // namespace ptx

void named_barrier_wait(uint32_t id, uint32_t threads, bool wait, int line, const char* what) {
  Cta& c = cta();
  ThreadState& thread = self();
  if (id >= 16) {
    report_fatal("barrier misuse", line, std::string(what) + " " + std::to_string(id) + ": named barriers are 0 to 15");
    stop_cta();
  }
  if (threads == 0 || threads % 32 != 0 || threads > static_cast<uint32_t>(c.thread_count))
    report(HazardKind::barrier_misuse, line,
           std::string(what) + " " + std::to_string(id) + " for " + std::to_string(threads) +
               " threads: the count must be a multiple of the warp size (32) and at most the CTA's " +
               std::to_string(c.thread_count) + " threads");
  scan_generic_writes(thread, line);
  NamedBarrier& barrier = c.named[id];
  if (barrier.arrived == 0) {
    barrier.expected = threads;
  } else if (barrier.expected != threads) {
    report(HazardKind::barrier_misuse, line,
           std::string(what) + " " + std::to_string(id) + " expects " + std::to_string(threads) +
               " threads, but the threads already waiting on it expect " + std::to_string(barrier.expected));
  }
  release(thread, barrier.accumulating);
  const uint64_t generation = barrier.generation;
  if (++barrier.arrived >= barrier.expected) {
    barrier.released = barrier.accumulating;
    barrier.accumulating.assign(c.clock_size, 0);
    barrier.arrived = 0;
    ++barrier.generation;
  } else if (wait) {
    NamedBarrierWait waiting(barrier, id, generation, what);
    block(waiting, line);
  }
  if (wait) acquire(thread, barrier.released);
}

}  // namespace tilec_emu
