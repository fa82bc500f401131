// passes/materialize_schedule.cpp — the materialize-schedule pass (DESIGN.md §1, seeds/001
// "Schedule::solve"). It reads only the published `(stage, order)` of ops, the loop attributes
// `stages` and `pipeline`, and the agent rule (passes/agent_of.h), and makes the schedule's
// producer/consumer protocols explicit as Pipe_ and Mutex_ ops (docs/ir.md).
//
// Notation: a *tie* is a loop's carried slot (the `for` init operand, the body argument, the
// body's `yield` operand and the `for` result); values tied together are one original value.
// A *use* is an operand that is not a tie. The *anchor* of a use is the op that reads the value
// in the region where that value is defined (the user itself, or the op of that region holding
// it). Per kernel:
//   1. Number the ops (pre-order) and collect every use of every value.
//   2. Union-find over values: unite the four members of every carried slot.
//   3. Candidates: a group (union-find root) of tile values is a candidate when one of its
//      producers (ops defining a member, `for` excepted) and one of its uses run on different
//      agents, or sit in the same region in different stages. Candidates are sorted by their
//      owner, the earliest producer by (stage, order, pre-order number).
//   3a. A value a `yield` carries, defined in the loop body, is its slot's next value: the slot's
//      wait in the body gives the current one. So the value's own uses form a group of their
//      own (the value, its producer, not tied), and its producer commits to both pipes.
//   4. Mutexes first: a `for` whose body holds an `mma` accumulating into a body argument gets
//      `mutex_create` in the kernel body (before the pipes' creation); after phase 5,
//      `mutex_lock` right before the first mma of the body (after its pipe waits) and
//      `mutex_unlock` right after the last.
//   5. Pipes: one per candidate, `pipe<PAYLOAD, DEPTH>` created in the kernel body before the
//      outermost op holding a producer or an anchor. Each producer gets `pipe_producer_acquire`
//      before and `pipe_producer_commit` after it. In each region holding anchors,
//      `pipe_consumer_wait` goes before the first anchor, `pipe_consumer_release` after the
//      last (before it when the last is the terminator), and every use anchored there reads the
//      waited value. A tied group's loop result that nothing reads is drained: a wait and a
//      release right after the loop. A shared-memory tile that elementwise ops, slices,
//      concats or interleaves read (a computed B's quantized weight) is released after the last
//      op of the region those ops' results reach on their way to an mma's B
//      (last_computed_b_reader): the tensor-core backend reads the slot where the mma is.
//   6. Depth: max over producers of the enclosing loop's `stages` and `pipeline`, and of
//      anchor stage − producer stage + 1 in one region; 1 outside loops; one more when the
//      group is tied through a carried slot (a value waits across the back edge).
//   7. Every new op carries the `stage` and `order` of the op it guards; then `order` is
//      renumbered in each changed region as the rank within its stage in program order
//      (the rule reorder-events keeps). `cycle` stays on the original ops only.
// Assumes: the module verifies and the schedule is published. Keeps: SSA dominance, results
// (run in program order, a commit followed by a wait passes the value through). Deterministic.
// Cost: O(ops + uses · α) for the groups plus O(ops) per inserted op for positions.
#include "passes/materialize_schedule.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"
#include "passes/agent_of.h"
#include "passes/pass_manager.h"
#include "passes/promote_mma_operands.h"

namespace tilec {

namespace {

struct Use {
  Operation* user;
  size_t operand;
};

// Disjoint sets of values with path compression; the root is the member seen first.
class ValueSets {
 public:
  Value* find(Value* value) {
    auto it = parent_.find(value);
    if (it == parent_.end()) return value;
    Value* root = find(it->second);
    it->second = root;
    return root;
  }
  void unite(Value* first, Value* second) {
    Value* a = find(first);
    Value* b = find(second);
    if (a != b) parent_[b] = a;
  }

 private:
  std::unordered_map<Value*, Value*> parent_;
};

struct Group {
  std::vector<Value*> members;  // in pre-order of definition
  std::vector<Operation*> producers;
  std::vector<std::pair<Use, Operation*>> uses;  // with their anchors
  bool tied = false;                            // tied through a carried slot
};

class KernelMaterializer {
 public:
  KernelMaterializer(Operation& kernel, PassContext& ctx) : kernel_(kernel), ctx_(ctx) {}

  bool run() {
    number_ops();
    std::vector<Group> groups = compute_groups();
    std::vector<Operation*> mutex_loops = compute_mutex_loops();
    // Mutexes are created first (so mutex_create precedes the pipes' creation), but locked last:
    // a lock placed right before the mma then follows the waits for its operands.
    std::vector<Value*> mutexes;
    for (Operation* loop : mutex_loops) mutexes.push_back(create_mutex(*loop));
    for (Group& group : groups)
      if (!materialize_pipe(group)) return false;
    for (size_t i = 0; i < mutex_loops.size(); ++i) lock_mutex(*mutex_loops[i], mutexes[i]);
    for (Region* region : changed_regions_) renumber_order(*region);
    return true;
  }

