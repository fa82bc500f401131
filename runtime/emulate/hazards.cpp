// runtime/emulate/hazards.cpp — the happens-before checker and the reports.
//
// Notation: C_t is thread t's vector clock; an asynchronous operation X is "complete for C"
// when some epoch (slot, value) of X's completion list has C[slot] ≥ value (its mbarrier phase
// completed and was acquired, or a thread that observed it in a wait_group released since).
// Checks, all made when the operation is issued (so they hold in every schedule):
//   1. An async read of a shared chunk (WGMMA/tcgen05 operands, TMA store sources) needs the
//      chunk's last write complete for the issuer: an async writer performed and complete, or a
//      generic write (t, c) with C[t] ≥ c that was also followed by fence.proxy.async. A chunk
//      no one wrote is an uninitialized read; a TMA write read with another swizzle is a layout
//      mismatch.
//   2. An async write of a chunk (TMA loads) needs every async reader since the last write
//      complete for the issuer, and the last writer too.
//   3. A generic write (found by comparing shared memory with its shadow copy at the thread's
//      next switch, acquire or fence) needs every async reader since the last write complete for
//      the writer: a TMA store still reading its staging is "staging reused".
//   3b. A checked generic read (tilec_shared_read: a computed B's weight, which TMA copies)
//      needs the chunk's last async write complete for the reader; check 2 then also needs the
//      read ordered before the next async write (C_issuer[reader] ≥ the reader's clock at the
//      read): a slot released before its last read is refilled while it is still read.
//   4. TMEM (per 32-lane quarter and column): tcgen05.ld needs the last tcgen05.mma complete
//      for the reader's tcgen05 clock (its clock at its last tcgen05.fence::after_thread_sync);
//      tcgen05.mma needs every earlier reader's read released by a before_thread_sync fence
//      and that fence's clock acquired. An order that holds for the ordinary clock but not the
//      tcgen05 one is a missing tcgen05 fence.
// Other generic loads are not seen (not instrumented): a race between two generic accesses shows
// up only as different results between schedules.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>

#include "runtime/emulate/emulator.h"

