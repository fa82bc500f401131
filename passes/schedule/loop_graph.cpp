// passes/schedule/loop_graph.cpp — building, checking and indexing loop dependence graphs.
//
// check_loop_graph finds input errors in this order: bad resources, bad ops (negative
// latency, unknown resource, impossible reservation), bad edges (unknown op, negative latency
// or distance), bad constraints, then zero-distance cycles — found as the ops a Kahn walk over
// distance-0 edges cannot reach, and named by following distance-0 edges among them until one
// repeats. index_loop_graph builds adjacency lists, the group union-find (path halving) and
// the distance-0 topological order. Both are O(V + E) plus the union-find's near-constant
// factor.
#include "passes/schedule/loop_graph.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <queue>

namespace tilec::schedule {

int LoopGraph::add_resource(std::string name, int capacity) {
  resources.push_back({std::move(name), capacity});
  return static_cast<int>(resources.size()) - 1;
}

int LoopGraph::add_op(LoopOp op) {
  ops.push_back(std::move(op));
  return static_cast<int>(ops.size()) - 1;
}

void LoopGraph::add_edge(int from, int to, int latency, int distance) {
  edges.push_back({from, to, latency, distance});
}

namespace {

// Limits that keep reservation tables (ii rows) and ii searches within memory and time: far
// memory, the longest latency the machine models know, is a few thousand cycles.
constexpr int max_latency = 1 << 20;
constexpr int max_reservation = 1 << 12;  // the cost-based search grows with it: 2 x 4096 cycles take about 1 s
constexpr long max_loop_span = 1L << 22;

bool valid_op(const LoopGraph& graph, int op) { return op >= 0 && op < graph.op_count(); }

std::string op_name(const LoopGraph& graph, int op) {
  return valid_op(graph, op) ? "'" + graph.ops[op].name + "'" : fmt::format("#{}", op);
}

// Kahn walk over distance-0 edges with program-order ties; returns the ops it reached.
std::vector<int> distance_zero_order(const LoopGraph& graph) {
  int count = graph.op_count();
  std::vector<int> in_degree(count, 0);
  std::vector<std::vector<int>> next(count);
  for (const LoopEdge& edge : graph.edges) {
    if (edge.distance != 0 || !valid_op(graph, edge.from) || !valid_op(graph, edge.to)) continue;
    next[edge.from].push_back(edge.to);
    ++in_degree[edge.to];
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int op = 0; op < count; ++op)
    if (in_degree[op] == 0) ready.push(op);
  std::vector<int> order;
  order.reserve(count);
  while (!ready.empty()) {
    int op = ready.top();
    ready.pop();
    order.push_back(op);
    for (int successor : next[op])
      if (--in_degree[successor] == 0) ready.push(successor);
  }
  return order;
}

// Names one zero-distance cycle among the ops the Kahn walk left behind.
std::string describe_zero_distance_cycle(const LoopGraph& graph, const std::vector<int>& reached) {
  int count = graph.op_count();
  std::vector<char> left(count, 1);
  for (int op : reached) left[op] = 0;
  // Every op the walk left behind keeps a left-behind distance-0 predecessor, so walking
  // predecessors among them always closes a cycle.
  std::vector<int> previous(count, -1);
  for (const LoopEdge& edge : graph.edges) {
    if (edge.distance != 0 || !valid_op(graph, edge.from) || !valid_op(graph, edge.to)) continue;
    if (left[edge.from] && left[edge.to] && previous[edge.to] < 0) previous[edge.to] = edge.from;
  }
  int start = static_cast<int>(std::find(left.begin(), left.end(), 1) - left.begin());
  std::vector<int> seen_at(count, -1);
  std::vector<int> walk;
  int op = start;
  while (seen_at[op] < 0) {
    seen_at[op] = static_cast<int>(walk.size());
    walk.push_back(op);
    op = previous[op];
  }
  std::vector<int> cycle(walk.begin() + seen_at[op], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // predecessor walk, so reverse to edge direction
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string text;
  for (int member : cycle) text += graph.ops[member].name + " -> ";
  text += graph.ops[cycle.front()].name;
  return text;
}

}  // namespace

std::vector<std::string> check_loop_graph(const LoopGraph& graph) {
  std::vector<std::string> errors;
  std::map<std::string, int> resource_names;
  for (const Resource& resource : graph.resources) {
    if (!resource_names.emplace(resource.name, 0).second)
      errors.push_back(fmt::format("resource '{}' is declared twice", resource.name));
    if (resource.capacity < 1)
      errors.push_back(fmt::format("resource '{}' has capacity {}; it must be at least 1",
                                   resource.name, resource.capacity));
  }
  std::map<std::string, int> op_names;
  for (const LoopOp& op : graph.ops) {
    if (!op_names.emplace(op.name, 0).second)
      errors.push_back(fmt::format("op '{}' is declared twice", op.name));
    if (op.latency < 0)
      errors.push_back(fmt::format("op '{}' has negative latency {}", op.name, op.latency));
    if (op.latency > max_latency)
      errors.push_back(fmt::format("op '{}' has latency {}, above the limit of {} cycles", op.name,
                                   op.latency, max_latency));
    std::map<long, long> held;  // (resource << 32 | cycle) → units the op itself holds
    for (const ResourceUse& use : op.uses) {
      if (use.resource < 0 || use.resource >= static_cast<int>(graph.resources.size())) {
        errors.push_back(fmt::format("op '{}' uses unknown resource #{}", op.name, use.resource));
        continue;
      }
      const Resource& resource = graph.resources[use.resource];
      if (use.at > max_reservation || use.duration > max_reservation)
        errors.push_back(fmt::format("op '{}' holds '{}' beyond the limit of {} cycles", op.name,
                                     resource.name, max_reservation));
      else if (use.at < 0 || use.duration < 1 || use.occupancy < 1)
        errors.push_back(fmt::format(
            "op '{}' uses '{}' with at {}, for {}, occupancy {}; need at ≥ 0, for ≥ 1, "
            "occupancy ≥ 1", op.name, resource.name, use.at, use.duration, use.occupancy));
      else
        for (int k = 0; k < use.duration; ++k) held[(static_cast<long>(use.resource) << 32) | (use.at + k)] += use.occupancy;
    }
    for (auto [cell, units] : held) {
      const Resource& resource = graph.resources[cell >> 32];
      if (units > resource.capacity) {
        errors.push_back(fmt::format(
            "op '{}' needs {} unit{} of '{}' in one cycle but its capacity is {}; it can never fit",
            op.name, units, units == 1 ? "" : "s", resource.name, resource.capacity));
        break;
      }
    }
    if (op.constraints.max_depth < -1)
      errors.push_back(fmt::format("op '{}' has max_depth {}; it must be ≥ 0", op.name,
                                   op.constraints.max_depth));
    if (op.constraints.leader_group >= 0 && op.constraints.group < 0)
      errors.push_back(fmt::format("op '{}' names a leader group but no group", op.name));
  }
  for (const LoopEdge& edge : graph.edges) {
    if (!valid_op(graph, edge.from) || !valid_op(graph, edge.to)) {
      errors.push_back(fmt::format("edge {} -> {} names an unknown op", op_name(graph, edge.from),
                                   op_name(graph, edge.to)));
      continue;
    }
    if (edge.latency > max_latency || edge.distance > max_latency)
      errors.push_back(fmt::format("edge {} -> {} has latency or distance above {}",
                                   op_name(graph, edge.from), op_name(graph, edge.to), max_latency));
    if (edge.latency < 0)
      errors.push_back(fmt::format("edge {} -> {} has negative latency {}",
                                   op_name(graph, edge.from), op_name(graph, edge.to), edge.latency));
    if (edge.distance < 0)
      errors.push_back(fmt::format("edge {} -> {} has negative distance {}",
                                   op_name(graph, edge.from), op_name(graph, edge.to), edge.distance));
  }
  long span = 0;  // bounds the serial schedule's length, hence every ii searched
  for (const LoopEdge& edge : graph.edges) span += std::max(edge.latency, 0);
  for (const LoopOp& op : graph.ops) {
    span += std::max(op.latency, 0);
    for (const ResourceUse& use : op.uses) span += std::max(use.at, 0) + std::max(use.duration, 0);
  }
  if (span > max_loop_span)
    errors.push_back(fmt::format("the loop's latencies and reservations add up to {} cycles, above "
                                 "the limit of {}; it is too long to schedule", span, max_loop_span));
  if (graph.max_stages < 0)
    errors.push_back(fmt::format("max_stages is {}; it must be ≥ 1 (or 0 for no limit)",
                                 graph.max_stages));
  std::vector<int> reached = distance_zero_order(graph);
  if (static_cast<int>(reached.size()) != graph.op_count())
    errors.push_back("zero-distance dependence cycle: " + describe_zero_distance_cycle(graph, reached));
  return errors;
}

LoopGraphIndex index_loop_graph(const LoopGraph& graph) {
  int count = graph.op_count();
  LoopGraphIndex index;
  index.successors.resize(count);
  index.predecessors.resize(count);
  for (int id = 0; id < static_cast<int>(graph.edges.size()); ++id) {
    index.successors[graph.edges[id].from].push_back(id);
    index.predecessors[graph.edges[id].to].push_back(id);
  }

  // Union-find over gid values: leader_gid becomes the root of gid's class.
  std::map<int, int> parent;
  auto find = [&](int gid) {
    parent.emplace(gid, gid);
    while (parent[gid] != gid) {
      parent[gid] = parent[parent[gid]];
      gid = parent[gid];
    }
    return gid;
  };
  for (const LoopOp& op : graph.ops) {
    if (op.constraints.group < 0) continue;
    int root = find(op.constraints.group);
    if (op.constraints.leader_group >= 0 && op.constraints.leader_group != op.constraints.group) {
      int leader_root = find(op.constraints.leader_group);
      if (leader_root != root) parent[root] = leader_root;
    }
  }
  std::map<int, int> class_of_root;
  index.group_of.assign(count, -1);
  for (int op = 0; op < count; ++op) {
    if (graph.ops[op].constraints.group < 0) continue;
    int root = find(graph.ops[op].constraints.group);
    auto [it, inserted] = class_of_root.emplace(root, static_cast<int>(index.group_members.size()));
    if (inserted) {
      index.group_members.emplace_back();
      index.group_leader.push_back(op);
    }
    index.group_of[op] = it->second;
    index.group_members[it->second].push_back(op);
  }
  for (auto [root, group] : class_of_root)
    for (int member : index.group_members[group])
      if (graph.ops[member].constraints.group == root) {
        index.group_leader[group] = member;
        break;
      }

  index.max_stage.assign(count, -1);
  for (int op = 0; op < count; ++op) {
    int limit = graph.ops[op].constraints.max_depth;
    if (graph.max_stages > 0) limit = limit < 0 ? graph.max_stages - 1 : std::min(limit, graph.max_stages - 1);
    index.max_stage[op] = limit;
  }
  index.topological_order = distance_zero_order(graph);
  return index;
}

}  // namespace tilec::schedule
