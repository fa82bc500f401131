// bench/runtime/runtime_bench.cpp — the executor's latency and throughput, against baselines.
//
// The set from seeds/002 (single-worker wake round trip, wake of N workers for N×100 tiles,
// warm workers, two concurrent processes, sequential throughput) plus a chain of dependent
// dispatches (dispatch-to-dispatch latency), activation cost and per-tile claim cost. Each runs
// on the tilec executor and, when built with them, on oneTBB and OpenMP doing the same work.
// Times are real (wall-clock) and manual: set-up (making process objects) is not timed.
// "Cold" benchmarks sleep 2 ms between iterations so every pool's workers are asleep; "warm"
// ones go back to back. Argument: the number of workers (threads) N.
// Run: build/bench/runtime/runtime_bench [--benchmark_filter=REGEX] — 5 interleaved repetitions
// by default, then a summary table: per case, the medians and tilec / best peer.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/executor.h"
#include "runtime/parallel_tiles.h"
#include "runtime/process.h"

#ifdef TILEC_BENCH_TBB
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif
#ifdef TILEC_BENCH_OPENMP
#include <omp.h>
#endif

namespace {

using namespace tilec::runtime;
using Clock = std::chrono::steady_clock;

constexpr auto cold_gap = std::chrono::milliseconds(2);
constexpr int chain_length = 100;

// Context switches (voluntary and involuntary, all threads of the process) and CPU time (user +
// system, all threads) per iteration, from getrusage around the timed loop: where the time goes
// without a profiler. A parked-and-woken thread is one voluntary switch; "cold" cases add the
// caller's 2 ms sleep (one more per iteration).
class UsageMeter {
 public:
  explicit UsageMeter(benchmark::State& state) : state_(state), start_(now()) {}
  ~UsageMeter() {
    const rusage end = now();
    const double iterations = static_cast<double>(std::max<benchmark::IterationCount>(1, state_.iterations()));
    const auto switches = (end.ru_nvcsw + end.ru_nivcsw) - (start_.ru_nvcsw + start_.ru_nivcsw);
    const auto micros = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); };
    const double cpu = micros(end.ru_utime) + micros(end.ru_stime) - micros(start_.ru_utime) - micros(start_.ru_stime);
    state_.counters["switches"] = static_cast<double>(switches) / iterations;
    state_.counters["cpu_us"] = cpu / iterations;
  }
  UsageMeter(const UsageMeter&) = delete;
  UsageMeter& operator=(const UsageMeter&) = delete;

 private:
  static rusage now() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage;
  }
  benchmark::State& state_;
  rusage start_;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The unit of work in a tile: a few dependent integer operations on the tile's own slot.
inline void tile_work(std::vector<std::uint64_t>& out, std::uint64_t tile) {
  std::uint64_t value = tile * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 8; ++i) value ^= value >> 13, value *= 0xff51afd7ed558ccdull;
  out[tile] = value;
}

struct OnceProcess final : Process {
  explicit OnceProcess(std::atomic<int>* counter) : Process("once", 1), counter(counter) {}
  DrainResult drain(DrainContext&) override {
    counter->fetch_add(1, std::memory_order_relaxed);
    return {.completed = true, .did_work = true};
  }
  std::atomic<int>* counter;
};

ExecutorOptions options_for(const benchmark::State& state) {
  return ExecutorOptions{.worker_count = static_cast<unsigned>(state.range(0))};
}

// ---- single-worker wake round trip: idle pool, one tiny job, wait for it -----------------
void BM_WakeOne_Tilec(benchmark::State& state) {
  Executor executor(options_for(state));
  std::atomic<int> counter{0};
  UsageMeter usage(state);
  for (auto _ : state) {
    std::this_thread::sleep_for(cold_gap);
    OnceProcess process(&counter);
    const auto start = Clock::now();
    executor.submit(process);
    process.wait();
    state.SetIterationTime(seconds_since(start));
  }
}
BENCHMARK(BM_WakeOne_Tilec)->Arg(2)->UseManualTime()->Iterations(300);

