// passes/sync/lower_pipes.cpp — insert-sync phase 3: pipes become mbarriers and stage buffers.
//
// Notation: a pipe p of depth D; its producer state (pi, pph) starts at (0, 1), its consumer
// state (ci, cph) at (0, 0) (docs/ir.md, "Synchronization").
//   1. `%p = pipe_create` → `%p_full = mbarrier_create {count = D, arrivals = 1}`,
//      `%p_empty = mbarrier_create {count = D, arrivals = 1}` (one consumer agent: warp
//      specialization runs later), `%p_buffer = stage_buffer %p_full, %p_empty`, and the
//      constants 0 and 1 that start both states.
//   2. Walk the kernel in program order keeping the current value of every state:
//      acquire → mbarrier_wait empty[pi], pph;
//      commit of a tma_load's value used nowhere else → mbarrier_arrive full[pi] {expect_tx =
//      payload bytes}, tma_load_async into slot pi (the tma_load goes away); any other commit →
//      stage_write slot pi, mbarrier_arrive full[pi]; then (pi, pph) = stage_advance;
//      wait → mbarrier_wait full[ci], cph and stage_read slot ci (replacing the waited value);
//      release → mbarrier_arrive empty[ci], then (ci, cph) = stage_advance.
//   3. A `for` whose body uses a state of a pipe created outside it carries that state: one
//      init operand, region argument, yield operand and result per index and per phase. An
//      `if` yields the state out of both regions. Pipe ops under any other region op
//      (warp_specialize) are an error.
// Every new op carries the `stage` and `order` of the pipe op it replaces, and its location.
// Assumes: the module verifies; per pipe, waits and releases alternate (each release frees the
// slot of the wait before it). Cost: O(ops · pipes) (the per-op state sets), plus one
// replace-all-uses walk per consumer wait.
#include <fmt/core.h>

#include <map>
#include <optional>
#include <set>

#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "passes/sync/sync_parts.h"

namespace tilec {

namespace {

enum Side { kProducer = 0, kConsumer = 1 };

struct PipeState {
  Value* index = nullptr;
  Value* phase = nullptr;
};

struct LoweredPipe {
  Value* full = nullptr;
  Value* empty = nullptr;
  Value* buffer = nullptr;
  int64_t depth = 1;
  Type payload;
  std::string name;
};

bool is_pipe_use(OpKind kind) {
  return kind == OpKind::pipe_producer_acquire || kind == OpKind::pipe_producer_commit ||
         kind == OpKind::pipe_consumer_wait || kind == OpKind::pipe_consumer_release;
}

Side side_of(OpKind kind) {
  return kind == OpKind::pipe_producer_acquire || kind == OpKind::pipe_producer_commit ? kProducer : kConsumer;
}

class PipeLowering {
 public:
  PipeLowering(Operation& kernel, DiagnosticEngine& diagnostics) : kernel_(kernel), diagnostics_(diagnostics) {}

  bool run() {
    walk(kernel_.region(), [&](Operation& op) {
      if (op.kind() == OpKind::pipe_create) {
        numbers_[op.result()] = static_cast<int>(creates_.size());
        creates_.push_back(&op);
      }
    });
    if (creates_.empty()) return true;
    pipes_.resize(creates_.size());
    std::vector<PipeState> states(creates_.size() * 2);
    if (!process(kernel_.region(), states)) return false;
    for (Operation* create : creates_) {
      Region* region = create->parent_region();
      region->take(region->position_of(create));
    }
    return true;
  }

 private:
  static int key(int pipe, Side side) { return pipe * 2 + side; }

  // The states used under `op` that belong to pipes created outside it, sorted.
  std::vector<int> carried_states(Operation& op) {
    std::set<int> used;
    std::set<int> created_inside;
    for (size_t index = 0; index < op.num_regions(); ++index) {
      walk(op.region(index), [&](Operation& inner) {
        if (inner.kind() == OpKind::pipe_create) created_inside.insert(numbers_.at(inner.result()));
        if (is_pipe_use(inner.kind())) used.insert(key(numbers_.at(inner.operand(0)), side_of(inner.kind())));
      });
    }
    std::vector<int> carried;
    for (int state : used)
      if (!created_inside.count(state / 2)) carried.push_back(state);
    return carried;
  }

