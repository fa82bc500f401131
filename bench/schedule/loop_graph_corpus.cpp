// bench/schedule/loop_graph_corpus.cpp — the corpus generators (see the header for regimes).
//
// Random loops are a chain-like DAG (each op depends on 1–2 of the 6 ops before it, distance
// 0) plus local back edges (to an op at most 8 earlier, distance 1–3) that close recurrences.
// Reservations are single-cycle (like the HatScheT corpus) except where the balanced regime
// lengthens a few to hit its resource demand exactly.
#include "bench/schedule/loop_graph_corpus.h"

#include <algorithm>
#include <stdexcept>

#include "backend/machine_model.h"
#include "passes/schedule/add_op_of_kind.h"
#include "passes/schedule/compute_mii.h"

namespace tilec::bench {

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

const char* regime_name(Regime regime) {
  switch (regime) {
    case Regime::recurrence_bound: return "recurrence-bound";
    case Regime::resource_bound: return "resource-bound";
    case Regime::balanced: return "balanced";
  }
  return "?";
}

namespace {

using schedule::LoopGraph;
using schedule::LoopOp;

void add_body(LoopGraph& graph, int count, int max_latency, int back_edges, int min_distance,
              int max_distance, SplitMix64& random) {
  for (int i = 0; i < count; ++i) {
    LoopOp op;
    op.name = "n" + std::to_string(i);
    op.latency = random.between(1, max_latency);
    graph.add_op(op);
  }
  for (int i = 1; i < count; ++i) {
    int inputs = random.between(1, 2);
    for (int k = 0; k < inputs; ++k) {
      int from = std::max(0, i - random.between(1, 6));
      graph.add_edge(from, i, graph.ops[from].latency, 0);
    }
  }
  for (int e = 0; e < back_edges && count > 1; ++e) {
    int from = random.between(1, count - 1);
    int to = std::max(0, from - random.between(0, 8));
    graph.add_edge(from, to, graph.ops[from].latency, random.between(min_distance, max_distance));
  }
}

// Gives `users` random ops a single-cycle use of `resource`.
void add_users(LoopGraph& graph, int resource, int users, SplitMix64& random) {
  std::vector<int> free_ops;
  for (int op = 0; op < graph.op_count(); ++op)
    if (graph.ops[op].uses.empty()) free_ops.push_back(op);
  for (int u = 0; u < users && !free_ops.empty(); ++u) {
    int pick = random.between(0, static_cast<int>(free_ops.size()) - 1);
    graph.ops[free_ops[pick]].uses.push_back({resource, 0, 1, 1});
    free_ops.erase(free_ops.begin() + pick);
  }
}

void add_kind(LoopGraph& graph, const target::MachineModel& model, const std::string& name,
              const char* kind) {
  schedule::add_op_of_kind(graph, model, name, kind);
}

void depend(LoopGraph& graph, int from, int to, int distance = 0) {
  graph.add_edge(from, to, graph.ops[from].latency, distance);
}

}  // namespace

LoopGraph make_random_loop(Regime regime, int ops, SplitMix64& random) {
  LoopGraph graph;
  switch (regime) {
    case Regime::recurrence_bound: {
      add_body(graph, ops, 6, std::max(1, ops / 4), 1, 1, random);
      int unit = graph.add_resource("unit", 2);
      add_users(graph, unit, std::max(1, ops / 10), random);
      break;
    }
    case Regime::resource_bound: {
      add_body(graph, ops, 3, std::max(1, ops / 10), 2, 3, random);
      int narrow = graph.add_resource("narrow", 1);
      int wide = graph.add_resource("wide", 2);
      add_users(graph, narrow, ops / 3, random);
      add_users(graph, wide, ops / 3, random);
      break;
    }
    case Regime::balanced: {
      add_body(graph, ops, 4, std::max(1, ops / 6), 1, 2, random);
      int rec_mii = schedule::compute_mii(graph).rec_mii;
      // Demand exactly rec_mii units on a capacity-1 resource: ResMII = RecMII.
      int unit = graph.add_resource("unit", 1);
      int users = std::min(ops, rec_mii);
      add_users(graph, unit, users, random);
      int extra = rec_mii - users;  // spread over the users as longer reservations
      for (int op = 0; op < graph.op_count() && extra > 0; ++op)
        if (!graph.ops[op].uses.empty()) {
          int more = std::min(extra, std::max(1, rec_mii / users));
          graph.ops[op].uses[0].duration += more;
          extra -= more;
        }
      schedule::MinimumII bound = schedule::compute_mii(graph);
      if (bound.res_mii > bound.rec_mii + 1 || bound.rec_mii > bound.res_mii + 1)
        throw std::logic_error("balanced regime: ResMII and RecMII differ by more than 1");
      break;
    }
  }
  return graph;
}

LoopGraph make_gemm_loop(int unroll, int buffer_stages) {
  const target::MachineModel& model = target::sm100a_machine_model();
  LoopGraph graph;
  int previous_mma = -1;
  int first_mma = -1;
  for (int u = 0; u < unroll; ++u) {
    std::string step = std::to_string(u);
    int load_a = graph.op_count();
    add_kind(graph, model, "load_a" + step, "tma_load");
    int load_b = graph.op_count();
    add_kind(graph, model, "load_b" + step, "tma_load");
    int mma = graph.op_count();
    add_kind(graph, model, "mma" + step, "mma");
    int release = graph.op_count();
    add_kind(graph, model, "release" + step, "barrier_arrive");
    depend(graph, load_a, mma);
    depend(graph, load_b, mma);
    if (previous_mma >= 0) depend(graph, previous_mma, mma);  // accumulator chain
    else first_mma = mma;
    depend(graph, mma, release);
    // The release frees the buffer that the load buffer_stages iterations later refills.
    graph.add_edge(release, load_a, 1, buffer_stages);
    graph.add_edge(release, load_b, 1, buffer_stages);
    previous_mma = mma;
  }
  depend(graph, previous_mma, first_mma, 1);  // the accumulator carried to the next iteration
  return graph;
}

LoopGraph make_attention_loop(int unroll) {
  const target::MachineModel& model = target::sm100a_machine_model();
  LoopGraph graph;
  int previous_max = -1, previous_sum = -1, previous_output = -1;
  int first_max = -1, first_sum = -1, first_output = -1;
  for (int u = 0; u < unroll; ++u) {
    std::string step = std::to_string(u);
    auto op = [&](const char* name, const char* kind) {
      int id = graph.op_count();
      add_kind(graph, model, name + step, kind);
      return id;
    };
    int load_k = op("load_k", "tma_load");
    int load_v = op("load_v", "tma_load");
    int scores = op("mma_qk", "mma");
    int row_max = op("row_max", "reduce");
    int running_max = op("running_max", "fma");
    int exponent = op("exp", "exp");
    int row_sum = op("row_sum", "reduce");
    int running_sum = op("running_sum", "fma");
    int probabilities = op("convert_p", "convert");
    int rescale = op("rescale_o", "fma");
    int output = op("mma_pv", "mma");
    int release = op("release", "barrier_arrive");
    depend(graph, load_k, scores);
    depend(graph, scores, row_max);
    depend(graph, row_max, running_max);
    depend(graph, running_max, exponent);
    depend(graph, exponent, row_sum);
    depend(graph, row_sum, running_sum);
    depend(graph, exponent, probabilities);
    depend(graph, running_max, rescale);
    depend(graph, probabilities, output);
    depend(graph, load_v, output);
    depend(graph, rescale, output);
    depend(graph, output, release);
    graph.add_edge(release, load_k, 1, 2);
    graph.add_edge(release, load_v, 1, 2);
    if (previous_max >= 0) {
      depend(graph, previous_max, running_max);
      depend(graph, previous_sum, running_sum);
      depend(graph, previous_output, rescale);
    } else {
      first_max = running_max;
      first_sum = running_sum;
      first_output = rescale;
    }
    previous_max = running_max;
    previous_sum = running_sum;
    previous_output = output;
  }
  depend(graph, previous_max, first_max, 1);      // running max carried across iterations
  depend(graph, previous_sum, first_sum, 1);      // running sum
  depend(graph, previous_output, first_output, 1);  // output accumulator
  return graph;
}

}  // namespace tilec::bench
