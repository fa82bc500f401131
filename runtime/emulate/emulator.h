// runtime/emulate/emulator.h — the emulator's state: CTAs of fibers, synchronization objects,
// asynchronous operations and the happens-before checker. Internal to runtime/emulate/.
//
// Model (docs/emulation.md, "The model"):
//   - A CTA runs on one OS thread. Each CUDA thread is a fiber (Boost.Context) that runs until it
//     blocks (a barrier, an mbarrier wait, a warp collective, a wait_group); the CTA's scheduler
//     then picks the next runnable fiber (in order, or at random under the random policy).
//   - Asynchronous operations (TMA loads and stores, WGMMA, tcgen05.mma/commit) are queued at
//     issue and performed — their reads and writes happen — at a point the policy picks: at issue
//     (eager), only when no fiber can run without them (lazy), or at random scheduling points.
//   - Every synchronization carries a vector clock. Slots: one per thread (its ordinary order),
//     one per thread for its tcgen05 order (what tcgen05 fences publish), one per mbarrier (its
//     completed phases). Shared-memory chunks (16 bytes) and TMEM cells (a quarter of the lanes ×
//     one column) remember their last writer and their readers since; each access by an
//     asynchronous operation is checked, at issue, against them (docs/emulation.md lists the
//     checks). Ordinary stores are found by comparing shared memory with a shadow copy at each
//     fiber switch, fence and acquire (they are not instrumented; ordinary loads are not seen).
#pragma once

#include <boost/context/fiber.hpp>

#include <cstdlib>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/emulate/include/tilec_emulate.h"
#include "runtime/emulate/layouts.h"
#include "runtime/emulate/tensor_ops.h"

namespace tilec::runtime {
class Executor;
}