namespace tilec_emu {

namespace {

struct Report {
  std::string kind;
  int line = 0;
  std::string message;
  std::vector<std::string> notes;
  bool fatal = false;
  int count = 1;
};

std::mutex report_mutex;
std::vector<Report> reports;
constexpr size_t kMaxReports = 64;

// The .cu file, for line → .tile line and barrier names.
struct Source {
  bool loaded = false;
  std::vector<std::string> lines;
  std::string tile;
  struct Named {
    uint32_t offset = 0;
    uint32_t count = 1;
    std::string name;
  };
  std::vector<Named> barriers;
};
Source source;
std::once_flag source_once;

void load_source() {
  std::call_once(source_once, [] {
    std::ifstream in(options().cu_path);
    std::string text;
    while (std::getline(in, text)) source.lines.push_back(text);
    source.loaded = !source.lines.empty();
    const std::regex tile_name(R"(^//\s+source:\s+(\S+))");
    const std::regex barrier(R"(const uint32_t (\w+) = shared_base \+ (\d+);(?:\s*//\s*(\d+) mbarrier)?)");
    std::smatch match;
    for (const std::string& line : source.lines) {
      if (source.tile.empty() && std::regex_search(line, match, tile_name)) source.tile = match[1];
      if (std::regex_search(line, match, barrier)) {
        const std::string name = match[1];
        const bool is_barrier = match[3].matched || name.find("barrier") != std::string::npos;
        if (!is_barrier) continue;
        Source::Named named;
        named.name = name;
        named.offset = static_cast<uint32_t>(std::stoul(match[2]));
        named.count = match[3].matched ? static_cast<uint32_t>(std::stoul(match[3])) : 1;
        source.barriers.push_back(named);
      }
    }
  });
}

// The .tile line of the nearest `(line N)` comment at or above .cu line `line`.
int tile_line(int line) {
  static const std::regex comment(R"(\(line (\d+)\))");
  std::smatch match;
  for (int i = std::min(line, static_cast<int>(source.lines.size())); i >= 1; --i)
    if (std::regex_search(source.lines[static_cast<size_t>(i - 1)], match, comment)) return std::stoi(match[1]);
  return 0;
}

std::string file_name() {
  return options().cu_path.empty() ? std::string("kernel.cu") : options().cu_path;
}

// Whether a report of this kind at this line was made already: it counts once more. The caller
// holds report_mutex.
bool counted_again_locked(const std::string& kind, int line) {
  for (Report& existing : reports)
    if (existing.kind == kind && existing.line == line) {
      ++existing.count;
      return true;
    }
  return false;
}

void add_report(Report report) {
  std::lock_guard<std::mutex> lock(report_mutex);
  if (!counted_again_locked(report.kind, report.line) && reports.size() < kMaxReports)
    reports.push_back(std::move(report));
}

const char* kind_name(HazardKind kind);

// counted_again_locked, taking the lock: a caller that finds a hazard on every element builds its
// message only when this says it is new.
bool counted_again(HazardKind kind, int line) {
  std::lock_guard<std::mutex> lock(report_mutex);
  return counted_again_locked(kind_name(kind), line);
}

const char* kind_name(HazardKind kind) {
  switch (kind) {
    case HazardKind::race: return "race";
    case HazardKind::missing_proxy_fence: return "missing fence.proxy.async";
    case HazardKind::missing_tcgen05_fence: return "missing tcgen05 fence";
    case HazardKind::missing_wgmma_fence: return "missing wgmma.fence";
    case HazardKind::missing_barrier_init_fence: return "missing barrier-init fence";
    case HazardKind::staging_reused: return "staging reused";
    case HazardKind::unordered_stores: return "unordered TMA stores";
    case HazardKind::layout_mismatch: return "layout mismatch";
    case HazardKind::uninitialized_read: return "uninitialized read";
    case HazardKind::barrier_misuse: return "barrier misuse";
    case HazardKind::register_pool: return "register pool";
    case HazardKind::tmem_misuse: return "TMEM misuse";
    case HazardKind::invalid_operand: return "invalid operand";
  }
  return "hazard";
}

std::string byte_range(uint32_t first_chunk, uint32_t last_chunk) {
  char text[64];
  std::snprintf(text, sizeof text, "[0x%x, 0x%x)", first_chunk * 16, (last_chunk + 1) * 16);
  return text;
}

std::string op_at(const AsyncOp& op) {
  return std::string(async_op_name(op)) + " issued at " + cu_location(op.line) + " by thread " +
         std::to_string(op.issuer);
}

// Collects the offending chunks of one check so each kind is reported once, with its range.
struct Finding {
  HazardKind kind;
  uint32_t first = 0, last = 0;
  std::string message;
  std::vector<std::string> notes;
  bool found = false;
  void add(HazardKind k, uint32_t chunk, const std::string& text, std::vector<std::string> n = {}) {
    if (!found) {
      kind = k;
      first = last = chunk;
      message = text;
      notes = std::move(n);
      found = true;
    } else if (k == kind) {
      first = std::min(first, chunk);
      last = std::max(last, chunk);
    }
  }
};

// Memoizes ordered_after for the operations one check meets.
struct OrderCache {
  const Clock& clock;
  std::vector<std::pair<uint32_t, bool>> known;
  explicit OrderCache(const Clock& c) : clock(c) {}
  bool complete(const AsyncOp& op) {
    for (const auto& [id, ordered] : known)
      if (id == op.id) return ordered;
    const bool ordered = op.performed && ordered_after(clock, op);
    known.emplace_back(op.id, ordered);
    return ordered;
  }
};

}  // namespace

void report(HazardKind kind, int line, const std::string& message, std::vector<std::string> notes) {
  add_report(Report{kind_name(kind), line, message, std::move(notes), false, 1});
}

void report_fatal(const std::string& kind, int line, const std::string& message, std::vector<std::string> notes) {
  add_report(Report{kind, line, message, std::move(notes), true, 1});
}

bool fatal_reported() {
  std::lock_guard<std::mutex> lock(report_mutex);
  return std::any_of(reports.begin(), reports.end(), [](const Report& r) { return r.fatal; });
}

bool hazards_reported() {
  std::lock_guard<std::mutex> lock(report_mutex);
  return !reports.empty();
}

// Prints every report, ordered by line then kind (deterministic whatever the workers did).
void print_reports() {
  load_source();
  std::lock_guard<std::mutex> lock(report_mutex);
  std::vector<Report> sorted = reports;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Report& a, const Report& b) {
    if (a.fatal != b.fatal) return a.fatal;
    return a.line != b.line ? a.line < b.line : a.kind < b.kind;
  });
  for (const Report& r : sorted) {
    std::fprintf(stderr, "%s: error: %s: %s\n", cu_location(r.line).c_str(), r.kind.c_str(), r.message.c_str());
    for (const std::string& note : r.notes) std::fprintf(stderr, "  %s\n", note.c_str());
    if (r.count > 1) std::fprintf(stderr, "  note: reported %d times (other threads or CTAs)\n", r.count);
  }
}

