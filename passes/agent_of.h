// passes/agent_of.h — the agent rule: which agent of a CTA runs an op. materialize-schedule
// reads it to find values that cross agents; warp-specialize will split the kernel by it. After
// warp-specialize, the `agent` op around an op says it (enclosing_agent).
#pragma once

namespace tilec {

class Operation;

enum class AgentRole { producer, compute };

// An op on the TMA pipe (tma_load, tma_load_async) runs on the producer agent; every other op
// on the compute agent.
AgentRole agent_of(const Operation& op);

const char* to_string(AgentRole role);

// The nearest `agent` op around `op` (after warp-specialize), or null outside every agent.
const Operation* enclosing_agent(const Operation& op);

}  // namespace tilec
