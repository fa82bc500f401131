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
                         std::uint32_t tiles_per_drain)
    : Process(std::move(name), budget_for(tile_count)),
      body_(std::move(body)),
      tile_count_(tile_count),
      tiles_per_drain_(std::max<std::uint32_t>(1, tiles_per_drain)),
      remaining_(tile_count) {}

DrainResult TileProcess::drain(DrainContext& context) {
  // No tiles: budget 1 puts the process on the immediate list, so this call is the only one.
  if (tile_count_ == 0) return {.completed = true, .did_work = true};
  TileContext tile_context{*this, context.worker_index};
  // Guided self-scheduling: claim runs of a fraction of the unclaimed tiles, so a launch costs
  // few atomics while much is left and ends balanced (runs shrink to one tile at the end).
  const std::uint64_t share = 2 * std::uint64_t{context.executor.drainer_count()};
  std::uint64_t unclaimed = tile_count_ - std::min(tile_count_, next_tile_.load(std::memory_order_relaxed));
  std::uint64_t finished = 0;
  while (finished < tiles_per_drain_ && unclaimed > 0) {
    const std::uint64_t run = std::clamp<std::uint64_t>(unclaimed / share, 1, tiles_per_drain_ - finished);
    const std::uint64_t first = next_tile_.fetch_add(run, std::memory_order_relaxed);
    if (first >= tile_count_) break;
    const std::uint64_t end = std::min(first + run, tile_count_);
    unclaimed = tile_count_ - end;
    std::uint64_t tile = first;
    while (tile < end && !has_error()) body_(tile++, tile_context);
    finished += tile - first;
    if (tile < end) break;  // failed: the rest of the run never starts
  }
  if (finished == 0) return {.completed = false, .did_work = false};
  // acq_rel: the call that retires the last tile sees every other tile's writes.
  const bool last = remaining_.fetch_sub(finished, std::memory_order_acq_rel) == finished;
  return {.completed = last, .did_work = true};
}

Status parallel_tiles(Executor& executor, std::uint64_t tile_count, TileFunction body) {
  TileProcess process("parallel_tiles", tile_count, std::move(body));
  executor.submit(process);
  process.wait();
  return process.status();
}

}  // namespace tilec::runtime
