// bench/schedule/schedule_quality.cpp — how good and how fast the cost-based modulo
// scheduler is. Prints, per corpus and size: loops, the fraction scheduled at ii = MII, mean
// and worst ii / MII, mean stage count, placements per op, mean and worst scheduling time.
// Corpora: three seeded random regimes at 10, 100, 1,000 and 5,000 ops, GEMM and attention
// loops on sm_100a, and the HatScheT loops in ../shared/bench-data/hatschet.
// Usage: schedule_quality [HATSCHET_DIR]   (goals and a recorded run: bench/README.md)
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "bench/schedule/loop_graph_corpus.h"
#include "passes/schedule/generate_schedule.h"
#include "passes/schedule/schedule_lab.h"

namespace {

using namespace tilec;

struct Tally {
  int loops = 0;
  int at_mii = 0;
  double ratio_sum = 0;
  double worst_ratio = 0;
  double stage_sum = 0;
  double placements_per_op_sum = 0;
  double seconds_sum = 0;
  double worst_seconds = 0;

  void add(const schedule::LoopGraph& graph, const schedule::ScheduleResult& result, double seconds) {
    if (!result.ok() || !schedule::validate_schedule(graph, result, true).empty())
      throw std::runtime_error("invalid schedule");
    double ratio = static_cast<double>(result.ii) / result.mii;
    ++loops;
    at_mii += result.ii == result.mii;
    ratio_sum += ratio;
    worst_ratio = std::max(worst_ratio, ratio);
    stage_sum += result.stages;
    placements_per_op_sum += static_cast<double>(result.placements) / std::max(1, graph.op_count());
    seconds_sum += seconds;
    worst_seconds = std::max(worst_seconds, seconds);
  }
  void print(const std::string& corpus, const std::string& size) const {
    fmt::print("{:<18} {:>6} {:>6} {:>7.1f}% {:>8.4f} {:>7.3f} {:>7.2f} {:>8.2f} {:>10.3f} {:>10.3f}\n", corpus,
               size, loops, 100.0 * at_mii / loops, ratio_sum / loops, worst_ratio, stage_sum / loops,
               placements_per_op_sum / loops, 1e3 * seconds_sum / loops, 1e3 * worst_seconds);
  }
};

schedule::ScheduleResult timed_schedule(const schedule::LoopGraph& graph, double& seconds) {
  schedule::ScheduleOptions options;
  options.generator = schedule::Generator::cost_based;
  auto start = std::chrono::steady_clock::now();
  schedule::ScheduleResult result = schedule::generate_schedule(graph, options);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void print_header() {
  fmt::print("{:<18} {:>6} {:>6} {:>8} {:>8} {:>7} {:>7} {:>8} {:>10} {:>10}\n", "corpus", "ops",
             "loops", "at MII", "mean", "worst", "stages", "place/op", "mean ms", "worst ms");
  fmt::print("{:<18} {:>6} {:>6} {:>8} {:>8} {:>7} {:>7} {:>8} {:>10} {:>10}\n", "", "", "", "",
             "II/MII", "II/MII", "", "", "", "");
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path hatschet =
      argc > 1 ? std::filesystem::path(argv[1])
               : std::filesystem::path(TILEC_SHARED_DIR) / "bench-data" / "hatschet";
  print_header();
  const bench::Regime regimes[] = {bench::Regime::recurrence_bound, bench::Regime::resource_bound,
                                   bench::Regime::balanced};
  const struct { int ops; int loops; } sizes[] = {{10, 300}, {100, 60}, {1000, 10}, {5000, 2}};
  for (bench::Regime regime : regimes)
    for (auto size : sizes) {
      bench::SplitMix64 random(1000003ull * size.ops + static_cast<int>(regime));
      Tally tally;
      for (int loop = 0; loop < size.loops; ++loop) {
        schedule::LoopGraph graph = bench::make_random_loop(regime, size.ops, random);
        double seconds = 0;
        schedule::ScheduleResult result = timed_schedule(graph, seconds);
        tally.add(graph, result, seconds);
      }
      tally.print(bench::regime_name(regime), std::to_string(size.ops));
    }

  for (int unroll : {1, 2, 4, 8}) {
    schedule::LoopGraph graph = bench::make_gemm_loop(unroll, 3);
    double seconds = 0;
    schedule::ScheduleResult result = timed_schedule(graph, seconds);
    Tally tally;
    tally.add(graph, result, seconds);
    tally.print(fmt::format("gemm x{}", unroll), std::to_string(graph.op_count()));
  }
  for (int unroll : {1, 2, 4}) {
    schedule::LoopGraph graph = bench::make_attention_loop(unroll);
    double seconds = 0;
    schedule::ScheduleResult result = timed_schedule(graph, seconds);
    Tally tally;
    tally.add(graph, result, seconds);
    tally.print(fmt::format("attention x{}", unroll), std::to_string(graph.op_count()));
  }

  if (!std::filesystem::is_directory(hatschet)) {
    fmt::print("hatschet: no corpus at {}\n", hatschet.string());
    return 0;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(hatschet))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  Tally tally;
  for (const auto& file : files) {
    std::ifstream stream(file);
    std::stringstream text;
    text << stream.rdbuf();
    schedule::LabInput lab = schedule::parse_schedule_lab(text.str());
    if (!lab.errors.empty()) {
      fmt::print("{}: {}\n", file.string(), lab.errors.front());
      return 1;
    }
    double seconds = 0;
    schedule::ScheduleResult result = timed_schedule(lab.graph, seconds);
    tally.add(lab.graph, result, seconds);
  }
  tally.print("hatschet", "19-383");
  return 0;
}
