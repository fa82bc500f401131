// runtime/interpreter/executor_tile_runner.h — runs a kernel's tiles on the process executor.
//
// Each launch is one TileProcess: the executor's workers claim tile indices with an atomic
// counter, so tiles run in parallel; the interpreter's results do not depend on the order.
#pragma once

#include "runtime/executor.h"
#include "runtime/interpreter/tile_runner.h"

namespace tilec::runtime {

class ExecutorTileRunner final : public TileRunner {
 public:
  explicit ExecutorTileRunner(Executor& executor) : executor_(executor) {}
  void run_tiles(int64_t count, const std::function<void(int64_t)>& body) override;

 private:
  Executor& executor_;
};

}  // namespace tilec::runtime