 private:
  Region& body() { return kernel_.region(0); }

  static int64_t stage_of(const Operation& op) { return op.get(attr::stage); }

  // Phase 1.
  void number_ops() {
    walk(body(), [&](Operation& op) {
      number_[&op] = static_cast<int>(number_.size());
      for (size_t i = 0; i < op.num_operands(); ++i) uses_[op.operand(i)].push_back({&op, i});
    });
  }

  // The op of `region` that is or holds `op`; null when `region` does not enclose it.
  static Operation* ancestor_in(Region& region, Operation* op) {
    while (op && op->parent_region() != &region) op = op->parent_op();
    return op;
  }

  static Region* defining_region(const Value* value) {
    return value->is_argument() ? value->owner_region() : value->defining_op()->parent_region();
  }

  // Phases 2 and 3.
  std::vector<Group> compute_groups() {
    ValueSets sets;
    std::set<std::pair<Operation*, size_t>> ties;
    std::unordered_set<Value*> tied_values;
    std::unordered_set<Value*> yielded;  // the values yields carry to the next iteration
    std::vector<Value*> tiles;  // in pre-order
    walk(body(), [&](Operation& op) {
      for (size_t i = 0; i < op.num_results(); ++i)
        if (op.result(i)->type().kind() == Type::Kind::tile) tiles.push_back(op.result(i));
      for (size_t r = 0; r < op.num_regions(); ++r)
        for (size_t a = 0; a < op.region(r).num_arguments(); ++a)
          if (op.region(r).argument(a)->type().kind() == Type::Kind::tile) tiles.push_back(op.region(r).argument(a));
      if (op.kind() != OpKind::for_) return;
      Region& loop_body = op.region(0);
      Operation* yield = loop_body.terminator();
      for (size_t slot = 0; slot + 3 < op.num_operands(); ++slot) {
        Value* argument = loop_body.argument(slot + 1);
        sets.unite(op.operand(slot + 3), argument);
        sets.unite(argument, op.result(slot));
        ties.insert({&op, slot + 3});
        if (yield && slot < yield->num_operands()) {
          sets.unite(argument, yield->operand(slot));
          ties.insert({yield, slot});
          yielded.insert(yield->operand(slot));
        }
        for (Value* member : {op.operand(slot + 3), argument, op.result(slot)}) tied_values.insert(member);
      }
    });

    std::map<Value*, size_t> index_of_root;
    std::vector<Group> groups;
    for (Value* value : tiles) {
      Value* root = sets.find(value);
      auto [it, inserted] = index_of_root.emplace(root, groups.size());
      if (inserted) groups.emplace_back();
      Group& group = groups[it->second];
      group.members.push_back(value);
      group.tied |= tied_values.count(value) != 0;
      Operation* definer = value->defining_op();
      if (definer && definer->kind() != OpKind::for_) group.producers.push_back(definer);
      // A yielded value read in the body is the next iteration's value there, while the carried
      // slot's wait gives the current one (the pipe is first in, first out): its reads get a
      // group of their own (rule 3a).
      size_t readers = it->second;
      if (definer && definer->kind() != OpKind::for_ && yielded.count(value)) {
        readers = groups.size();
        groups.push_back(Group{{value}, {definer}, {}, false});
      }
      for (const Use& use : uses_[value]) {
        if (ties.count({use.user, use.operand})) continue;
        groups[readers].uses.push_back({use, ancestor_in(*defining_region(value), use.user)});
      }
    }

    std::vector<Group> candidates;
    for (Group& group : groups)
      if (crosses(group)) candidates.push_back(std::move(group));
    auto key = [&](const Group& group) {
      const Operation* owner = group.producers.front();
      return std::make_tuple(stage_of(*owner), owner->get(attr::order), number_.at(owner));
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Group& a, const Group& b) { return key(a) < key(b); });
    return candidates;
  }

  static bool crosses(Group& group) {
    if (group.producers.empty()) return false;
    for (Operation* producer : group.producers)
      for (const auto& [use, anchor] : group.uses) {
        if (agent_of(*producer) != agent_of(*use.user)) return true;
        if (anchor->parent_region() == producer->parent_region() && stage_of(*anchor) != stage_of(*producer))
          return true;
      }
    return false;
  }

