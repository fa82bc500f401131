// passes/fold_constants.h — folds integer arithmetic on constants and removes unused pure ops.
#pragma once

namespace tilec {
class Module;
struct PassContext;

bool fold_constants(Module& module, PassContext& ctx);
}  // namespace tilec