  Operation* create(Builder& builder, const Operation& original, OpKind kind, const std::vector<Value*>& operands,
                    const std::vector<Type>& types, std::vector<std::pair<std::string, Attribute>> attributes = {}) {
    for (const char* copied : {attr::stage.name, attr::order.name})
      if (const Attribute* value = original.attr(copied)) attributes.emplace_back(copied, *value);
    return builder.create(kind, operands, types, std::move(attributes));
  }

  bool process(Region& region, std::vector<PipeState>& states) {
    const Type index_type = Type::scalar(ScalarKind::index);
    for (size_t position = 0; position < region.operations().size(); ++position) {
      Operation& op = *region.operations()[position];
      Builder builder(&region);
      builder.set_insertion_point(&region, position);
      builder.set_location(op.location());

      if (op.kind() == OpKind::pipe_create) {
        const int number = numbers_.at(op.result());
        LoweredPipe& pipe = pipes_[number];
        pipe.depth = op.result()->type().depth();
        pipe.payload = op.result()->type().payload();
        pipe.name = op.result()->name_hint().empty() ? "pipe" : op.result()->name_hint();
        builder.set_insertion_point(&region, position + 1);
        pipe.full = create(builder, op, OpKind::mbarrier_create, {}, {Type::mbarrier()},
                           {{"arrivals", Attribute(int64_t{1})}, {"count", Attribute(pipe.depth)}})->result();
        pipe.empty = create(builder, op, OpKind::mbarrier_create, {}, {Type::mbarrier()},
                            {{"arrivals", Attribute(int64_t{1})}, {"count", Attribute(pipe.depth)}})->result();
        pipe.buffer = create(builder, op, OpKind::stage_buffer, {pipe.full, pipe.empty}, {op.result()->type()})->result();
        Value* zero = builder.constant_index(0);
        Value* one = builder.constant_index(1);
        pipe.full->set_name_hint(pipe.name + "_full");
        pipe.empty->set_name_hint(pipe.name + "_empty");
        pipe.buffer->set_name_hint(pipe.name + "_buffer");
        states[key(number, kProducer)] = {zero, one};
        states[key(number, kConsumer)] = {zero, zero};
        position += 5;  // the create stays until the end; skip what was inserted after it
        continue;
      }

      if (is_pipe_use(op.kind())) {
        const int number = numbers_.at(op.operand(0));
        position = lower_use(region, position, op, pipes_[number], states[key(number, side_of(op.kind()))]);
        continue;
      }

      if (op.num_regions() == 0) continue;
      std::vector<int> carried = carried_states(op);
      if (op.kind() == OpKind::for_) {
        Region& body = op.region();
        std::vector<PipeState> inner = states;
        for (int state : carried) {
          op.add_operand(states[state].index);
          op.add_operand(states[state].phase);
          inner[state].index = body.add_argument(index_type, state_name(state, "index"));
          inner[state].phase = body.add_argument(index_type, state_name(state, "phase"));
        }
        if (!process(body, inner)) return false;
        carry_out(op, body, carried, inner, states);
      } else if (op.kind() == OpKind::if_) {
        std::vector<PipeState> then_states = states;
        std::vector<PipeState> else_states = states;
        if (!process(op.region(0), then_states) || !process(op.region(1), else_states)) return false;
        for (int state : carried) {
          Operation* else_yield = op.region(1).terminator();
          else_yield->add_operand(else_states[state].index);
          else_yield->add_operand(else_states[state].phase);
        }
        carry_out(op, op.region(0), carried, then_states, states);
      } else if (!carried.empty()) {
        diagnostics_.error(op.location(), fmt::format("insert-sync: pipe ops inside a '{}' are not supported (pipes are "
                                                      "lowered before warp specialization)", op.name()));
        return false;
      } else {
        std::vector<PipeState> inner = states;
        for (size_t index = 0; index < op.num_regions(); ++index)
          if (!process(op.region(index), inner)) return false;
      }
    }
    return true;
  }

  // The states leave `op` through `region`'s yield and become op's new results.
  void carry_out(Operation& op, Region& region, const std::vector<int>& carried, const std::vector<PipeState>& inner,
                 std::vector<PipeState>& states) {
    const Type index_type = Type::scalar(ScalarKind::index);
    Operation* yield = region.terminator();
    for (int state : carried) {
      yield->add_operand(inner[state].index);
      yield->add_operand(inner[state].phase);
      Value* index = op.add_result(index_type);
      Value* phase = op.add_result(index_type);
      index->set_name_hint(state_name(state, "index"));
      phase->set_name_hint(state_name(state, "phase"));
      states[state] = {index, phase};
    }
  }