  // Phase 4: loops whose body holds an mma accumulating into a body argument.
  std::vector<Operation*> compute_mutex_loops() {
    std::vector<Operation*> loops;
    walk(body(), [&](Operation& op) {
      if (op.kind() != OpKind::for_) return;
      for (const auto& inner : op.region(0).operations())
        if (inner->kind() == OpKind::mma && inner->operand(2)->owner_region() == &op.region(0) &&
            inner->operand(2)->index() >= 1) {
          loops.push_back(&op);
          return;
        }
    });
    return loops;
  }

  // Inserts `kind` before (or after) `at` with the stage and order of `guarded`.
  Operation* insert(Operation& at, bool after, const Operation& guarded, OpKind kind,
                    const std::vector<Value*>& operands, const std::vector<Type>& results) {
    Region& region = *at.parent_region();
    Builder builder(&region);
    builder.set_insertion_point(&region, region.position_of(&at) + (after ? 1 : 0));
    builder.set_location(guarded.location());
    std::vector<std::pair<std::string, Attribute>> attributes;
    if (guarded.has(attr::stage)) attributes.push_back({attr::stage.name, Attribute(stage_of(guarded))});
    if (guarded.has(attr::order)) attributes.push_back({attr::order.name, Attribute(guarded.get(attr::order))});
    changed_regions_.insert(&region);
    return builder.create(kind, operands, results, std::move(attributes));
  }

  // The kernel-body op before which a state (pipe or mutex) used by `ops` is created: the
  // earliest kernel-body op holding one of them. That is after grid_ids, since the verifier
  // allows only scalar ops before it and `ops` hold tiles.
  Operation* creation_point(const std::vector<Operation*>& ops) {
    Operation* earliest = nullptr;
    for (Operation* op : ops) {
      Operation* top = ancestor_in(body(), op);
      if (!earliest || body().position_of(top) < body().position_of(earliest)) earliest = top;
    }
    return earliest;
  }

  Value* create_mutex(Operation& loop) {
    Operation* at = creation_point({&loop});
    Value* mutex = insert(*at, false, *at, OpKind::mutex_create, {}, {Type::mutex()})->result();
    mutex->set_name_hint("mutex");
    return mutex;
  }

  void lock_mutex(Operation& loop, Value* mutex) {
    std::vector<Operation*> mmas;
    for (const auto& inner : loop.region(0).operations())
      if (inner->kind() == OpKind::mma) mmas.push_back(inner.get());
    insert(*mmas.front(), false, *mmas.front(), OpKind::mutex_lock, {mutex}, {});
    insert(*mmas.back(), true, *mmas.back(), OpKind::mutex_unlock, {mutex}, {});
  }

  // Phase 6.
  static int64_t compute_depth(const Group& group) {
    int64_t depth = 1;
    for (Operation* producer : group.producers) {
      Operation* loop = producer->parent_op();
      if (loop && loop->kind() == OpKind::for_)
        depth = std::max({depth, loop->get(attr::stages, 1), loop->int_attr("pipeline", 1)});
      for (const auto& [use, anchor] : group.uses)
        if (anchor->parent_region() == producer->parent_region())
          depth = std::max(depth, stage_of(*anchor) - stage_of(*producer) + 1);
    }
    return group.tied ? depth + 1 : depth;
  }

