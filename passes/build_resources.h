// passes/build_resources.h — gives every op that occupies hardware its footprint from the
// target's machine model, as the attributes `resource_kind`, `resources` and `latency`.
#pragma once

namespace tilec {
class Module;
struct PassContext;

bool build_resources(Module& module, PassContext& ctx);
}  // namespace tilec
