// runtime/interpreter/tile_runner.cpp — the serial, reverse and thread tile runners.
#include "runtime/interpreter/tile_runner.h"

#include <atomic>
#include <thread>
#include <vector>

namespace tilec::runtime {

void SerialTileRunner::run_tiles(int64_t count, const std::function<void(int64_t)>& body) {
  for (int64_t i = 0; i < count; ++i) body(i);
}

void ReverseTileRunner::run_tiles(int64_t count, const std::function<void(int64_t)>& body) {
  for (int64_t i = count; i-- > 0;) body(i);
}

void ThreadTileRunner::run_tiles(int64_t count, const std::function<void(int64_t)>& body) {
  std::atomic<int64_t> next{0};
  auto drain = [&] {
    for (int64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) body(i);
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers_; ++w) threads.emplace_back(drain);
  drain();
  for (auto& thread : threads) thread.join();
}

}  // namespace tilec::runtime
