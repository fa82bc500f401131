// passes/agent_of.cpp — the agent rule (see agent_of.h): the op table's pipe decides.
#include "passes/agent_of.h"

#include "ir/ir.h"

namespace tilec {

AgentRole agent_of(const Operation& op) {
  return op.info().pipe == Pipe::TMA ? AgentRole::producer : AgentRole::compute;
}

const char* to_string(AgentRole role) { return role == AgentRole::producer ? "producer" : "compute"; }

const Operation* enclosing_agent(const Operation& op) {
  for (const Operation* parent = op.parent_op(); parent; parent = parent->parent_op())
    if (parent->kind() == OpKind::agent) return parent;
  return nullptr;
}

}  // namespace tilec
