// tests/reorder/reorder_oracle.h — the tests' own model of a reorder segment, written apart
// from the engine: dependences straight from their definitions (quadratic, by scanning the
// program), an event recount from scratch, a brute-force search for an order within a limit,
// and a seeded generator of random segments. The engine is checked against this, never
// against itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "passes/reorder/compute_dependences.h"
#include "passes/reorder/segment.h"

namespace tilec::reorder::oracle {

using Edge = std::pair<int, int>;

inline bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Last statement before `before` that writes `name`, or -1.
inline int last_writer(const Segment& segment, const std::string& name, int before) {
  for (int index = before - 1; index >= 0; --index) {
    if (contains(segment.statements[index].writes, name)) return index;
  }
  return -1;
}

// The dependence edges as the design states them (DESIGN.md §4.2, docs/passes/reorder_events.md).
inline std::set<Edge> derive_edges(const Segment& segment) {
  const auto& statements = segment.statements;
  const int count = static_cast<int>(statements.size());
  std::set<Edge> edges;
  auto has_successor_before = [&](int producer, int limit) {
    for (const auto& [from, to] : edges) {
      if (from == producer && to < limit) return true;
    }
    return false;
  };
  int previous_barrier = -1;
  for (int consumer = 0; consumer < count; ++consumer) {
    const Statement& statement = statements[consumer];
    std::set<int> producers;
    for (const std::string& name : statement.reads) {  // RAW
      int writer = last_writer(segment, name, consumer);
      if (writer >= 0) producers.insert(writer);
    }
    for (const std::string& name : statement.writes) {
      int writer = last_writer(segment, name, consumer);
      if (writer >= 0) producers.insert(writer);  // WAW
      for (int reader = writer + 1; reader < consumer; ++reader) {  // WAR: readers since that write
        if (contains(statements[reader].reads, name)) producers.insert(reader);
      }
    }
    if (statement.kind == StatementKind::control) {
      for (int other = consumer - 1; other >= 0; --other) {
        if (statements[other].kind == StatementKind::control) {
          producers.insert(other);
          break;
        }
      }
    }
    if (statement.kind == StatementKind::barrier) {
      for (int other = std::max(previous_barrier, 0); other < consumer; ++other) {
        if (!has_successor_before(other, consumer)) producers.insert(other);
      }
      previous_barrier = consumer;
    } else if (previous_barrier >= 0) {
      bool after = std::any_of(producers.begin(), producers.end(), [&](int p) { return p >= previous_barrier; });
      if (!after) producers.insert(previous_barrier);
    }
    for (int producer : producers) edges.insert({producer, consumer});
  }
  return edges;
}

// Whether `order` keeps every ordering the design promises: data dependences, control
// statements in their relative order, nothing crossing a barrier. Checked pairwise from the
// definitions, without the edge list.
inline bool respects_program_semantics(const Segment& segment, const std::vector<int>& order, std::string& why) {
  const auto& statements = segment.statements;
  const int count = static_cast<int>(statements.size());
  std::vector<int> position(count, -1);
  for (int step = 0; step < static_cast<int>(order.size()); ++step) position[order[step]] = step;
  for (int later = 0; later < count; ++later) {
    for (int earlier = 0; earlier < later; ++earlier) {
      const Statement& a = statements[earlier];
      const Statement& b = statements[later];
      bool must = a.kind == StatementKind::barrier || b.kind == StatementKind::barrier ||
                  (a.kind == StatementKind::control && b.kind == StatementKind::control);
      for (const std::string& name : a.writes) {
        // b reads or rewrites what a wrote (a's write still visible or the next write), or
        if (contains(b.reads, name) || contains(b.writes, name)) must = true;
      }
      for (const std::string& name : a.reads) {
        if (contains(b.writes, name)) must = true;  // b overwrites what a read
      }
      if (must && position[earlier] > position[later]) {
        why = "'" + b.name + "' moved above '" + a.name + "'";
        return false;
      }
    }
  }
  return true;
}

// Peak live events per pair ("MTE2->V") for an order, recounted from scratch at every step:
// an event (producer, destination pipe) is live when the producer has run and none of its
// consumers on that pipe has.
inline std::map<std::string, int> recount_peaks(const Segment& segment, const std::set<Edge>& edges,
                                                const std::vector<int>& order) {
  const auto& statements = segment.statements;
  std::map<std::pair<int, int>, std::vector<int>> events;  // (producer, pipe) → consumers on it
  std::map<std::string, int> peaks;
  for (const auto& [from, to] : edges) {
    int source = static_cast<int>(statements[from].pipe);
    int destination = static_cast<int>(statements[to].pipe);
    if (source == destination) continue;
    events[{from, destination}].push_back(to);
    peaks[pair_name(pair_index(source, destination))] = 0;
  }
  std::vector<char> done(statements.size(), 0);
  for (int statement : order) {
    done[statement] = 1;
    std::map<std::string, int> live;
    for (const auto& [event, consumers] : events) {
      if (!done[event.first]) continue;
      bool consumed = std::any_of(consumers.begin(), consumers.end(), [&](int c) { return done[c] != 0; });
      if (!consumed) {
        ++live[pair_name(pair_index(static_cast<int>(statements[event.first].pipe), event.second))];
      }
    }
    for (const auto& [pair, value] : live) peaks[pair] = std::max(peaks[pair], value);
  }
  return peaks;
}

inline int max_of(const std::map<std::string, int>& peaks) {
  int best = 0;
  for (const auto& [pair, value] : peaks) best = std::max(best, value);
  return best;
}

// Brute force: does any topological order keep every pair within `limit`? Depth first over
// orders, abandoning a prefix as soon as a pair exceeds the limit (small segments only).
inline bool exists_order_within(const Segment& segment, const std::set<Edge>& edges, int limit) {
  const int count = static_cast<int>(segment.statements.size());
  std::vector<int> order;
  std::vector<char> used(count, 0);
  std::set<std::uint32_t> dead;
  std::uint32_t mask = 0;
  auto ready = [&](int statement) {
    for (const auto& [from, to] : edges) {
      if (to == statement && !used[from]) return false;
    }
    return true;
  };
  auto visit = [&](auto& self) -> bool {
    if (static_cast<int>(order.size()) == count) return true;
    if (dead.contains(mask)) return false;
    for (int statement = 0; statement < count; ++statement) {
      if (used[statement] || !ready(statement)) continue;
      used[statement] = 1;
      order.push_back(statement);
      mask |= 1u << statement;
      if (max_of(recount_peaks(segment, edges, order)) <= limit && self(self)) return true;
      mask &= ~(1u << statement);
      order.pop_back();
      used[statement] = 0;
    }
    dead.insert(mask);
    return false;
  };
  return visit(visit);
}

// A random segment: statements over a few pipes, reading and writing a small pool of names
// (so RAW, WAR and WAW all occur), some control statements and rare barriers.
inline Segment random_segment(std::mt19937& random, int count, bool gpu_pipes, int barrier_percent = 3) {
  const std::vector<Pipe> ascend = {Pipe::MTE2, Pipe::V, Pipe::MTE3, Pipe::S, Pipe::M};
  const std::vector<Pipe> gpu = {Pipe::TMA, Pipe::MMA, Pipe::SIMT, Pipe::LSU};
  const auto& pipes = gpu_pipes ? gpu : ascend;
  const int pool = std::max(2, count / 2 + 1);
  auto pick = [&](int bound) { return static_cast<int>(random() % static_cast<unsigned>(bound)); };
  Segment segment;
  for (int index = 0; index < count; ++index) {
    Statement statement;
    statement.name = "s" + std::to_string(index);
    statement.pipe = pipes[pick(static_cast<int>(pipes.size()))];
    int roll = pick(100);
    if (roll < 8) statement.kind = StatementKind::control;
    else if (roll < 8 + barrier_percent) statement.kind = StatementKind::barrier;
    int reads = pick(3);
    for (int r = 0; r < reads; ++r) statement.reads.push_back("m" + std::to_string(pick(pool)));
    if (pick(10) < 8) statement.writes.push_back("m" + std::to_string(pick(pool)));
    segment.statements.push_back(std::move(statement));
  }
  return segment;
}

// The engine's dependence graph as the oracle's edge set, to compare with derive_edges.
inline std::set<Edge> edges_of(const DependenceGraph& graph) {
  std::set<Edge> edges;
  for (int consumer = 0; consumer < static_cast<int>(graph.predecessors.size()); ++consumer) {
    for (int producer : graph.predecessors[consumer]) edges.insert({producer, consumer});
  }
  return edges;
}

}  // namespace tilec::reorder::oracle
