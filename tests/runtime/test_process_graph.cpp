// tests/runtime/test_process_graph.cpp — random dependency DAGs: every process runs exactly
// once and only after all of its dependencies finished, for 1..4 workers and a mix of
// immediate processes, processes that yield several times, and multi-worker tile processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <vector>

#include "runtime/executor.h"
#include "runtime/parallel_tiles.h"
#include "tests/runtime/test_helpers.h"

namespace tilec::runtime {
namespace {

struct NodeRecord {
  std::atomic<int> starts{0};       // drain calls that began real work (immediate) / tiles run
  std::atomic<int> completions{0};  // times the node finished its work
  std::atomic<std::uint64_t> first_step{0};
  std::atomic<std::uint64_t> last_step{0};
};

struct Graph {
  std::vector<std::vector<unsigned>> predecessors;
};

Graph random_dag(unsigned node_count, unsigned max_predecessors, std::mt19937& random) {
  Graph graph;
  graph.predecessors.resize(node_count);
  for (unsigned node = 1; node < node_count; ++node) {
    const unsigned wanted = std::uniform_int_distribution<unsigned>(0, max_predecessors)(random);
    for (unsigned k = 0; k < wanted; ++k) {
      // Mostly recent nodes (deep chains), sometimes far ones (wide fan-in).
      const unsigned window = std::min(node, k == 0 ? 8u : node);
      const unsigned predecessor = node - 1 - std::uniform_int_distribution<unsigned>(0, window - 1)(random);
      auto& list = graph.predecessors[node];
      if (std::find(list.begin(), list.end(), predecessor) == list.end()) list.push_back(predecessor);
    }
  }
  return graph;
}

void run_random_dag(unsigned worker_count, unsigned node_count, unsigned seed) {
  std::mt19937 random(seed);
  const Graph graph = random_dag(node_count, 3, random);
  std::vector<NodeRecord> records(node_count);
  std::atomic<std::uint64_t> clock{1};
  std::vector<std::unique_ptr<Process>> processes;
  processes.reserve(node_count);

  for (unsigned node = 0; node < node_count; ++node) {
    NodeRecord& record = records[node];
    auto stamp = [&record, &clock] {
      const std::uint64_t now = clock.fetch_add(1, std::memory_order_acq_rel);
      std::uint64_t expected = 0;
      record.first_step.compare_exchange_strong(expected, now, std::memory_order_acq_rel);
      record.last_step.store(now, std::memory_order_release);
    };
    switch (node % 4) {
      case 0:
      case 1:  // immediate, runs once
        processes.push_back(test_support::make_once("node", [&record, stamp] {
          stamp();
          record.starts.fetch_add(1);
          record.completions.fetch_add(1);
        }));
        break;
      case 2: {  // immediate, yields twice before completing
        auto steps = std::make_shared<int>(0);
        processes.push_back(test_support::make_process("yielding", 1, [&record, stamp, steps](DrainContext&) {
          stamp();
          if (++*steps < 3) return DrainResult{.completed = false, .did_work = true};
          record.starts.fetch_add(1);
          record.completions.fetch_add(1);
          return DrainResult{.completed = true, .did_work = true};
        }));
        break;
      }
      default: {  // compute: several workers claim 1..40 tiles
        const std::uint64_t tiles = 1 + node % 40;
        auto tile_runs = std::make_shared<std::vector<std::atomic<int>>>(tiles);
        processes.push_back(std::make_unique<TileProcess>(
            "tiles", tiles,
            [&record, stamp, tile_runs, tiles](std::uint64_t tile, TileContext&) {
              stamp();
              if ((*tile_runs)[tile].fetch_add(1) != 0) record.starts.fetch_add(100);  // twice!
              if (record.starts.fetch_add(1) + 1 == static_cast<int>(tiles)) {
                record.completions.fetch_add(1);
              }
            },
            /*tiles_per_drain=*/2));
        break;
      }
    }
  }
  for (unsigned node = 0; node < node_count; ++node) {
    for (unsigned predecessor : graph.predecessors[node]) {
      processes[predecessor]->add_dependent(*processes[node]);
    }
  }

  Executor executor(ExecutorOptions{.worker_count = worker_count});
  // Submit in a shuffled order: submission order must not matter.
  std::vector<unsigned> order(node_count);
  for (unsigned node = 0; node < node_count; ++node) order[node] = node;
  std::shuffle(order.begin(), order.end(), random);
  for (unsigned node : order) executor.submit(*processes[node]);
  for (auto& process : processes) process->wait();

  for (unsigned node = 0; node < node_count; ++node) {
    SCOPED_TRACE(::testing::Message() << "node " << node);
    EXPECT_TRUE(processes[node]->status().ok());
    const int expected_starts = node % 4 == 3 ? static_cast<int>(1 + node % 40) : 1;
    EXPECT_EQ(records[node].starts.load(), expected_starts);  // each piece ran exactly once
    EXPECT_EQ(records[node].completions.load(), 1);
    for (unsigned predecessor : graph.predecessors[node]) {
      EXPECT_LT(records[predecessor].last_step.load(), records[node].first_step.load())
          << "ran before its dependency " << predecessor << " finished";
    }
  }
  const TeardownReport report = executor.shutdown(std::chrono::seconds(5));
  EXPECT_TRUE(report.drained);
  EXPECT_EQ(report.unfinished, 0u);
}

TEST(RuntimeGraph, RandomDagsRunEachProcessOnceAfterItsDependencies) {
  for (unsigned workers : test_support::worker_counts) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(::testing::Message() << workers << " workers, seed " << seed);
      run_random_dag(workers, 4000, seed * 7919 + workers);
    }
  }
}