// ---- wake all N workers for N×100 tiles ---------------------------------------------------
template <typename Launch>
void run_tiles(benchmark::State& state, bool cold, Launch launch) {
  const std::uint64_t tiles = static_cast<std::uint64_t>(state.range(0)) * 100;
  std::vector<std::uint64_t> out(tiles);
  double total = 0;
  UsageMeter usage(state);
  for (auto _ : state) {
    if (cold) std::this_thread::sleep_for(cold_gap);
    const auto start = Clock::now();
    launch(out, tiles);
    const double elapsed = seconds_since(start);
    total += elapsed;
    state.SetIterationTime(elapsed);
  }
  state.counters["ns_per_tile"] =
      total / (static_cast<double>(tiles) * static_cast<double>(state.iterations())) * 1e9;
}

void tilec_tiles(benchmark::State& state, bool cold) {
  Executor executor(options_for(state));
  run_tiles(state, cold, [&](std::vector<std::uint64_t>& out, std::uint64_t tiles) {
    parallel_tiles(executor, tiles, [&](std::uint64_t tile, TileContext&) { tile_work(out, tile); });
  });
}
void BM_WakeAllTiles_Tilec(benchmark::State& state) { tilec_tiles(state, true); }
void BM_WarmTiles_Tilec(benchmark::State& state) { tilec_tiles(state, false); }
BENCHMARK(BM_WakeAllTiles_Tilec)->Arg(1)->Arg(2)->UseManualTime()->Iterations(300);
BENCHMARK(BM_WarmTiles_Tilec)->Arg(1)->Arg(2)->UseManualTime();

// ---- two concurrent processes, N×100 tiles each -------------------------------------------
void BM_TwoProcesses_Tilec(benchmark::State& state) {
  Executor executor(options_for(state));
  const std::uint64_t tiles = static_cast<std::uint64_t>(state.range(0)) * 100;
  std::vector<std::uint64_t> a(tiles), b(tiles);
  UsageMeter usage(state);
  for (auto _ : state) {
    TileProcess first("a", tiles, [&](std::uint64_t tile, TileContext&) { tile_work(a, tile); });
    TileProcess second("b", tiles, [&](std::uint64_t tile, TileContext&) { tile_work(b, tile); });
    const auto start = Clock::now();
    executor.submit(first);
    executor.submit(second);
    first.wait();
    second.wait();
    state.SetIterationTime(seconds_since(start));
  }
}
BENCHMARK(BM_TwoProcesses_Tilec)->Arg(2)->UseManualTime();

