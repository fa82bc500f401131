// tests/runtime/test_errors.cpp — failures and cancellations travel to dependents: a dependent
// of a failed or cancelled process completes with that status and its drain never runs.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "runtime/executor.h"
#include "runtime/parallel_tiles.h"
#include "tests/runtime/test_helpers.h"

namespace tilec::runtime {
namespace {

using test_support::make_once;
using test_support::make_process;

TEST(RuntimeErrors, FailureReachesEveryTransitiveDependentAndNoneOfThemRuns) {
  for (unsigned workers : test_support::worker_counts) {
    std::atomic<int> ran{0};
    // a fails; b and c depend on a; d depends on b and on an independent e.
    auto a = make_process("a", 1, [](DrainContext& context) {
      context.process.fail(Status::failed("a broke"));
      return DrainResult{.completed = true, .did_work = true};
    });
    auto b = make_once("b", [&] { ran.fetch_add(1); });
    auto c = make_once("c", [&] { ran.fetch_add(1); });
    auto d = make_once("d", [&] { ran.fetch_add(1); });
    std::atomic<int> e_ran{0};
    auto e = make_once("e", [&] { e_ran.fetch_add(1); });
    a->add_dependent(*b);
    a->add_dependent(*c);
    b->add_dependent(*d);
    e->add_dependent(*d);

    Executor executor(ExecutorOptions{.worker_count = workers});
    for (Process* process : {d.get(), c.get(), b.get(), e.get(), a.get()}) executor.submit(*process);
    for (Process* process : {a.get(), b.get(), c.get(), d.get(), e.get()}) process->wait();

    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(e_ran.load(), 1);
    EXPECT_TRUE(e->status().ok());
    for (Process* process : {a.get(), b.get(), c.get(), d.get()}) {
      EXPECT_EQ(process->status().code, StatusCode::failed) << process->name();
      EXPECT_EQ(process->status().message, "a broke") << process->name();
    }
  }
}

TEST(RuntimeErrors, FirstErrorWins) {
  Executor executor(ExecutorOptions{.worker_count = 2});
  auto process = make_process("twice", 1, [](DrainContext& context) {
    context.process.fail(Status::failed("first"));
    context.process.fail(Status::failed("second"));
    context.process.cancel();
    return DrainResult{.completed = true, .did_work = true};
  });
  executor.submit(*process);
  process->wait();
  EXPECT_EQ(process->status().code, StatusCode::failed);
  EXPECT_EQ(process->status().message, "first");
}

TEST(RuntimeErrors, CancelledBeforeSubmissionNeverDrainsAndCancelsDependents) {
  for (unsigned workers : test_support::worker_counts) {
    std::atomic<int> ran{0};
    auto root = make_once("root", [&] { ran.fetch_add(1); });
    auto child = make_once("child", [&] { ran.fetch_add(1); });
    root->add_dependent(*child);
    root->cancel();
    Executor executor(ExecutorOptions{.worker_count = workers});
    executor.submit(*child);
    executor.submit(*root);
    child->wait();
    root->wait();
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(root->status().code, StatusCode::cancelled);
    EXPECT_EQ(child->status().code, StatusCode::cancelled);
  }
}

TEST(RuntimeErrors, CancellingARunningProcessStopsItAtTheNextDrain) {
  for (unsigned workers : test_support::worker_counts) {
    std::atomic<int> drains{0};
    std::atomic<bool> started{false};
    // Runs forever (yields after each step) until cancelled.
    auto endless = make_process("endless", 1, [&](DrainContext&) {
      drains.fetch_add(1);
      started.store(true);
      return DrainResult{.completed = false, .did_work = true};
    });
    std::atomic<int> dependent_ran{0};
    auto dependent = make_once("dependent", [&] { dependent_ran.fetch_add(1); });
    endless->add_dependent(*dependent);
    Executor executor(ExecutorOptions{.worker_count = workers});
    executor.submit(*endless);
    executor.submit(*dependent);
    while (!started.load()) std::this_thread::yield();
    endless->cancel();
    endless->wait();
    dependent->wait();
    const int drains_at_end = drains.load();
    EXPECT_GE(drains_at_end, 1);
    EXPECT_EQ(endless->status().code, StatusCode::cancelled);
    EXPECT_EQ(dependent->status().code, StatusCode::cancelled);
    EXPECT_EQ(dependent_ran.load(), 0);
    EXPECT_EQ(drains.load(), drains_at_end);  // no drain after completion
  }
}

TEST(RuntimeErrors, FailingTileSkipsRemainingTilesAndFailsTheLaunch) {
  for (unsigned workers : test_support::worker_counts) {
    Executor executor(ExecutorOptions{.worker_count = workers});
    std::atomic<bool> failure_recorded{false};
    std::atomic<unsigned> started_after_failure{0};
    TileProcess launch("launch", 10000, [&](std::uint64_t tile, TileContext& context) {
      if (failure_recorded.load(std::memory_order_acquire)) started_after_failure.fetch_add(1);
      if (tile == 5) {
        context.process.fail(Status::failed("tile 5 is bad"));
        failure_recorded.store(true, std::memory_order_release);
      }
    }, /*tiles_per_drain=*/4);
    std::atomic<int> after_ran{0};
    auto after = make_once("after", [&] { after_ran.fetch_add(1); });
    launch.add_dependent(*after);
    executor.submit(launch);
    executor.submit(*after);
    after->wait();
    launch.wait();
    EXPECT_EQ(launch.status().message, "tile 5 is bad");
    EXPECT_EQ(after->status().message, "tile 5 is bad");
    EXPECT_EQ(after_ran.load(), 0);
    // A worker that saw the failure also sees the error and stops claiming tiles, so each
    // worker starts at most one tile (the one it claimed before looking) after the failure.
    EXPECT_LE(started_after_failure.load(), workers);
  }
}

TEST(RuntimeErrors, CancellingAComputeProcessCompletesItOnce) {
  for (unsigned workers : test_support::worker_counts) {
    Executor executor(ExecutorOptions{.worker_count = workers});
    std::atomic<bool> started{false};
    std::atomic<int> completions{0};
    TileProcess launch("huge", std::uint64_t{1} << 40, [&](std::uint64_t, TileContext&) {
      started.store(true);
    });
    auto after = make_once("after", [&] { completions.fetch_add(1); });
    launch.add_dependent(*after);
    executor.submit(launch);
    executor.submit(*after);
    while (!started.load()) std::this_thread::yield();
    launch.cancel();
    launch.wait();
    after->wait();
    EXPECT_EQ(launch.status().code, StatusCode::cancelled);
    EXPECT_EQ(completions.load(), 0);
  }
}

}  // namespace
}  // namespace tilec::runtime