std::string cu_location(int line) {
  load_source();
  std::string text = file_name() + ":" + std::to_string(line);
  if (const int tile = line > 0 ? tile_line(line) : 0; tile > 0)
    text += " (" + (source.tile.empty() ? std::string("line") : source.tile + ":") + std::to_string(tile) + ")";
  return text;
}

std::string describe_thread(int thread) {
  return "thread " + std::to_string(thread) + " (warp " + std::to_string(thread / 32) + ", warpgroup " +
         std::to_string(thread / 128) + ")";
}

std::string barrier_name(uint32_t address) {
  load_source();
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%x", address);
  // Kernels align their base up to 1024 from the dynamic window's start (16).
  constexpr uint32_t kAlignedBase = 1024;
  if (address >= kAlignedBase) {
    const uint32_t offset = address - kAlignedBase;
    for (const auto& named : source.barriers)
      if (offset >= named.offset && offset < named.offset + 8 * named.count && (offset - named.offset) % 8 == 0)
        return named.count > 1 ? named.name + "[" + std::to_string((offset - named.offset) / 8) + "] (shared " + hex + ")"
                               : named.name + " (shared " + hex + ")";
  }
  return std::string("at shared ") + hex;
}

namespace {
// A read by `reader` of shared memory the async `writer` writes, not ordered after its completion.
std::string read_before_write_completes(const std::string& reader, const AsyncOp& writer) {
  return reader + " reads shared memory that the " + op_at(writer) +
         " writes, but is not ordered after that write's completion" +
         (writer.performed ? "" : " (it has not even been performed yet)");
}
std::string write_issued_note(const AsyncOp& writer) {
  return cu_location(writer.line) + ": note: the write is issued here; a wait on the phase of the mbarrier it completes "
                                    "orders them";
}
}  // namespace

bool ordered_after(const Clock& clock, const AsyncOp& op) {
  for (const Epoch& epoch : op.completion)
    if (epoch.slot < clock.size() && clock[epoch.slot] >= epoch.value) return true;
  return false;
}

bool chunk_range(uint32_t first, uint32_t count, std::vector<uint32_t>& chunks, AsyncOp& op) {
  Cta& c = cta();
  chunks.clear();
  if (uint64_t{first} + count > c.shared_bytes) {
    char text[96];
    std::snprintf(text, sizeof text, "shared bytes [0x%x, 0x%llx), past the CTA's %zu", first,
                  static_cast<unsigned long long>(uint64_t{first} + count), c.shared_bytes);
    report(HazardKind::invalid_operand, op.line, std::string(async_op_name(op)) + " reaches " + text);
    op.invalid = true;
    return false;
  }
  for (uint32_t chunk = first / 16; chunk < (first + count + 15) / 16; ++chunk) chunks.push_back(chunk);
  return true;
}

void enable_scanning() {
  Cta& c = cta();
  c.scanning = true;
  c.shadow.assign(c.shared, c.shared + c.shared_bytes);
  // What was written before the first asynchronous operation counts as written and ordered.
  for (size_t chunk = 0; chunk < c.chunks.size(); ++chunk) {
    const size_t begin = chunk * 16, length = std::min<size_t>(16, c.shared_bytes - begin);
    const bool poisoned = std::memcmp(c.shared + begin, shared_poison() + begin, length) == 0;
    if (!poisoned) c.chunks[chunk].generic_writer = -2;
  }
}

void refresh_shadow(uint32_t first, uint32_t count) {
  Cta& c = cta();
  if (!c.scanning) return;
  std::memcpy(c.shadow.data() + first, c.shared + first, count);
}

