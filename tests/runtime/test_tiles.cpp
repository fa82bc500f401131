// tests/runtime/test_tiles.cpp — tile-claiming launches: every tile runs exactly once, results
// are bit-identical for 1..N workers, parked workers are woken to share a launch, and a waiting
// host thread drains work itself.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "runtime/executor.h"
#include "runtime/parallel_tiles.h"
#include "tests/runtime/test_helpers.h"

namespace tilec::runtime {
namespace {

// A float computation sensitive to summation order: each tile reduces its own slice serially,
// and the tiles' partial sums are combined in tile order afterwards.
std::vector<float> run_softmax_like(Executor& executor, unsigned tile_count, unsigned tile_size) {
  std::vector<float> input(tile_count * tile_size);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = std::sin(static_cast<float>(i) * 0.37f) * 3.0f;
  std::vector<float> output(input.size());
  std::vector<std::atomic<int>> runs(tile_count);
  const Status status = parallel_tiles(executor, tile_count, [&](std::uint64_t tile, TileContext&) {
    runs[tile].fetch_add(1, std::memory_order_relaxed);
    const float* row = &input[tile * tile_size];
    float maximum = row[0];
    for (unsigned i = 1; i < tile_size; ++i) maximum = std::max(maximum, row[i]);
    float sum = 0.0f;
    for (unsigned i = 0; i < tile_size; ++i) sum += std::exp(row[i] - maximum);
    for (unsigned i = 0; i < tile_size; ++i) output[tile * tile_size + i] = std::exp(row[i] - maximum) / sum;
  });
  EXPECT_TRUE(status.ok());
  for (unsigned tile = 0; tile < tile_count; ++tile) EXPECT_EQ(runs[tile].load(), 1) << "tile " << tile;
  return output;
}

TEST(RuntimeTiles, ResultsAreBitIdenticalForOneToEightWorkers) {
  std::vector<float> reference;
  for (unsigned workers = 1; workers <= 8; ++workers) {
    Executor executor(ExecutorOptions{.worker_count = workers});
    for (unsigned tiles : {1u, 7u, 333u}) {
      const std::vector<float> result = run_softmax_like(executor, tiles, 64);
      if (tiles != 333) continue;
      if (reference.empty()) {
        reference = result;
      } else {
        ASSERT_EQ(result.size(), reference.size());
        EXPECT_EQ(std::memcmp(result.data(), reference.data(), result.size() * sizeof(float)), 0)
            << workers << " workers differ from 1 worker";
      }
    }
  }
}

TEST(RuntimeTiles, ZeroTilesCompletesWithoutCallingTheBody) {
  Executor executor(ExecutorOptions{.worker_count = 2});
  std::atomic<int> calls{0};
  EXPECT_TRUE(parallel_tiles(executor, 0, [&](std::uint64_t, TileContext&) { calls.fetch_add(1); }).ok());
  EXPECT_EQ(calls.load(), 0);
}

TEST(RuntimeTiles, ManyLaunchesBackToBackEachRunEveryTileOnce) {
  for (unsigned workers : test_support::worker_counts) {
    Executor executor(ExecutorOptions{.worker_count = workers});
    std::vector<std::uint32_t> hits(100);
    for (unsigned launch = 0; launch < 300; ++launch) {
      ASSERT_TRUE(parallel_tiles(executor, 1 + launch % 100, [&](std::uint64_t tile, TileContext&) {
        ++hits[tile];  // tiles are disjoint: no atomics needed
      }).ok());
    }
    for (unsigned tile = 0; tile < 100; ++tile) {
      unsigned expected = 0;
      for (unsigned launch = 0; launch < 300; ++launch) expected += tile < 1 + launch % 100 ? 1 : 0;
      EXPECT_EQ(hits[tile], expected);
    }
  }
}

// submit() and wait(): activation wakes parked workers at once (Executor::run would let the
// caller start alone, and these tiles wait for each other, which run's tiles must not do).
Status submit_and_wait(Executor& executor, std::uint64_t tile_count, TileFunction body) {
  TileProcess process("launch", tile_count, std::move(body));
  executor.submit(process);
  process.wait();
  return process.status();
}

TEST(RuntimeTiles, ParkedWorkersAreWokenToShareALaunch) {
  // Let all workers park, then launch tiles that each wait until two workers have joined (the
  // waiting caller helps too, and does not count): the launch can only finish if the wake
  // (direct + tree) brought parked workers in.
  Executor executor(ExecutorOptions{.worker_count = 4});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past every spin: all parked
  std::mutex mutex;
  std::set<unsigned> seen;
  std::atomic<bool> shared{false};
  const Status status = submit_and_wait(executor, 64, [&](std::uint64_t, TileContext& context) {
    {
      std::lock_guard lock(mutex);
      if (context.worker_index < executor.worker_count()) seen.insert(context.worker_index);
      if (seen.size() >= 2) shared.store(true);
    }
    while (!shared.load()) std::this_thread::yield();  // hold this worker until another joins
  });
  EXPECT_TRUE(status.ok());
  EXPECT_GE(seen.size(), 2u);
}

TEST(RuntimeTiles, WakeTreeBringsEveryParkedWorkerIn) {
  // All 8 workers parked; one launch with budget 64. The activator wakes one worker directly,
  // and each woken worker wakes the next (fan-out 1), so all 8 must end up holding a tile. A
  // tile holds its worker until all 8 are in (or 10 s pass, which fails the test, not hangs it).
  // The waiting caller holds tiles too; it is not one of the 8.
  constexpr unsigned workers = 8;
  Executor executor(ExecutorOptions{.worker_count = workers});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::mutex mutex;
  std::set<unsigned> seen;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const Status status = submit_and_wait(executor, 64, [&](std::uint64_t, TileContext& context) {
    {
      std::lock_guard lock(mutex);
      if (context.worker_index < workers) seen.insert(context.worker_index);
    }
    for (;;) {
      {
        std::lock_guard lock(mutex);
        if (seen.size() == workers) return;
      }
      if (std::chrono::steady_clock::now() > give_up) return;
      std::this_thread::yield();
    }
  });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(seen.size(), workers);
}

TEST(RuntimeTiles, AWaitingHostThreadDrainsWorkItself) {
  // The one worker is held inside a budget-1 process until a later launch runs. Only the host
  // thread waiting for that launch can run it: it must, with the helping seat's index.
  // (Without the help the holder gives up after 10 s and the worker runs the launch: a failure,
  // not a hang.)
  Executor executor(ExecutorOptions{.worker_count = 1});
  std::atomic<bool> worker_inside{false};
  std::atomic<bool> released{false};
  auto holder = test_support::make_once("holder", [&] {
    worker_inside.store(true);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!released.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  });
  executor.submit(*holder);
  while (!worker_inside.load()) std::this_thread::yield();
  std::set<unsigned> indices;  // only the helper runs tiles, so no lock is needed
  const Status status = parallel_tiles(executor, 40, [&](std::uint64_t, TileContext& context) {
    indices.insert(context.worker_index);
  });
  released.store(true);
  holder->wait();
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(indices, std::set<unsigned>{executor.worker_count()});
  EXPECT_EQ(executor.drainer_count(), 2u);
}

TEST(RuntimeTiles, RunWakesParkedWorkersOnceTheCallerHasWorkedAWhile) {
  // A tiny launch first, so the executor's last cold launch was short and the next one defers
  // its wakes. All workers parked; Executor::run's caller starts alone, and each tile takes
  // 1 ms, so the first tile already exceeds help_alone: the workers must be woken and share the
  // launch. (Had the tiny launch been slow, the wakes are sent at once: the same outcome.)
  Executor executor(ExecutorOptions{.worker_count = 3});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(parallel_tiles(executor, 4, [](std::uint64_t, TileContext&) {}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::mutex mutex;
  std::set<unsigned> workers_seen;
  const Status status = parallel_tiles(executor, 32, [&](std::uint64_t, TileContext& context) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (std::chrono::steady_clock::now() < until) {
    }
    std::lock_guard lock(mutex);
    if (context.worker_index < executor.worker_count()) workers_seen.insert(context.worker_index);
  });
  EXPECT_TRUE(status.ok());
  EXPECT_GE(workers_seen.size(), 1u) << "no parked worker was woken for a 32 ms launch";
}

TEST(RuntimeTiles, RunDrainsAReadyBudgetOneProcessOnTheCallingThread) {
  Executor executor(ExecutorOptions{.worker_count = 2});
  std::thread::id ran_on;
  unsigned index = 0;
  auto process = test_support::make_process("inline", 1, [&](DrainContext& context) {
    ran_on = std::this_thread::get_id();
    index = context.worker_index;
    return DrainResult{.completed = true, .did_work = true};
  });
  executor.run(*process);
  EXPECT_TRUE(process->done());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(index, executor.worker_count());
}

TEST(RuntimeTiles, RunWaitsForDependenciesAndFromAWorkerBlocksInstead) {
  // A process with a dependency is activated by the dependency's completer, not by run(); and
  // a drain function that calls run() (a worker thread) blocks instead of taking the seat.
  Executor executor(ExecutorOptions{.worker_count = 2});
  std::atomic<int> order{0};
  int first_seen = -1;
  int second_seen = -1;
  auto first = test_support::make_once("first", [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    first_seen = order.fetch_add(1);
  });
  auto second = test_support::make_once("second", [&] { second_seen = order.fetch_add(1); });
  first->add_dependent(*second);
  auto outer = test_support::make_once("outer", [&] {
    executor.submit(*first);
    executor.run(*second);  // on a worker thread
  });
  executor.run(*outer);
  first->wait();  // its completer may still be releasing `second` when `outer` returns
  EXPECT_TRUE(second->done());
  EXPECT_EQ(first_seen, 0);
  EXPECT_EQ(second_seen, 1);
}

TEST(RuntimeTiles, OnlyOneHostThreadHelpsAtATimeAndTheOthersStillFinish) {
  // Four host threads launch and wait at once: one takes the helping seat, three block. Every
  // tile runs once, and no two concurrent drain calls share an index.
  Executor executor(ExecutorOptions{.worker_count = 2});
  std::vector<std::atomic<int>> busy(executor.drainer_count());
  std::atomic<bool> shared_index{false};
  std::vector<std::vector<int>> hits(4, std::vector<int>(500));
  std::vector<std::thread> hosts;
  for (unsigned host = 0; host < 4; ++host) {
    hosts.emplace_back([&, host] {
      for (int launch = 0; launch < 20; ++launch) {
        EXPECT_TRUE(parallel_tiles(executor, 500, [&](std::uint64_t tile, TileContext& context) {
          if (busy[context.worker_index].fetch_add(1) != 0) shared_index.store(true);
          ++hits[host][tile];
          busy[context.worker_index].fetch_sub(1);
        }).ok());
      }
    });
  }
  for (std::thread& thread : hosts) thread.join();
  EXPECT_FALSE(shared_index.load());
  for (const auto& host_hits : hits) {
    for (int count : host_hits) EXPECT_EQ(count, 20);
  }
}

}  // namespace
}  // namespace tilec::runtime
