// runtime/parallel_tiles.h — a kernel launch as a process: workers claim tile indices.
//
// TileProcess runs body(tile) once for every tile in [0, tile_count). The tiles are cut into
// `parts` contiguous parts (at most max_parts; parallel_tiles gives one per drainer of the
// executor), each with its own claim counter on its own cache line. A drainer
// starts at its home part (spread by its index over the parts, so drainers start apart) and
// claims runs there with one fetch_add each, then sweeps on through the other parts, taking what
// is left in them. Runs are guided — a share of what is left, as if every part had as much left
// as this one: long while much is left, one tile at the end — so a launch costs few atomics, a
// drainer mostly touches a line nobody else writes, and the launch ends balanced. A drain call
// returns after `tiles_per_drain` tiles or `drain_time` of work, so the drainer can look at other
// work; the call that retires the last tile (a fetch_sub on the remaining count reaching zero)
// is the one that reports completion (completer election). Its
// wake budget is the tile count, so it is queued in a compute slot and wakes up to that many
// workers. Which worker runs which tile is not deterministic; a body that writes only its own
// tile's outputs gives results that do not depend on the number of workers. Tiles must not
// wait for other tiles of the launch: it may run on one thread (Executor::run's caller works
// alone for its first microseconds).
//
// A body that wants to stop the launch calls context.process.fail(...): tiles not yet started
// are skipped and the process completes with that status.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
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
  static constexpr unsigned max_parts = 8;
  static constexpr std::uint64_t max_run = 16;  // tiles per claim at most
  static constexpr std::chrono::microseconds drain_time{20};

  TileProcess(std::string name, std::uint64_t tile_count, TileFunction body,
              std::uint32_t tiles_per_drain = 256, unsigned parts = max_parts);

  std::uint64_t tile_count() const { return tile_count_; }

 protected:
  DrainResult drain(DrainContext& context) override;

 private:
  struct alignas(64) Part {
    std::atomic<std::uint64_t> next{0};  // the next unclaimed tile; may run past `end`
    std::uint64_t end = 0;
  };

  TileFunction body_;
  std::uint64_t tile_count_;
  std::uint32_t tiles_per_drain_;
  unsigned part_count_;
  std::array<Part, max_parts> parts_;
  alignas(64) std::atomic<std::uint64_t> remaining_;  // tiles not yet finished
};

class Executor;

// Runs body over [0, tile_count) on `executor` through Executor::run (the calling thread works
// on the launch too) and returns the launch's status.
Status parallel_tiles(Executor& executor, std::uint64_t tile_count, TileFunction body);

}  // namespace tilec::runtime
