// ir/verify_pipe_ops.cpp — verifier rules for Pipe_ and Mutex_ ops (materialize-schedule):
//
//  1. `pipe_create` gives a `pipe<tile<...>, D>` with D >= 1; `mutex_create` gives a `mutex`; both
//     sit directly in a kernel body.
//  2. The first operand of every other pipe op is a pipe, of every mutex op a mutex.
//  3. `pipe_producer_commit` commits a value of the pipe's payload type;
//     `pipe_consumer_wait` gives the payload type.
// Region rules (verify_pipe_region; each region's own ops, in program order):
//  4. A `pipe_producer_acquire` is followed in the same region by one `pipe_producer_commit` of
//     the same pipe before the next acquire of it and before the region ends; a commit needs
//     such an acquire.
//  5. A `pipe_consumer_wait` has a `pipe_consumer_release` of the same pipe later in the same
//     region; a release needs such a wait.
//  6. `mutex_lock` and `mutex_unlock` of one mutex alternate in one region, starting with a
//     lock and ending with an unlock.
#include <fmt/core.h>

#include <map>
#include <vector>

#include "ir/ir.h"
#include "ir/verify_sync.h"

namespace tilec {

void verify_created_in_kernel_body(const Operation& op, const OpErrorSink& error) {
  const Operation* parent = op.parent_op();
  if (!parent || parent->kind() != OpKind::kernel)
    error(op, fmt::format("must sit directly in the kernel body, not inside '{}': it is made once, before the loops "
                          "and agents that use it",
                          parent ? parent->name() : "nothing"));
}

void verify_pipe_op(const Operation& op, const OpErrorSink& error) {
  auto operand_type = [&](size_t i) -> const Type& { return op.operand(i)->type(); };
  switch (op.kind()) {
    case OpKind::pipe_create: {
      verify_created_in_kernel_body(op, error);
      const Type& type = op.result(0)->type();
      if (type.kind() != Type::Kind::pipe) error(op, fmt::format("must give a pipe, not {}", type.to_string()));
      else if (type.depth() < 1) error(op, fmt::format("pipe depth must be >= 1, got {}", type.depth()));
      break;
    }
    case OpKind::mutex_create:
      verify_created_in_kernel_body(op, error);
      if (op.result(0)->type().kind() != Type::Kind::mutex) error(op, "must give a mutex");
      break;
    case OpKind::pipe_producer_acquire:
    case OpKind::pipe_producer_commit:
    case OpKind::pipe_consumer_wait:
    case OpKind::pipe_consumer_release: {
      const Type& pipe = operand_type(0);
      if (pipe.kind() != Type::Kind::pipe) {
        error(op, fmt::format("operand 0 must be a pipe, not {}", pipe.to_string()));
        break;
      }
      if (op.kind() == OpKind::pipe_producer_commit && !(operand_type(1) == pipe.payload()))
        error(op, fmt::format("commits {} into a pipe of {}", operand_type(1).to_string(), pipe.payload().to_string()));
      if (op.kind() == OpKind::pipe_consumer_wait && !(op.result(0)->type() == pipe.payload()))
        error(op, fmt::format("gives {} from a pipe of {}", op.result(0)->type().to_string(), pipe.payload().to_string()));
      break;
    }
    case OpKind::mutex_lock:
    case OpKind::mutex_unlock:
      if (operand_type(0).kind() != Type::Kind::mutex)
        error(op, fmt::format("operand 0 must be a mutex, not {}", operand_type(0).to_string()));
      break;
    default: break;
  }
}

void verify_pipe_region(const Region& region, const OpErrorSink& error) {
  // Per pipe or mutex: the open acquire, the open waits, the open lock. Keyed by the number of
  // the state's first appearance, so that leftover errors come out in program order.
  std::map<const Value*, int> first_seen;
  struct Key {
    int number;
    const Value* state;
    bool operator<(const Key& other) const { return number < other.number; }
  };
  std::map<Key, const Operation*> open_acquire, open_lock;
  std::map<Key, std::vector<const Operation*>> open_waits;
  for (const auto& owned : region.operations()) {
    const Operation& op = *owned;
    if (op.num_operands() == 0) continue;
    const Key state{first_seen.emplace(op.operand(0), static_cast<int>(first_seen.size())).first->second, op.operand(0)};
    switch (op.kind()) {
      case OpKind::pipe_producer_acquire:
        if (open_acquire.count(state)) error(*open_acquire[state], "pipe_producer_acquire has no pipe_producer_commit before the next acquire of its pipe");
        open_acquire[state] = &op;
        break;
      case OpKind::pipe_producer_commit:
        if (!open_acquire.count(state)) error(op, "pipe_producer_commit without a pipe_producer_acquire of its pipe before it in the same region");
        open_acquire.erase(state);
        break;
      case OpKind::pipe_consumer_wait: open_waits[state].push_back(&op); break;
      case OpKind::pipe_consumer_release:
        if (open_waits[state].empty()) error(op, "pipe_consumer_release without a pipe_consumer_wait of its pipe before it in the same region");
        else open_waits[state].erase(open_waits[state].begin());
        break;
      case OpKind::mutex_lock:
        if (open_lock.count(state)) error(op, "mutex_lock of a mutex already locked in this region");
        open_lock[state] = &op;
        break;
      case OpKind::mutex_unlock:
        if (!open_lock.count(state)) error(op, "mutex_unlock without a mutex_lock of its mutex before it in the same region");
        open_lock.erase(state);
        break;
      default: break;
    }
  }
  for (const auto& [state, acquire] : open_acquire)
    error(*acquire, "pipe_producer_acquire has no pipe_producer_commit of its pipe in the same region");
  for (const auto& [state, waits] : open_waits)
    for (const Operation* wait : waits) error(*wait, "pipe_consumer_wait has no pipe_consumer_release of its pipe in the same region");
  for (const auto& [state, lock] : open_lock) error(*lock, "mutex_lock has no mutex_unlock of its mutex in the same region");
}

}  // namespace tilec
