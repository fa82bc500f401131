// ir/verify_pipe_ops.cpp — verifier rules for Pipe_ and Mutex_ ops (materialize-schedule):
//
//  1. `pipe_create` gives a `pipe<tile<...>, D>` with D >= 1; `mutex_create` gives a `mutex`.
//  2. The first operand of every other pipe op is a pipe, of every mutex op a mutex.
//  3. `pipe_producer_commit` commits a value of the pipe's payload type;
//     `pipe_consumer_wait` gives the payload type.
#include <fmt/core.h>

#include "ir/ir.h"
#include "ir/verify_sync.h"

namespace tilec {

void verify_pipe_op(const Operation& op, const OpErrorSink& error) {
  auto operand_type = [&](size_t i) -> const Type& { return op.operand(i)->type(); };
  switch (op.kind()) {
    case OpKind::pipe_create: {
      const Type& type = op.result(0)->type();
      if (type.kind() != Type::Kind::pipe) error(op, fmt::format("must give a pipe, not {}", type.to_string()));
      else if (type.depth() < 1) error(op, fmt::format("pipe depth must be >= 1, got {}", type.depth()));
      break;
    }
    case OpKind::mutex_create:
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

void verify_pipe_region(const Region&, const OpErrorSink&) {}

}  // namespace tilec