// ---- sequential throughput: one small job after another, each waited for -------------------
// tilec: Executor::run (submit and wait in one call; the caller runs a ready job itself, as
// oneTBB's task_group::wait does). SequentialSubmitWait: the same job through submit() and
// wait(), where it is queued, announced and may be taken by a worker (no peer row).
void tilec_sequential(benchmark::State& state, bool submit_then_wait) {
  Executor executor(options_for(state));
  std::atomic<int> counter{0};
  UsageMeter usage(state);
  for (auto _ : state) {
    OnceProcess process(&counter);
    const auto start = Clock::now();
    if (submit_then_wait) {
      executor.submit(process);
      process.wait();
    } else {
      executor.run(process);
    }
    state.SetIterationTime(seconds_since(start));
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_Sequential_Tilec(benchmark::State& state) { tilec_sequential(state, false); }
void BM_SequentialSubmitWait_Tilec(benchmark::State& state) { tilec_sequential(state, true); }
BENCHMARK(BM_Sequential_Tilec)->Arg(2)->UseManualTime();
BENCHMARK(BM_SequentialSubmitWait_Tilec)->Arg(2)->UseManualTime();

// ---- activation cost: submit 1000 ready processes (push + wake bookkeeping), then drain ----
void BM_Activation_Tilec(benchmark::State& state) {
  Executor executor(options_for(state));
  std::atomic<int> counter{0};
  constexpr int batch = 1000;
  double total = 0;
  UsageMeter usage(state);
  for (auto _ : state) {
    std::vector<std::unique_ptr<OnceProcess>> processes;
    processes.reserve(batch);
    for (int i = 0; i < batch; ++i) processes.push_back(std::make_unique<OnceProcess>(&counter));
    const auto start = Clock::now();
    for (auto& process : processes) executor.submit(*process);
    const double elapsed = seconds_since(start);
    total += elapsed;
    state.SetIterationTime(elapsed);  // the batch of submissions; workers drain meanwhile
    for (auto& process : processes) process->wait();
  }
  state.counters["ns_per_activation"] = total / (batch * static_cast<double>(state.iterations())) * 1e9;
}
BENCHMARK(BM_Activation_Tilec)->Arg(2)->UseManualTime();

// ---- chain of dependent dispatches: dispatch k+1 starts when dispatch k completes -----------
void BM_Chain_Tilec(benchmark::State& state) {
  Executor executor(options_for(state));
  const std::uint64_t tiles = static_cast<std::uint64_t>(state.range(0)) * 16;
  std::vector<std::uint64_t> out(tiles);
  double gap_total = 0;
  double dispatch_total = 0;
  UsageMeter usage(state);
  for (auto _ : state) {
    std::vector<Clock::time_point> first_start(chain_length), last_end(chain_length);
    std::vector<std::atomic<std::uint64_t>> remaining(chain_length);
    std::vector<std::unique_ptr<TileProcess>> chain;
    for (int k = 0; k < chain_length; ++k) {
      remaining[k] = tiles;
      chain.push_back(std::make_unique<TileProcess>(
          "dispatch", tiles, [&, k](std::uint64_t tile, TileContext&) {
            if (tile == 0) first_start[k] = Clock::now();
            tile_work(out, tile);
            if (remaining[k].fetch_sub(1, std::memory_order_acq_rel) == 1) last_end[k] = Clock::now();
          }));
      if (k > 0) chain[k - 1]->add_dependent(*chain[k]);
    }
    const auto start = Clock::now();
    for (auto& dispatch : chain) executor.submit(*dispatch);
    chain.back()->wait();
    const double elapsed = seconds_since(start);
    // Every dispatch must be complete before the chain is destroyed: dispatch k's completer may
    // still be finishing it (after releasing k+1) when the last one's wait returns.
    for (auto& dispatch : chain) dispatch->wait();
    dispatch_total += elapsed;
    state.SetIterationTime(elapsed);
    for (int k = 1; k < chain_length; ++k) {
      gap_total += std::chrono::duration<double>(first_start[k] - last_end[k - 1]).count();
    }
  }
  // Last tile of dispatch k finished → tile 0 of dispatch k+1 started (completion, dependent
  // release, activation, wake/scan). Tile 0 is claimed first, so this is the handoff time.
  state.counters["us_per_dispatch"] =
      dispatch_total / (static_cast<double>(state.iterations()) * chain_length) * 1e6;
  state.counters["handoff_us"] =
      gap_total / (static_cast<double>(state.iterations()) * (chain_length - 1)) * 1e6;
}
BENCHMARK(BM_Chain_Tilec)->Arg(2)->UseManualTime();

// ---- per-tile claim cost: one process, many empty tiles ------------------------------------
void BM_TileClaim_Tilec(benchmark::State& state) {
  Executor executor(options_for(state));
  constexpr std::uint64_t tiles = 100000;
  std::atomic<std::uint64_t> sink{0};
  double total = 0;
  UsageMeter usage(state);
  for (auto _ : state) {
    const auto start = Clock::now();
    parallel_tiles(executor, tiles, [&](std::uint64_t tile, TileContext&) {
      if (tile == tiles) sink.fetch_add(1);  // never true: keeps the body from vanishing
    });
    const double elapsed = seconds_since(start);
    total += elapsed;
    state.SetIterationTime(elapsed);
  }
  state.counters["ns_per_tile"] = total / (tiles * static_cast<double>(state.iterations())) * 1e9;
}
BENCHMARK(BM_TileClaim_Tilec)->Arg(1)->Arg(2)->UseManualTime();

#ifdef TILEC_BENCH_TBB
// oneTBB: task_arena::enqueue wakes a worker; parallel_for / task_group do the tile work.
struct TbbPool {
  explicit TbbPool(int threads)
      : control(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads)),
        arena(threads) {}
  tbb::global_control control;
  tbb::task_arena arena;
};

void BM_WakeOne_Tbb(benchmark::State& state) {
  TbbPool pool(static_cast<int>(state.range(0)));
  std::atomic<int> done{0};
  UsageMeter usage(state);
  for (auto _ : state) {
    std::this_thread::sleep_for(cold_gap);
    done.store(0);
    const auto start = Clock::now();
    pool.arena.enqueue([&] {
      done.store(1, std::memory_order_release);
      done.notify_one();
    });
    done.wait(0);
    state.SetIterationTime(seconds_since(start));
  }
}
BENCHMARK(BM_WakeOne_Tbb)->Arg(2)->UseManualTime()->Iterations(300);

void tbb_tiles(benchmark::State& state, bool cold) {
  TbbPool pool(static_cast<int>(state.range(0)));
  run_tiles(state, cold, [&](std::vector<std::uint64_t>& out, std::uint64_t tiles) {
    pool.arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, tiles),
                        [&](const tbb::blocked_range<std::uint64_t>& range) {
                          for (auto tile = range.begin(); tile != range.end(); ++tile) tile_work(out, tile);
                        });
    });
  });
}
void BM_WakeAllTiles_Tbb(benchmark::State& state) { tbb_tiles(state, true); }
void BM_WarmTiles_Tbb(benchmark::State& state) { tbb_tiles(state, false); }
BENCHMARK(BM_WakeAllTiles_Tbb)->Arg(1)->Arg(2)->UseManualTime()->Iterations(300);
BENCHMARK(BM_WarmTiles_Tbb)->Arg(1)->Arg(2)->UseManualTime();

