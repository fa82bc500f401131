// runtime/interpreter/executor_tile_runner.cpp — tiles as a TileProcess on the executor.
#include "runtime/interpreter/executor_tile_runner.h"

#include <stdexcept>

#include "runtime/parallel_tiles.h"

namespace tilec::runtime {

void ExecutorTileRunner::run_tiles(int64_t count, const std::function<void(int64_t)>& body) {
  if (count <= 0) return;
  Status status = parallel_tiles(executor_, static_cast<std::uint64_t>(count),
                                 [&](std::uint64_t tile, TileContext&) { body(static_cast<int64_t>(tile)); });
  // The interpreter records its own errors per tile; a failed launch here means the executor
  // itself broke (cancelled or torn down), which is a bug in the caller.
  if (!status.ok()) throw std::runtime_error("executor launch failed: " + status.message);
}

}  // namespace tilec::runtime
