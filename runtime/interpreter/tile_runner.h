// runtime/interpreter/tile_runner.h — the seam between a kernel launch and whoever runs its tiles.
//
// A launch asks its TileRunner to call `body(tile_index)` once for every index in [0, count)
// and to return when all calls have returned. The default runs them one after another; the
// executor (runtime/executor*) plugs in a runner whose workers claim tile indices in parallel.
// The interpreter makes results independent of the number of workers and of the order: each
// tile works on its own state and writes only its own output elements (a second tile storing
// to an element already stored by another is reported as a race, see docs/interpreter.md).
#pragma once

#include <cstdint>
#include <functional>

namespace tilec::runtime {

class TileRunner {
 public:
  virtual ~TileRunner() = default;
  // Calls body(i) exactly once for each i in [0, count); may run calls concurrently.
  virtual void run_tiles(int64_t count, const std::function<void(int64_t)>& body) = 0;
};

// Tiles in increasing index order on the calling thread.
class SerialTileRunner final : public TileRunner {
 public:
  void run_tiles(int64_t count, const std::function<void(int64_t)>& body) override;
};

// Tiles in decreasing index order (tests use it to show order independence).
class ReverseTileRunner final : public TileRunner {
 public:
  void run_tiles(int64_t count, const std::function<void(int64_t)>& body) override;
};

// A small stand-in for the executor: `workers` threads claim tile indices from one atomic
// counter. Used by tests and benchmarks until the executor's runner is wired in.
class ThreadTileRunner final : public TileRunner {
 public:
  explicit ThreadTileRunner(int workers) : workers_(workers < 1 ? 1 : workers) {}
  void run_tiles(int64_t count, const std::function<void(int64_t)>& body) override;

 private:
  int workers_;
};

}  // namespace tilec::runtime
