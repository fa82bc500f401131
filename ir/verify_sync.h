// ir/verify_sync.h — verifier rules for the ops that materialize-schedule, insert-sync and
// warp-specialize introduce. ir/verifier.cpp calls these for every op and region; they report
// through `error` with the op whose rule broke. The rules are listed at the top of each file.
#pragma once

#include <functional>
#include <string>

namespace tilec {

class Operation;
class Region;

using OpErrorSink = std::function<void(const Operation&, const std::string&)>;

// ir/verify_pipe_ops.cpp: a pipe, mutex, mbarrier or stage buffer is made directly in a kernel
// body (the passes that split loops and agents rely on it).
void verify_created_in_kernel_body(const Operation& op, const OpErrorSink& error);
// ir/verify_pipe_ops.cpp: pipe_* and mutex_* ops (types, depth, payload).
void verify_pipe_op(const Operation& op, const OpErrorSink& error);
// ir/verify_pipe_ops.cpp: rules that need a whole region (every acquire has its commit, ...).
void verify_pipe_region(const Region& region, const OpErrorSink& error);

// ir/verify_sync_ops.cpp: mbarrier_*, stage_*, tma_load_async, event_*, named_barrier_*,
// warp_specialize and agent.
void verify_sync_op(const Operation& op, const OpErrorSink& error);

}  // namespace tilec
