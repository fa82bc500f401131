// passes/sync/assign_named_barriers.cpp — insert-sync phase 2: mutexes become named barriers.
//
//   1. Number the kernel's ops in a pre-order walk. A mutex's lifetime is the span from its
//      first mutex_lock to its last mutex_unlock.
//   2. In order of first lock (then creation), each mutex takes the lowest named-barrier id in
//      1..15 (0 is the CTA barrier) that no mutex with an overlapping lifetime holds; ids are
//      reused when lifetimes are disjoint. None free → an error at the mutex's first lock
//      naming the mutexes that hold the 15 ids.
//   3. mutex_lock → named_barrier_sync {id, threads}, mutex_unlock → named_barrier_arrive {id,
//      threads}; threads = the enclosing agent's `threads`, 128 for a body that is one agent.
//      mutex_create goes away. A mutex never locked is only removed.
// Cost: O(ops + mutexes · 15).
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "passes/agent_of.h"
#include "passes/sync/sync_parts.h"

namespace tilec {

namespace {

constexpr int kFirstNamedBarrier = 1;
constexpr int kLastNamedBarrier = 15;
constexpr int64_t kThreadsOfOneAgent = 128;

struct MutexLifetime {
  Operation* create = nullptr;
  Operation* first_lock = nullptr;
  int first = -1;  // pre-order number of the first lock
  int last = -1;   // of the last unlock
  int id = 0;
};

int64_t threads_of(const Operation& op) {
  const Operation* agent = enclosing_agent(op);
  return agent ? agent->int_attr("threads", kThreadsOfOneAgent) : kThreadsOfOneAgent;
}

std::string describe(const MutexLifetime& mutex) {
  std::string name = mutex.create->result()->name_hint().empty() ? "mutex" : mutex.create->result()->name_hint();
  Location at = mutex.first_lock->location();
  return fmt::format("%{} (locked at {}:{})", name, at.line, at.column);
}

}  // namespace

bool assign_named_barriers(Operation& kernel, DiagnosticEngine& diagnostics) {
  std::map<const Value*, size_t> index_of;
  std::vector<MutexLifetime> mutexes;
  std::vector<Operation*> uses;
  int number = 0;
  walk(kernel.region(), [&](Operation& op) {
    ++number;
    if (op.kind() == OpKind::mutex_create) {
      index_of[op.result()] = mutexes.size();
      mutexes.push_back({&op});
    } else if (op.kind() == OpKind::mutex_lock || op.kind() == OpKind::mutex_unlock) {
      uses.push_back(&op);
      MutexLifetime& mutex = mutexes[index_of.at(op.operand(0))];
      if (op.kind() == OpKind::mutex_lock && mutex.first < 0) {
        mutex.first = number;
        mutex.first_lock = &op;
      }
      mutex.last = number;
    }
  });
  if (mutexes.empty()) return true;

  std::vector<size_t> order;
  for (size_t index = 0; index < mutexes.size(); ++index)
    if (mutexes[index].first >= 0) order.push_back(index);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mutexes[a].first < mutexes[b].first; });
  std::vector<size_t> holders;  // mutexes holding an id, lifetimes not yet ended
  for (size_t index : order) {
    MutexLifetime& mutex = mutexes[index];
    std::erase_if(holders, [&](size_t holder) { return mutexes[holder].last < mutex.first; });
    for (int id = kFirstNamedBarrier; id <= kLastNamedBarrier && mutex.id == 0; ++id)
      if (std::none_of(holders.begin(), holders.end(), [&](size_t holder) { return mutexes[holder].id == id; }))
        mutex.id = id;
    if (mutex.id == 0) {
      std::string live;
      for (size_t holder : holders) live += (live.empty() ? "" : ", ") + describe(mutexes[holder]);
      diagnostics.error(mutex.first_lock->location(),
                        fmt::format("insert-sync: out of named barrier ids (1..15) for {}: its lifetime overlaps "
                                    "those of {}",
                                    describe(mutex), live));
      return false;
    }
    holders.push_back(index);
  }

  for (Operation* use : uses) {
    const MutexLifetime& mutex = mutexes[index_of.at(use->operand(0))];
    if (mutex.id == 0) {
      diagnostics.error(use->location(), "insert-sync: mutex_unlock of a mutex that is never locked");
      return false;
    }
    Region* region = use->parent_region();
    size_t position = region->position_of(use);
    Builder builder(region);
    builder.set_insertion_point(region, position);
    builder.set_location(use->location());
    std::vector<std::pair<std::string, Attribute>> attributes{{"id", Attribute(int64_t{mutex.id})},
                                                              {"threads", Attribute(threads_of(*use))}};
    for (const char* copied : {attr::stage.name, attr::order.name})
      if (const Attribute* value = use->attr(copied)) attributes.emplace_back(copied, *value);
    builder.create(use->kind() == OpKind::mutex_lock ? OpKind::named_barrier_sync : OpKind::named_barrier_arrive, {}, {},
                   std::move(attributes));
    region->take(position + 1);
  }
  for (const MutexLifetime& mutex : mutexes) {
    Region* region = mutex.create->parent_region();
    region->take(region->position_of(mutex.create));
  }
  return true;
}

}  // namespace tilec
