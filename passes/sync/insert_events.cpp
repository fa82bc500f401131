// passes/sync/insert_events.cpp — insert-sync phase 1: cross-pipe events.
//
// Notation: in one region, statement i is op i (compute_reorder_segment); pipe(op) is the op
// table's pipe (none → SIMT); an op is asynchronous when it has trait kAsync or issues on MMA.
//   1. Dependences: compute_dependences on the region's segment (the reorder-events model, so
//      both passes count the same events). An edge p → c is resolved to the ops that really
//      exchange data: for a tile value, the op defining it (through the yields of a for/if p)
//      and the ops using it (inside a for/if c, also through a for's iteration argument); for
//      tensor memory, the load/store pairs on one tensor with at least one store. Scalar
//      operands (indices, coordinates) are issue operands and need no event.
//   2. A resolved pair q → r needs an event when pipe(q) != pipe(r), q or r is asynchronous,
//      and neither is a sync op (a pipe, mutex or barrier carries it). Broadcast model: one
//      event per (p, pipe(q), pipe(r)), set right after p, waited right before the first such
//      consumer c of p. Because p and c are the statements of this region that contain q and
//      r, a set deeper than its wait sits after the loop/if containing it, and a wait deeper
//      than its set before the loop/if containing it (scope crossing).
//   3. Pruning: exact duplicates merge in step 2. Transitive pairs: the happens-before graph
//      has an edge between consecutive statements touching one pipe (same-pipe work runs in
//      order; a for/if touches every pipe used inside it) and one edge p → c per event. An
//      event whose c is reachable from its p without it is dropped (checked in order of set,
//      then wait). So A→B, B→C drops A→C, and of two sets waited before one consumer on one
//      pipe pair only the later one stays.
//   4. Ids (allocate_event_ids): positions from a pre-order walk of the kernel, so lifetimes
//      in nested regions nest; per pair, lowest id free at the set, freed after the wait.
//   5. Insert the event_set/event_wait ops.
// Cost per region: O(n + E log E) dependences, O(events · (n + events)) pruning.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "passes/compute_reorder_segment.h"
#include "passes/reorder/compute_dependences.h"
#include "passes/sync/sync_parts.h"

namespace tilec {

bool synchronizes_itself(OpKind kind) {
  return op_info(kind).has(kSync) || kind == OpKind::warp_specialize || kind == OpKind::agent;
}

int allocate_event_ids(std::vector<PlannedEvent>& events, int max_events) {
  std::vector<size_t> order(events.size());
  for (size_t index = 0; index < order.size(); ++index) order[index] = index;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(events[a].set_position, events[a].wait_position) <
           std::tie(events[b].set_position, events[b].wait_position);
  });
  std::map<std::pair<Pipe, Pipe>, std::vector<size_t>> live;  // per pair: events holding an id
  for (size_t index : order) {
    PlannedEvent& event = events[index];
    std::vector<size_t>& holders = live[{event.from, event.to}];
    std::erase_if(holders, [&](size_t holder) { return events[holder].wait_position < event.set_position; });
    for (int id = 0; id < max_events && event.id < 0; ++id)
      if (std::none_of(holders.begin(), holders.end(), [&](size_t holder) { return events[holder].id == id; }))
        event.id = id;
    if (event.id < 0) return static_cast<int>(index);
    holders.push_back(index);
  }
  return -1;
}

namespace {

Pipe pipe_of(const Operation& op) { return op.info().pipe == Pipe::none ? Pipe::SIMT : op.info().pipe; }
bool is_async(const Operation& op) { return op.info().has(kAsync) || op.info().pipe == Pipe::MMA; }
bool is_control(const Operation& op) { return op.kind() == OpKind::for_ || op.kind() == OpKind::if_; }

// The op itself, or every op nested in it.
std::vector<Operation*> ops_of(Operation& op) {
  std::vector<Operation*> ops;
  if (op.num_regions() == 0) return {&op};
  for (size_t index = 0; index < op.num_regions(); ++index) walk(op.region(index), [&](Operation& inner) { ops.push_back(&inner); });
  return ops;
}

// The ops that compute `value` (a result of `op`), looking through the yields of for/if.
void producers_of(Value* value, std::vector<Operation*>& producers) {
  Operation* op = value->defining_op();
  if (!op) return;  // a region argument: a value carried around a loop
  if (!is_control(*op)) {
    producers.push_back(op);
    return;
  }
  for (size_t index = 0; index < op->num_regions(); ++index)
    if (Operation* yield = op->region(index).terminator(); yield && value->index() < yield->num_operands())
      producers_of(yield->operand(value->index()), producers);
}

// The ops under statement `consumer` that read `value` (defined outside it).
void consumers_of(Value* value, Operation& consumer, std::vector<Operation*>& consumers) {
  if (!is_control(consumer)) {
    if (std::count(consumer.operands().begin(), consumer.operands().end(), value)) consumers.push_back(&consumer);
    return;
  }
  std::vector<Value*> seen{value};
  if (consumer.kind() == OpKind::for_)
    for (size_t operand = 3; operand < consumer.num_operands(); ++operand)
      if (consumer.operand(operand) == value) seen.push_back(consumer.region().argument(operand - 2));
  for (size_t index = 0; index < consumer.num_regions(); ++index)
    walk(consumer.region(index), [&](Operation& inner) {
      if (inner.kind() == OpKind::yield || is_control(inner)) return;
      for (Value* operand : inner.operands())
        if (std::count(seen.begin(), seen.end(), operand)) {
          consumers.push_back(&inner);
          break;
        }
    });
}

constexpr int kPipeSlots = 6;  // Pipe::none .. Pipe::SFU

struct OpSpan {
  int first = 0;  // pre-order number of the op
  int last = 0;   // of the last op in its subtree
};

class EventInserter {
 public:
  EventInserter(Operation& kernel, int max_events, DiagnosticEngine& diagnostics)
      : kernel_(kernel), max_events_(max_events), diagnostics_(diagnostics) {}

