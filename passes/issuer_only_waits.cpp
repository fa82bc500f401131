// passes/issuer_only_waits.cpp — the issuer-only-waits pass (see the header).
//
// Phases, per agent (only when the target's MMAs are issued by one thread):
//   1. For each stage buffer, whether the agent reads it and whether every use of every
//      stage_read result of it is an mma's A or B operand.
//   2. Each mbarrier_wait of the agent on the full barrier of a buffer read only that way gets
//      `issuer`.
// Invariants kept: results are unchanged; the interpreter treats an issuer wait as a wait, and
// reports a stage value read by anything but an mma after one as a race (the other threads did
// not wait for that fill).
// Cost: O(ops) per agent.
#include "passes/issuer_only_waits.h"

#include <unordered_map>
#include <unordered_set>

#include "backend/target.h"
#include "ir/attribute_keys.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

void mark_agent(Region& agent) {
  // Phase 1: the stage buffers the agent reads, and those read by something other than an mma's
  // A or B.
  std::unordered_map<const Value*, const Value*> buffer_of_read;  // stage_read result → buffer
  std::unordered_set<const Value*> read, other_uses;
  walk(agent, [&](Operation& op) {
    if (op.kind() == OpKind::stage_read) {
      buffer_of_read[op.result()] = op.operand(0);
      read.insert(op.operand(0));
    }
  });
  walk(agent, [&](Operation& op) {
    for (size_t i = 0; i < op.num_operands(); ++i)
      if (auto buffer = buffer_of_read.find(op.operand(i)); buffer != buffer_of_read.end())
        if (op.kind() != OpKind::mma || i >= 2) other_uses.insert(buffer->second);
  });
  std::unordered_set<const Value*> issuer_read;  // full barriers of the buffers only mmas read
  for (const Value* buffer : read) {
    const Operation* create = buffer->defining_op();
    if (!other_uses.count(buffer) && create && create->kind() == OpKind::stage_buffer)
      issuer_read.insert(create->operand(0));
  }
  // Phase 2.
  walk(agent, [&](Operation& op) {
    if (op.kind() == OpKind::mbarrier_wait && issuer_read.count(op.operand(0))) op.set(attr::issuer);
  });
}

}  // namespace

bool issuer_only_waits(Module& module, PassContext& ctx) {
  if (ctx.target.mma != target::MmaFamily::tcgen05) return true;
  for (auto& kernel : module.kernels())
    walk(kernel->region(), [&](Operation& op) {
      if (op.kind() == OpKind::agent) mark_agent(op.region());
    });
  return true;
}

}  // namespace tilec