namespace tilec_emu {

enum class Policy { eager, lazy, random };

// Which end of each allocation a guard page borders (global_memory.cpp).
enum class Bounds { end, start };

struct Options {
  Policy policy = Policy::eager;
  Bounds bounds = Bounds::end;
  uint64_t seed = 1;
  int sms = 4;
  unsigned workers = 1;
  bool hazards = true;
  std::string cu_path;
};
const Options& options();

// --- vector clocks ---------------------------------------------------------------------------
using Clock = std::vector<uint32_t>;
void join(Clock& into, const Clock& from);

// An epoch (slot, clock): whoever has clock[slot] ≥ value is ordered after the event.
struct Epoch {
  uint32_t slot = 0;
  uint32_t value = 0;
};

// --- asynchronous operations -----------------------------------------------------------------
enum class AsyncKind { tma_load, tma_store, wgmma, tcgen05_mma, tcgen05_commit };

struct Cta;
struct ThreadState;

struct AsyncOp {
  AsyncKind kind;
  uint32_t id = 0;
  int issuer = 0;   // linear thread id
  int line = 0;     // .cu line of the issuing helper's call
  bool performed = false;
  bool formed = true;  // wgmma: all 128 threads of the warpgroup have issued it
  bool invalid = false;  // an operand was reported invalid: performing it changes nothing
  uint64_t sequence = 0;  // wgmma: index in its warpgroup; tcgen05: index among its issuer's ops
  Clock issue_clock;      // tcgen05.commit: the issuer's clock, which its arrival carries
  // Who is ordered after this operation's completion (mbarrier phases, waiting threads).
  std::vector<Epoch> completion;
  // TMA
  TensorMapFields map{};
  int32_t coordinates[5] = {};  // element coordinates, dimension 0 first
  uint32_t shared_address = 0;  // destination (load) or source (store)
  bool add = false;             // store: cp.reduce.async.bulk .add (each element added, atomically)
  uint32_t barrier = 0;         // load: completes transaction bytes here
  uint32_t bytes = 0;
  // WGMMA
  int warpgroup = 0;
  int n = 0;
  ptx::Operand a_type = ptx::Operand::bf16, b_type = ptx::Operand::bf16;
  uint64_t a_descriptor = 0, b_descriptor = 0;
  bool register_a = false;
  bool scale_d = true;
  int trans_a = 0, trans_b = 0;
  // Per thread of the warpgroup (128): its n/2 accumulator registers, 32 bits each, holding
  // accumulator_format values (f32, or s32 for s8/u8 operands).
  std::vector<void*> accumulators;
  layout::ElementFormat accumulator_format = layout::ElementFormat::f32;
  std::vector<uint32_t> a_fragments;      // 4 per thread
  int registered = 0;
  // tcgen05
  uint32_t tmem_address = 0;
  uint32_t idesc = 0;
  ptx::MmaKind mma_kind = ptx::MmaKind::f16;
  bool accumulate = false;
  std::vector<uint32_t> covered;  // commit: the mma ids it waits for
};
// "TMA store (cp.async.bulk.tensor)", "wgmma.mma_async", ...: what an operation is, for reports.
const char* async_op_name(const AsyncOp& op);

// --- synchronization objects --------------------------------------------------------------------
struct MBarrier {
  bool initialized = false;
  bool init_fenced = false;  // a fence.mbarrier_init or fence.proxy.async followed the init
  int init_thread = 0;
  uint32_t init_clock = 0;
  int init_line = 0;
  uint32_t expected = 0;
  int64_t pending = 0;
  int64_t transaction = 0;
  uint64_t completed_phases = 0;
  uint32_t slot = 0;  // its vector-clock slot
  Clock accumulating;
  Clock completed[2];  // the clock of the last completed phase of each parity
};

struct NamedBarrier {
  uint32_t expected = 0;
  uint32_t arrived = 0;
  uint64_t generation = 0;
  Clock accumulating;
  Clock released;
  std::vector<int> arrivals;  // threads arrived in the current generation (for reports)
};

struct WarpCollective {
  uint64_t generation = 0;
  int arrived = 0;
  uint64_t values[2][32] = {};
  Clock accumulating;
  Clock released;
};

// What a blocked fiber waits for (for the scheduler and the deadlock report).
struct Wait {
  virtual ~Wait() = default;
  virtual bool ready() = 0;
  virtual std::string describe() = 0;
};

struct ThreadState {
  int linear = 0;
  int warp = 0;
  int lane = 0;
  uint3 index{};
  boost::context::fiber fiber;      // resumes this thread (held by the scheduler)
  boost::context::fiber scheduler;  // resumes the scheduler (held by the thread)
  Wait* waiting = nullptr;
  int wait_line = 0;
  bool done = false;
  bool started = false;
  Clock clock;           // ordinary order
  Clock tcgen05_clock;   // the clock tcgen05 operations of this thread are ordered after
  uint32_t slice_clock = 0;  // own clock at the last generic-write scan
  std::vector<uint32_t> unfenced_chunks;  // generic writes since its last fence.proxy.async
  // WGMMA
  bool wgmma_fenced = false;
  uint64_t wgmma_issued = 0;
  std::vector<std::vector<uint32_t>> wgmma_groups;   // committed, oldest first
  std::vector<uint32_t> wgmma_uncommitted;
  // bulk groups (TMA stores)
  std::vector<std::vector<uint32_t>> bulk_groups;
  std::vector<uint32_t> bulk_uncommitted;
  // TMA stores whose writes to global memory this thread has not waited for: a .read wait frees
  // their shared source, only cp.async.bulk.wait_group (without .read) their writes.
  std::vector<uint32_t> bulk_writing;
  // tcgen05
  std::vector<uint32_t> tcgen05_recent;   // mma ids that later commits still vouch for
  uint64_t tcgen05_issued = 0, tcgen05_performed = 0;
  std::vector<uint32_t> tcgen05_fence_clocks;    // own clock at each before_thread_sync
  // tcgen05.ld results not yet waited for: the registers hold a NaN until tcgen05.wait::ld (the
  // PTX ISA leaves them undefined), which writes the loaded values.
  struct PendingTmemLoad {
    uint32_t* values;
    std::vector<uint32_t> loaded;
    int line;
  };
  std::vector<PendingTmemLoad> tmem_loads;
  uint32_t registers = 0;  // setmaxnreg
  std::vector<uint32_t> initialized_barriers;  // mbarrier.init since its last init fence
};

// A checked ordinary read of a chunk (tilec_shared_read): the reader, its own clock entry at the
// read (ordered before whoever acquires its next release) and the .cu line.
struct GenericRead {
  int thread = 0;
  uint32_t clock = 0;
  int line = 0;
};

// A shared-memory chunk's history (16 bytes).
struct ChunkHistory {
  uint32_t async_writer = 0;           // op id + 1, 0 = none
  int generic_writer = -1;             // thread, -1 = none
  uint32_t generic_clock = 0;
  bool generic_fenced = true;
  int generic_line = 0;                // the sync point where the write was found
  uint8_t swizzle = 0xff;              // the swizzle mode of the TMA write (0xff: not TMA)
  std::vector<uint32_t> async_readers;  // op ids since the last write
  std::vector<GenericRead> generic_readers;  // checked ordinary reads since the last write, one per thread
};

// A TMEM cell group's history (32 lanes × 1 column).
struct TmemRead {
  int thread = 0;
  uint32_t fences_before = 0;  // the reader's before_thread_sync count at the read
  uint32_t clock = 0;          // the reader's own clock at the read
  int line = 0;
};
struct TmemHistory {
  uint32_t writer = 0;  // op id + 1
  std::vector<TmemRead> readers;
};

struct Hazard;

struct Cta {
  uint3 block_index{};
  dim3 block_dim, grid_dim;
  int thread_count = 0;
  int cluster = 1;
  std::vector<ThreadState> threads;
  ThreadState* current = nullptr;
  std::mt19937_64 random;

