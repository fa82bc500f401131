// passes/insert_sync.h — the insert-sync pass: pipes, mutexes and cross-pipe dependences
// become mbarriers, stage buffers, named barriers and numbered events (docs/passes/insert_sync.md).
#pragma once

namespace tilec {
class Module;
struct PassContext;

// Lowers every kernel's Pipe_/Mutex_ ops and gives cross-pipe dependences event ids (at most
// ctx.max_events live per pipe pair). Returns false after reporting an input error (out of
// event or named barrier ids, pipe ops it cannot lower).
bool insert_sync(Module& module, PassContext& ctx);
}  // namespace tilec