  bool materialize_pipe(Group& group) {
    const Type payload = group.members.front()->type();
    std::vector<Operation*> holders = group.producers;
    for (const auto& entry : group.uses) holders.push_back(entry.second);
    Operation* at = creation_point(holders);
    if (!at) {
      ctx_.diagnostics.error(group.producers.front()->location(),
                             "internal error: materialize-schedule: a pipe's producer lies outside its kernel body");
      return false;
    }
    const Operation& owner = *group.producers.front();
    Value* pipe = insert(*at, false, *at, OpKind::pipe_create, {}, {Type::pipe(payload, compute_depth(group))})->result();
    const std::string hint = owner.result(0)->name_hint();
    pipe->set_name_hint(hint.empty() ? "pipe" : "pipe_" + hint);

    for (Operation* producer : group.producers) {
      Value* produced = nullptr;
      for (size_t i = 0; i < producer->num_results(); ++i)
        if (std::find(group.members.begin(), group.members.end(), producer->result(i)) != group.members.end())
          produced = producer->result(i);
      insert(*producer, false, *producer, OpKind::pipe_producer_acquire, {pipe}, {});
      insert(*producer, true, *producer, OpKind::pipe_producer_commit, {pipe, produced}, {});
    }

    // Anchors per region, in program order.
    std::map<int, std::pair<Region*, std::vector<std::pair<Use, Operation*>>>> by_region;  // by first anchor
    std::unordered_map<Region*, int> region_key;
    for (const auto& entry : group.uses) {
      Region* region = entry.second->parent_region();
      auto [it, inserted] = region_key.emplace(region, number_.at(entry.second));
      it->second = std::min(it->second, number_.at(entry.second));
    }
    for (const auto& entry : group.uses) {
      Region* region = entry.second->parent_region();
      auto& slot = by_region[region_key[region]];
      slot.first = region;
      slot.second.push_back(entry);
    }
    for (auto& [key, slot] : by_region) {
      auto& [region, uses] = slot;
      Operation* first = uses.front().second;
      Operation* last = uses.front().second;
      for (const auto& entry : uses) {
        if (region->position_of(entry.second) < region->position_of(first)) first = entry.second;
        if (region->position_of(entry.second) > region->position_of(last)) last = entry.second;
      }
      if (payload.is_tile() && payload.space() == MemorySpace::smem)
        for (const auto& entry : uses)
          if (Operation* reader = last_computed_b_reader(entry.first, entry.second);
              region->position_of(reader) > region->position_of(last))
            last = reader;
      Operation* wait = insert(*first, false, *first, OpKind::pipe_consumer_wait, {pipe}, {payload});
      wait->result()->set_name_hint(uses.front().first.user->operand(uses.front().first.operand)->name_hint());
      const bool last_is_terminator = last->info().has(kTerminator);
      insert(*last, !last_is_terminator, *last, OpKind::pipe_consumer_release, {pipe}, {});
      for (const auto& entry : uses) entry.first.user->set_operand(entry.first.operand, wait->result());
    }
    // A loop whose carried value nobody reads after it leaves its last value in the pipe, where
    // the next run of the loop (a persistent round) would wait for it first: drain it.
    for (Value* member : group.members) {
      Operation* loop = member->defining_op();
      if (!group.tied || !loop || loop->kind() != OpKind::for_ || !uses_[member].empty()) continue;
      Operation* drain = insert(*loop, true, *loop, OpKind::pipe_consumer_wait, {pipe}, {payload});
      drain->result()->set_name_hint(member->name_hint());
      insert(*drain, true, *loop, OpKind::pipe_consumer_release, {pipe}, {});
    }
    return true;
  }

  // The last op of the anchor's region holding an mma that what the use's user computed from a
  // tile in shared memory reaches as B, through ops that carry it into a computed B
  // (carries_into_computed_b: elementwise ops, slices, concats, interleaves) and transposes (a
  // computed B, which the tensor-core backend computes element by element from the shared slot
  // where each mma reads it: so the slot is released after them, in the same iteration, as the
  // body runs in program order); `anchor` (the use's) when the user is no such op in the anchor's region or
  // reaches no mma later.
  Operation* last_computed_b_reader(const Use& use, Operation* anchor) {
    Region& region = *anchor->parent_region();
    Operation* last = anchor;
    if (use.user != anchor || !carries_into_computed_b(*use.user, *use.user->operand(use.operand))) return last;
    std::vector<Operation*> work{use.user};
    std::set<Operation*> seen;
    Operation* last_mma = nullptr;  // the op of `region` holding the last mma reached
    while (!work.empty()) {
      Operation* op = work.back();
      work.pop_back();
      if (!seen.insert(op).second) continue;
      if (op->kind() == OpKind::mma) {
        Operation* holder = op;  // the op of `region` holding it (an mma inside an `if`: the `if`)
        while (holder && holder->parent_region() != &region) holder = holder->parent_op();
        if (holder && (!last_mma || region.position_of(holder) > region.position_of(last_mma))) last_mma = holder;
        continue;
      }
      for (const Use& next : uses_[op->result()])
        if (next.user->kind() == OpKind::mma || next.user->kind() == OpKind::transpose ||
            carries_into_computed_b(*next.user, *op->result()))
          work.push_back(next.user);
    }
    return last_mma && region.position_of(last_mma) > region.position_of(last) ? last_mma : last;
  }

  // Phase 7: `order` becomes the rank within its stage in program order.
  static void renumber_order(Region& region) {
    std::map<int64_t, int64_t> next_rank;
    for (const auto& op : region.operations())
      if (op->has(attr::order)) op->set(attr::order, next_rank[stage_of(*op)]++);
  }

  Operation& kernel_;
  PassContext& ctx_;
  std::unordered_map<const Operation*, int> number_;
  std::unordered_map<Value*, std::vector<Use>> uses_;
  std::set<Region*> changed_regions_;
};

}  // namespace

bool materialize_schedule(Module& module, PassContext& ctx) {
  for (auto& kernel : module.kernels()) {
    KernelMaterializer materializer(*kernel, ctx);
    if (!materializer.run()) return false;
  }
  return true;
}

}  // namespace tilec