void BM_TwoProcesses_Tbb(benchmark::State& state) {
  TbbPool pool(static_cast<int>(state.range(0)));
  const std::uint64_t tiles = static_cast<std::uint64_t>(state.range(0)) * 100;
  std::vector<std::uint64_t> a(tiles), b(tiles);
  UsageMeter usage(state);
  for (auto _ : state) {
    const auto start = Clock::now();
    pool.arena.execute([&] {
      tbb::task_group group;
      for (auto* out : {&a, &b}) {
        group.run([&, out] {
          tbb::parallel_for(std::uint64_t{0}, tiles, [&](std::uint64_t tile) { tile_work(*out, tile); });
        });
      }
      group.wait();
    });
    state.SetIterationTime(seconds_since(start));
  }
}
BENCHMARK(BM_TwoProcesses_Tbb)->Arg(2)->UseManualTime();

void BM_Sequential_Tbb(benchmark::State& state) {
  TbbPool pool(static_cast<int>(state.range(0)));
  std::atomic<int> counter{0};
  UsageMeter usage(state);
  for (auto _ : state) {
    const auto start = Clock::now();
    pool.arena.execute([&] {
      tbb::task_group group;
      group.run([&] { counter.fetch_add(1, std::memory_order_relaxed); });
      group.wait();
    });
    state.SetIterationTime(seconds_since(start));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Sequential_Tbb)->Arg(2)->UseManualTime();

void BM_Chain_Tbb(benchmark::State& state) {
  TbbPool pool(static_cast<int>(state.range(0)));
  const std::uint64_t tiles = static_cast<std::uint64_t>(state.range(0)) * 16;
  std::vector<std::uint64_t> out(tiles);
  double dispatch_total = 0;
  UsageMeter usage(state);
  for (auto _ : state) {
    const auto start = Clock::now();
    pool.arena.execute([&] {
      for (int k = 0; k < chain_length; ++k) {
        tbb::parallel_for(std::uint64_t{0}, tiles, [&](std::uint64_t tile) { tile_work(out, tile); });
      }
    });
    const double elapsed = seconds_since(start);
    dispatch_total += elapsed;
    state.SetIterationTime(elapsed);
  }
  state.counters["us_per_dispatch"] =
      dispatch_total / (static_cast<double>(state.iterations()) * chain_length) * 1e6;
}
BENCHMARK(BM_Chain_Tbb)->Arg(2)->UseManualTime();
#endif  // TILEC_BENCH_TBB

#ifdef TILEC_BENCH_OPENMP
// OpenMP: a parallel region per launch; schedule(dynamic, 1) claims one tile per atomic, as the
// executor does. The calling thread is one of the team (it works too).
void BM_WakeOne_OpenMP(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::atomic<int> counter{0};
  UsageMeter usage(state);
  for (auto _ : state) {
    std::this_thread::sleep_for(cold_gap);
    const auto start = Clock::now();
#pragma omp parallel num_threads(threads)
    {
      if (omp_get_thread_num() == threads - 1) counter.fetch_add(1, std::memory_order_relaxed);
    }
    state.SetIterationTime(seconds_since(start));
  }
}
BENCHMARK(BM_WakeOne_OpenMP)->Arg(2)->UseManualTime()->Iterations(300);

void openmp_tiles(benchmark::State& state, bool cold) {
  const int threads = static_cast<int>(state.range(0));
  run_tiles(state, cold, [&](std::vector<std::uint64_t>& out, std::uint64_t tiles) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::uint64_t tile = 0; tile < tiles; ++tile) tile_work(out, tile);
  });
}
void BM_WakeAllTiles_OpenMP(benchmark::State& state) { openmp_tiles(state, true); }
void BM_WarmTiles_OpenMP(benchmark::State& state) { openmp_tiles(state, false); }
BENCHMARK(BM_WakeAllTiles_OpenMP)->Arg(1)->Arg(2)->UseManualTime()->Iterations(300);
BENCHMARK(BM_WarmTiles_OpenMP)->Arg(1)->Arg(2)->UseManualTime();

