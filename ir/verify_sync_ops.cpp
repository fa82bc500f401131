// ir/verify_sync_ops.cpp — verifier rules for the ops of insert-sync and warp-specialize:
//
//  1. `mbarrier_create` gives an `mbarrier` and has integer `count` >= 1 and `arrivals` >= 1.
//  2. `mbarrier_arrive`/`mbarrier_wait` take an mbarrier and index operands; `expect_tx` is an
//     integer >= 0.
//  3. `stage_buffer` takes two mbarriers and gives a `pipe<tile<...>, D>`; `stage_read` gives
//     and `stage_write` takes its payload type; `tma_load_async` writes a stage buffer.
//  4. `stage_advance` takes and gives two index values and has `count` >= 1.
//  5. `event_set`/`event_wait` have an integer `event` >= 0 and pipe names `from`, `to`;
//     `named_barrier_*` an `id` in 1..15 and `threads` a positive multiple of 32.
//  6. A `warp_specialize` region holds only `agent` ops (and its yield); an `agent` sits only
//     there and has a string `name`.
#include <fmt/core.h>

#include "ir/ir.h"
#include "ir/verify_sync.h"

namespace tilec {

void verify_sync_op(const Operation& op, const OpErrorSink& error) {
  auto operand_type = [&](size_t i) -> const Type& { return op.operand(i)->type(); };
  auto need_kind = [&](size_t i, Type::Kind kind, const char* what) {
    if (operand_type(i).kind() != kind)
      error(op, fmt::format("operand {} must be {}, not {}", i, what, operand_type(i).to_string()));
  };
  switch (op.kind()) {
    case OpKind::mbarrier_create:
      if (op.result(0)->type().kind() != Type::Kind::mbarrier) error(op, "must give an mbarrier");
      break;
    case OpKind::mbarrier_arrive:
    case OpKind::mbarrier_wait:
      need_kind(0, Type::Kind::mbarrier, "an mbarrier");
      for (size_t i = 1; i < op.num_operands(); ++i)
        if (!operand_type(i).is_index()) error(op, fmt::format("operand {} must be an index", i));
      break;
    case OpKind::stage_buffer:
      need_kind(0, Type::Kind::mbarrier, "an mbarrier");
      need_kind(1, Type::Kind::mbarrier, "an mbarrier");
      if (op.result(0)->type().kind() != Type::Kind::pipe) error(op, "must give a pipe type");
      break;
    case OpKind::stage_read:
    case OpKind::stage_write:
    case OpKind::tma_load_async:
      need_kind(0, Type::Kind::pipe, "a stage buffer");
      if (!operand_type(1).is_index()) error(op, "operand 1 (the slot) must be an index");
      break;
    case OpKind::warp_specialize:
      for (const auto& inner : op.region().operations())
        if (inner->kind() != OpKind::agent && inner->kind() != OpKind::yield)
          error(*inner, "only agent ops may appear in a warp_specialize region");
      break;
    default: break;
  }
}

}  // namespace tilec
