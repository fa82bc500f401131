// bench/reorder/reorder_bench.cpp — figures for the event-limited reorder engine.
//
// Generates statement lists with its own seeded generator (splitmix64, so the figures do not
// depend on the standard library) in three families, and prints for 100, 1,000 and 10,000
// statements:
//   - the max live events per pair in program order, after greedy alone (first strict
//     strategy, or its relaxed run when it dead-ends) and after the whole engine;
//   - how many lists each reached within the limit, and which engine step produced them;
//   - the engine's time per statement (median of repeated runs).
// Families: "batched" (loads issued in batches ahead of reduction trees, the PyPTO pattern),
// "window" (random pipes reading recent results), "trap" (greedy dead-ends sprinkled in).
// Usage: reorder-bench [--quick]   (--quick: fewer lists and repetitions)
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "passes/reorder/check_order.h"
#include "passes/reorder/compute_dependences.h"
#include "passes/reorder/reorder_events.h"
#include "passes/reorder/schedule_greedy.h"

namespace {

using namespace tilec::reorder;

struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(int bound) { return static_cast<int>(next() % static_cast<std::uint64_t>(bound)); }
};

Statement make(std::string name, Pipe pipe, std::vector<std::string> reads, std::vector<std::string> writes) {
  Statement statement;
  statement.name = std::move(name);
  statement.pipe = pipe;
  statement.reads = std::move(reads);
  statement.writes = std::move(writes);
  return statement;
}

// Batches of 6..16 loads, then a reduction tree over them on V, then a store.
Segment batched(SplitMix& random, int count) {
  Segment segment;
  int serial = 0;
  while (static_cast<int>(segment.statements.size()) < count) {
    int loads = 6 + random.below(11);
    std::vector<std::string> level;
    for (int index = 0; index < loads; ++index) {
      std::string value = "x" + std::to_string(serial++);
      segment.statements.push_back(make("load_" + value, Pipe::MTE2, {"in"}, {value}));
      level.push_back(value);
    }
    while (level.size() > 1) {
      std::vector<std::string> next;
      for (std::size_t index = 0; index + 1 < level.size(); index += 2) {
        std::string value = "r" + std::to_string(serial++);
        segment.statements.push_back(make("add_" + value, Pipe::V, {level[index], level[index + 1]}, {value}));
        next.push_back(value);
      }
      if (level.size() % 2) next.push_back(level.back());
      level = std::move(next);
    }
    segment.statements.push_back(make("store" + std::to_string(serial++), Pipe::MTE3, {level[0]}, {"out"}));
  }
  segment.statements.resize(count);
  return segment;
}

// Random GPU pipes; each statement reads up to two results of the last 48 statements.
Segment window(SplitMix& random, int count) {
  const Pipe pipes[] = {Pipe::TMA, Pipe::MMA, Pipe::SIMT, Pipe::LSU, Pipe::SFU};
  Segment segment;
  for (int index = 0; index < count; ++index) {
    std::vector<std::string> reads;
    for (int read = 0; read < 2; ++read) {
      int back = 1 + random.below(48);
      if (index - back >= 0) reads.push_back("v" + std::to_string(index - back));
    }
    segment.statements.push_back(
        make("s" + std::to_string(index), pipes[random.below(5)], std::move(reads), {"v" + std::to_string(index)}));
  }
  return segment;
}

// Blocks where the early loads tie with a late load that feeds every join through a bridge:
// greedy takes the early loads first and dead-ends at the limit.
Segment trap(SplitMix& random, int count) {
  Segment segment;
  int serial = 0;
  while (static_cast<int>(segment.statements.size()) < count) {
    int early = 8 + random.below(5);  // program order holds early + 1 live events
    std::string tag = std::to_string(serial++);
    for (int index = 0; index < early; ++index) {
      segment.statements.push_back(make("early" + tag + "_" + std::to_string(index), Pipe::MTE2, {},
                                        {"u" + tag + "_" + std::to_string(index)}));
    }
    segment.statements.push_back(make("late" + tag, Pipe::MTE2, {}, {"v" + tag}));
    segment.statements.push_back(make("bridge" + tag, Pipe::V, {"v" + tag}, {"z" + tag}));
    for (int index = 0; index < early; ++index) {
      segment.statements.push_back(make("join" + tag + "_" + std::to_string(index), Pipe::V,
                                        {"u" + tag + "_" + std::to_string(index), "z" + tag},
                                        {"o" + tag + "_" + std::to_string(index)}));
    }
  }
  segment.statements.resize(count);
  return segment;
}

