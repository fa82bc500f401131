// passes/schedule/loop_graph.h — the IR-independent loop dependence graph the modulo
// scheduler works on, and its input checks.
//
// A loop graph is one loop body: ops (a dependence latency and a reservation table of
// resource uses), edges (latency and iteration distance: the edge from → to asks
// cycle(to) − cycle(from) ≥ latency − II·distance), limited resources with a capacity per
// cycle, and optional constraints (group id / leader group, max_depth per op; force_serial
// and max_stages for the loop). An IR pass builds one with add_resource / add_op / add_edge;
// the `tilec sched` lab builds one from JSON. check_loop_graph reports every input error
// (unknown op or resource, negative latency, zero-distance cycle naming its ops, ...) as text;
// the generators assume a graph that passed it.
#pragma once

#include <string>
#include <vector>

namespace tilec::schedule {

struct ResourceUse {
  int resource = 0;    // index into LoopGraph::resources
  int at = 0;          // first cycle after the op's start
  int duration = 1;    // cycles held
  int occupancy = 1;   // units held per cycle
};

struct OpConstraints {
  int group = -1;          // tileas.schedule.constraint.gid; −1 none
  int leader_group = -1;   // tileas.schedule.constraint.leader_gid; −1 means "its own leader"
  int max_depth = -1;      // tileas.schedule.constraint.max_depth: stage ≤ max_depth; −1 none
};

struct LoopOp {
  std::string name;
  int latency = 0;
  std::vector<ResourceUse> uses;
  bool async = false;      // a TMA / MMA / async-pipeline kind (drives the generator choice)
  std::string kind;        // machine-model kind, if the op was given one
  OpConstraints constraints;
};

struct LoopEdge {
  int from = 0;
  int to = 0;
  int latency = 0;
  int distance = 0;
};

struct Resource {
  std::string name;
  int capacity = 1;
};

struct LoopGraph {
  std::vector<Resource> resources;
  std::vector<LoopOp> ops;
  std::vector<LoopEdge> edges;
  bool force_serial = false;
  int max_stages = 0;      // 0: unlimited

  int add_resource(std::string name, int capacity);
  int add_op(LoopOp op);
  void add_edge(int from, int to, int latency, int distance);
  int op_count() const { return static_cast<int>(ops.size()); }
};

// Every input error of the graph, each as one sentence; empty when the graph is well formed.
std::vector<std::string> check_loop_graph(const LoopGraph& graph);

// Adjacency and constraint views the generators share, built once per graph.
struct LoopGraphIndex {
  std::vector<std::vector<int>> successors;    // edge ids leaving each op
  std::vector<std::vector<int>> predecessors;  // edge ids entering each op
  std::vector<int> group_of;                   // group class per op (−1 none), dense ids
  std::vector<int> group_leader;               // per group class: its leader op
  std::vector<std::vector<int>> group_members; // per group class, in program order
  std::vector<int> max_stage;                  // per op: highest stage allowed, −1 unlimited
  std::vector<int> topological_order;          // over distance-0 edges, program-order ties
};

// Groups: ops with equal gid share a class; leader_gid unions gid's class with leader_gid's.
// A class's leader op is its first op (program order) whose gid is the leader gid named by
// the class, else its first op. max_stage folds max_depth and max_stages together.
LoopGraphIndex index_loop_graph(const LoopGraph& graph);

}  // namespace tilec::schedule
