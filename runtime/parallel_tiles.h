// runtime/parallel_tiles.h — a kernel launch as a process: workers claim tile indices.
//
// TileProcess runs body(tile) once for every tile in [0, tile_count). Its drain claims tiles
// with one atomic fetch_add each, runs up to `tiles_per_drain` of them, and returns so the
// worker can look at other work; the drain call that retires the last tile (a fetch_sub on the
// remaining count reaching zero) is the one that reports completion (completer election). Its
// wake budget is the tile count, so it is queued in a compute slot and wakes up to that many
// workers. Which worker runs which tile is not deterministic; a body that writes only its own
// tile's outputs gives results that do not depend on the number of workers.
//
// A body that wants to stop the launch calls context.process.fail(...): tiles not yet started
// are skipped and the process completes with that status.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/process.h"

namespace tilec::runtime {

struct TileContext {
  Process& process;
  unsigned worker_index;
};

using TileFunction = std::function<void(std::uint64_t tile, TileContext& context)>;

class TileProcess final : public Process {
 public:
  TileProcess(std::string name, std::uint64_t tile_count, TileFunction body,
              std::uint32_t tiles_per_drain = 16);

  std::uint64_t tile_count() const { return tile_count_; }

 protected:
  DrainResult drain(DrainContext& context) override;

 private:
  TileFunction body_;
  std::uint64_t tile_count_;
  std::uint32_t tiles_per_drain_;
  alignas(64) std::atomic<std::uint64_t> next_tile_{0};  // claimed by every drainer
  alignas(64) std::atomic<std::uint64_t> remaining_;     // tiles not yet finished
};

class Executor;

// Runs body over [0, tile_count) on `executor` and waits; returns the launch's status.
Status parallel_tiles(Executor& executor, std::uint64_t tile_count, TileFunction body);

}  // namespace tilec::runtime