struct Figures {
  int lists = 0;
  double program_peak = 0, greedy_peak = 0, engine_peak = 0;
  int program_fit = 0, greedy_fit = 0, engine_fit = 0;
  std::map<std::string, int> strategies;
  std::vector<double> seconds_per_statement;
};

void measure(const Segment& segment, int limit, int repetitions, Figures& figures) {
  DependenceGraph graph = compute_dependences(segment);
  std::vector<int> program(segment.statements.size());
  std::iota(program.begin(), program.end(), 0);
  int program_peak = check_order(segment, graph, program).max_peak;
  GreedyRun greedy = schedule_greedy(segment, graph, Strategy::min_max_then_sum, limit);
  if (!greedy.complete) greedy = schedule_greedy(segment, graph, Strategy::min_max_then_sum, std::nullopt);
  int greedy_peak = check_order(segment, graph, greedy.order).max_peak;

  ReorderOptions options;
  options.max_events = limit;
  ReorderResult result;
  std::vector<double> times;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    auto start = std::chrono::steady_clock::now();
    result = reorder_events(segment, options);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  figures.seconds_per_statement.push_back(times[times.size() / 2] / static_cast<double>(segment.statements.size()));
  ++figures.lists;
  figures.program_peak += program_peak;
  figures.greedy_peak += greedy_peak;
  figures.engine_peak += result.max_peak;
  figures.program_fit += program_peak <= limit;
  figures.greedy_fit += greedy_peak <= limit;
  figures.engine_fit += result.feasible;
  ++figures.strategies[result.strategy];
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  const int limit = 8;
  fmt::print("reorder-bench: max_events {}, lists per row {}, times are medians of {} runs\n\n", limit,
             quick ? 2 : 8, quick ? 1 : 5);
  fmt::print("{:<8} {:>6} {:>5} | {:>7} {:>7} {:>7} | {:>11} | {:>10} | {}\n", "family", "stmts", "lists",
             "program", "greedy", "engine", "fit p/g/e", "ns/stmt", "engine steps");
  using Generator = Segment (*)(SplitMix&, int);
  const std::pair<const char*, Generator> families[] = {{"batched", batched}, {"window", window}, {"trap", trap}};
  for (const auto& [family, generate] : families) {
    for (int count : {100, 1000, 10000}) {
      SplitMix random{0x5eed0000u + static_cast<std::uint64_t>(count)};
      Figures figures;
      const int lists = quick ? 2 : 8;
      const int repetitions = quick ? 1 : 5;
      for (int list = 0; list < lists; ++list) measure(generate(random, count), limit, repetitions, figures);
      std::sort(figures.seconds_per_statement.begin(), figures.seconds_per_statement.end());
      double median = figures.seconds_per_statement[figures.seconds_per_statement.size() / 2];
      std::string steps;
      for (const auto& [strategy, times] : figures.strategies) {
        steps += (steps.empty() ? "" : ", ") + strategy + " " + std::to_string(times);
      }
      double n = figures.lists;
      fmt::print("{:<8} {:>6} {:>5} | {:>7.2f} {:>7.2f} {:>7.2f} | {:>3}/{:>3}/{:>3} | {:>10.0f} | {}\n", family, count,
                 figures.lists, figures.program_peak / n, figures.greedy_peak / n, figures.engine_peak / n,
                 figures.program_fit, figures.greedy_fit, figures.engine_fit, median * 1e9, steps);
    }
  }
  fmt::print("\nprogram/greedy/engine: mean max live events per pair (program order, greedy alone, engine);\n"
             "fit p/g/e: lists within the limit for each.\n");
  return 0;
}
