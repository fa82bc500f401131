// passes/materialize_schedule.h — the materialize-schedule pass: Pipe_ and Mutex_ ops from the
// published schedule (docs/passes/materialize_schedule.md).
#pragma once

namespace tilec {
class Module;
struct PassContext;

// Inserts mutex_* ops around the tensor-core work of loops with a carried mma accumulator and
// pipe_* ops for every tile value that crosses stages or agents. Returns false only after
// reporting an internal error.
bool materialize_schedule(Module& module, PassContext& ctx);
}  // namespace tilec