void scan_generic_writes(ThreadState& thread, int line) {
  Cta& c = cta();
  if (!c.scanning) return;
  OrderCache order(thread.clock);
  Finding finding;
  for (size_t block = 0; block < c.async_blocks.size(); ++block) {
    if (c.async_blocks[block]) continue;
    const size_t begin = block * 1024, size = std::min<size_t>(1024, c.shared_bytes - begin);
    if (std::memcmp(c.shared + begin, c.shadow.data() + begin, size) == 0) continue;
    for (size_t offset = begin; offset < begin + size; offset += 16) {
      const size_t length = std::min<size_t>(16, c.shared_bytes - offset);
      if (std::memcmp(c.shared + offset, c.shadow.data() + offset, length) == 0) continue;
      std::memcpy(c.shadow.data() + offset, c.shared + offset, length);
      const uint32_t chunk = static_cast<uint32_t>(offset / 16);
      ChunkHistory& history = c.chunks[chunk];
      for (uint32_t reader : history.async_readers) {
        const AsyncOp& op = *c.ops[reader];
        if (order.complete(op)) continue;
        if (op.kind == AsyncKind::tma_store)
          finding.add(HazardKind::staging_reused, chunk,
                      describe_thread(thread.linear) + " writes shared memory that the " + op_at(op) +
                          " may still read: no cp.async.bulk.wait_group.read that retired it is ordered before this write",
                      {cu_location(op.line) + ": note: the TMA store reads its source here"});
        else
          finding.add(HazardKind::race, chunk,
                      describe_thread(thread.linear) + " writes shared memory that the " + op_at(op) +
                          " may still read (its completion is not ordered before this write)");
      }
      if (history.async_writer && !order.complete(*c.ops[history.async_writer - 1]))
        finding.add(HazardKind::race, chunk,
                    describe_thread(thread.linear) + " writes shared memory that the " +
                        op_at(*c.ops[history.async_writer - 1]) + " also writes, unordered");
      history.async_readers.clear();
      history.generic_readers.clear();
      history.async_writer = 0;
      history.swizzle = 0xff;
      history.generic_writer = thread.linear;
      history.generic_clock = thread.slice_clock;
      history.generic_fenced = false;
      history.generic_line = line;
      thread.unfenced_chunks.push_back(chunk);
    }
  }
  thread.slice_clock = thread.clock[thread.linear];
  if (finding.found)
    report(finding.kind, line, finding.message + " (bytes " + byte_range(finding.first, finding.last) +
                                   ", found at the writer's next synchronization)",
           finding.notes);
}

void check_async_read(AsyncOp& reader, const Clock& clock, const std::vector<uint32_t>& chunks, int swizzle,
                      const Clock* generic_order) {
  Cta& c = cta();
  if (!c.scanning) return;
  const Clock& generic = generic_order ? *generic_order : clock;
  OrderCache order(clock);
  Finding race, fence, layout, uninitialized;
  for (uint32_t chunk : chunks) {
    ChunkHistory& history = c.chunks[chunk];
    if (history.async_writer) {
      const AsyncOp& writer = *c.ops[history.async_writer - 1];
      if (!order.complete(writer))
        race.add(HazardKind::race, chunk, read_before_write_completes("the " + op_at(reader), writer),
                 {write_issued_note(writer)});
      if (swizzle >= 0 && history.swizzle != 0xff && history.swizzle != swizzle)
        layout.add(HazardKind::layout_mismatch, chunk,
                   "the " + op_at(reader) + " reads with the " +
                       layout::swizzle_name(static_cast<layout::Swizzle>(swizzle)) +
                       " swizzle shared memory that the " + op_at(writer) + " wrote with the " +
                       layout::swizzle_name(static_cast<layout::Swizzle>(history.swizzle)) + " swizzle");
    } else if (history.generic_writer >= 0) {
      const uint32_t slot = c.thread_slot(history.generic_writer);
      if (generic[slot] < history.generic_clock && clock[slot] >= history.generic_clock)
        race.add(HazardKind::missing_tcgen05_fence, chunk,
                 "the " + op_at(reader) + " reads shared memory written by " + describe_thread(history.generic_writer) +
                     ", which a barrier orders before the issuing thread, but no tcgen05.fence::after_thread_sync "
                     "between that barrier and the issue orders the tcgen05.mma after it",
                 {cu_location(history.generic_line) + ": note: the write was found at the writer's synchronization here"});
      else if (generic[slot] < history.generic_clock)
        race.add(HazardKind::race, chunk,
                 "the " + op_at(reader) + " reads shared memory written by " + describe_thread(history.generic_writer) +
                     ", which is not ordered before the read (no barrier between the write and the issue)",
                 {cu_location(history.generic_line) + ": note: the write was found at the writer's synchronization here"});
      else if (!history.generic_fenced)
        fence.add(HazardKind::missing_proxy_fence, chunk,
                  "the " + op_at(reader) + " (async proxy) reads shared memory that " +
                      describe_thread(history.generic_writer) +
                      " wrote with ordinary stores, with no fence.proxy.async between the write and the synchronization",
                  {cu_location(history.generic_line) + ": note: the write was found at the writer's synchronization here"});
    } else if (history.generic_writer == -1) {
      uninitialized.add(HazardKind::uninitialized_read, chunk,
                        "the " + op_at(reader) + " reads shared memory that nothing has written");
    }
    if (history.async_readers.empty() || history.async_readers.back() != reader.id)
      history.async_readers.push_back(reader.id);
  }
  for (Finding* finding : {&race, &fence, &layout, &uninitialized})
    if (finding->found)
      report(finding->kind, reader.line, finding->message + " (bytes " + byte_range(finding->first, finding->last) + ")",
             finding->notes);
}

