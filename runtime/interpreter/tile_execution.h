// runtime/interpreter/tile_execution.h — the interpreter's internal execution of one tile (one
// CTA) or of one agent inside it; shared by interpreter.cpp (arithmetic, memory, control flow),
// sync_ops.cpp (pipes, mutexes, mbarriers, stage buffers, events, named barriers) and
// agent_threads.cpp (warp_specialize: agents as coroutines). Not part of the public API.
//
// Values: each execution has its own map, layered over a parent execution (an agent over its
// tile) or over the prologue's map (a tile over the host). Sync objects (a pipe, an mbarrier, ...)
// are values whose RuntimeValue holds an index into the tile's CtaState (cta_state.h).
#pragma once

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "runtime/interpreter/cta_state.h"
#include "runtime/interpreter/host_buffer.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/tile_arithmetic.h"

namespace tilec::runtime::detail {

// The CtaState table a sync object's index points into.
enum class ObjectKind : uint8_t { none, pipe, mutex, mbarrier, stage_buffer };

// A `stage_read` result is a view of its slot, as a WGMMA operand in shared memory is: every op
// that later reads it reads the slot, so it is checked like the stage_read itself.
struct RuntimeValue {
  TileValue tile;                // scalars and tiles
  HostBuffer* tensor = nullptr;  // tensor parameters
  int64_t object = -1;           // sync objects: index into the CtaState table of `kind`
  ObjectKind kind = ObjectKind::none;
  SlotView view;                 // stage_read results
  int64_t mma_number = -1;       // the agent's async mma that computes it (-1: none)
};

using ValueMap = std::unordered_map<const Value*, RuntimeValue>;
using OwnerTable = std::vector<std::atomic<int64_t>>;

// State shared by all tiles of one launch.
struct LaunchState {
  std::unordered_map<const HostBuffer*, std::unique_ptr<OwnerTable>> owners;  // race check
  // Of a stored tensor a load reads too: per element, the tile that read it (-1: none; -2: several).
  std::unordered_map<const HostBuffer*, std::unique_ptr<OwnerTable>> readers;
  std::mutex accumulate_mutex;  // an accumulating store's read-modify-writes, one tile at a time
  std::unordered_map<const HostBuffer*, std::string> buffer_names;
  std::mutex error_mutex;
  std::atomic<int64_t> lowest_failed_tile{INT64_MAX};
  std::atomic<bool> raced{false};  // a race was found (which pair depends on the tiles' order)
  int64_t max_loop_iterations = 0;
  int64_t max_tile_iterations = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // LaunchOptions::deadline
  double deadline_seconds = 0;
  int64_t sm_count = 4;  // LaunchOptions::sm_count
  LaunchResult error;  // valid when lowest_failed_tile != INT64_MAX or a host error occurred

  // Whether the deadline has passed (checked between tiles and every 1024 loop iterations), and
  // the error that then ends the launch.
  bool past_deadline() const { return deadline && std::chrono::steady_clock::now() > *deadline; }
  std::string deadline_message() const { return fmt::format("the run did not finish in {} s (--timeout)", deadline_seconds); }
};

struct OpError {
  Location location;
  std::string message;
  bool refused_launch = false;  // the kernel's assert refused the launch (LaunchResult::refused_launch)
};

class AgentThreads;

class TileExecution {
 public:
  // A tile (or the host when `tile` < 0) over the prologue's values.
  TileExecution(const ValueMap* base, LaunchState& launch, int64_t tile);
  // Agent `agent` of a warp_specialize, over its tile's execution (read-only while agents run).
  TileExecution(const TileExecution& parent, int agent);
  ~TileExecution();

  // Runs region ops from `first` to the terminator; a `yield` fills `yielded`. False on error.
  bool run_ops(const Region& region, size_t first, std::vector<RuntimeValue>* yielded);
  bool run_op(const Operation& op) { return execute(op); }
  void bind(const Value* value, RuntimeValue v) { values_[value] = std::move(v); }
  bool fail(const Operation& op, std::string message) {
    error_ = {op.location(), fmt::format("'{}': {}", op.name(), message)};
    return false;
  }
  // An error whose message is already complete (deadlock and race reports).
  bool fail_report(Location location, std::string message) {
    error_ = {location, std::move(message)};
    return false;
  }
  const OpError& error() const { return error_; }
  const ValueMap& values() const { return values_; }
  const RuntimeValue* lookup(const Value* value) const;
  CtaState& cta() const { return *cta_; }
  int agent() const { return agent_; }