  // shared memory: base is 1024-aligned; address a is base[a]
  unsigned char* shared = nullptr;
  size_t shared_bytes = 0;
  std::vector<unsigned char> shadow;           // as last scanned (generic-write detection)
  std::vector<ChunkHistory> chunks;
  std::vector<bool> async_blocks;              // 1 KiB blocks written by TMA (not scanned)
  bool scanning = false;
  bool stopped = false;  // a fatal report: the scheduler stops and unwinds every fiber

  // barriers
  NamedBarrier named[16];
  std::vector<WarpCollective> warp_collectives;
  std::map<uint32_t, MBarrier> mbarriers;
  uint32_t next_barrier_slot = 0;
  uint32_t clock_size = 0;

  // asynchronous operations
  std::vector<std::unique_ptr<AsyncOp>> ops;  // by id
  std::deque<uint32_t> pending;               // ids not performed yet, in issue order
  std::vector<std::vector<uint32_t>> forming_wgmma;  // per warpgroup: ids by issue sequence
  std::vector<uint64_t> wgmma_performed;             // per warpgroup: how many have been performed

  // TMEM
  std::vector<uint32_t> tmem;        // 128 lanes × 512 columns
  std::vector<int> tmem_owner;       // per column: free (0), or the .cu line of its tcgen05.alloc
  std::vector<TmemHistory> tmem_history;  // 4 lane quarters × 512 columns
  bool tmem_permit_relinquished = false;
  int register_pool = 0;