  std::string state_name(int state, const char* part) {
    return fmt::format("{}_{}_{}", pipes_[state / 2].name, state % 2 == kProducer ? "producer" : "consumer", part);
  }

  int count_uses(const Value* value) {
    int uses = 0;
    walk(kernel_.region(), [&](Operation& op) {
      for (Value* operand : op.operands()) uses += operand == value;
    });
    return uses;
  }

  void advance(Builder& builder, const Operation& original, const LoweredPipe& pipe, PipeState& state, Side side) {
    const Type index_type = Type::scalar(ScalarKind::index);
    Operation* next = create(builder, original, OpKind::stage_advance, {state.index, state.phase}, {index_type, index_type},
                             {{"count", Attribute(pipe.depth)}});
    const char* who = side == kProducer ? "producer" : "consumer";
    next->result(0)->set_name_hint(fmt::format("{}_{}_index", pipe.name, who));
    next->result(1)->set_name_hint(fmt::format("{}_{}_phase", pipe.name, who));
    state = {next->result(0), next->result(1)};
  }

  // Replaces the pipe op at `position` and returns the position of the last op inserted.
  size_t lower_use(Region& region, size_t position, Operation& op, const LoweredPipe& pipe, PipeState& state) {
    Builder builder(&region);
    builder.set_insertion_point(&region, position + 1);
    builder.set_location(op.location());
    size_t inserted = 0;
    switch (op.kind()) {
      case OpKind::pipe_producer_acquire:
        create(builder, op, OpKind::mbarrier_wait, {pipe.empty, state.index, state.phase}, {});
        inserted = 1;
        break;
      case OpKind::pipe_producer_commit: {
        Value* value = op.operand(1);
        Operation* load = value->defining_op();
        if (load && load->kind() == OpKind::tma_load && count_uses(value) == 1) {
          const int64_t bytes = pipe.payload.element_count() * byte_size(pipe.payload.element());
          create(builder, op, OpKind::mbarrier_arrive, {pipe.full, state.index}, {}, {{"expect_tx", Attribute(bytes)}});
          std::vector<Value*> operands{pipe.buffer, state.index};
          for (Value* operand : load->operands()) operands.push_back(operand);
          std::vector<std::pair<std::string, Attribute>> kept;
          if (load->has_attr("transposed")) kept.push_back({"transposed", Attribute()});  // B stored K-major
          if (load->has_attr("elements")) kept.push_back({"elements", Attribute()});  // element coordinates
          if (const Attribute* box = load->attr("box")) kept.push_back({"box", *box});  // through unit dimensions
          create(builder, *load, OpKind::tma_load_async, operands, {}, kept);
          Region* load_region = load->parent_region();
          size_t load_position = load_region->position_of(load);
          load_region->take(load_position);
          if (load_region == &region && load_position < position) --position;
          builder.set_insertion_point(&region, position + 3);
        } else {
          create(builder, op, OpKind::stage_write, {pipe.buffer, state.index, value}, {});
          create(builder, op, OpKind::mbarrier_arrive, {pipe.full, state.index}, {});
        }
        advance(builder, op, pipe, state, kProducer);
        inserted = 3;
        break;
      }
      case OpKind::pipe_consumer_wait: {
        create(builder, op, OpKind::mbarrier_wait, {pipe.full, state.index, state.phase}, {});
        Value* read = create(builder, op, OpKind::stage_read, {pipe.buffer, state.index}, {pipe.payload})->result();
        read->set_name_hint(op.result()->name_hint());
        replace_all_uses(kernel_.region(), op.result(), read);
        inserted = 2;
        break;
      }
      case OpKind::pipe_consumer_release:
        create(builder, op, OpKind::mbarrier_arrive, {pipe.empty, state.index}, {});
        advance(builder, op, pipe, state, kConsumer);
        inserted = 2;
        break;
      default: break;
    }
    region.take(position);  // the pipe op; what replaced it follows it
    return position + inserted - 1;
  }

  Operation& kernel_;
  DiagnosticEngine& diagnostics_;
  std::vector<Operation*> creates_;
  std::map<const Value*, int> numbers_;
  std::vector<LoweredPipe> pipes_;
};

}  // namespace

bool lower_pipes(Operation& kernel, DiagnosticEngine& diagnostics) {
  return PipeLowering(kernel, diagnostics).run();
}

}  // namespace tilec
