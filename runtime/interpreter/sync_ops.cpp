// runtime/interpreter/sync_ops.cpp — the interpreter's pipes, mutexes, mbarriers, stage buffers,
// events and named barriers (docs/ir.md "Pipes and mutexes" and "Synchronization"; the model
// and report formats are docs/interpreter.md "Pipes, barriers and agents").
//
// A blocking op that cannot pass parks its agent through wait_until (agent_threads.cpp runs
// the others); outside a warp_specialize there is no other agent, so it is a deadlock at once.
// Stage-buffer accesses are checked against what the accessing agent has observed through its
// mbarrier waits; a violation is a race report. Pipes run in program order and report misuse.
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>

#include "ir/attribute_keys.h"
#include "runtime/interpreter/agent_threads.h"
#include "runtime/interpreter/cta_state.h"
#include "runtime/interpreter/tile_execution.h"

namespace tilec::runtime::detail {

namespace {

std::string value_name(const Value* value) {
  return value->name_hint().empty() ? std::string("%<unnamed>") : "%" + value->name_hint();
}

std::string where(const Operation& op) {
  return fmt::format("{}:{}", op.location().line, op.location().column);
}

std::string plural(int64_t count, const char* word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

}  // namespace

int64_t TileExecution::sync_object(const Operation& op, size_t i, ObjectKind kind) {
  static constexpr const char* kNames[] = {"", "pipe", "mutex", "mbarrier", "stage buffer"};
  if (i >= op.num_operands()) return fail(op, fmt::format("is missing operand {}", i)), -1;
  const RuntimeValue* v = lookup(op.operand(i));
  if (!v) return fail(op, fmt::format("operand {} has no value (used before its definition)", i)), -1;
  if (v->object < 0 || v->kind != kind)
    return fail(op, fmt::format("operand {} must be a {}", i, kNames[static_cast<int>(kind)])), -1;
  return v->object;
}

bool TileExecution::wait_until(const Operation& op, std::function<bool()> ready,
                               std::function<std::string()> blocked) {
  if (ready()) return true;
  if (cta_->threads) return cta_->threads->park(*this, op, std::move(ready), std::move(blocked));
  return fail_report(op.location(), fmt::format("deadlock: agent '{}' at {} {}", cta_->agents[agent_].name,
                                                where(op), blocked()));
}

bool TileExecution::execute_sync(const Operation& op) {
  switch (op.kind()) {
    case OpKind::pipe_create: case OpKind::pipe_producer_acquire: case OpKind::pipe_producer_commit:
    case OpKind::pipe_consumer_wait: case OpKind::pipe_consumer_release: case OpKind::mutex_create:
    case OpKind::mutex_lock: case OpKind::mutex_unlock:
      return execute_pipe(op);
    case OpKind::mbarrier_create: case OpKind::mbarrier_arrive: case OpKind::mbarrier_wait:
      return execute_mbarrier(op);
    case OpKind::stage_buffer: case OpKind::stage_write: case OpKind::stage_read:
    case OpKind::tma_load_async: case OpKind::stage_advance:
      return execute_stage(op);
    case OpKind::mma_wait:
      return execute_mma_wait(op);
    default:
      return execute_event_or_named_barrier(op);
  }
}

// Pipes and mutexes: program order, one agent (docs/ir.md "Pipes and mutexes").
bool TileExecution::execute_pipe(const Operation& op) {
  CtaState& cta = *cta_;
  switch (op.kind()) {
    case OpKind::pipe_create: {
      const Type& type = op.result()->type();
      if (type.kind() != Type::Kind::pipe || type.depth() < 1)
        return fail(op, "its result must be a pipe of depth >= 1");
      cta.pipes.push_back({value_name(op.result()), type.depth(), 0, {}, 0});
      values_[op.result()] = RuntimeValue{{}, nullptr, static_cast<int64_t>(cta.pipes.size() - 1), ObjectKind::pipe};
      return true;
    }
    case OpKind::mutex_create:
      cta.mutexes.push_back({value_name(op.result()), false});
      values_[op.result()] = RuntimeValue{{}, nullptr, static_cast<int64_t>(cta.mutexes.size() - 1), ObjectKind::mutex};
      return true;
    case OpKind::mutex_lock:
    case OpKind::mutex_unlock: {
      int64_t index = sync_object(op, 0, ObjectKind::mutex);
      if (index < 0) return false;
      MutexState& mutex = cta.mutexes[static_cast<size_t>(index)];
      if (op.kind() == OpKind::mutex_unlock) {
        if (!mutex.locked) return fail(op, fmt::format("unlocks mutex {}, which is not locked", mutex.name));
        mutex.locked = false;
        return true;
      }
      if (!wait_until(op, [&cta, index] { return !cta.mutexes[static_cast<size_t>(index)].locked; },
                      [name = mutex.name] { return fmt::format("waits to lock mutex {}, which is locked", name); }))
        return false;
      cta.mutexes[static_cast<size_t>(index)].locked = true;
      return true;
    }
    default:
      break;
  }
  int64_t index = sync_object(op, 0, ObjectKind::pipe);
  if (index < 0) return false;
  PipeState& pipe = cta.pipes[static_cast<size_t>(index)];
  switch (op.kind()) {
    case OpKind::pipe_producer_acquire:
      if (pipe.occupied() >= pipe.depth)
        return fail(op, fmt::format("acquires a slot of pipe {} beyond its depth {} ({} acquired, {} published, "
                                    "{} waited for and not released)", pipe.name, pipe.depth, pipe.acquired,
                                    pipe.published.size(), pipe.waited));
      ++pipe.acquired;
      return true;
    case OpKind::pipe_producer_commit: {
      if (pipe.acquired == 0)
        return fail(op, fmt::format("commits to pipe {} without an acquired slot", pipe.name));
      const TileValue* value = tile_operand(op, 1);
      if (!value) return false;
      --pipe.acquired;
      pipe.published.push_back(*value);
      return true;
    }
    case OpKind::pipe_consumer_wait: {
      if (pipe.published.empty())
        return fail(op, fmt::format("waits on pipe {} with nothing published", pipe.name));
      TileValue value = std::move(pipe.published.front());
      pipe.published.pop_front();
      ++pipe.waited;
      return set_result(op, std::move(value));
    }
    case OpKind::pipe_consumer_release:
      if (pipe.waited == 0)
        return fail(op, fmt::format("releases a slot of pipe {} with nothing waited for", pipe.name));
      --pipe.waited;
      return true;
    default:
      return fail(op, "is not a pipe op");
  }
}

bool TileExecution::execute_mbarrier(const Operation& op) {
  CtaState& cta = *cta_;
  if (op.kind() == OpKind::mbarrier_create) {
    int64_t count = op.int_attr("count", 0), arrivals = op.int_attr("arrivals", 0);
    if (count < 1 || arrivals < 1) return fail(op, "needs integer 'count' >= 1 and 'arrivals' >= 1");
    if (count > 4096) return fail(op, fmt::format("'count' {} is beyond the 4096 barriers a CTA could hold", count));
    MbarrierState barrier{value_name(op.result()), arrivals, {}};
    barrier.slots.assign(static_cast<size_t>(count), MbarrierSlot{0, arrivals, 0});
    cta.mbarriers.push_back(std::move(barrier));
    values_[op.result()] = RuntimeValue{{}, nullptr, static_cast<int64_t>(cta.mbarriers.size() - 1), ObjectKind::mbarrier};
    return true;
  }
  int64_t index = sync_object(op, 0, ObjectKind::mbarrier);
  int64_t slot = 0;
  if (index < 0 || !integer_operand(op, 1, slot)) return false;
  MbarrierState& barrier = cta.mbarriers[static_cast<size_t>(index)];
  if (slot < 0 || slot >= static_cast<int64_t>(barrier.slots.size()))
    return fail(op, fmt::format("slot {} is outside {}[0..{}]", slot, barrier.name, barrier.slots.size() - 1));
  if (op.kind() == OpKind::mbarrier_arrive) {
    MbarrierSlot& state = barrier.slots[static_cast<size_t>(slot)];
    if (state.missing == 0)
      return fail(op, fmt::format("arrives on {}[{}] in phase {}, which expects no more arrivals", barrier.name,
                                  slot, state.phase));
    // An arrival on a stage buffer's empty barrier releases the agent's fill of that slot.
    for (size_t s = 0; s < cta.stage_buffers.size(); ++s) {
      StageBufferState& buffer = cta.stage_buffers[s];
      if (buffer.empty != index || slot >= static_cast<int64_t>(buffer.slots.size())) continue;
      StageSlot& stage = buffer.slots[static_cast<size_t>(slot)];
      cta.agents[agent_].released[{static_cast<int64_t>(s), slot}] = stage.fills;
      if (stage.fills > 0 && !stage.release_phase) stage.release_phase = state.phase;
    }
    state.bytes += op.int_attr("expect_tx", 0);
    --state.missing;
    if (state.missing == 0 && state.bytes == 0) {
      ++state.phase;
      state.missing = barrier.arrivals;
    }
    return true;
  }
  int64_t parity = 0;
  if (!integer_operand(op, 2, parity)) return false;
  if (parity != 0 && parity != 1) return fail(op, fmt::format("the parity must be 0 or 1, got {}", parity));
  auto ready = [&cta, index, slot, parity] {
    return (cta.mbarriers[static_cast<size_t>(index)].slots[static_cast<size_t>(slot)].phase & 1) != parity;
  };
  auto blocked = [&cta, index, slot, parity] {
    const MbarrierState& b = cta.mbarriers[static_cast<size_t>(index)];
    const MbarrierSlot& s = b.slots[static_cast<size_t>(slot)];
    // Transaction bytes may complete before an arrive expects them, so the count can be negative.
    std::string missing = s.bytes >= 0
        ? fmt::format("{} and {} missing", plural(s.missing, "arrival"), plural(s.bytes, "byte"))
        : fmt::format("{} missing and {} completed before an arrive expected them", plural(s.missing, "arrival"),
                      plural(-s.bytes, "byte"));
    return fmt::format("waits for phase {} (parity {}) of {}[{}]: phase {} in progress, {}", s.phase, parity, b.name,
                       slot, s.phase, missing);
  };
  if (!wait_until(op, ready, blocked)) return false;
  // Other agents may have created barriers meanwhile: index again, do not reuse `barrier`.
  int64_t phase = cta.mbarriers[static_cast<size_t>(index)].slots[static_cast<size_t>(slot)].phase;
  AgentState& agent = cta.agents[agent_];
  int64_t& observed = agent.observed.try_emplace({index, slot}, -1).first->second;
  observed = std::max(observed, phase - 1);
  if (op.has(attr::issuer))
    agent.issuer_observed.insert({index, slot});
  else
    agent.issuer_observed.erase({index, slot});
  return true;
}

bool TileExecution::execute_stage(const Operation& op) {
  CtaState& cta = *cta_;
  if (op.kind() == OpKind::stage_advance) {
    int64_t position = 0, phase = 0, count = op.int_attr("count", 0);
    if (!integer_operand(op, 0, position) || !integer_operand(op, 1, phase)) return false;
    if (count < 1) return fail(op, "needs an integer 'count' >= 1");
    bool wrap = position + 1 == count;
    return set_result(op, TileValue::scalar_int(ScalarKind::index, wrap ? 0 : position + 1), 0) &&
           set_result(op, TileValue::scalar_int(ScalarKind::index, wrap ? phase ^ 1 : phase), 1);
  }
  if (op.kind() == OpKind::stage_buffer) {
    const Type& type = op.result()->type();
    int64_t full = sync_object(op, 0, ObjectKind::mbarrier);
    int64_t empty = full < 0 ? -1 : sync_object(op, 1, ObjectKind::mbarrier);
    if (empty < 0) return false;
    if (type.kind() != Type::Kind::pipe || type.depth() < 1) return fail(op, "its result must be a pipe type");
    for (int64_t barrier : {full, empty})
      if (static_cast<int64_t>(cta.mbarriers[static_cast<size_t>(barrier)].slots.size()) < type.depth())
        return fail(op, fmt::format("{} has fewer than the {} barriers of the buffer's slots",
                                    cta.mbarriers[static_cast<size_t>(barrier)].name, type.depth()));
    StageBufferState buffer{value_name(op.result()), full, empty, {}};
    buffer.slots.resize(static_cast<size_t>(type.depth()));
    cta.stage_buffers.push_back(std::move(buffer));
    values_[op.result()] = RuntimeValue{{}, nullptr, static_cast<int64_t>(cta.stage_buffers.size() - 1), ObjectKind::stage_buffer};
    return true;
  }
  int64_t index = sync_object(op, 0, ObjectKind::stage_buffer);
  int64_t slot = 0;
  if (index < 0 || !integer_operand(op, 1, slot)) return false;
  StageBufferState& buffer = cta.stage_buffers[static_cast<size_t>(index)];
  if (slot < 0 || slot >= static_cast<int64_t>(buffer.slots.size()))
    return fail(op, fmt::format("slot {} is outside {}[0..{}]", slot, buffer.name, buffer.slots.size() - 1));
  StageSlot& stage = buffer.slots[static_cast<size_t>(slot)];
  AgentState& agent = cta.agents[agent_];
  const std::string& full_name = cta.mbarriers[static_cast<size_t>(buffer.full)].name;
  const std::string& empty_name = cta.mbarriers[static_cast<size_t>(buffer.empty)].name;
  auto observed = [&](int64_t barrier) {
    auto it = agent.observed.find({barrier, slot});
    return it == agent.observed.end() ? int64_t{-2} : it->second;
  };
  if (op.kind() == OpKind::stage_read) {
    if (stage.fills == 0)
      return fail_report(op.location(), fmt::format("race: {}[{}] read by agent '{}' before any fill", buffer.name,
                                                    slot, agent.name));
    if (observed(buffer.full) < stage.full_phase)
      return fail_report(op.location(),
                         fmt::format("race: {}[{}] read by agent '{}' before its fill {} was committed (the agent "
                                     "has not observed phase {} of {}[{}] complete; agent '{}' filled it)",
                                     buffer.name, slot, agent.name, stage.fills, stage.full_phase, full_name, slot,
                                     cta.agents[static_cast<size_t>(stage.filler)].name));
    auto released = agent.released.find({index, slot});
    if (released != agent.released.end() && released->second == stage.fills)
      return fail_report(op.location(),
                         fmt::format("race: {}[{}] read by agent '{}' after it released fill {} (arrived on {}[{}])",
                                     buffer.name, slot, agent.name, stage.fills, empty_name, slot));
    if (!set_result(op, *stage.value)) return false;
    values_[op.result()].view = SlotView{index, slot, stage.fills};
    return true;
  }
  // A fill: stage_write or tma_load_async.
  if (stage.fills > 0) {
    if (!stage.release_phase)
      return fail_report(op.location(),
                         fmt::format("race: {}[{}] fill {} by agent '{}' overwrites fill {}, which no agent has "
                                     "released on {}[{}]", buffer.name, slot, stage.fills + 1, agent.name,
                                     stage.fills, empty_name, slot));
    if (observed(buffer.empty) < *stage.release_phase)
      return fail_report(op.location(),
                         fmt::format("race: {}[{}] fill {} by agent '{}' before it observed the release of fill {} "
                                     "(phase {} of {}[{}])", buffer.name, slot, stage.fills + 1, agent.name,
                                     stage.fills, *stage.release_phase, empty_name, slot));
  }
  const Type payload = op.operand(0)->type().payload();
  TileValue value;
  if (op.kind() == OpKind::stage_write) {
    const TileValue* written = tile_operand(op, 2);
    if (!written) return false;
    value = *written;
  } else if (!read_tile(op, 2, payload, value)) {
    return false;
  }
  if (value.element != payload.element() || value.shape != payload.shape())
    return fail(op, fmt::format("writes a {} value of shape [{}] into a buffer of {}", to_string(value.element),
                                fmt::join(value.shape, "x"), payload.to_string()));
  MbarrierSlot& full = cta.mbarriers[static_cast<size_t>(buffer.full)].slots[static_cast<size_t>(slot)];
  ++stage.fills;
  stage.full_phase = full.phase;
  stage.filler = agent_;
  stage.release_phase.reset();
  stage.value = std::move(value);
  if (op.kind() == OpKind::tma_load_async) {
    full.bytes -= payload.element_count() * byte_size(payload.element());
    if (full.missing == 0 && full.bytes == 0) {
      ++full.phase;
      full.missing = cta.mbarriers[static_cast<size_t>(buffer.full)].arrivals;
    }
  }
  return true;
}

bool TileExecution::execute_event_or_named_barrier(const Operation& op) {
  CtaState& cta = *cta_;
  if (op.kind() == OpKind::event_set || op.kind() == OpKind::event_wait) {
    const Attribute* event = op.attr("event");
    if (!event || !event->is_int()) return fail(op, "needs an integer 'event'");
    auto key = std::make_tuple(op.string_attr("from"), op.string_attr("to"), event->as_int());
    std::string name = fmt::format("event {} of {} -> {}", event->as_int(), std::get<0>(key), std::get<1>(key));
    if (op.kind() == OpKind::event_set) {
      bool& live = cta.live_events[key];
      if (live) return fail(op, fmt::format("event id reused while live: {} is set again before its wait", name));
      live = true;
      return true;
    }
    if (!wait_until(op, [&cta, key] { auto it = cta.live_events.find(key); return it != cta.live_events.end() && it->second; },
                    [name] { return fmt::format("waits for {}, which is not set", name); }))
      return false;
    cta.live_events[key] = false;
    return true;
  }
  int64_t id = op.int_attr("id", -1), threads = op.int_attr("threads", 0);
  if (id < 1 || id > 15 || threads < 1) return fail(op, "needs an 'id' in 1..15 and a positive 'threads'");
  NamedBarrierState& barrier = cta.named_barriers[id];
  int64_t phase = barrier.phase;
  barrier.arrived += cta.agents[agent_].threads;
  if (barrier.arrived >= threads) {
    ++barrier.phase;
    barrier.arrived = 0;
  }
  if (op.kind() == OpKind::named_barrier_arrive) return true;
  return wait_until(op, [&cta, id, phase] { return cta.named_barriers[id].phase > phase; },
                    [&cta, id, threads] {
                      return fmt::format("waits at named barrier {}: {} of {} threads arrived", id,
                                         cta.named_barriers[id].arrived, threads);
                    });
}

namespace {

std::string view_name(const Value* value) {
  return value->name_hint().empty() ? "a stage_read result" : "%" + value->name_hint();
}

}  // namespace

bool TileExecution::check_view_reads(const Operation& op) {
  for (size_t i = 0; i < op.num_operands(); ++i) {
    const RuntimeValue* value = lookup(op.operand(i));
    if (value && value->view.buffer >= 0 &&
        !check_view_read(fmt::format("'{}'", op.name()), op.location(), value->view, view_name(op.operand(i)),
                         op.kind() == OpKind::mma && i < 2))
      return false;
  }
  return true;
}

bool TileExecution::check_view_read(const std::string& reader, const Location& at, const SlotView& view,
                                    const std::string& name, bool mma_operand) {
  CtaState& cta = *cta_;
  const StageBufferState& buffer = cta.stage_buffers[static_cast<size_t>(view.buffer)];
  const StageSlot& stage = buffer.slots[static_cast<size_t>(view.slot)];
  const AgentState& agent = cta.agents[agent_];
  const std::string& empty_name = cta.mbarriers[static_cast<size_t>(buffer.empty)].name;
  if (stage.fills != view.fill)
    return fail_report(at, fmt::format("race: {} by agent '{}' reads {} ({}[{}] fill {}), which fill {} has overwritten",
                                       reader, agent.name, name, buffer.name, view.slot, view.fill, stage.fills));
  auto released = agent.released.find({view.buffer, view.slot});
  if (released != agent.released.end() && released->second == view.fill)
    return fail_report(at, fmt::format("race: {} by agent '{}' reads {} ({}[{}] fill {}) after the agent released it "
                                       "(arrived on {}[{}])", reader, agent.name, name, buffer.name, view.slot,
                                       view.fill, empty_name, view.slot));
  if (!mma_operand && agent.issuer_observed.count({buffer.full, view.slot}))
    return fail_report(at, fmt::format("race: {} by agent '{}' reads {} ({}[{}] fill {}), whose full barrier only the "
                                       "MMA issuer waited for (an `issuer` mbarrier_wait); only an mma may read it",
                                       reader, agent.name, name, buffer.name, view.slot, view.fill));
  return true;
}

// Async mmas: each reads its stage operands until an mma_wait retires it (docs/ir.md,
// "Asynchronous MMAs").
bool TileExecution::issue_async_mma(const Operation& op, TileValue result) {
  AgentState& agent = cta_->agents[agent_];
  InFlightMma mma{&op, agent.issued, {}};
  for (size_t i = 0; i < 2; ++i)
    if (const RuntimeValue* value = lookup(op.operand(i)); value && value->view.buffer >= 0)
      mma.reads.push_back({value->view, view_name(op.operand(i))});
  if (!set_result(op, std::move(result))) return false;
  values_[op.result()].mma_number = agent.issued++;
  agent.in_flight.push_back(std::move(mma));
  return true;
}

bool TileExecution::execute_mma_wait(const Operation& op) {
  const int64_t pending = op.int_attr("pending", -1);
  if (pending < 0) return fail(op, "needs an integer 'pending' >= 0");
  AgentState& agent = cta_->agents[agent_];
  while (static_cast<int64_t>(agent.in_flight.size()) > pending) {
    InFlightMma mma = std::move(agent.in_flight.front());
    agent.in_flight.pop_front();
    agent.retired = mma.number + 1;
    std::string reader = fmt::format("the async 'mma' at {}:{}, retired by this mma_wait,", mma.op->location().line,
                                     mma.op->location().column);
    for (const auto& [view, name] : mma.reads)
      if (!check_view_read(reader, op.location(), view, name, true)) return false;
  }
  return true;
}

bool TileExecution::check_in_flight_reads(const Operation& op) {
  const AgentState& agent = cta_->agents[agent_];
  if (agent.in_flight.empty()) return true;  // every async mma's result is ready
  for (size_t i = 0; i < op.num_operands(); ++i) {
    if ((op.kind() == OpKind::mma && i == 2) || (op.kind() == OpKind::for_ && i >= 3)) continue;
    const RuntimeValue* value = lookup(op.operand(i));
    if (value && value->mma_number >= agent.retired)
      return fail_report(op.location(),
                         fmt::format("race: '{}' by agent '{}' reads {}, the result of an async mma still in flight "
                                     "(no mma_wait has retired it)", op.name(), agent.name,
                                     op.operand(i)->name_hint().empty() ? std::string("a value")
                                                                        : "%" + op.operand(i)->name_hint()));
  }
  return true;
}

}  // namespace tilec::runtime::detail