void check_async_write(AsyncOp& writer, const Clock& clock, const std::vector<uint32_t>& chunks, int swizzle) {
  Cta& c = cta();
  if (!c.scanning) return;
  OrderCache order(clock);
  Finding race;
  for (uint32_t chunk : chunks) {
    ChunkHistory& history = c.chunks[chunk];
    for (uint32_t id : history.async_readers) {
      const AsyncOp& reader = *c.ops[id];
      if (!order.complete(reader))
        race.add(HazardKind::race, chunk,
                 "the " + op_at(writer) + " overwrites shared memory that the " + op_at(reader) +
                     " may still read: its completion is not ordered before this write" +
                     (reader.performed ? "" : " (it has not been performed yet)"),
                 {cu_location(reader.line) + ": note: the read is issued here; the slot may be refilled only after "
                                             "its reader has released it"});
    }
    for (const GenericRead& read : history.generic_readers) {
      if (clock[c.thread_slot(read.thread)] >= read.clock) continue;
      if (race.found && race.kind == HazardKind::race) {  // the message says the first; the range grows
        race.add(HazardKind::race, chunk, {});
        continue;
      }
      race.add(HazardKind::race, chunk,
               "the " + op_at(writer) + " overwrites shared memory that " + describe_thread(read.thread) +
                   " reads with an ordinary load, which is not ordered before this write (the read comes after "
                   "the release of its slot that the writer waited for, or the writer waited for none)",
               {cu_location(read.line) + ": note: the read is here; release the slot after the last read of it"});
    }
    if (history.async_writer && history.async_writer - 1 != writer.id) {
      const AsyncOp& previous = *c.ops[history.async_writer - 1];
      if (!order.complete(previous) && history.async_readers.empty() && history.generic_readers.empty())
        race.add(HazardKind::race, chunk,
                 "the " + op_at(writer) + " overwrites shared memory the " + op_at(previous) +
                     " writes, with no read and no completion in between");
    }
    history.async_readers.clear();
    history.generic_readers.clear();
    history.async_writer = writer.id + 1;
    history.generic_writer = -1;
    history.swizzle = static_cast<uint8_t>(swizzle < 0 ? 0xff : swizzle);
  }
  if (race.found)
    report(race.kind, writer.line, race.message + " (bytes " + byte_range(race.first, race.last) + ")", race.notes);
}

void check_generic_read(ThreadState& thread, uint32_t first, uint32_t count, int line) {
  Cta& c = cta();
  if (!c.scanning) return;
  OrderCache order(thread.clock);
  const AsyncOp* unordered = nullptr;  // the first TMA write the read is not ordered after
  uint32_t first_chunk = 0, last_chunk = 0;
  const uint32_t clock = thread.clock[thread.linear];
  for (uint32_t chunk = first / 16; chunk < (first + count + 15) / 16; ++chunk) {
    ChunkHistory& history = c.chunks[chunk];
    if (history.async_writer && !order.complete(*c.ops[history.async_writer - 1])) {
      if (!unordered) unordered = c.ops[history.async_writer - 1].get(), first_chunk = chunk;
      last_chunk = chunk;
    }
    std::vector<GenericRead>& readers = history.generic_readers;
    auto mine = std::find_if(readers.begin(), readers.end(),
                             [&](const GenericRead& read) { return read.thread == thread.linear; });
    if (mine == readers.end())
      readers.push_back(GenericRead{thread.linear, clock, line});
    else
      *mine = GenericRead{thread.linear, clock, line};
  }
  // Every element of a computed B reads the slot: the message is built once per line.
  if (!unordered || counted_again(HazardKind::race, line)) return;
  report(HazardKind::race, line,
         read_before_write_completes(describe_thread(thread.linear), *unordered) + " (bytes " +
             byte_range(first_chunk, last_chunk) + ")",
         {write_issued_note(*unordered)});
}

