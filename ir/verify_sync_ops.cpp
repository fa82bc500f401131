// ir/verify_sync_ops.cpp — verifier rules for the ops of insert-sync and warp-specialize:
//
//  1. `mbarrier_create` gives an `mbarrier` and has integer `count` in 1..1024 and `arrivals` in
//     1..2^20 - 1; it and `stage_buffer` sit directly in a kernel body.
//  2. `mbarrier_arrive`/`mbarrier_wait` take an mbarrier and index operands; `expect_tx` is an
//     integer >= 0; `issuer` (a wait only the MMA issuer makes) is a unit attribute of a wait.
//  3. `stage_buffer` takes two mbarriers (of D slots or more, when created by mbarrier_create)
//     and gives a `pipe<tile<...>, D>`; `stage_read` gives
//     and `stage_write` takes its payload type; `tma_load_async` writes a stage buffer.
//  4. `stage_advance` takes and gives two index values and has `count` >= 1.
//  5. `event_set`/`event_wait` have an integer `event` >= 0 and pipe names `from`, `to`;
//     `named_barrier_*` an `id` in 1..15 and `threads` a positive multiple of 32; `mma_wait` an
//     integer `pending` >= 0.
//  6. A `warp_specialize` region holds only `agent` ops (and its yield); an `agent` sits only
//     there and has a string `name`.
//  7. A value defined inside one agent (an op result or a region argument at any depth) is not
//     used inside another agent of the same warp_specialize: agents share only what is defined
//     before the warp_specialize.
#include <fmt/core.h>

#include <cstdint>
#include <functional>
#include <set>
#include <unordered_map>

#include "ir/attribute_keys.h"
#include "ir/ir.h"
#include "ir/verify_sync.h"