void BM_TwoProcesses_OpenMP(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::uint64_t tiles = static_cast<std::uint64_t>(threads) * 100;
  std::vector<std::uint64_t> a(tiles), b(tiles);
  UsageMeter usage(state);
  for (auto _ : state) {
    const auto start = Clock::now();
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(dynamic, 1) nowait
      for (std::uint64_t tile = 0; tile < tiles; ++tile) tile_work(a, tile);
#pragma omp for schedule(dynamic, 1) nowait
      for (std::uint64_t tile = 0; tile < tiles; ++tile) tile_work(b, tile);
    }
    state.SetIterationTime(seconds_since(start));
  }
}
BENCHMARK(BM_TwoProcesses_OpenMP)->Arg(2)->UseManualTime();

void BM_Sequential_OpenMP(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::atomic<int> counter{0};
  UsageMeter usage(state);
  for (auto _ : state) {
    const auto start = Clock::now();
#pragma omp parallel num_threads(threads)
    {
#pragma omp single
      counter.fetch_add(1, std::memory_order_relaxed);
    }
    state.SetIterationTime(seconds_since(start));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Sequential_OpenMP)->Arg(2)->UseManualTime();

void BM_Chain_OpenMP(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::uint64_t tiles = static_cast<std::uint64_t>(threads) * 16;
  std::vector<std::uint64_t> out(tiles);
  double dispatch_total = 0;
  UsageMeter usage(state);
  for (auto _ : state) {
    const auto start = Clock::now();
    for (int k = 0; k < chain_length; ++k) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
      for (std::uint64_t tile = 0; tile < tiles; ++tile) tile_work(out, tile);
    }
    const double elapsed = seconds_since(start);
    dispatch_total += elapsed;
    state.SetIterationTime(elapsed);
  }
  state.counters["us_per_dispatch"] =
      dispatch_total / (static_cast<double>(state.iterations()) * chain_length) * 1e6;
}
BENCHMARK(BM_Chain_OpenMP)->Arg(2)->UseManualTime();
#endif  // TILEC_BENCH_OPENMP