TEST(RuntimeGraph, WideFanOutAndFanIn) {
  // One root releases 1000 processes which all feed one sink: the sink sees all of them done.
  for (unsigned workers : test_support::worker_counts) {
    std::atomic<int> done{0};
    int seen_by_sink = -1;
    auto root = test_support::make_once("root", [] {});
    auto sink = test_support::make_once("sink", [&] { seen_by_sink = done.load(); });
    std::vector<std::unique_ptr<Process>> middle;
    for (int i = 0; i < 1000; ++i) {
      middle.push_back(test_support::make_once("middle", [&] { done.fetch_add(1); }));
      root->add_dependent(*middle.back());
      middle.back()->add_dependent(*sink);
    }
    Executor executor(ExecutorOptions{.worker_count = workers});
    executor.submit(*sink);
    for (auto& process : middle) executor.submit(*process);
    executor.submit(*root);
    sink->wait();
    EXPECT_EQ(seen_by_sink, 1000);
  }
}

TEST(RuntimeGraph, MoreComputeProcessesThanSlotsAllComplete) {
  // 64 concurrent tile processes: 16 take slots, the rest wait in the overflow list.
  for (unsigned workers : test_support::worker_counts) {
    Executor executor(ExecutorOptions{.worker_count = workers});
    std::vector<std::unique_ptr<TileProcess>> launches;
    std::vector<std::vector<int>> outputs(64, std::vector<int>(50, 0));
    for (unsigned launch = 0; launch < 64; ++launch) {
      launches.push_back(std::make_unique<TileProcess>(
          "launch", 50, [&outputs, launch](std::uint64_t tile, TileContext&) {
            outputs[launch][tile] += static_cast<int>(launch * 1000 + tile);
          }));
    }
    for (auto& launch : launches) executor.submit(*launch);
    for (auto& launch : launches) launch->wait();
    for (unsigned launch = 0; launch < 64; ++launch) {
      for (unsigned tile = 0; tile < 50; ++tile) {
        ASSERT_EQ(outputs[launch][tile], static_cast<int>(launch * 1000 + tile));
      }
    }
  }
}

}  // namespace
}  // namespace tilec::runtime
