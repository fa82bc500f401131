// runtime/emulate/cta.cpp — CUDA threads as fibers, one CTA at a time per OS thread.
//
//   1. launch_grid validates the launch (block size, dynamic shared memory against the kernel's
//      opt-in, whole clusters) and runs every CTA, on the calling thread or, with --workers N
//      > 1, as tiles of a process on the project's executor (runtime/parallel_tiles.h).
//   2. run_cta gives each CUDA thread a fiber with a pooled, guard-paged stack and runs the
//      scheduler loop: resume a runnable fiber (in order, or from a random start under the
//      random policy); when none can run, perform one pending asynchronous operation (the
//      lazy and random policies leave them pending); when none can be performed either, every
//      thread is blocked for good: report the deadlock (each waiting group, what it waits for,
//      its .cu and .tile lines) and stop the CTA.
//   3. The thread-level primitives: ids, dynamic shared memory, __syncthreads (named barrier 0),
//      warp collectives (__shfl_xor_sync, __syncwarp), __trap.
// A fiber runs until it blocks, so threads interleave only at synchronization: between two of
// them a thread's ordinary code runs as one step. Cost: a switch is a few nanoseconds; a full
// pass of the scheduler over blocked threads is one ready() call each.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "runtime/emulate/emulator.h"
#include "runtime/executor.h"
#include "runtime/parallel_tiles.h"

namespace tilec_emu {

namespace {

thread_local Cta* running_cta = nullptr;

// A stack for each fiber, reused across CTAs; a guard page below each catches an overflow.
class StackPool {
 public:
  static constexpr size_t kStackBytes = 256 * 1024;

  boost::context::stack_context allocate() {
    void* base = nullptr;
    if (!free_.empty()) {
      base = free_.back();
      free_.pop_back();
    } else {
      const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
      base = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                  -1, 0);
      if (base == MAP_FAILED) throw std::bad_alloc();
      mprotect(base, page, PROT_NONE);
      base = static_cast<char*>(base) + page;
    }
    boost::context::stack_context context;
    context.size = kStackBytes;
    context.sp = static_cast<char*>(base) + kStackBytes;
    return context;
  }
  void deallocate(boost::context::stack_context& context) {
    free_.push_back(static_cast<char*>(context.sp) - context.size);
  }

 private:
  std::vector<void*> free_;
};

thread_local StackPool stack_pool;

struct PooledStack {
  boost::context::stack_context allocate() { return stack_pool.allocate(); }
  void deallocate(boost::context::stack_context& context) { stack_pool.deallocate(context); }
};

// Thrown inside a fiber to stop its CTA (deadlock found by a thread, trap, fatal misuse).
struct CtaStopped {};

std::mutex launch_mutex;
std::atomic<bool> launch_failed{false};
std::map<const void*, int> max_dynamic_shared;

constexpr uint32_t kSharedBase = 16;  // the dynamic window's first byte (not 1024-aligned, as on a GPU)
constexpr size_t kDefaultDynamicShared = 48 * 1024;
constexpr uint32_t kBarrierSlots = 256;

void resume(Cta& c, ThreadState& thread, ThreadBody body, void* closure) {
  c.current = &thread;
  if (!thread.started) {
    thread.started = true;
    thread.fiber = boost::context::fiber(std::allocator_arg, PooledStack(),
                                         [&thread, body, closure](boost::context::fiber&& scheduler) {
                                           thread.scheduler = std::move(scheduler);
                                           try {
                                             body(closure);
                                             scan_generic_writes(thread, 0);
                                           } catch (const CtaStopped&) {
                                           }
                                           thread.done = true;
                                           return std::move(thread.scheduler);
                                         });
  }
  thread.fiber = std::move(thread.fiber).resume();
  c.current = nullptr;
}

}  // namespace

bool in_cuda_thread() { return running_cta && running_cta->current; }

void describe_running_thread(char* out, size_t size) {
  const Cta* c = running_cta;
  if (!c) {
    std::snprintf(out, size, "the host (outside any kernel)");
    return;
  }
  const uint3 b = c->block_index;
  if (!c->current) {
    std::snprintf(out, size, "the emulator performing an asynchronous copy (TMA) of CTA (%u, %u, %u)", b.x, b.y, b.z);
    return;
  }
  std::snprintf(out, size, "%s of CTA (%u, %u, %u)", describe_thread(c->current->linear).c_str(), b.x, b.y, b.z);
}