  bool run() {
    number(kernel_.region());
    plan(kernel_.region());
    if (events_.empty()) return true;
    int failed = allocate_event_ids(events_, max_events_);
    if (failed >= 0) {
      const PlannedEvent& event = events_[failed];
      Location set = event.set_after->location();
      Location wait = event.wait_before->location();
      diagnostics_.error(set, fmt::format("insert-sync: out of event ids for {}->{}: the event set after this '{}' and "
                                          "waited before '{}' at {}:{} finds all {} ids live (--max-events {})",
                                          to_string(event.from), to_string(event.to), event.set_after->name(),
                                          event.wait_before->name(), wait.line, wait.column, max_events_, max_events_));
      return false;
    }
    insert();
    return true;
  }

 private:
  void number(Region& region) {
    for (const auto& op : region.operations()) {
      OpSpan& span = spans_[op.get()];
      span.first = counter_++;
      for (size_t index = 0; index < op->num_regions(); ++index) number(op->region(index));
      span.last = counter_ - 1;
    }
  }

  // Phases 1–3 for `region` and every region nested in it.
  void plan(Region& region) {
    for (const auto& op : region.operations())
      for (size_t index = 0; index < op->num_regions(); ++index) plan(op->region(index));
    const auto& ops = region.operations();
    if (ops.size() < 2) return;
    reorder::Segment segment = compute_reorder_segment(region);
    reorder::DependenceGraph graph = reorder::compute_dependences(segment);
    const int count = static_cast<int>(segment.statements.size());

    // Phase 2: (producer, from, to) → first consumer.
    std::map<std::tuple<int, Pipe, Pipe>, int> needed;
    for (int consumer = 0; consumer < count; ++consumer)
      for (int producer : graph.predecessors[consumer])
        for (auto [from, to] : resolve(*ops[producer], *ops[consumer])) {
          auto [it, inserted] = needed.try_emplace({producer, from, to}, consumer);
          if (!inserted) it->second = std::min(it->second, consumer);
        }
    if (needed.empty()) return;

    // Phase 3: transitive pruning on the happens-before graph. Its nodes are (statement, pipe)
    // for each pipe a statement's work runs on: a for/if is on every pipe used inside it, but
    // nothing orders its pipes among themselves, so a path must leave p on the event's `from`
    // pipe and reach c on its `to` pipe. Sync ops are on no pipe.
    auto node = [](int statement, Pipe pipe) { return statement * kPipeSlots + static_cast<int>(pipe); };
    std::vector<std::vector<int>> edges(static_cast<size_t>(count) * kPipeSlots);
    std::map<Pipe, int> last_on_pipe;
    for (int index = 0; index < count; ++index) {
      std::set<Pipe> touched;
      for (Operation* inner : ops_of(*ops[index]))
        if (!is_control(*inner) && inner->kind() != OpKind::yield && !synchronizes_itself(inner->kind())) touched.insert(pipe_of(*inner));
      for (Pipe pipe : touched) {
        if (auto it = last_on_pipe.find(pipe); it != last_on_pipe.end()) edges[node(it->second, pipe)].push_back(node(index, pipe));
        last_on_pipe[pipe] = index;
      }
    }
    struct Candidate {
      int producer, consumer;
      Pipe from, to;
      bool kept = true;
    };
    std::vector<Candidate> candidates;
    for (const auto& [key, consumer] : needed)
      candidates.push_back({std::get<0>(key), consumer, std::get<1>(key), std::get<2>(key)});
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.producer, a.consumer) < std::tie(b.producer, b.consumer);
    });
    std::vector<std::vector<int>> events_from(edges.size());  // node → candidates leaving it
    for (size_t index = 0; index < candidates.size(); ++index)
      events_from[node(candidates[index].producer, candidates[index].from)].push_back(static_cast<int>(index));
    for (size_t index = 0; index < candidates.size(); ++index) {
      Candidate& candidate = candidates[index];
      const int start = node(candidate.producer, candidate.from);
      const int goal = node(candidate.consumer, candidate.to);
      std::vector<char> reached(edges.size(), 0);
      std::vector<int> stack{start};
      reached[start] = 1;
      while (!stack.empty() && !reached[goal]) {
        int at = stack.back();
        stack.pop_back();
        auto visit = [&](int next) {
          if (!reached[next]) reached[next] = 1, stack.push_back(next);
        };
        for (int next : edges[at]) visit(next);
        for (int other : events_from[at]) {
          const Candidate& event = candidates[other];
          if (static_cast<size_t>(other) != index && event.kept) visit(node(event.consumer, event.to));
        }
      }
      if (reached[goal]) candidate.kept = false;
    }
    for (const Candidate& candidate : candidates) {
      if (!candidate.kept) continue;
      PlannedEvent event;
      event.set_after = ops[candidate.producer].get();
      event.wait_before = ops[candidate.consumer].get();
      event.from = candidate.from;
      event.to = candidate.to;
      event.set_position = 2 * spans_.at(event.set_after).last + 1;
      event.wait_position = 2 * spans_.at(event.wait_before).first - 1;
      events_.push_back(event);
    }
  }

  // Phase 1–2 for one edge: the pipe pairs that need an event.
  std::set<std::pair<Pipe, Pipe>> resolve(Operation& producer, Operation& consumer) {
    std::vector<std::pair<Operation*, Operation*>> pairs;
    for (size_t result = 0; result < producer.num_results(); ++result) {
      Value* value = producer.result(result);
      if (!value->type().is_tile()) continue;
      std::vector<Operation*> consumers;
      consumers_of(value, consumer, consumers);
      if (consumers.empty()) continue;
      std::vector<Operation*> producers;
      producers_of(value, producers);
      for (Operation* from : producers)
        for (Operation* to : consumers) pairs.emplace_back(from, to);
    }
    std::vector<Operation*> producer_ops = ops_of(producer);
    std::vector<Operation*> consumer_ops = ops_of(consumer);
    for (Operation* from : producer_ops) {
      auto first = tensor_access(*from);
      if (!first) continue;
      for (Operation* to : consumer_ops)
        if (auto second = tensor_access(*to); second && first->tensor == second->tensor && (first->writes || second->writes))
          pairs.emplace_back(from, to);
    }
    std::set<std::pair<Pipe, Pipe>> needed;
    for (auto [from, to] : pairs)
      if (pipe_of(*from) != pipe_of(*to) && (is_async(*from) || is_async(*to)) && !synchronizes_itself(from->kind()) &&
          !synchronizes_itself(to->kind()))
        needed.insert({pipe_of(*from), pipe_of(*to)});
    return needed;
  }

  // Phase 5.
  void insert() {
    std::map<Operation*, std::vector<const PlannedEvent*>> sets_after, waits_before;
    for (const PlannedEvent& event : events_) {
      sets_after[event.set_after].push_back(&event);
      waits_before[event.wait_before].push_back(&event);
    }
    auto by_pairs_and_id = [](const PlannedEvent* a, const PlannedEvent* b) {
      return std::tie(a->from, a->to, a->id, a->set_position) < std::tie(b->from, b->to, b->id, b->set_position);
    };
    auto make = [](Builder& builder, OpKind kind, const PlannedEvent& event) {
      builder.create(kind, {}, {},
                     {{"event", Attribute(int64_t{event.id})},
                      {"from", Attribute(std::string(to_string(event.from)))},
                      {"to", Attribute(std::string(to_string(event.to)))}});
    };
    for (auto& [op, waits] : waits_before) {
      std::sort(waits.begin(), waits.end(), by_pairs_and_id);
      Region* region = op->parent_region();
      Builder builder(region);
      builder.set_insertion_point(region, region->position_of(op));
      builder.set_location(op->location());
      for (const PlannedEvent* event : waits) make(builder, OpKind::event_wait, *event);
    }
    for (auto& [op, sets] : sets_after) {
      std::sort(sets.begin(), sets.end(), by_pairs_and_id);
      Region* region = op->parent_region();
      Builder builder(region);
      builder.set_insertion_point(region, region->position_of(op) + 1);
      builder.set_location(op->location());
      for (const PlannedEvent* event : sets) make(builder, OpKind::event_set, *event);
    }
  }

  Operation& kernel_;
  int max_events_;
  DiagnosticEngine& diagnostics_;
  std::map<const Operation*, OpSpan> spans_;
  int counter_ = 0;
  std::vector<PlannedEvent> events_;
};

}  // namespace

bool insert_events(Operation& kernel, int max_events, DiagnosticEngine& diagnostics) {
  return EventInserter(kernel, max_events, diagnostics).run();
}

}  // namespace tilec