 private:
  bool execute(const Operation& op);
  bool execute_for(const Operation& op);
  bool execute_if(const Operation& op);
  bool execute_load(const Operation& op);
  bool execute_store(const Operation& op);
  bool execute_constant(const Operation& op);
  bool execute_assert(const Operation& op);
  // sync_ops.cpp
  bool execute_sync(const Operation& op);
  bool execute_pipe(const Operation& op);
  bool execute_mbarrier(const Operation& op);
  bool execute_stage(const Operation& op);
  bool execute_event_or_named_barrier(const Operation& op);
  int64_t sync_object(const Operation& op, size_t i, ObjectKind kind);
  // A read of a slot view (an operand that a stage_read gave) by `op`: a race when this agent
  // has released that fill or a later fill has overwritten it. False with the race report.
  bool check_view_reads(const Operation& op);
  // One such read: `reader` names the op for the report, which is made at `at`; `mma_operand`:
  // the reader is an mma taking the view as A or B (the one reader an `issuer` wait allows).
  bool check_view_read(const std::string& reader, const Location& at, const SlotView& view, const std::string& name,
                       bool mma_operand);
  // A read by `op` of the result of an async mma of this agent that no mma_wait has retired
  // (an mma's own accumulator operand and values carried into a loop are not reads).
  bool check_in_flight_reads(const Operation& op);
  // An async mma (defer-mma-releases): its result now, its stage reads kept until it retires.
  bool issue_async_mma(const Operation& op, TileValue result);
  // mma_wait {pending = N}: retires this agent's oldest async mmas until at most N are in
  // flight, checking each one's stage reads as of now.
  bool execute_mma_wait(const Operation& op);
  // Waits until `ready()` holds: at once when it does, else by parking this agent (the other
  // agents run). False (with the deadlock report as the error) when no agent can make
  // progress. `blocked` describes what the agent waits for, at the time of the report.
  bool wait_until(const Operation& op, std::function<bool()> ready, std::function<std::string()> blocked);
  // agent_threads.cpp
  bool execute_warp_specialize(const Operation& op);
  // The tile at tile coordinates given by operands first+1.. of the tensor operand `first`.
  bool read_tile(const Operation& op, size_t first, const Type& type, TileValue& out);
  bool read_tile_as_stored(const Operation& op, size_t first, const Type& type, TileValue& out);
  bool check_read_by_this_tile(const Operation& op, const HostBuffer& tensor, const std::vector<int64_t>& coordinates,
                               const std::vector<int64_t>& shape, bool elements);
  // Operand fetchers: report through fail() and return null / false on a wrong kind.
  const TileValue* tile_operand(const Operation& op, size_t i);
  bool integer_operand(const Operation& op, size_t i, int64_t& out);
  HostBuffer* tensor_operand(const Operation& op, size_t i);
  // Binds the op's single result, checking it against the declared type.
  bool set_result(const Operation& op, TileValue value, size_t index = 0);

  const ValueMap* base_ = nullptr;
  const TileExecution* parent_ = nullptr;
  LaunchState& launch_;
  int64_t tile_;
  // The tile a persistent walk is at (the `tile_index` op's value, set as each round starts;
  // -1 before one): the race check's writer and reader, else tile_.
  int64_t walked_tile_ = -1;
  int64_t race_tile() const { return walked_tile_ >= 0 ? walked_tile_ : tile_; }
  int64_t loop_iterations_ = 0;  // every loop's iterations in this execution, nested ones included
  std::unique_ptr<CtaState> owned_cta_;  // the tile's; agents share their tile's
  CtaState* cta_ = nullptr;
  int agent_ = 0;  // index into CtaState::agents; 0 is "main"
  ValueMap values_;
  OpError error_;
};

}  // namespace tilec::runtime::detail