// ---- the summary: per case, the medians of tilec and each peer and tilec / best peer --------
// Collects every repetition's time (and counters), prints Google Benchmark's usual lines as they
// come, then one table at the end. Cases are matched by name: BM_<case>_<implementation>/<N>.
class SummaryReporter final : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    // Print what the console would, minus single repetitions when there are several.
    std::vector<Run> shown;
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate || run.repetitions <= 1) shown.push_back(run);
    }
    if (!shown.empty()) ConsoleReporter::ReportRuns(shown);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      const std::string& function = run.run_name.function_name;  // BM_<case>_<implementation>
      const auto split = function.rfind('_');
      if (function.rfind("BM_", 0) != 0 || split == std::string::npos || split < 3) continue;
      const std::string name = function.substr(3, split - 3) + "/" + run.run_name.args;
      Samples& samples = cases_[name][function.substr(split + 1)];
      samples.nanoseconds.push_back(run.GetAdjustedRealTime() * nanoseconds_per(run.time_unit));
      for (const auto& [counter, value] : run.counters) samples.counters[counter].push_back(value);
      if (std::find(order_.begin(), order_.end(), name) == order_.end()) order_.push_back(name);
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::FILE* out = stdout;
    std::fprintf(out, "\nSummary (medians over repetitions; load average %s at start, %s at end)\n",
                 load_at_start_.c_str(), read_load_average().c_str());
    std::fprintf(out, "%-22s %12s %12s %12s %10s  %s\n", "case", "tilec", "oneTBB", "OpenMP",
                 "tilec/best", "tilec counters");
    for (const std::string& name : order_) {
      const auto& implementations = cases_[name];
      const auto time_of = [&](const char* implementation) {
        const auto found = implementations.find(implementation);
        return found == implementations.end() ? -1.0 : median(found->second.nanoseconds);
      };
      const double tilec = time_of("Tilec"), tbb = time_of("Tbb"), openmp = time_of("OpenMP");
      double best_peer = -1;
      for (const double peer : {tbb, openmp}) {
        if (peer > 0 && (best_peer < 0 || peer < best_peer)) best_peer = peer;
      }
      std::string counters;
      if (const auto found = implementations.find("Tilec"); found != implementations.end()) {
        for (const auto& [counter, values] : found->second.counters) {
          if (counter == "switches" || counter == "cpu_us") continue;  // in the second table
          char text[64];
          std::snprintf(text, sizeof text, "%s%s=%.3g", counters.empty() ? "" : " ", counter.c_str(), median(values));
          counters += text;
        }
      }
      char ratio[32] = "—";
      if (tilec > 0 && best_peer > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", tilec / best_peer);
      std::fprintf(out, "%-22s %12s %12s %12s %10s  %s\n", name.c_str(), format_time(tilec).c_str(),
                   format_time(tbb).c_str(), format_time(openmp).c_str(), ratio, counters.c_str());
    }
    std::fprintf(out, "\nWhere the time goes, per iteration (medians): context switches of all threads / CPU time of all threads\n");
    std::fprintf(out, "%-22s %20s %20s %20s\n", "case", "tilec", "oneTBB", "OpenMP");
    for (const std::string& name : order_) {
      const auto& implementations = cases_[name];
      std::string cells[3];
      const char* keys[3] = {"Tilec", "Tbb", "OpenMP"};
      for (int index = 0; index < 3; ++index) {
        const auto found = implementations.find(keys[index]);
        if (found == implementations.end() || !found->second.counters.count("switches")) {
          cells[index] = "—";
          continue;
        }
        char text[64];
        std::snprintf(text, sizeof text, "%.2f / %.1f us", median(found->second.counters.at("switches")),
                      median(found->second.counters.at("cpu_us")));
        cells[index] = text;
      }
      std::fprintf(out, "%-22s %20s %20s %20s\n", name.c_str(), cells[0].c_str(), cells[1].c_str(), cells[2].c_str());
    }
    std::fflush(out);
  }

  static std::string read_load_average() {
    std::FILE* file = std::fopen("/proc/loadavg", "r");
    if (file == nullptr) return "unknown";
    char text[64] = {};
    const bool read = std::fgets(text, sizeof text, file) != nullptr;
    std::fclose(file);
    if (!read) return "unknown";
    std::string load(text);
    // "0.31 1.18 1.85 1/123 4567": keep the three averages.
    std::size_t end = 0;
    for (int field = 0; field < 3 && end != std::string::npos; ++field) end = load.find(' ', end + 1);
    return load.substr(0, end);
  }

 private:
  struct Samples {
    std::vector<double> nanoseconds;
    std::map<std::string, std::vector<double>> counters;
  };

  static double nanoseconds_per(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1;
      case benchmark::kMicrosecond: return 1e3;
      case benchmark::kMillisecond: return 1e6;
      case benchmark::kSecond: return 1e9;
    }
    return 1;
  }
  static double median(std::vector<double> values) {
    if (values.empty()) return -1;
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
  }
  static std::string format_time(double nanoseconds) {
    if (nanoseconds < 0) return "—";
    char text[32];
    if (nanoseconds < 1e4) {
      std::snprintf(text, sizeof text, "%.0f ns", nanoseconds);
    } else if (nanoseconds < 1e7) {
      std::snprintf(text, sizeof text, "%.1f us", nanoseconds / 1e3);
    } else {
      std::snprintf(text, sizeof text, "%.1f ms", nanoseconds / 1e6);
    }
    return text;
  }

  std::string load_at_start_ = read_load_average();
  std::vector<std::string> order_;
  std::map<std::string, std::map<std::string, Samples>> cases_;
};

}  // namespace

// Defaults: 5 repetitions in random interleaving (so drift in the machine's load spreads over
// every implementation, not over whichever ran last). Flags given on the command line override
// them.
int main(int argc, char** argv) {
  std::vector<char*> arguments(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=5";
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  for (std::string* flag : {&repetitions, &interleave}) {
    const std::string key = flag->substr(0, flag->find('='));
    bool given = false;
    for (int index = 1; index < argc; ++index) given |= std::string(argv[index]).rfind(key, 0) == 0;
    if (!given) arguments.insert(arguments.begin() + 1, flag->data());
  }
  int count = static_cast<int>(arguments.size());
  benchmark::Initialize(&count, arguments.data());
  if (benchmark::ReportUnrecognizedArguments(count, arguments.data())) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