namespace tilec {
namespace {

// Visits every op nested under `region` (pre-order).
void visit_nested(const Region& region, const std::function<void(const Operation&)>& visit) {
  for (const auto& op : region.operations()) {
    visit(*op);
    for (size_t r = 0; r < op->num_regions(); ++r) visit_nested(op->region(r), visit);
  }
}

// Rule 7: reports each use in one agent of a value defined in another.
void verify_agents_disjoint(const Operation& specialized, const OpErrorSink& error) {
  std::unordered_map<const Value*, const Operation*> defined_in;  // value -> its agent
  for (const auto& agent : specialized.region().operations()) {
    if (agent->kind() != OpKind::agent) continue;
    const Operation* owner = agent.get();
    visit_nested(agent->region(), [&](const Operation& op) {
      for (size_t i = 0; i < op.num_results(); ++i) defined_in[op.result(i)] = owner;
      for (size_t r = 0; r < op.num_regions(); ++r)
        for (size_t a = 0; a < op.region(r).num_arguments(); ++a) defined_in[op.region(r).argument(a)] = owner;
    });
  }
  for (const auto& agent : specialized.region().operations()) {
    if (agent->kind() != OpKind::agent) continue;
    visit_nested(agent->region(), [&](const Operation& op) {
      for (size_t i = 0; i < op.num_operands(); ++i) {
        auto it = defined_in.find(op.operand(i));
        if (it != defined_in.end() && it->second != agent.get())
          error(op, fmt::format("operand {} is defined in agent '{}' but used in agent '{}'", i,
                                it->second->string_attr("name"), agent->string_attr("name")));
      }
    });
  }
}

}  // namespace

void verify_sync_op(const Operation& op, const OpErrorSink& error) {
  auto operand_type = [&](size_t i) -> const Type& { return op.operand(i)->type(); };
  auto need_kind = [&](size_t i, Type::Kind kind, const char* what) {
    if (operand_type(i).kind() != kind)
      error(op, fmt::format("operand {} must be {}, not {}", i, what, operand_type(i).to_string()));
  };
  // An integer attribute in [low, high]; `required` says whether it may be absent.
  auto need_int = [&](const char* name, int64_t low, int64_t high, bool required) {
    const Attribute* value = op.attr(name);
    if (!value) {
      if (required) error(op, fmt::format("needs an integer '{}'", name));
      return;
    }
    if (!value->is_int()) error(op, fmt::format("'{}' must be an integer, not {}", name, value->kind_name()));
    else if (value->as_int() < low || value->as_int() > high)
      error(op, high == INT64_MAX ? fmt::format("'{}' must be >= {}, got {}", name, low, value->as_int())
                                  : fmt::format("'{}' must be in {}..{}, got {}", name, low, high, value->as_int()));
  };
  auto need_pipe_name = [&](const char* name) {
    const Attribute* value = op.attr(name);
    if (!value || !value->is_string()) error(op, fmt::format("needs a string '{}' naming a pipe", name));
    else if (!parse_pipe(value->as_string()) || value->as_string() == "none")
      error(op, fmt::format("'{}' = \"{}\" is not a pipe (TMA, MMA, SIMT, LSU, SFU)", name, value->as_string()));
  };
  switch (op.kind()) {
    case OpKind::mbarrier_create:
      if (op.result(0)->type().kind() != Type::Kind::mbarrier) error(op, "must give an mbarrier");
      // Slots of 8 bytes each in shared memory; PTX's expected arrival count is below 2^20.
      need_int("count", 1, 1024, true);
      need_int("arrivals", 1, (1 << 20) - 1, true);
      verify_created_in_kernel_body(op, error);
      break;
    case OpKind::mbarrier_arrive:
    case OpKind::mbarrier_wait:
      need_kind(0, Type::Kind::mbarrier, "an mbarrier");
      for (size_t i = 1; i < op.num_operands(); ++i)
        if (!operand_type(i).is_index()) error(op, fmt::format("operand {} must be an index", i));
      if (op.kind() == OpKind::mbarrier_arrive) need_int("expect_tx", 0, INT64_MAX, false);
      if (const Attribute* issuer = op.attr(attr::issuer.name); issuer && (op.kind() != OpKind::mbarrier_wait || !issuer->is_unit()))
        error(op, "'issuer' is a unit attribute of mbarrier_wait (write `issuer`)");
      break;
    case OpKind::stage_advance:
      need_int("count", 1, INT64_MAX, true);
      for (size_t i = 0; i < op.num_operands(); ++i)
        if (!operand_type(i).is_index()) error(op, fmt::format("operand {} must be an index", i));
      for (size_t i = 0; i < op.num_results(); ++i)
        if (!op.result(i)->type().is_index()) error(op, fmt::format("result {} must be an index", i));
      break;
    case OpKind::event_set:
    case OpKind::event_wait:
      need_int("event", 0, INT64_MAX, true);
      need_pipe_name("from");
      need_pipe_name("to");
      break;
    case OpKind::named_barrier_sync:
    case OpKind::named_barrier_arrive: {
      need_int("id", 1, 15, true);
      need_int("threads", 32, INT64_MAX, true);
      const Attribute* threads = op.attr("threads");
      if (threads && threads->is_int() && threads->as_int() % 32 != 0)
        error(op, fmt::format("'threads' must be a multiple of 32, got {}", threads->as_int()));
      break;
    }
    case OpKind::mma_wait:
      need_int("pending", 0, INT64_MAX, true);
      break;
    case OpKind::agent: {
      const Attribute* name = op.attr("name");
      if (!name || !name->is_string()) error(op, "an agent needs a string 'name'");
      Operation* parent = op.parent_op();
      if (!parent || parent->kind() != OpKind::warp_specialize) error(op, "an agent may only appear in a warp_specialize region");
      break;
    }
    case OpKind::stage_buffer:
      verify_created_in_kernel_body(op, error);
      need_kind(0, Type::Kind::mbarrier, "an mbarrier");
      need_kind(1, Type::Kind::mbarrier, "an mbarrier");
      if (op.result(0)->type().kind() != Type::Kind::pipe) {
        error(op, "must give a pipe type");
        break;
      }
      for (size_t i = 0; i < 2; ++i) {  // one full and one empty barrier per slot
        const Operation* create = op.operand(i)->defining_op();
        if (create && create->kind() == OpKind::mbarrier_create && create->int_attr("count", 1) < op.result(0)->type().depth())
          error(op, fmt::format("a stage buffer {} slots deep needs {} barrier of {} slots or more; it has {}",
                                op.result(0)->type().depth(), i == 0 ? "a full" : "an empty", op.result(0)->type().depth(),
                                create->int_attr("count", 1)));
      }
      break;
    case OpKind::stage_read:
    case OpKind::stage_write:
    case OpKind::tma_load_async:
      need_kind(0, Type::Kind::pipe, "a stage buffer");
      if (!operand_type(1).is_index()) error(op, "operand 1 (the slot) must be an index");
      break;
    case OpKind::warp_specialize: {
      std::set<std::string> names;  // an agent is found by its name (the backend's roles, reports)
      for (const auto& inner : op.region().operations()) {
        if (inner->kind() != OpKind::agent && inner->kind() != OpKind::yield)
          error(*inner, "only agent ops may appear in a warp_specialize region");
        const Attribute* name = inner->kind() == OpKind::agent ? inner->attr("name") : nullptr;
        if (name && name->is_string() && !names.insert(name->as_string()).second)
          error(*inner, fmt::format("agent '{}' appears twice in this warp_specialize; give each agent its own name",
                                    name->as_string()));
      }
      verify_agents_disjoint(op, error);
      break;
    }
    default: break;
  }
}

}  // namespace tilec