namespace {

std::string thread_ranges(const std::vector<int>& threads) {
  std::string text;
  size_t i = 0;
  while (i < threads.size()) {
    size_t j = i;
    while (j + 1 < threads.size() && threads[j + 1] == threads[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += threads[i] == threads[j] ? std::to_string(threads[i])
                                     : std::to_string(threads[i]) + "-" + std::to_string(threads[j]);
    i = j + 1;
  }
  return text;
}

void report_deadlock(Cta& c) {
  // Group the waiting threads by what they wait for and where.
  std::map<std::pair<int, std::string>, std::vector<int>> groups;
  std::vector<int> exited;
  for (auto& thread : c.threads) {
    if (thread.done) {
      exited.push_back(thread.linear);
      continue;
    }
    groups[{thread.wait_line, thread.waiting ? thread.waiting->describe() : std::string("(running)")}].push_back(
        thread.linear);
  }
  std::vector<std::string> notes;
  int first_line = 0;
  for (const auto& [key, threads] : groups) {
    if (!first_line) first_line = key.first;
    notes.push_back(cu_location(key.first) + ": note: threads " + thread_ranges(threads) + " wait for " + key.second);
  }
  if (!exited.empty()) notes.push_back("note: threads " + thread_ranges(exited) + " have exited");
  for (uint32_t id : c.pending) {
    const AsyncOp& op = *c.ops[id];
    notes.push_back(cu_location(op.line) + ": note: " + async_op_name(op) + " issued by thread " +
                    std::to_string(op.issuer) + " cannot complete" +
                    (op.kind == AsyncKind::wgmma && !op.formed
                         ? " (only " + std::to_string(op.registered) + " of the warpgroup's 128 threads issued it)"
                         : std::string()));
  }
  report_fatal("deadlock", first_line,
               "every thread of CTA (" + std::to_string(c.block_index.x) + ", " + std::to_string(c.block_index.y) +
                   ", " + std::to_string(c.block_index.z) + ") is blocked and no asynchronous operation can complete",
               std::move(notes));
}

// Performs one pending operation chosen by the policy; false when none can be performed.
bool perform_one(Cta& c) {
  std::vector<uint32_t> candidates;
  for (uint32_t id : c.pending)
    if (performable(*c.ops[id])) {
      if (options().policy != Policy::random) {
        perform(*c.ops[id]);
        return true;
      }
      candidates.push_back(id);
    }
  if (candidates.empty()) return false;
  perform(*c.ops[candidates[c.random() % candidates.size()]]);
  return true;
}

void run_cta(Cta& c, ThreadBody body, void* closure) {
  running_cta = &c;
  const int n = c.thread_count;
  size_t cursor = 0;
  int live = n;
  while (live > 0) {
    if (c.stopped) break;
    bool ran = false;
    const size_t start = options().policy == Policy::random ? static_cast<size_t>(c.random() % n) : cursor;
    for (int scanned = 0; scanned < n; ++scanned) {
      const size_t index = (start + static_cast<size_t>(scanned)) % static_cast<size_t>(n);
      ThreadState& thread = c.threads[index];
      if (thread.done) continue;
      if (thread.waiting && !thread.waiting->ready()) continue;
      resume(c, thread, body, closure);
      if (thread.done) --live;
      cursor = index + 1;
      ran = true;
      break;
    }
    if (c.stopped) break;
    // The random policy also performs pending operations at random points (then looks again).
    if (options().policy == Policy::random && !c.pending.empty() && c.random() % 2 == 0 && perform_one(c)) continue;
    if (ran) continue;
    if (perform_one(c)) continue;
    report_deadlock(c);
    break;
  }
  if (live == 0 && !c.stopped) check_cta_exit();
  // Unfinished fibers (a stopped CTA) are unwound by destroying them.
  for (auto& thread : c.threads) thread.fiber = boost::context::fiber();
  running_cta = nullptr;
}

}  // namespace

Cta& cta() {
  if (!running_cta) {
    std::fprintf(stderr, "tilec emulate: internal error: device code ran outside a kernel launch\n");
    std::abort();
  }
  return *running_cta;
}

ThreadState& self() {
  Cta& c = cta();
  if (!c.current) {
    std::fprintf(stderr, "tilec emulate: internal error: no CUDA thread is running\n");
    std::abort();
  }
  return *c.current;
}

void stop_cta() {
  Cta& c = cta();
  c.stopped = true;
  if (c.current) throw CtaStopped{};
}

void block(Wait& wait, int line) {
  ThreadState& thread = self();
  if (wait.ready()) return;
  thread.waiting = &wait;
  thread.wait_line = line;
  while (!wait.ready()) {
    thread.scheduler = std::move(thread.scheduler).resume();
    if (cta().stopped) {
      thread.waiting = nullptr;
      throw CtaStopped{};
    }
  }
  thread.waiting = nullptr;
}

void join(Clock& into, const Clock& from) {
  const size_t n = std::min(into.size(), from.size());
  for (size_t i = 0; i < n; ++i) into[i] = std::max(into[i], from[i]);
}

void release(ThreadState& thread, Clock& into) {
  if (into.size() != thread.clock.size()) into.assign(thread.clock.size(), 0);
  join(into, thread.clock);
  ++thread.clock[thread.linear];
}

// Every primitive that acquires scanned the thread's ordinary stores on entry, before it could
// block (and nothing of the thread ran since), so the stores keep their pre-acquire clock.
void acquire(ThreadState& thread, const Clock& from) { join(thread.clock, from); }

// --- launches ------------------------------------------------------------------------------------

cudaError_t set_max_dynamic_shared(const void* kernel, int bytes) {
  if (bytes < 0 || static_cast<size_t>(bytes) > kMaxDynamicShared) {
    set_error_detail("cudaFuncSetAttribute: " + std::to_string(bytes) + " bytes of dynamic shared memory exceed the " +
                     std::to_string(kMaxDynamicShared) + " a CTA may have");
    return cudaErrorInvalidValue;
  }
  std::lock_guard<std::mutex> lock(launch_mutex);
  max_dynamic_shared[kernel] = bytes;
  return cudaSuccess;
}

cudaError_t launch_grid(const LaunchShape& shape, ThreadBody body, void* closure) {
  const uint64_t threads = uint64_t{shape.block.x} * shape.block.y * shape.block.z;
  const uint64_t ctas = uint64_t{shape.grid.x} * shape.grid.y * shape.grid.z;
  if (threads == 0 || threads > 1024) {
    set_error_detail("a CTA of " + std::to_string(threads) + " threads (1 to 1024 are allowed)");
    return record_launch_error(cudaErrorInvalidConfiguration);
  }
  if (ctas == 0 || shape.grid.y > 65535 || shape.grid.z > 65535) {
    set_error_detail("a grid of " + std::to_string(ctas) + " CTAs");
    return record_launch_error(cudaErrorInvalidConfiguration);
  }
  size_t allowed = kDefaultDynamicShared;
  {
    std::lock_guard<std::mutex> lock(launch_mutex);
    auto it = max_dynamic_shared.find(shape.kernel);
    if (it != max_dynamic_shared.end()) allowed = static_cast<size_t>(it->second);
  }
  if (shape.dynamic_shared > allowed) {
    set_error_detail(std::to_string(shape.dynamic_shared) + " bytes of dynamic shared memory, but the kernel allows " +
                     std::to_string(allowed) + " (cudaFuncSetAttribute with cudaFuncAttributeMaxDynamicSharedMemorySize opts in above 48 KiB)");
    return record_launch_error(cudaErrorInvalidValue);
  }
  if (shape.cluster == 0 || shape.cluster > 8 || shape.grid.x % shape.cluster != 0) {
    set_error_detail("clusters of " + std::to_string(shape.cluster) + " CTAs over a grid of " +
                     std::to_string(shape.grid.x) + " (whole clusters of at most 8)");
    return record_launch_error(cudaErrorInvalidConfiguration);
  }
  note_launch(ctas, threads);

  auto run_one = [&](uint64_t linear) {
    if (launch_failed.load(std::memory_order_relaxed)) return;
    Cta c;
    c.block_index = uint3{static_cast<unsigned>(linear % shape.grid.x),
                          static_cast<unsigned>(linear / shape.grid.x % shape.grid.y),
                          static_cast<unsigned>(linear / (uint64_t{shape.grid.x} * shape.grid.y))};
    c.block_dim = shape.block;
    c.grid_dim = shape.grid;
    c.cluster = static_cast<int>(shape.cluster);
    c.thread_count = static_cast<int>(threads);
    c.random.seed(options().seed * 0x9E3779B97F4A7C15ull + linear);
    setup_cta(c, shape.dynamic_shared + kSharedBase);
    run_cta(c, body, closure);
    if (c.stopped) launch_failed.store(true, std::memory_order_relaxed);
  };
  if (options().workers <= 1 || ctas == 1) {
    for (uint64_t linear = 0; linear < ctas; ++linear) run_one(linear);
  } else {
    tilec::runtime::parallel_tiles(executor(), ctas,
                                   [&](std::uint64_t tile, tilec::runtime::TileContext&) { run_one(tile); });
  }
  return launch_failed.load() ? record_launch_error(cudaErrorLaunchFailure) : cudaSuccess;
}

const unsigned char* shared_poison() {
  // Word w's bytes b0..b3 (little-endian): b1 and b3 are 0x7f or 0xff, b0 and b2 are 0x80 plus
  // seven bits that are not all zero, drawn from a hash of w. Each half is then a NaN as f16 and
  // as bf16 (all-ones exponent, nonzero mantissa), the word a NaN as f32, and b1 and b3 NaNs as
  // e4m3 and e5m2; and the bytes differ from word to word, so a store of one value everywhere
  // (-1, 0xff bytes) changes them and is seen as a write. 2^16 patterns per word.
  static const std::vector<unsigned char> pattern = [] {
    std::vector<unsigned char> bytes(kMaxSharedBytes);
    auto nonzero7 = [](uint64_t bits) { return static_cast<unsigned char>((bits & 0x7f) != 0 ? bits & 0x7f : 1); };
    for (size_t word = 0; word < bytes.size() / 4; ++word) {
      uint64_t h = (word + 1) * 0x9e3779b97f4a7c15ull;
      h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
      h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
      h ^= h >> 31;
      bytes[4 * word] = static_cast<unsigned char>(0x80 | nonzero7(h));
      bytes[4 * word + 1] = static_cast<unsigned char>(0x7f | (((h >> 7) & 1) << 7));
      bytes[4 * word + 2] = static_cast<unsigned char>(0x80 | nonzero7(h >> 8));
      bytes[4 * word + 3] = static_cast<unsigned char>(0x7f | (((h >> 15) & 1) << 7));
    }
    return bytes;
  }();
  return pattern.data();
}

void setup_cta(Cta& c, size_t shared_bytes) {
  const int n = c.thread_count;
  c.clock_size = static_cast<uint32_t>(2 * n) + kBarrierSlots;
  c.threads.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ThreadState& thread = c.threads[static_cast<size_t>(i)];
    thread.linear = i;
    thread.warp = i / 32;
    thread.lane = i % 32;
    thread.index = uint3{static_cast<unsigned>(i % c.block_dim.x), static_cast<unsigned>(i / c.block_dim.x % c.block_dim.y),
                         static_cast<unsigned>(i / (c.block_dim.x * c.block_dim.y))};
    thread.clock.assign(c.clock_size, 0);
    thread.clock[i] = 1;
    thread.clock[c.tcgen05_slot(i)] = 1;
    thread.tcgen05_clock = thread.clock;
    thread.slice_clock = 1;
  }
  c.warp_collectives.resize(static_cast<size_t>((n + 31) / 32));
  // Registers per thread at launch: the 64K-register file split evenly, in units of 8.
  const int per_thread = std::min(255, 65536 / n / 8 * 8);
  for (auto& thread : c.threads) thread.registers = static_cast<uint32_t>(per_thread);
  c.register_pool = 65536 - per_thread * n;
  // Shared memory: address a is shared[a]; the bytes start poisoned (shared_poison).
  c.shared_bytes = shared_bytes;
  c.shared = shared_window(shared_bytes);
  std::memcpy(c.shared, shared_poison(), shared_bytes);
  c.chunks.resize((shared_bytes + 15) / 16);
  c.async_blocks.assign((shared_bytes + 1023) / 1024, false);
  c.tmem.assign(128 * 512, 0xffffffffu);
  c.tmem_owner.assign(512, 0);
  c.tmem_history.resize(4 * 512);
}

// --- thread primitives ---------------------------------------------------------------------------

const uint3& current_thread_index() { return self().index; }
const uint3& current_block_index() { return cta().block_index; }
const dim3& current_block_dim() { return cta().block_dim; }
const dim3& current_grid_dim() { return cta().grid_dim; }
unsigned char* dynamic_shared_memory() { return cta().shared + kSharedBase; }

uint32_t shared_address(const void* pointer, int line) {
  Cta& c = cta();
  const auto* p = static_cast<const unsigned char*>(pointer);
  if (p < c.shared || p >= c.shared + c.shared_bytes) {
    report(HazardKind::invalid_operand, line, "__cvta_generic_to_shared of a pointer outside the CTA's shared memory");
    return 0;
  }
  return static_cast<uint32_t>(p - c.shared);
}

namespace ptx {
void shared_read(const void* address, uint32_t bytes, int line) {
  ThreadState& thread = self();
  const uint32_t first = shared_address(address, line);
  if (first + uint64_t{bytes} > cta().shared_bytes) {
    report(HazardKind::invalid_operand, line, "an ordinary load past the CTA's shared memory");
    return;
  }
  check_generic_read(thread, first, bytes, line);
}
}  // namespace ptx

void syncthreads(int line) { named_barrier_wait(0, static_cast<uint32_t>(cta().thread_count), true, line, "__syncthreads()"); }

namespace {

struct CollectiveWait final : Wait {
  WarpCollective& collective;
  uint64_t generation;
  int warp;
  const char* what;
  CollectiveWait(WarpCollective& c, uint64_t g, int w, const char* name) : collective(c), generation(g), warp(w), what(name) {}
  bool ready() override { return collective.generation != generation; }
  std::string describe() override {
    return std::string(what) + " of warp " + std::to_string(warp) + " (" + std::to_string(collective.arrived) +
           " of its lanes arrived)";
  }
};

}  // namespace

uint64_t warp_collective(uint64_t value, int source_lane_xor, const char* what, int line, uint64_t* all_lanes) {
  Cta& c = cta();
  ThreadState& thread = self();
  scan_generic_writes(thread, line);
  WarpCollective& collective = c.warp_collectives[static_cast<size_t>(thread.warp)];
  const int lanes = std::min(32, c.thread_count - thread.warp * 32);
  const uint64_t generation = collective.generation;
  collective.values[generation % 2][thread.lane] = value;
  release(thread, collective.accumulating);
  if (++collective.arrived == lanes) {
    collective.released = collective.accumulating;
    collective.accumulating.assign(c.clock_size, 0);
    collective.arrived = 0;
    ++collective.generation;
  } else {
    CollectiveWait wait(collective, generation, thread.warp, what);
    block(wait, line);
  }
  acquire(thread, collective.released);
  if (all_lanes)
    for (int lane = 0; lane < 32; ++lane) all_lanes[lane] = collective.values[generation % 2][lane];
  const int source = thread.lane ^ source_lane_xor;
  return collective.values[generation % 2][source < lanes ? source : thread.lane];
}

uint64_t shuffle_xor(unsigned mask, uint64_t value, int lane_mask, int line) {
  if (mask != 0xffffffffu)
    report(HazardKind::invalid_operand, line, "__shfl_xor_sync with a partial mask is not emulated (the emitter uses 0xffffffff)");
  return warp_collective(value, lane_mask & 31, "__shfl_xor_sync", line, nullptr);
}

uint64_t shuffle_index(unsigned mask, uint64_t value, int source_lane, int line) {
  if (mask != 0xffffffffu)
    report(HazardKind::invalid_operand, line, "__shfl_sync with a partial mask is not emulated (the emitter uses 0xffffffff)");
  uint64_t lanes[32];
  warp_collective(value, 0, "__shfl_sync", line, lanes);
  const int source = source_lane & 31, present = std::min(32, cta().thread_count - self().warp * 32);
  return source < present ? lanes[source] : value;
}

void syncwarp(unsigned mask, int line) {
  (void)mask;
  warp_collective(0, 0, "__syncwarp", line, nullptr);
}

void trap(int line) {
  report_fatal("trap", line, "__trap() was reached (the kernel's architecture guard did not match: build with the emulation macro of its target)");
  stop_cta();
  std::abort();  // not reached
}

}  // namespace tilec_emu
