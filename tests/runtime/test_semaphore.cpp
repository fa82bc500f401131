// tests/runtime/test_semaphore.cpp — timeline semaphores order launches: waits are released in
// value order by the signalling thread, failures reach waiters, a drain can suspend on one.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/executor.h"
#include "runtime/parallel_tiles.h"
#include "runtime/timeline_semaphore.h"
#include "tests/runtime/test_helpers.h"

namespace tilec::runtime {
namespace {

using test_support::make_once;
using test_support::make_process;

TEST(RuntimeSemaphore, LaunchesChainedThroughOneTimelineRunInValueOrder) {
  // Launch i waits for value i and signals i+1; submitted last-first, they must run first-last.
  for (unsigned workers : test_support::worker_counts) {
    constexpr unsigned count = 200;
    TimelineSemaphore timeline(0);
    std::mutex mutex;
    std::vector<unsigned> order;
    std::vector<std::unique_ptr<Process>> launches;
    for (unsigned i = 0; i < count; ++i) {
      launches.push_back(make_once("launch", [&, i] {
        std::lock_guard lock(mutex);
        order.push_back(i);
      }));
      launches.back()->wait_on(timeline, i);
      launches.back()->signal_on_completion(timeline, i + 1);
    }
    Executor executor(ExecutorOptions{.worker_count = workers});
    for (unsigned i = count; i-- > 0;) executor.submit(*launches[i]);
    EXPECT_TRUE(timeline.wait_until(count).ok());
    for (auto& launch : launches) launch->wait();
    ASSERT_EQ(order.size(), count);
    for (unsigned i = 0; i < count; ++i) EXPECT_EQ(order[i], i);
    EXPECT_EQ(timeline.value(), count);
  }
}

TEST(RuntimeSemaphore, TileLaunchesOrderedBySemaphoreSeeEachOthersResults) {
  // Launch k adds k to every element written by launch k-1: ordering makes the sum exact.
  for (unsigned workers : test_support::worker_counts) {
    constexpr unsigned launches_count = 20;
    constexpr unsigned tiles = 64;
    std::vector<std::uint64_t> data(tiles, 0);
    TimelineSemaphore timeline(0);
    std::vector<std::unique_ptr<TileProcess>> launches;
    for (unsigned k = 0; k < launches_count; ++k) {
      launches.push_back(std::make_unique<TileProcess>(
          "add", tiles, [&data, k](std::uint64_t tile, TileContext&) { data[tile] = data[tile] * 3 + k; }));
      launches.back()->wait_on(timeline, k);
      launches.back()->signal_on_completion(timeline, k + 1);
    }
    Executor executor(ExecutorOptions{.worker_count = workers});
    for (auto& launch : launches) executor.submit(*launch);
    ASSERT_TRUE(timeline.wait_until(launches_count).ok());
    std::uint64_t expected = 0;
    for (unsigned k = 0; k < launches_count; ++k) expected = expected * 3 + k;
    for (unsigned tile = 0; tile < tiles; ++tile) EXPECT_EQ(data[tile], expected);
    for (auto& launch : launches) launch->wait();
  }
}

TEST(RuntimeSemaphore, HostSignalFromAnotherThreadReleasesWaiters) {
  Executor executor(ExecutorOptions{.worker_count = 2});
  TimelineSemaphore gate(0);
  std::atomic<int> ran{0};
  std::vector<std::unique_ptr<Process>> waiters;
  for (unsigned i = 0; i < 100; ++i) {
    waiters.push_back(make_once("waiter", [&] { ran.fetch_add(1); }));
    waiters.back()->wait_on(gate, 1 + i % 5);
    executor.submit(*waiters.back());
  }
  EXPECT_EQ(ran.load(), 0);  // nothing can run before the signal
  std::thread host([&] {
    for (std::uint64_t value = 1; value <= 5; ++value) gate.signal(value);
  });
  host.join();
  for (auto& waiter : waiters) waiter->wait();
  EXPECT_EQ(ran.load(), 100);
}

TEST(RuntimeSemaphore, FailedProducerFailsTheSemaphoreAndItsWaiters) {
  Executor executor(ExecutorOptions{.worker_count = 2});
  TimelineSemaphore timeline(0);
  auto producer = make_process("producer", 1, [](DrainContext& context) {
    context.process.fail(Status::failed("producer broke"));
    return DrainResult{.completed = true, .did_work = true};
  });
  producer->signal_on_completion(timeline, 1);
  std::atomic<int> ran{0};
  auto consumer = make_once("consumer", [&] { ran.fetch_add(1); });
  consumer->wait_on(timeline, 1);
  executor.submit(*consumer);
  executor.submit(*producer);
  consumer->wait();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(consumer->status().message, "producer broke");
  EXPECT_TRUE(timeline.failed());
  EXPECT_EQ(timeline.wait_until(1).message, "producer broke");
  // A waiter registered after the failure is released at once with the same status.
  auto late = make_once("late", [&] { ran.fetch_add(1); });
  late->wait_on(timeline, 7);
  executor.submit(*late);
  late->wait();
  EXPECT_EQ(late->status().code, StatusCode::failed);
  EXPECT_EQ(ran.load(), 0);
}

TEST(RuntimeSemaphore, DrainSuspendsOnASemaphoreAndResumesWhenSignalled) {
  // A coroutine-like process: step 0 waits for the gate, step 1 records and completes.
  for (unsigned workers : test_support::worker_counts) {
    Executor executor(ExecutorOptions{.worker_count = workers});
    TimelineSemaphore gate(0);
    std::atomic<int> step{0};
    std::atomic<bool> waiting{false};
    auto coroutine = make_process("coroutine", 1, [&](DrainContext& context) {
      if (step.fetch_add(1) == 0) {
        context.process.wait_on(gate, 1);
        waiting.store(true);
        return DrainResult{.completed = false, .did_work = true};
      }
      return DrainResult{.completed = true, .did_work = true};
    });
    executor.submit(*coroutine);
    while (!waiting.load()) std::this_thread::yield();
    EXPECT_FALSE(coroutine->done());
    gate.signal(1);
    coroutine->wait();
    EXPECT_EQ(step.load(), 2);  // exactly one drain before and one after the signal
    EXPECT_TRUE(coroutine->status().ok());
  }
}

TEST(RuntimeSemaphore, ImmediateWorkRunsWhileALongLaunchKeepsTheOnlyWorkerBusy) {
  // One worker, an endless tile launch, then a host-signalled immediate process: the worker
  // must take the immediate process at a drain boundary instead of draining tiles forever.
  Executor executor(ExecutorOptions{.worker_count = 1});
  std::atomic<bool> launch_running{false};
  TileProcess endless("endless", std::uint64_t{1} << 50, [&](std::uint64_t, TileContext&) {
    launch_running.store(true);
  });
  executor.submit(endless);
  while (!launch_running.load()) std::this_thread::yield();
  TimelineSemaphore gate(0);
  std::atomic<bool> ran{false};
  auto callback = make_once("callback", [&] { ran.store(true); });
  callback->wait_on(gate, 1);
  executor.submit(*callback);
  gate.signal(1);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!callback->done() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  EXPECT_TRUE(ran.load());
  EXPECT_FALSE(endless.done());
  endless.cancel();
  endless.wait();
  callback->wait();
  EXPECT_EQ(endless.status().code, StatusCode::cancelled);
}

TEST(RuntimeSemaphore, SignalNeverLowersTheValue) {
  TimelineSemaphore timeline(5);
  timeline.signal(3);
  EXPECT_EQ(timeline.value(), 5u);
  timeline.signal(9);
  EXPECT_EQ(timeline.value(), 9u);
  EXPECT_TRUE(timeline.wait_until(9).ok());
}

}  // namespace
}  // namespace tilec::runtime