void check_tmem_write(AsyncOp& writer, const Clock& clock, int lanes, uint32_t column, uint32_t columns) {
  check_tmem_overwrite(writer.issuer, writer.line, "the " + op_at(writer), clock, lanes, column, columns);
  Cta& c = cta();
  const int quarters = lanes >= 64 ? 4 : std::min(4, (lanes + 31) / 32);
  // An accumulating MMA reads D first: every column of it must have been written.
  if (writer.kind == AsyncKind::tcgen05_mma && writer.accumulate && options().hazards) {
    bool reported = false;
    for (int quarter = 0; quarter < quarters && !reported; ++quarter)
      for (uint32_t col = column; col < column + columns && col < 512 && !reported; ++col)
        if (!c.tmem_history[static_cast<size_t>(quarter) * 512 + col].writer) {
          reported = true;
          report(HazardKind::uninitialized_read, writer.line,
                 "the " + op_at(writer) + " accumulates into TMEM (lanes " + std::to_string(32 * quarter) +
                     "+, column " + std::to_string(col) +
                     ") that no tcgen05.mma has written since it was allocated (an accumulator's first MMA "
                     "overwrites: enable-input-d false)");
        }
  }
  for (int quarter = 0; quarter < quarters; ++quarter)
    for (uint32_t col = column; col < column + columns && col < 512; ++col)
      c.tmem_history[static_cast<size_t>(quarter) * 512 + col].writer = writer.id + 1;
}

void check_tmem_overwrite(int issuer_thread, int line, const std::string& what, const Clock& clock, int lanes,
                          uint32_t column, uint32_t columns) {
  Cta& c = cta();
  if (!options().hazards) return;
  const ThreadState& issuer = c.threads[static_cast<size_t>(issuer_thread)];
  bool reported = false;
  // M = 128 fills lanes 0..127; M = 64 the first 16 lanes of each quarter (PTX layout F).
  const int quarters = lanes >= 64 ? 4 : std::min(4, (lanes + 31) / 32);
  for (int quarter = 0; quarter < quarters; ++quarter)
    for (uint32_t col = column; col < column + columns && col < 512; ++col) {
      TmemHistory& history = c.tmem_history[static_cast<size_t>(quarter) * 512 + col];
      for (const TmemRead& read : history.readers) {
        if (reported || read.thread == issuer_thread) continue;
        const ThreadState& reader = c.threads[static_cast<size_t>(read.thread)];
        const bool fenced = reader.tcgen05_fence_clocks.size() > read.fences_before;
        const uint32_t slot = c.thread_slot(read.thread);
        if (fenced && clock[slot] >= reader.tcgen05_fence_clocks[read.fences_before]) continue;
        reported = true;
        if (!fenced && issuer.clock[slot] > read.clock)
          report(HazardKind::missing_tcgen05_fence, line,
                 what + " overwrites TMEM (lanes " + std::to_string(32 * quarter) + "+, column " +
                     std::to_string(col) + ") that " + describe_thread(read.thread) +
                     " read with tcgen05.ld; the threads synchronized, but the reader had no "
                     "tcgen05.fence::before_thread_sync between its read and the synchronization",
                 {cu_location(read.line) + ": note: the read"});
        else if (fenced && issuer.clock[slot] >= reader.tcgen05_fence_clocks[read.fences_before])
          report(HazardKind::missing_tcgen05_fence, line,
                 what + " overwrites TMEM that " + describe_thread(read.thread) +
                     " read; the issuer synchronized with it but issued no tcgen05.fence::after_thread_sync since",
                 {cu_location(read.line) + ": note: the read"});
        else
          report(HazardKind::race, line,
                 what + " overwrites TMEM (lanes " + std::to_string(32 * quarter) + "+, column " +
                     std::to_string(col) + ") before " + describe_thread(read.thread) +
                     "'s tcgen05.ld of it is ordered before this issue (TMEM reused before every warp read it)",
                 {cu_location(read.line) + ": note: the read"});
      }
      history.readers.clear();
    }
}

