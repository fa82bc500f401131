// runtime/parallel_tiles.cpp — tile-claiming launches; see parallel_tiles.h.
#include "runtime/parallel_tiles.h"

#include <algorithm>
#include <limits>

#include "runtime/executor.h"

namespace tilec::runtime {
namespace {

std::uint32_t budget_for(std::uint64_t tile_count) {
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(tile_count, 1, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

TileProcess::TileProcess(std::string name, std::uint64_t tile_count, TileFunction body,
                         std::uint32_t tiles_per_drain, unsigned parts)
    : Process(std::move(name), budget_for(tile_count)),
      body_(std::move(body)),
      tile_count_(tile_count),
      tiles_per_drain_(std::max<std::uint32_t>(1, tiles_per_drain)),
      part_count_(std::clamp(parts, 1u, max_parts)),
      remaining_(tile_count) {
  for (unsigned index = 0; index < part_count_; ++index) {
    parts_[index].next.store(tile_count * index / part_count_, std::memory_order_relaxed);
    parts_[index].end = tile_count * (index + 1) / part_count_;
  }
}

DrainResult TileProcess::drain(DrainContext& context) {
  // No tiles: budget 1 puts the process on the immediate list, so this call is the only one.
  if (tile_count_ == 0) return {.completed = true, .did_work = true};
  TileContext tile_context{*this, context.worker_index};
  const unsigned drainers = context.executor.drainer_count();
  const unsigned home = context.worker_index % drainers * part_count_ / drainers;
  // While Executor::run's caller works alone (no worker told yet), the first run is one tile and
  // the call returns once it has worked `help_alone` with more than that much work left (at its
  // pace so far), so the drainer announces the launch. A launch shorter than that involves no
  // other thread.
  const bool alone = wakes_deferred();
  // The clock is read at the start and when the finished count reaches a checkpoint (16, 32, 64,
  // ... tiles; also 1 while alone, to catch heavy tiles at once), not after every run: a read
  // costs 30 ns here.
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + drain_time;
  const auto wake_at = start + context.executor.options().help_alone;
  std::uint64_t checkpoint = alone ? 1 : max_run;
  std::uint64_t finished = 0;
  for (unsigned visited = 0; visited < part_count_ && finished < tiles_per_drain_;) {
    Part& part = parts_[(home + visited) % part_count_];
    const std::uint64_t next = part.next.load(std::memory_order_relaxed);
    if (next >= part.end) {
      ++visited;
      continue;
    }
    // Guided: a 1/(2 x drainers) share of what all parts would hold if each had this one's left,
    // ending at the next checkpoint.
    const std::uint64_t guess = (part.end - next) * part_count_ / (2 * std::uint64_t{drainers});
    const std::uint64_t longest = std::min({max_run, tiles_per_drain_ - finished, checkpoint - finished});
    const std::uint64_t run = std::clamp<std::uint64_t>(guess, 1, longest);
    const std::uint64_t first = part.next.fetch_add(run, std::memory_order_relaxed);
    if (first >= part.end) continue;  // others took the rest meanwhile; the next load moves on
    const std::uint64_t end = std::min(first + run, part.end);
    std::uint64_t tile = first;
    while (tile < end && !has_error()) body_(tile++, tile_context);
    finished += tile - first;
    if (tile < end) break;  // failed: the rest of the run never starts
    if (finished >= checkpoint) {
      checkpoint = std::max(2 * checkpoint, max_run);
      while (checkpoint <= finished) checkpoint *= 2;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      if (alone && now >= wake_at) {
        // Announce only when what is left, at this call's pace, would take the caller longer
        // than help_alone: a wake near the end of a launch costs more than it saves.
        const std::uint64_t left = remaining_.load(std::memory_order_relaxed) - finished;
        if ((now - start) / finished * left > context.executor.options().help_alone) break;
      }
    }
  }
  if (finished == 0) return {.completed = false, .did_work = false};
  // acq_rel: the call that retires the last tile sees every other tile's writes.
  const bool last = remaining_.fetch_sub(finished, std::memory_order_acq_rel) == finished;
  return {.completed = last, .did_work = true};
}

Status parallel_tiles(Executor& executor, std::uint64_t tile_count, TileFunction body) {
  // One part per drainer: each starts on its own and, once done, looks at the others'.
  TileProcess process("parallel_tiles", tile_count, std::move(body), 256, executor.drainer_count());
  executor.run(process);
  return process.status();
}

}  // namespace tilec::runtime
