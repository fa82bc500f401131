// passes/schedule/compute_mii.cpp — ResMII and RecMII.
//
// 1. ResMII: for each resource, units demanded by one iteration (Σ duration·occupancy over
//    the uses) divided by capacity, rounded up; the maximum over resources (at least 1).
// 2. RecMII: split the graph into strongly connected components (Boost.Graph); only a
//    component with an edge inside it holds a recurrence. For each, binary-search the smallest
//    ii in [current bound, Σ latencies in the component] with no positive cycle under edge
//    weight latency − ii·distance. Every cycle has distance ≥ 1 (zero-distance cycles are
//    input errors), so at ii = Σ latencies no cycle is positive and the search is bounded.
//    The positive-cycle test is Bellman–Ford on longest paths from a virtual source.
// Cost: O(V + E) for ResMII and the components; O(V_c·E_c·log L) per component for RecMII.
#include "passes/schedule/compute_mii.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include <algorithm>
#include <vector>

namespace tilec::schedule {
namespace {

struct Component {
  int size = 0;
  std::vector<const LoopEdge*> edges;  // edges with both ends inside the component
  long latency_sum = 0;
};

bool positive_cycle_in(const std::vector<const LoopEdge*>& edges, int node_count,
                       std::vector<long>& potential, int ii) {
  for (const LoopEdge* edge : edges) potential[edge->from] = potential[edge->to] = 0;
  for (int pass = 0; pass <= node_count; ++pass) {
    bool changed = false;
    for (const LoopEdge* edge : edges) {
      long through = potential[edge->from] + edge->latency - static_cast<long>(ii) * edge->distance;
      if (through > potential[edge->to]) {
        potential[edge->to] = through;
        changed = true;
      }
    }
    if (!changed) return false;
  }
  return true;
}

}  // namespace

bool has_positive_cycle(const LoopGraph& graph, int ii) {
  std::vector<const LoopEdge*> edges;
  for (const LoopEdge& edge : graph.edges) edges.push_back(&edge);
  std::vector<long> potential(graph.op_count(), 0);
  return positive_cycle_in(edges, graph.op_count(), potential, ii);
}

MinimumII compute_mii(const LoopGraph& graph) {
  MinimumII bound;
  std::vector<long> demand(graph.resources.size(), 0);
  for (const LoopOp& op : graph.ops)
    for (const ResourceUse& use : op.uses)
      demand[use.resource] += static_cast<long>(use.duration) * use.occupancy;
  for (size_t resource = 0; resource < demand.size(); ++resource) {
    long capacity = graph.resources[resource].capacity;
    bound.res_mii = std::max<long>(bound.res_mii, (demand[resource] + capacity - 1) / capacity);
  }

  using Digraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Digraph digraph(graph.op_count());
  for (const LoopEdge& edge : graph.edges) boost::add_edge(edge.from, edge.to, digraph);
  std::vector<int> component_of(graph.op_count(), 0);
  int component_count = graph.op_count() == 0
      ? 0 : static_cast<int>(boost::strong_components(digraph, component_of.data()));
  std::vector<Component> components(component_count);
  for (int op = 0; op < graph.op_count(); ++op) ++components[component_of[op]].size;
  for (const LoopEdge& edge : graph.edges)
    if (component_of[edge.from] == component_of[edge.to]) {
      Component& component = components[component_of[edge.from]];
      component.edges.push_back(&edge);
      component.latency_sum += std::max(edge.latency, 0);
    }

  std::vector<long> potential(graph.op_count(), 0);
  for (const Component& component : components) {
    if (component.edges.empty()) continue;
    auto positive = [&](int ii) {
      return positive_cycle_in(component.edges, component.size, potential, ii);
    };
    if (!positive(bound.rec_mii)) continue;
    int low = bound.rec_mii + 1;
    int high = static_cast<int>(std::max<long>(low, component.latency_sum));
    while (low < high) {
      int middle = low + (high - low) / 2;
      if (positive(middle)) low = middle + 1;
      else high = middle;
    }
    bound.rec_mii = low;
  }
  return bound;
}

}  // namespace tilec::schedule