void check_tmem_read(ThreadState& thread, int line, int quarter, uint32_t column, uint32_t columns) {
  Cta& c = cta();
  if (!options().hazards) return;
  bool reported = false;
  for (uint32_t col = column; col < column + columns && col < 512; ++col) {
    TmemHistory& history = c.tmem_history[static_cast<size_t>(quarter) * 512 + col];
    // A tcgen05.ld of columns no tcgen05.mma wrote is not reported: an epilogue may read an
    // accumulator whose K loop ran no step and discard the values (`started ? value : 0`).
    if (history.writer && !reported) {
      const AsyncOp& writer = *c.ops[history.writer - 1];
      if (!writer.performed || !ordered_after(thread.tcgen05_clock, writer)) {
        reported = true;
        if (writer.performed && ordered_after(thread.clock, writer))
          report(HazardKind::missing_tcgen05_fence, line,
                 "tcgen05.ld by " + describe_thread(thread.linear) + " reads TMEM the " + op_at(writer) +
                     " wrote; the thread waited for it, but issued no tcgen05.fence::after_thread_sync after the wait");
        else
          report(HazardKind::race, line,
                 "tcgen05.ld by " + describe_thread(thread.linear) + " reads TMEM (lanes " + std::to_string(32 * quarter) +
                     "+, column " + std::to_string(col) + ") that the " + op_at(writer) +
                     " writes, before its completion is ordered before the read (wait on the mbarrier its tcgen05.commit arrives on)");
      }
    }
    history.readers.push_back(TmemRead{thread.linear, static_cast<uint32_t>(thread.tcgen05_fence_clocks.size()),
                                       thread.clock[thread.linear], line});
  }
}

// What a CTA leaves behind when its last thread exits: TMEM it did not free, TMA stores that may
// still read its shared memory, TMA loads that may still write it (the next CTA on the SM gets
// both), tcgen05.ld results no tcgen05.wait::ld made valid.
void check_cta_exit() {
  Cta& c = cta();
  if (!options().hazards) return;
  for (uint32_t column = 0; column < 512;) {
    const int line = c.tmem_owner[column];
    uint32_t end = column + 1;
    while (line != 0 && end < 512 && c.tmem_owner[end] == line) ++end;
    if (line != 0)
      report(HazardKind::tmem_misuse, line,
             "the CTA exited holding the TMEM columns " + std::to_string(column) + ".." + std::to_string(end - 1) +
                 " this tcgen05.alloc gave it (tcgen05.dealloc every allocation before the CTA exits)");
    column = end;
  }
  Clock exit(c.threads.empty() ? 0 : c.threads.front().clock.size(), 0);
  for (const ThreadState& thread : c.threads) {
    join(exit, thread.clock);
    std::vector<uint32_t> unwaited = thread.bulk_uncommitted;
    for (const auto& group : thread.bulk_groups) unwaited.insert(unwaited.end(), group.begin(), group.end());
    for (uint32_t id : unwaited)
      if (c.ops[id]->kind == AsyncKind::tma_store)
        report(HazardKind::staging_reused, c.ops[id]->line,
               "the CTA exited while the " + op_at(*c.ops[id]) +
                   " may still read its shared memory: no cp.async.bulk.wait_group.read waited for it");
    if (!thread.tmem_loads.empty())
      report(HazardKind::tmem_misuse, thread.tmem_loads.front().line,
             "thread " + std::to_string(thread.linear) +
                 " exited with this tcgen05.ld not waited for: its registers are undefined until tcgen05.wait::ld");
  }
  for (const auto& op : c.ops)
    if (op->kind == AsyncKind::tma_load && !op->invalid && !ordered_after(exit, *op))
      report(HazardKind::race, op->line,
             "the CTA exited before the " + op_at(*op) +
                 " completed (no thread waited on its mbarrier): it may write the shared memory of the SM's next CTA");
}

}  // namespace tilec_emu