  uint32_t thread_slot(int thread) const { return static_cast<uint32_t>(thread); }
  uint32_t tcgen05_slot(int thread) const { return static_cast<uint32_t>(thread_count + thread); }
};

// Device memory between guard pages: allocate_global and free_global (tilec_emulate.h).
bool write_all(const char* text, size_t length);  // to stderr, from a signal handler too
// sm_90/sm_100: a CTA's dynamic shared memory is at most 227 KiB; with the 16-byte offset it
// starts at (cta.cpp) and rounded up to 1024, a CTA's shared memory is at most kMaxSharedBytes.
constexpr size_t kMaxDynamicShared = 232448;
constexpr size_t kMaxSharedBytes = kMaxDynamicShared + 1024;
// This OS thread's shared-memory window for a CTA of `bytes` (at most kMaxSharedBytes): 1024-
// aligned, its bytes ending where a guard page begins (global_memory.cpp); reused by the next CTA.
unsigned char* shared_window(size_t bytes);
// Who runs on this OS thread now: "thread T (warp W, warpgroup G) of CTA (x, y, z)", or the
// emulator itself between threads, into `out` (the fault handler's, which exits right after).
void describe_running_thread(char* out, size_t size);

// The bytes a CTA's shared memory starts with, from address 0 on (NaNs of every 16- and 32-bit
// float type, differing from word to word: cta.cpp).
const unsigned char* shared_poison();

// Launch bookkeeping (host_api.cpp, cta.cpp).
void setup_cta(Cta& c, size_t shared_bytes);
void set_error_detail(const std::string& detail);
cudaError_t record_launch_error(cudaError_t error);
void note_launch(uint64_t ctas, uint64_t threads);
tilec::runtime::Executor& executor();

// Barriers and warp collectives (cta.cpp, ptx_barriers.cpp).
// bar.sync (wait) or bar.arrive on named barrier `id` (0 is __syncthreads') for `threads` threads.
void named_barrier_wait(uint32_t id, uint32_t threads, bool wait, int line, const char* what);
// All lanes of the warp meet; returns the value of lane (lane ^ source_lane_xor); with all_lanes,
// copies every lane's value there.
uint64_t warp_collective(uint64_t value, int source_lane_xor, const char* what, int line, uint64_t* all_lanes);

// The running CTA and thread (valid inside a kernel).
Cta& cta();
ThreadState& self();

// Blocks the running fiber until wait.ready(); the scheduler runs others meanwhile.
void block(Wait& wait, int line);
// Before an acquire or a fence: attributes ordinary stores since the last scan to the thread.
void scan_generic_writes(ThreadState& thread, int line);
// Releases: the thread's clock goes into `into`, then its own entry advances.
void release(ThreadState& thread, Clock& into);
void acquire(ThreadState& thread, const Clock& from);

// Asynchronous operations (ptx_async.cpp).
AsyncOp& new_async_op(AsyncKind kind, int line);
void submit(AsyncOp& op);        // queued; performed now under the eager policy
bool performable(const AsyncOp& op);
void perform(AsyncOp& op);
// Eager policy: performs every pending operation that can be performed now, in issue order.
void perform_pending_for_eager();

// MBarriers (ptx_barriers.cpp).
MBarrier& mbarrier_at(uint32_t address, int line, const char* what);
void mbarrier_arrive_from(MBarrier& barrier, const Clock& clock, int count);
void mbarrier_complete_tx(MBarrier& barrier, uint32_t bytes, AsyncOp& op);

// Hazards (hazards.cpp).
enum class HazardKind {
  race,                // an access not ordered after the access it conflicts with
  missing_proxy_fence,
  missing_tcgen05_fence,
  missing_wgmma_fence,
  missing_barrier_init_fence,
  staging_reused,
  unordered_stores,    // TMA stores to overlapping global memory with no wait for the first's writes
  layout_mismatch,
  uninitialized_read,
  barrier_misuse,
  register_pool,
  tmem_misuse,
  invalid_operand,
};
void report(HazardKind kind, int line, const std::string& message, std::vector<std::string> notes = {});
// A deadlock, trap or misuse the CTA cannot go on after; the caller then calls stop_cta().
void report_fatal(const std::string& kind, int line, const std::string& message, std::vector<std::string> notes = {});
void stop_cta();  // inside a fiber: unwinds it (the scheduler stops the others)
bool fatal_reported();
bool hazards_reported();
void print_reports();  // sorted by line, each kind and line once (with a count)
void check_cta_exit();  // the CTA's last thread exited: TMEM, TMA stores and loads it left behind
std::string describe_thread(int thread);
// "pipe_a_full[2] (shared 0x38050)" when the .cu names the barrier array, else the address.
std::string barrier_name(uint32_t address);
std::string cu_location(int line);

// Access checks made at issue of an asynchronous operation.
bool ordered_after(const Clock& clock, const AsyncOp& op);
// The 16-byte chunks of [first, first + count), or false (reported) when outside shared memory.
bool chunk_range(uint32_t first, uint32_t count, std::vector<uint32_t>& chunks, AsyncOp& op);
// `swizzle`: the layout::Swizzle the operation reads or writes with, -1 when it has none.
// `generic_order`, where given, orders the reader after generic (st.shared) writes instead of
// `clock`: tcgen05.mma's, the clock of its thread's last tcgen05.fence::after_thread_sync.
void check_async_read(AsyncOp& reader, const Clock& clock, const std::vector<uint32_t>& chunks, int swizzle,
                      const Clock* generic_order = nullptr);
void check_async_write(AsyncOp& writer, const Clock& clock, const std::vector<uint32_t>& chunks, int swizzle);
// An ordinary read of shared bytes [first, first + count) by `thread` (tilec_shared_read): the
// last TMA write of each chunk must be complete for the thread; the read is remembered, so that
// the next TMA write of the chunk is checked against it (check_async_write).
void check_generic_read(ThreadState& thread, uint32_t first, uint32_t count, int line);
void check_tmem_write(AsyncOp& writer, const Clock& clock, int lanes, uint32_t column, uint32_t columns);
// An overwrite (or free) of TMEM by `issuer` at `line`, described as `what`: every earlier
// tcgen05.ld of those cells must be released (before_thread_sync) and acquired by `clock`.
void check_tmem_overwrite(int issuer, int line, const std::string& what, const Clock& clock, int lanes,
                          uint32_t column, uint32_t columns);
void check_tmem_read(ThreadState& thread, int line, int quarter, uint32_t column, uint32_t columns);
void enable_scanning();
void refresh_shadow(uint32_t first, uint32_t count);

}  // namespace tilec_emu
