// runtime/emulate/ptx_async.cpp — the asynchronous instructions: TMA loads and stores with their
// mbarrier transactions and bulk groups, WGMMA (sm_90a) and tcgen05 with TMEM (sm_100a).
//
//   1. Issue: the instruction's operands are validated (tensor map, descriptors, TMEM columns),
//      its shared-memory and TMEM accesses are checked against the happens-before history
//      (hazards.cpp) with the issuing thread's clock, and an AsyncOp is queued.
//   2. Perform (when the policy chooses, ptx_async's `perform`): the data moves — tensor_ops.h
//      computes what the engine computes — and the operation completes: a TMA load completes its
//      bytes on its mbarrier, a tcgen05.commit arrives on its mbarrier, a WGMMA writes the
//      accumulator registers of its 128 threads.
//   3. Observation: wgmma.wait_group and cp.async.bulk.wait_group block until the groups they
//      name are performed, then record the thread as ordered after those operations.
// Ordering between operations of one engine: a warpgroup's WGMMAs and a thread's tcgen05
// operations are performed in issue order (the accumulator chains through them); TMA
// operations in any order.
#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "runtime/emulate/emulator.h"

namespace tilec_emu {

namespace {

// The tensor-map data types cp.reduce.async.bulk.tensor's .add takes that tilec's stores use.
constexpr uint32_t kMapU32 = 2, kMapS32 = 3, kMapF16 = 6, kMapF32 = 7, kMapBf16 = 9;
bool adds(uint32_t data_type) {
  return data_type == kMapU32 || data_type == kMapS32 || data_type == kMapF16 || data_type == kMapF32 ||
         data_type == kMapBf16;
}

// One element of a reducing TMA store, added with the emulated atomicAdd (tilec_emulate.h) in the
// map's type: the same whole, atomic add in some order as an adding store's (integers wrap; f16
// and bf16 add in f32 and round back to nearest even).
template <typename T>
void add_as(uint8_t* element, const uint8_t* value) {
  T operand;
  std::memcpy(static_cast<void*>(&operand), value, sizeof operand);
  atomicAdd(reinterpret_cast<T*>(element), operand);
}

void add_element(uint32_t data_type, uint8_t* element, const uint8_t* value) {
  switch (data_type) {
    case kMapF32: add_as<float>(element, value); break;
    case kMapF16: add_as<__half>(element, value); break;
    case kMapBf16: add_as<__nv_bfloat16>(element, value); break;
    default: add_as<uint32_t>(element, value); break;  // s32 and u32 wrap alike
  }
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

OperandType operand_type(ptx::Operand type) {
  switch (type) {
    case ptx::Operand::f16: return OperandType::f16;
    case ptx::Operand::bf16: return OperandType::bf16;
    case ptx::Operand::e4m3: return OperandType::e4m3;
    case ptx::Operand::e5m2: return OperandType::e5m2;
    case ptx::Operand::tf32: return OperandType::tf32;
    case ptx::Operand::s8: return OperandType::s8;
    case ptx::Operand::u8: return OperandType::u8;
  }
  return OperandType::bf16;
}

bool is_integer(ptx::Operand type) { return operand_is_integer(operand_type(type)); }

layout::MmaKind layout_kind(ptx::MmaKind kind) {
  switch (kind) {
    case ptx::MmaKind::f16: return layout::MmaKind::f16;
    case ptx::MmaKind::tf32: return layout::MmaKind::tf32;
    case ptx::MmaKind::f8f6f4: return layout::MmaKind::f8f6f4;
    case ptx::MmaKind::i8: return layout::MmaKind::i8;
  }
  return layout::MmaKind::f16;
}

// The bytes of one A or B element of a tcgen05.mma of `kind` (K per instruction is 32 bytes).
int element_bytes_of(ptx::MmaKind kind) {
  switch (kind) {
    case ptx::MmaKind::f16: return 2;
    case ptx::MmaKind::tf32: return 4;
    case ptx::MmaKind::f8f6f4: return 1;
    case ptx::MmaKind::i8: return 1;
  }
  return 2;
}

const TensorMapFields& tensor_map(const CUtensorMap* map, uint32_t rank, int line, const char* what) {
  const auto* fields = reinterpret_cast<const TensorMapFields*>(map);
  if (!map || fields->magic != kTensorMapMagic) {
    report_fatal("invalid operand", line,
                 std::string(what) + " with a tensor map that cuTensorMapEncodeTiled did not encode");
    stop_cta();
  }
  if (fields->rank != rank) {
    report_fatal("invalid operand", line, std::string(what) + " with a tensor map of rank " + std::to_string(fields->rank));
    stop_cta();
  }
  return *fields;
}

// The 16-byte chunks an MMA operand reads: `mn` rows (or columns) by `k` elements.
bool operand_chunks(const layout::MatrixDescriptor& descriptor, bool mn_major, int element_bytes, int mn, int k,
                    std::vector<uint32_t>& chunks, AsyncOp& op, const char* name) {
  chunks.clear();
  const int per_chunk = 16 / element_bytes;
  const size_t limit = cta().chunks.size();
  for (int i = 0; i < mn; i += mn_major ? per_chunk : 1)
    for (int j = 0; j < k; j += mn_major ? 1 : per_chunk) {
      const uint32_t chunk = layout::operand_address(descriptor, mn_major, element_bytes, i, j) / 16;
      if (chunk >= limit) {
        report(HazardKind::invalid_operand, op.line,
               std::string(async_op_name(op)) + ": its " + name + " operand reaches shared address " +
                   hex(uint64_t{chunk} * 16) + ", past the CTA's " + std::to_string(cta().shared_bytes) + " bytes");
        op.invalid = true;
        return false;
      }
      chunks.push_back(chunk);
    }
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  return true;
}

// Operations of a thread's wait: every one in the groups older than the `pending` newest.
struct GroupsWait final : Wait {
  std::vector<std::vector<uint32_t>>& groups;
  size_t retire;
  const char* what;
  GroupsWait(std::vector<std::vector<uint32_t>>& g, size_t r, const char* w) : groups(g), retire(r), what(w) {}
  bool ready() override {
    Cta& c = cta();
    for (size_t i = 0; i < retire; ++i)
      for (uint32_t id : groups[i])
        if (!c.ops[id]->performed) return false;
    return true;
  }
  std::string describe() override {
    std::string text = std::string(what) + " (";
    Cta& c = cta();
    int outstanding = 0;
    for (size_t i = 0; i < retire; ++i)
      for (uint32_t id : groups[i]) outstanding += !c.ops[id]->performed;
    return text + std::to_string(outstanding) + " operations of its older groups outstanding)";
  }
};

// An mbarrier the async proxy (TMA, tcgen05.commit) completes: its init must have been fenced.
MBarrier& async_proxy_barrier(uint32_t address, int line, const char* what) {
  MBarrier& barrier = mbarrier_at(address, line, what);
  if (!barrier.init_fenced)
    report(HazardKind::missing_barrier_init_fence, line,
           std::string(what) + " mbarrier " + barrier_name(address) +
               ", whose initialization was not followed by fence.mbarrier_init or fence.proxy.async: the async "
               "proxy may not see it",
           {cu_location(barrier.init_line) + ": note: initialized here"});
  return barrier;
}

void wait_for_groups(ThreadState& thread, std::vector<std::vector<uint32_t>>& groups, int pending, int line,
                     const char* what) {
  scan_generic_writes(thread, line);
  const size_t keep = static_cast<size_t>(std::max(pending, 0));
  if (groups.size() <= keep) return;
  const size_t retire = groups.size() - keep;
  GroupsWait wait(groups, retire, what);
  block(wait, line);
  Cta& c = cta();
  // The thread now knows these operations are complete: it is ordered after them.
  const Epoch observed{c.thread_slot(thread.linear), thread.clock[thread.linear]};
  for (size_t i = 0; i < retire; ++i)
    for (uint32_t id : groups[i]) c.ops[id]->completion.push_back(observed);
  groups.erase(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(retire));
}

// The warpgroup's accumulator registers (Accumulator values: float for f32, int32_t for s32) as
// the dense 64×n D, row-major, and back: register r of thread t holds D at wgmma_accumulator(t, r)
// (PTX gives s32 accumulators the f32 layout).
template <typename Accumulator>
std::vector<Accumulator> dense_accumulators(const AsyncOp& op) {
  std::vector<Accumulator> d(static_cast<size_t>(64 * op.n));
  for (int t = 0; t < 128; ++t) {
    const auto* registers = static_cast<const Accumulator*>(op.accumulators[static_cast<size_t>(t)]);
    for (int r = 0; r < op.n / 2; ++r) {
      const layout::RowColumn at = layout::wgmma_accumulator(t, r);
      d[static_cast<size_t>(at.row * op.n + at.column)] = registers[r];
    }
  }
  return d;
}

template <typename Accumulator>
void store_accumulators(AsyncOp& op, const std::vector<Accumulator>& d) {
  for (int t = 0; t < 128; ++t) {
    auto* registers = static_cast<Accumulator*>(op.accumulators[static_cast<size_t>(t)]);
    for (int r = 0; r < op.n / 2; ++r) {
      const layout::RowColumn at = layout::wgmma_accumulator(t, r);
      registers[r] = d[static_cast<size_t>(at.row * op.n + at.column)];
    }
  }
}

// s8/u8 operands from shared memory, s32 accumulators.
void perform_integer_wgmma(Cta& c, AsyncOp& op) {
  std::vector<int32_t> d = dense_accumulators<int32_t>(op);
  if (!op.invalid)
    wgmma_compute(c.shared, op.n, operand_type(op.a_type), operand_type(op.b_type), op.a_descriptor, op.b_descriptor,
                  op.scale_d, d.data());
  store_accumulators(op, d);
}

// Floating-point operands, A from shared memory or registers, f32 accumulators.
void perform_float_wgmma(Cta& c, AsyncOp& op) {
  const int n = op.n;
  std::vector<float> d = dense_accumulators<float>(op);
  std::vector<float> a;
  if (op.register_a) {
    // 64 × K, K = 32 bytes of the type: 16 two-byte or 32 one-byte elements per row.
    const OperandType type = operand_type(op.a_type);
    const int size = operand_bytes(type), k = 32 / size;
    a.assign(static_cast<size_t>(64 * k), 0.0f);
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < 4; ++r)
        for (int part = 0; part < 4 / size; ++part) {
          const layout::RowColumn at =
              size == 2 ? layout::wgmma_register_a_b16(t, r, part) : layout::wgmma_register_a_b8(t, r, part);
          const uint32_t bits = op.a_fragments[static_cast<size_t>(t * 4 + r)] >> (8 * size * part);
          const uint8_t bytes[2] = {static_cast<uint8_t>(bits & 0xff), static_cast<uint8_t>((bits >> 8) & 0xff)};
          a[static_cast<size_t>(at.row * k + at.column)] = operand_to_float(type, bytes);
        }
  }
  if (!op.invalid)
    wgmma_compute(c.shared, n, operand_type(op.a_type), operand_type(op.b_type), op.a_descriptor, op.trans_a != 0,
                  op.register_a ? a.data() : nullptr, op.b_descriptor, op.trans_b != 0, op.scale_d, d.data());
  store_accumulators(op, d);
}

void perform_wgmma(Cta& c, AsyncOp& op) {
  if (op.accumulator_format == layout::ElementFormat::s32) perform_integer_wgmma(c, op);
  else perform_float_wgmma(c, op);
  ++c.wgmma_performed[static_cast<size_t>(op.warpgroup)];
}

}  // namespace

const char* async_op_name(const AsyncOp& op) {
  switch (op.kind) {
    case AsyncKind::tma_load: return "TMA load (cp.async.bulk.tensor)";
    case AsyncKind::tma_store:
      return op.add ? "TMA reducing store (cp.reduce.async.bulk.tensor .add)" : "TMA store (cp.async.bulk.tensor)";
    case AsyncKind::wgmma: return "wgmma.mma_async";
    case AsyncKind::tcgen05_mma: return "tcgen05.mma";
    case AsyncKind::tcgen05_commit: return "tcgen05.commit";
  }
  return "?";
}

AsyncOp& new_async_op(AsyncKind kind, int line) {
  Cta& c = cta();
  if (!c.scanning && options().hazards) enable_scanning();
  auto op = std::make_unique<AsyncOp>();
  op->kind = kind;
  op->id = static_cast<uint32_t>(c.ops.size());
  op->issuer = c.current ? c.current->linear : 0;
  op->line = line;
  c.ops.push_back(std::move(op));
  return *c.ops.back();
}

bool performable(const AsyncOp& op) {
  Cta& c = cta();
  switch (op.kind) {
    case AsyncKind::wgmma:
      return op.formed && c.wgmma_performed[static_cast<size_t>(op.warpgroup)] == op.sequence;
    case AsyncKind::tcgen05_mma:
    case AsyncKind::tcgen05_commit:
      return c.threads[static_cast<size_t>(op.issuer)].tcgen05_performed == op.sequence;
    default: return true;
  }
}

void perform(AsyncOp& op) {
  Cta& c = cta();
  switch (op.kind) {
    case AsyncKind::tma_load: {
      if (!op.invalid) {
        tma_load(op.map, op.coordinates, c.shared, op.shared_address);
        refresh_shadow(op.shared_address, op.bytes);
      }
      MBarrier& barrier = c.mbarriers[op.barrier];
      mbarrier_complete_tx(barrier, op.bytes, op);
      break;
    }
    case AsyncKind::tma_store:
      if (!op.invalid) tma_store(op.map, op.coordinates, c.shared, op.shared_address, op.add ? add_element : nullptr);
      break;
    case AsyncKind::wgmma: perform_wgmma(c, op); break;
    case AsyncKind::tcgen05_mma: {
      if (!op.invalid) {
        const std::string error = tcgen05_mma_compute(c.shared, c.tmem.data(), op.tmem_address, op.a_descriptor,
                                                      op.b_descriptor, op.idesc,
                                                      layout_kind(op.mma_kind), op.accumulate);
        if (!error.empty()) report(HazardKind::invalid_operand, op.line, "tcgen05.mma: " + error);
      }
      ++c.threads[static_cast<size_t>(op.issuer)].tcgen05_performed;
      break;
    }
    case AsyncKind::tcgen05_commit: {
      MBarrier& barrier = c.mbarriers[op.barrier];
      const Epoch epoch{barrier.slot, static_cast<uint32_t>(barrier.completed_phases + 1)};
      // One epoch per mbarrier: a later phase of the same barrier orders no more than the first.
      for (uint32_t id : op.covered) {
        std::vector<Epoch>& completion = c.ops[id]->completion;
        if (std::none_of(completion.begin(), completion.end(), [&](const Epoch& e) { return e.slot == epoch.slot; }))
          completion.push_back(epoch);
      }
      mbarrier_arrive_from(barrier, op.issue_clock, 1);
      ++c.threads[static_cast<size_t>(op.issuer)].tcgen05_performed;
      break;
    }
  }
  op.performed = true;
  auto it = std::find(c.pending.begin(), c.pending.end(), op.id);
  if (it != c.pending.end()) c.pending.erase(it);
}

void perform_pending_for_eager() {
  Cta& c = cta();
  bool progress = true;
  while (progress) {
    progress = false;
    for (uint32_t id : c.pending)
      if (performable(*c.ops[id])) {
        perform(*c.ops[id]);
        progress = true;
        break;
      }
  }
}

void submit(AsyncOp& op) {
  cta().pending.push_back(op.id);
  if (options().policy == Policy::eager) perform_pending_for_eager();
}

namespace ptx {

// --- TMA ---------------------------------------------------------------------------------------

namespace {

// cp.async.bulk.tensor.{2,3,4}d (load): the box at `coordinates` (as many as the map's rank).
void issue_tma_load(uint32_t destination, const CUtensorMap* map, std::initializer_list<int32_t> coordinates,
                    uint32_t barrier_address, int line, const char* what) {
  Cta& c = cta();
  ThreadState& thread = self();
  const TensorMapFields& fields = tensor_map(map, static_cast<uint32_t>(coordinates.size()), line, what);
  async_proxy_barrier(barrier_address, line, "the TMA load completes on");
  AsyncOp& op = new_async_op(AsyncKind::tma_load, line);
  op.map = fields;
  std::copy(coordinates.begin(), coordinates.end(), op.coordinates);
  op.shared_address = destination;
  op.barrier = barrier_address;
  op.bytes = tma_box_bytes(fields);
  if (destination % 128 != 0)
    report(HazardKind::invalid_operand, line, "TMA load into shared address " + hex(destination) + ", which is not 128-byte aligned");
  std::vector<uint32_t> chunks;
  if (chunk_range(destination, op.bytes, chunks, op)) {
    check_async_write(op, thread.clock, chunks, static_cast<int>(tensor_map_swizzle(fields)));
    for (uint32_t chunk : chunks) c.async_blocks[chunk / 64] = true;
  }
  submit(op);
}

// Whether two TMA stores write some element in common: maps of one tensor (same address, rank and
// strides) whose boxes, cut to the tensor, intersect in every dimension.
bool stores_overlap(const AsyncOp& a, const AsyncOp& b) {
  const TensorMapFields &x = a.map, &y = b.map;
  if (x.global_address != y.global_address || x.rank != y.rank) return false;
  for (uint32_t d = 0; d < x.rank; ++d) {
    if (x.strides_bytes[d] != y.strides_bytes[d] || x.extents[d] != y.extents[d]) return false;
    const int64_t extent = static_cast<int64_t>(x.extents[d]);
    const int64_t begin = std::max<int64_t>({a.coordinates[d], b.coordinates[d], 0});
    const int64_t end = std::min<int64_t>({int64_t{a.coordinates[d]} + x.box[d], int64_t{b.coordinates[d]} + y.box[d],
                                           extent});
    if (begin >= end) return false;
  }
  return true;
}

// "(x, y)": a TMA operation's box coordinates, innermost first, as the instruction takes them.
std::string box_at(const AsyncOp& op) {
  std::string text = "(";
  for (uint32_t d = 0; d < op.map.rank; ++d) text += (d ? ", " : "") + std::to_string(op.coordinates[d]);
  return text + ")";
}

// Bulk operations are not ordered with one another: a TMA store that writes what an earlier one
// of the thread writes lands before or after it unless the thread waited for the earlier one's
// writes (cp.async.bulk.wait_group; .read waits for its reads only). Two reducing adds commute.
void check_store_order(ThreadState& thread, const AsyncOp& op) {
  if (!options().hazards || op.invalid) return;
  Cta& c = cta();
  for (uint32_t id : thread.bulk_writing) {
    const AsyncOp& earlier = *c.ops[id];
    if (earlier.invalid || (earlier.add && op.add) || !stores_overlap(earlier, op)) continue;
    report(HazardKind::unordered_stores, op.line,
           "thread " + std::to_string(op.issuer) + "'s TMA store of the box at " + box_at(op) +
               " writes elements its store of the box at " + box_at(earlier) + " (" + cu_location(earlier.line) +
               ") also writes, with no wait for that store's writes between them: either may land last "
               "(cp.async.bulk.wait_group, without .read, orders them)",
           {cu_location(earlier.line) + ": note: the earlier store"});
    return;
  }
}

// cp.async.bulk.tensor.{2,3,4}d (store): the box from `source` to `coordinates`; with `add`,
// cp.reduce.async.bulk.tensor's .add, which takes the types add_element adds.
void issue_tma_store(const CUtensorMap* map, uint32_t source, std::initializer_list<int32_t> coordinates, int line,
                     const char* what, bool add = false) {
  ThreadState& thread = self();
  scan_generic_writes(thread, line);
  const TensorMapFields& fields = tensor_map(map, static_cast<uint32_t>(coordinates.size()), line, what);
  AsyncOp& op = new_async_op(AsyncKind::tma_store, line);
  op.map = fields;
  op.add = add;
  if (add && !adds(fields.data_type)) {
    report(HazardKind::invalid_operand, line,
           std::string(what) + " of a tensor map of data type " + std::to_string(fields.data_type) +
               " (its .add takes f32, f16, bf16, s32 and u32 here)");
    op.invalid = true;
  }
  std::copy(coordinates.begin(), coordinates.end(), op.coordinates);
  op.shared_address = source;
  op.bytes = tma_box_bytes(fields);
  if (source % 128 != 0)
    report(HazardKind::invalid_operand, line, "TMA store from shared address " + hex(source) + ", which is not 128-byte aligned");
  std::vector<uint32_t> chunks;
  if (chunk_range(source, op.bytes, chunks, op))
    check_async_read(op, thread.clock, chunks, static_cast<int>(tensor_map_swizzle(fields)));
  check_store_order(thread, op);
  thread.bulk_uncommitted.push_back(op.id);
  thread.bulk_writing.push_back(op.id);
  submit(op);
}

}  // namespace

void tma_load_2d(uint32_t destination, const CUtensorMap* map, int32_t inner, int32_t outer, uint32_t barrier_address,
                 int line) {
  issue_tma_load(destination, map, {inner, outer}, barrier_address, line, "cp.async.bulk.tensor.2d (load)");
}

void tma_load_3d(uint32_t destination, const CUtensorMap* map, int32_t inner, int32_t middle, int32_t outer,
                 uint32_t barrier_address, int line) {
  issue_tma_load(destination, map, {inner, middle, outer}, barrier_address, line, "cp.async.bulk.tensor.3d (load)");
}

void tma_store_2d(const CUtensorMap* map, uint32_t source, int32_t inner, int32_t outer, int line) {
  issue_tma_store(map, source, {inner, outer}, line, "cp.async.bulk.tensor.2d (store)");
}

void tma_reduce_add_2d(const CUtensorMap* map, uint32_t source, int32_t inner, int32_t outer, int line) {
  issue_tma_store(map, source, {inner, outer}, line, "cp.reduce.async.bulk.tensor.2d (add)", true);
}

void tma_store_3d(const CUtensorMap* map, uint32_t source, int32_t inner, int32_t middle, int32_t outer, int line) {
  issue_tma_store(map, source, {inner, middle, outer}, line, "cp.async.bulk.tensor.3d (store)");
}

void tma_load_4d(uint32_t destination, const CUtensorMap* map, int32_t column, int32_t middle, int32_t row,
                 int32_t batch, uint32_t barrier_address, int line) {
  issue_tma_load(destination, map, {column, middle, row, batch}, barrier_address, line,
                 "cp.async.bulk.tensor.4d (load)");
}

void tma_store_4d(const CUtensorMap* map, uint32_t source, int32_t column, int32_t middle, int32_t row, int32_t batch,
                  int line) {
  issue_tma_store(map, source, {column, middle, row, batch}, line, "cp.async.bulk.tensor.4d (store)");
}

void bulk_commit_group(int line) {
  (void)line;
  ThreadState& thread = self();
  thread.bulk_groups.push_back(std::move(thread.bulk_uncommitted));
  thread.bulk_uncommitted.clear();
}

void bulk_wait_group_read(int pending, int line) {
  wait_for_groups(self(), self().bulk_groups, pending, line, "cp.async.bulk.wait_group.read");
}

void bulk_wait_group(int pending, int line) {
  ThreadState& thread = self();
  wait_for_groups(thread, thread.bulk_groups, pending, line, "cp.async.bulk.wait_group");
  // Every store but those of the `pending` newest groups (and uncommitted ones) has written,
  // those a .read wait retired earlier included: later stores are ordered after them.
  std::vector<uint32_t> unwritten = thread.bulk_uncommitted;
  for (const auto& group : thread.bulk_groups) unwritten.insert(unwritten.end(), group.begin(), group.end());
  std::erase_if(thread.bulk_writing, [&](uint32_t id) {
    return std::find(unwritten.begin(), unwritten.end(), id) == unwritten.end();
  });
}

// --- WGMMA ---------------------------------------------------------------------------------------

void wgmma_fence(int line) {
  (void)line;
  self().wgmma_fenced = true;
}

void wgmma_commit_group(int line) {
  (void)line;
  ThreadState& thread = self();
  thread.wgmma_groups.push_back(std::move(thread.wgmma_uncommitted));
  thread.wgmma_uncommitted.clear();
}

void wgmma_wait_group(int pending, int line) {
  ThreadState& thread = self();
  wait_for_groups(thread, thread.wgmma_groups, pending, line, "wgmma.wait_group");
  // The accumulators are the thread's again: the next wgmma needs a wgmma.fence first.
  thread.wgmma_fenced = false;
}

namespace {

// One thread's wgmma.mma_async, either accumulator type (d: n/2 registers of accumulator_format,
// f32 or s32): the checks every form shares, then the thread joins its warpgroup's operation of
// the same issue sequence; the 128th thread forms it and queues it. `emulated` is false when the
// caller reported its operands as a form the emulator does not compute: the operation is then
// invalid (performing it leaves D as it is) but still ordered and checked like any other.
void issue_wgmma(void* d, layout::ElementFormat accumulator_format, bool emulated, int n, Operand a_type, Operand b_type,
                 uint64_t a_descriptor, const uint32_t* a_registers, uint64_t b_descriptor, bool scale_d, int scale_a,
                 int scale_b, int trans_a, int trans_b, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  if (!thread.wgmma_fenced)
    report(HazardKind::missing_wgmma_fence, line,
           "wgmma.mma_async by " + describe_thread(thread.linear) +
               " with no wgmma.fence since its accumulator registers were last accessible (kernel start or wgmma.wait_group)");
  if (scale_a != 1 || scale_b != 1)
    report(HazardKind::invalid_operand, line, "wgmma.mma_async with negated operands is not emulated");
  const int type_bytes = operand_bytes(operand_type(a_type));
  if (type_bytes != operand_bytes(operand_type(b_type)) || (type_bytes != 1 && a_type != b_type))
    report(HazardKind::invalid_operand, line, "wgmma.mma_async with A and B of different types other than e4m3 and e5m2");
  if (a_registers && (type_bytes == 4 || accumulator_format == layout::ElementFormat::s32))
    report(HazardKind::invalid_operand, line,
           "wgmma.mma_async with A from registers of a type other than f16/bf16/e4m3/e5m2 is not emulated");
  if (type_bytes != 2 && (trans_a != 0 || trans_b != 0))
    report(HazardKind::invalid_operand, line, "wgmma.mma_async transposes an 8-bit or tf32 operand: PTX reads those K-major only");
  const int warpgroup = thread.linear / 128;
  if (c.forming_wgmma.size() <= static_cast<size_t>(warpgroup)) {
    c.forming_wgmma.resize(static_cast<size_t>(warpgroup) + 1);
    c.wgmma_performed.resize(static_cast<size_t>(warpgroup) + 1, 0);
  }
  auto& forming = c.forming_wgmma[static_cast<size_t>(warpgroup)];
  const uint64_t sequence = thread.wgmma_issued++;
  AsyncOp* op = nullptr;
  if (sequence < forming.size()) {
    op = c.ops[forming[sequence]].get();
    if (op->a_descriptor != a_descriptor && !a_registers)
      report(HazardKind::invalid_operand, line, "wgmma.mma_async: the threads of warpgroup " + std::to_string(warpgroup) +
                                                    " pass different A descriptors (" + hex(op->a_descriptor) + ", " +
                                                    hex(a_descriptor) + ")");
    if (op->b_descriptor != b_descriptor || op->n != n || op->accumulator_format != accumulator_format)
      report(HazardKind::invalid_operand, line, "wgmma.mma_async: the threads of warpgroup " + std::to_string(warpgroup) +
                                                    " issue different instructions (B descriptors " + hex(op->b_descriptor) +
                                                    ", " + hex(b_descriptor) + ")");
  } else {
    op = &new_async_op(AsyncKind::wgmma, line);
    op->formed = false;
    op->sequence = sequence;
    op->warpgroup = warpgroup;
    op->n = n;
    op->a_type = a_type;
    op->b_type = b_type;
    op->a_descriptor = a_descriptor;
    op->b_descriptor = b_descriptor;
    op->register_a = a_registers != nullptr;
    op->scale_d = scale_d;
    op->trans_a = trans_a;
    op->trans_b = trans_b;
    op->accumulator_format = accumulator_format;
    op->accumulators.assign(128, nullptr);
    op->a_fragments.assign(128 * 4, 0);
    op->issue_clock = thread.clock;
    forming.push_back(op->id);
  }
  if (!emulated) op->invalid = true;
  const int member = thread.linear % 128;
  op->accumulators[static_cast<size_t>(member)] = d;
  if (a_registers)
    for (int r = 0; r < 4; ++r) op->a_fragments[static_cast<size_t>(member * 4 + r)] = a_registers[r];
  // The check uses the earliest clock among the warps' first lanes (each must be ordered).
  if (thread.lane == 0)
    for (size_t i = 0; i < op->issue_clock.size(); ++i) op->issue_clock[i] = std::min(op->issue_clock[i], thread.clock[i]);
  thread.wgmma_uncommitted.push_back(op->id);
  if (++op->registered < 128) return;

  // Formed: every thread of the warpgroup issued it. Check its shared-memory reads, then queue it.
  op->formed = true;
  const int element_bytes = type_bytes;
  const int k = 32 / element_bytes;
  std::vector<uint32_t> chunks;
  if (!op->register_a) {
    const layout::MatrixDescriptor a = layout::decode_sm90_descriptor(a_descriptor);
    if (!a.error.empty()) {
      report(HazardKind::invalid_operand, line, "wgmma.mma_async A descriptor " + hex(a_descriptor) + ": " + a.error);
      op->invalid = true;
    } else if (operand_chunks(a, trans_a != 0, element_bytes, 64, k, chunks, *op, "A")) {
      check_async_read(*op, op->issue_clock, chunks, static_cast<int>(a.swizzle));
    }
  }
  const layout::MatrixDescriptor b = layout::decode_sm90_descriptor(b_descriptor);
  if (!b.error.empty()) {
    report(HazardKind::invalid_operand, line, "wgmma.mma_async B descriptor " + hex(b_descriptor) + ": " + b.error);
    op->invalid = true;
  } else if (operand_chunks(b, trans_b != 0, element_bytes, n, k, chunks, *op, "B")) {
    check_async_read(*op, op->issue_clock, chunks, static_cast<int>(b.swizzle));
  }
  op->issue_clock.clear();
  submit(*op);
}

}  // namespace

void wgmma_mma_async(float* d, int n, Operand a_type, Operand b_type, uint64_t a_descriptor, const uint32_t* a_registers,
                     uint64_t b_descriptor, bool scale_d, int scale_a, int scale_b, int trans_a, int trans_b, int line) {
  const bool integer = is_integer(a_type) || is_integer(b_type);
  if (integer)
    report(HazardKind::invalid_operand, line,
           "wgmma.mma_async with f32 accumulators and s8/u8 operands: integer operands accumulate in s32 (the .s32 form)");
  issue_wgmma(d, layout::ElementFormat::f32, !integer, n, a_type, b_type, a_descriptor, a_registers, b_descriptor, scale_d,
              scale_a, scale_b, trans_a, trans_b, line);
}

void wgmma_mma_async(int32_t* d, int n, Operand a_type, Operand b_type, uint64_t a_descriptor,
                     const uint32_t* a_registers, uint64_t b_descriptor, bool scale_d, int scale_a, int scale_b,
                     int trans_a, int trans_b, int line) {
  const bool integer = is_integer(a_type) && is_integer(b_type);
  if (!integer)
    report(HazardKind::invalid_operand, line,
           "wgmma.mma_async with s32 accumulators and a floating-point A or B: the .s32 form takes s8/u8 operands");
  // Register A and transposes are reported by the shared checks (8-bit operands); the integer
  // computation has neither, so such an operation changes nothing.
  issue_wgmma(d, layout::ElementFormat::s32, integer && !a_registers && trans_a == 0 && trans_b == 0, n, a_type, b_type,
              a_descriptor, a_registers, b_descriptor, scale_d, scale_a, scale_b, trans_a, trans_b, line);
}

// --- tcgen05 -------------------------------------------------------------------------------------

namespace {

struct TmemAllocationWait final : Wait {
  Cta& c;
  uint32_t columns;
  TmemAllocationWait(Cta& cta_, uint32_t n) : c(cta_), columns(n) {}
  int find() const {
    for (uint32_t base = 0; base + columns <= 512; base += columns) {
      bool free = true;
      for (uint32_t i = 0; i < columns && free; ++i) free = c.tmem_owner[base + i] == 0;
      if (free) return static_cast<int>(base);
    }
    return -1;
  }
  bool ready() override { return find() >= 0; }
  std::string describe() override { return "tcgen05.alloc of " + std::to_string(columns) + " TMEM columns (none free)"; }
};

bool columns_allocated(Cta& c, uint32_t first, uint32_t count) {
  if (first + count > 512) return false;
  for (uint32_t i = 0; i < count; ++i)
    if (!c.tmem_owner[first + i]) return false;
  return true;
}

}  // namespace

void tcgen05_alloc(uint32_t slot, uint32_t columns, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  warp_collective(0, 0, "tcgen05.alloc", line, nullptr);
  if (thread.lane != 0) return;
  if (columns < 32 || columns > 512 || (columns & (columns - 1)) != 0) {
    report(HazardKind::tmem_misuse, line, "tcgen05.alloc of " + std::to_string(columns) + " columns (a power of two, 32 to 512)");
    return;
  }
  if (c.tmem_permit_relinquished)
    report(HazardKind::tmem_misuse, line, "tcgen05.alloc after this CTA relinquished its allocation permit");
  TmemAllocationWait wait(c, columns);
  block(wait, line);
  const uint32_t base = static_cast<uint32_t>(wait.find());
  for (uint32_t i = 0; i < columns; ++i) c.tmem_owner[base + i] = std::max(line, 1);  // where: for reports
  if (slot % 4 != 0 || slot + 4 > c.shared_bytes) {
    report_fatal("invalid operand", line, "tcgen05.alloc writes its address to shared " + hex(slot) + ", outside shared memory or unaligned");
    stop_cta();
  }
  std::memcpy(c.shared + slot, &base, 4);  // lane 0, column `base`
}

void tcgen05_relinquish_alloc_permit(int line) {
  // .sync.aligned: the warp meets, so every lane's allocation before it is done.
  warp_collective(0, 0, "tcgen05.relinquish_alloc_permit", line, nullptr);
  cta().tmem_permit_relinquished = true;
}

void tcgen05_dealloc(uint32_t base, uint32_t columns, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  warp_collective(0, 0, "tcgen05.dealloc", line, nullptr);
  if (thread.lane != 0) return;
  const uint32_t column = base & 0xffff;
  if (!columns_allocated(c, column, columns)) {
    report(HazardKind::tmem_misuse, line, "tcgen05.dealloc of TMEM columns " + std::to_string(column) + ".." +
                                              std::to_string(column + columns - 1) + ", which are not all allocated");
    return;
  }
  for (uint32_t id : c.pending) {
    const AsyncOp& op = *c.ops[id];
    if (op.kind == AsyncKind::tcgen05_mma && (op.tmem_address & 0xffff) < column + columns &&
        (op.tmem_address & 0xffff) + static_cast<uint32_t>(op.n) > column)
      report(HazardKind::tmem_misuse, line, "tcgen05.dealloc while the tcgen05.mma issued at " + cu_location(op.line) +
                                                " still writes those columns");
  }
  // Freeing is a write: every warp's reads must be ordered before it, as for a tcgen05.mma.
  check_tmem_overwrite(thread.linear, line, "tcgen05.dealloc by " + describe_thread(thread.linear), thread.tcgen05_clock,
                       128, column, columns);
  for (uint32_t i = 0; i < columns; ++i) {
    c.tmem_owner[column + i] = 0;
    for (int quarter = 0; quarter < 4; ++quarter) c.tmem_history[static_cast<size_t>(quarter) * 512 + column + i] = {};
  }
}

void tcgen05_mma(uint32_t tmem, uint64_t a_descriptor, uint64_t b_descriptor, uint32_t idesc, MmaKind kind,
                 bool accumulate, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  scan_generic_writes(thread, line);
  AsyncOp& op = new_async_op(AsyncKind::tcgen05_mma, line);
  op.tmem_address = tmem;
  op.a_descriptor = a_descriptor;
  op.b_descriptor = b_descriptor;
  op.idesc = idesc;
  op.mma_kind = kind;
  op.accumulate = accumulate;
  op.sequence = thread.tcgen05_issued++;
  const layout::InstructionDescriptor instruction =
      layout::decode_instruction_descriptor(idesc, layout_kind(kind));
  if (!instruction.error.empty()) {
    report(HazardKind::invalid_operand, line, "tcgen05.mma instruction descriptor " + hex(idesc) + ": " + instruction.error);
    op.invalid = true;
  } else {
    op.n = instruction.n;
    const int element_bytes = element_bytes_of(kind);
    const int k = 32 / element_bytes;
    const layout::MatrixDescriptor a = layout::decode_sm100_descriptor(a_descriptor);
    const layout::MatrixDescriptor b = layout::decode_sm100_descriptor(b_descriptor);
    std::vector<uint32_t> chunks;
    // Other threads' ordinary writes of the operands are ordered before the mma by a barrier and
    // then the issuing thread's tcgen05.fence::after_thread_sync (its own earlier writes by program
    // order): the clock of that fence, not of a barrier with no such fence since. TMA writes are
    // ordered by the mbarrier wait itself.
    Clock fenced = thread.tcgen05_clock;
    fenced[thread.linear] = thread.clock[thread.linear];
    for (const auto& [descriptor, raw, mn_major, extent, name] :
         {std::tuple{a, a_descriptor, instruction.a_mn_major, instruction.m, "A"},
          std::tuple{b, b_descriptor, instruction.b_mn_major, instruction.n, "B"}}) {
      if (!descriptor.error.empty()) {
        report(HazardKind::invalid_operand, line, std::string("tcgen05.mma ") + name + " descriptor " + hex(raw) + ": " + descriptor.error);
        op.invalid = true;
      } else if (operand_chunks(descriptor, mn_major, element_bytes, extent, k, chunks, op, name)) {
        check_async_read(op, thread.clock, chunks, static_cast<int>(descriptor.swizzle), &fenced);
      }
    }
    const uint32_t column = tmem & 0xffff;
    const uint32_t lane = tmem >> 16;
    if (lane != 0 || !columns_allocated(c, column, static_cast<uint32_t>(instruction.n))) {
      report(HazardKind::tmem_misuse, line, "tcgen05.mma writes TMEM lanes " + std::to_string(lane) + ".." +
                                                std::to_string(lane + static_cast<uint32_t>(instruction.m) - 1) + ", columns " +
                                                std::to_string(column) + ".." + std::to_string(column + static_cast<uint32_t>(instruction.n) - 1) +
                                                ", which this CTA has not allocated (or not from lane 0)");
      op.invalid = true;
    } else {
      check_tmem_write(op, thread.tcgen05_clock, instruction.m, column, static_cast<uint32_t>(instruction.n));
    }
  }
  thread.tcgen05_recent.push_back(op.id);
  submit(op);
}

void tcgen05_commit(uint32_t barrier_address, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  async_proxy_barrier(barrier_address, line, "tcgen05.commit arrives on");
  AsyncOp& op = new_async_op(AsyncKind::tcgen05_commit, line);
  op.barrier = barrier_address;
  op.sequence = thread.tcgen05_issued++;
  op.issue_clock = thread.clock;
  ++thread.clock[thread.linear];
  op.covered = thread.tcgen05_recent;
  // A commit vouches for every earlier tcgen05.mma of the thread. An mma holds one epoch per
  // mbarrier (the first phase of each that a commit covering it completes); once it holds one for
  // every mbarrier of the CTA, later commits order nothing more, and it leaves the list.
  std::vector<uint32_t> keep;
  for (uint32_t id : thread.tcgen05_recent)
    if (c.ops[id]->completion.size() < c.mbarriers.size()) keep.push_back(id);
  thread.tcgen05_recent = std::move(keep);
  submit(op);
}

void tcgen05_ld_32x32b(uint32_t address, uint32_t* values, int count, int line) {
  Cta& c = cta();
  ThreadState& thread = self();
  const uint32_t lane_base = address >> 16;
  const uint32_t column = address & 0xffff;
  const uint32_t quarter = static_cast<uint32_t>(thread.warp % 4);
  if (lane_base != 32 * quarter) {
    report(HazardKind::tmem_misuse, line,
           "tcgen05.ld by warp " + std::to_string(thread.warp) + " from TMEM lane " + std::to_string(lane_base) +
               ": a warp may access only lanes " + std::to_string(32 * quarter) + ".." + std::to_string(32 * quarter + 31) +
               " (32 × warp id mod 4)");
    for (int i = 0; i < count; ++i) values[i] = 0xffffffffu;
    return;
  }
  if (!columns_allocated(c, column, static_cast<uint32_t>(count))) {
    report(HazardKind::tmem_misuse, line, "tcgen05.ld from TMEM columns " + std::to_string(column) + ".." +
                                              std::to_string(column + static_cast<uint32_t>(count) - 1) + ", which are not allocated");
    for (int i = 0; i < count; ++i) values[i] = 0xffffffffu;
    return;
  }
  if (thread.lane == 0) check_tmem_read(thread, line, static_cast<int>(quarter), column, static_cast<uint32_t>(count));
  // The values land at tcgen05.wait::ld; until then the registers read as a NaN (0x7fc0dead), so
  // a read before the wait gives numbers that differ.
  ThreadState::PendingTmemLoad pending{values, std::vector<uint32_t>(static_cast<size_t>(count)), line};
  for (int r = 0; r < count; ++r) {
    const layout::LaneColumn at = layout::tmem_access(layout::TmemShape::lanes32_bits32, count, thread.lane, r);
    pending.loaded[static_cast<size_t>(r)] =
        c.tmem[(lane_base + static_cast<uint32_t>(at.lane)) * 512 + column + static_cast<uint32_t>(at.column)];
    values[r] = 0x7fc0deadu;
  }
  thread.tmem_loads.push_back(std::move(pending));
}

void tcgen05_wait_ld(int line) {
  (void)line;
  ThreadState& thread = self();
  for (const ThreadState::PendingTmemLoad& pending : thread.tmem_loads)
    std::copy(pending.loaded.begin(), pending.loaded.end(), pending.values);
  thread.tmem_loads.clear();
}

}  // namespace ptx

}  // namespace tilec_emu
