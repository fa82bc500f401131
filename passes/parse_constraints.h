// passes/parse_constraints.h — reads the tileas.schedule.constraint.* attributes, checks them and
// publishes each op's resolved group as the integer attribute `group`.
#pragma once

namespace tilec {
class Module;
struct PassContext;

bool parse_constraints(Module& module, PassContext& ctx);
}  // namespace tilec
