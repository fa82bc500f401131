// passes/reorder/compute_dependences.cpp — derive the dependences of a segment.
//
// Walks the statements once in program order, keeping per memory identity its last writer
// and the readers since that write:
//   1. RAW: last writer of each identity read → this statement.
//   2. WAW: last writer of each identity written → this statement.
//   3. WAR: every reader since the last write of an identity written → this statement; the
//      write then clears the reader list (later writers order after this one instead).
//   4. Control statements keep their relative order: an edge from the previous one.
//   5. Barriers: edges from the statements since the previous barrier that have no successor
//      (everything else reaches one of them), and to the later statements that would
//      otherwise have no predecessor after the barrier. Transitively the barrier is after
//      everything before it and before everything after it, with few edges.
// Predecessor lists are sorted and deduplicated, so each (producer, consumer) pair is one
// edge. Cost: O(n + E log E) with E the number of edges before deduplication.
#include "passes/reorder/compute_dependences.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace tilec::reorder {

namespace {

struct MemoryState {
  int last_writer = -1;
  std::vector<int> readers;  // since the last write
};

}  // namespace

DependenceGraph compute_dependences(const Segment& segment) {
  const auto& statements = segment.statements;
  const int count = static_cast<int>(statements.size());
  DependenceGraph graph;
  graph.predecessors.resize(count);
  graph.successors.resize(count);
  graph.consumer_pipes.assign(count, 0);

  std::unordered_map<std::string, MemoryState> memory;
  int previous_control = -1;
  int previous_barrier = -1;
  std::vector<int> open_statements;  // since the previous barrier, may still lack a successor
  std::vector<char> has_successor(count, 0);

  for (int index = 0; index < count; ++index) {
    const Statement& statement = statements[index];
    std::vector<int>& predecessors = graph.predecessors[index];

    std::vector<std::string_view> reads(statement.reads.begin(), statement.reads.end());
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (std::string_view name : reads) {
      MemoryState& state = memory[std::string(name)];
      if (state.last_writer >= 0) predecessors.push_back(state.last_writer);
      state.readers.push_back(index);
    }
    for (const std::string& name : statement.writes) {
      MemoryState& state = memory[name];
      if (state.last_writer >= 0 && state.last_writer != index) predecessors.push_back(state.last_writer);
      for (int reader : state.readers) {
        if (reader != index) predecessors.push_back(reader);
      }
      state.readers.clear();
      state.last_writer = index;
    }
    if (statement.kind == StatementKind::control) {
      if (previous_control >= 0) predecessors.push_back(previous_control);
      previous_control = index;
    }
    if (statement.kind == StatementKind::barrier) {
      for (int open : open_statements) {
        if (!has_successor[open]) predecessors.push_back(open);
      }
    } else if (previous_barrier >= 0) {
      bool ordered_after_barrier = std::any_of(predecessors.begin(), predecessors.end(),
                                               [&](int other) { return other >= previous_barrier; });
      if (!ordered_after_barrier) predecessors.push_back(previous_barrier);
    }

    std::sort(predecessors.begin(), predecessors.end());
    predecessors.erase(std::unique(predecessors.begin(), predecessors.end()), predecessors.end());
    for (int producer : predecessors) {
      graph.successors[producer].push_back(index);
      has_successor[producer] = 1;
      if (statements[producer].pipe != statement.pipe) {
        graph.consumer_pipes[producer] |= static_cast<std::uint16_t>(1u << static_cast<int>(statement.pipe));
      }
    }
    graph.edge_count += static_cast<int>(predecessors.size());

    if (statement.kind == StatementKind::barrier) {
      open_statements.clear();
      previous_barrier = index;
    }
    open_statements.push_back(index);
  }
  return graph;
}

}  // namespace tilec::reorder
