// passes/defer_mma_releases.cpp — the defer-mma-releases pass (see the header).
//
// Phases, per kernel (only when the target's MMAs are waited for in groups):
//   1. Every mma inside an agent gets `async`, and `mma_wait {pending = 0}` right after it.
//   2. Each such mma directly in a `for` body qualifies for deferral when A is a stage_read of a
//      buffer at least 2 slots deep and B is one too or computed (a value an op defines: the
//      tensor-core backend writes it into staging of its own, two buffers when the mma is
//      deferred), its accumulator is a region argument of that loop that only the mma reads, its
//      result is used only by the loop's yield, and the body arrives on the buffers' empty
//      barriers for the slots read, after the mma.
//   3. Per loop with qualifying mmas: their waits become `pending = 1`; for each distinct arrive
//      they release by (two mmas may share A), the loop carries a `held` slot (seeded with -1),
//      the arrive becomes `if held >= 0 { arrive held }` and the yield carries the slot just
//      read; after the loop, `mma_wait {pending = 0}` and the same guarded arrive of each held
//      slot the loop gives.
// Invariants kept: results are unchanged (the mmas' values are the same; the interpreter retires
// an async mma at the mma_wait that lets it go and checks its stage reads there, so a release
// before that point is reported as a race). With both buffers at least 2 slots deep, the
// producer never needs the one slot each still held to fill the next, so no wait can deadlock.
// Cost: O(ops) per kernel.
#include "passes/defer_mma_releases.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/target.h"
#include "ir/attribute_keys.h"
#include "ir/builder.h"
#include "ir/ir.h"
#include "passes/agent_of.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

Type index_type() { return Type::scalar(ScalarKind::index); }

// A stage slot an mma operand reads: the stage_read, the buffer's empty barrier and depth.
struct StageOperand {
  Operation* read;
  Value* empty;
  int64_t depth;
};

std::optional<StageOperand> stage_operand(Value* operand) {
  Operation* read = operand->defining_op();
  if (!read || read->kind() != OpKind::stage_read) return std::nullopt;
  Operation* buffer = read->operand(0)->defining_op();
  if (!buffer || buffer->kind() != OpKind::stage_buffer) return std::nullopt;
  return StageOperand{read, buffer->operand(1), read->operand(0)->type().depth()};
}

// The arrives after `mma` in its loop body that release the slots its A and B read, or none when
// the mma does not qualify for deferral (phase 2).
std::vector<Operation*> deferrable_releases(Operation& mma) {
  Operation* loop = mma.parent_op();
  if (!loop || loop->kind() != OpKind::for_) return {};
  Region& body = loop->region();
  std::optional<StageOperand> a = stage_operand(mma.operand(0)), b = stage_operand(mma.operand(1));
  // B a stage_read, or computed (a dequantized weight, which the tensor-core backend writes into
  // staging of its own where the mma is: a register value here, read when the mma is issued).
  const bool computed_b = !b && mma.operand(1)->defining_op() != nullptr;
  if (!a || a->depth < 2 || (!computed_b && (!b || b->depth < 2))) return {};
  // Only a loop-carried accumulator nothing else reads may stay in flight across iterations.
  if (mma.operand(2)->owner_region() != &body) return {};
  int uses = 0;
  bool yielded = false;
  walk(body, [&](Operation& op) {
    for (size_t i = 0; i < op.num_operands(); ++i)
      if (op.operand(i) == mma.result()) {
        ++uses;
        yielded = yielded || &op == body.terminator();
      }
  });
  if (uses != 1 || !yielded) return {};
  // Nor may anything else read the accumulator the loop carries in (the previous iteration's
  // result, still in flight when deferred): a state read before its own update, as chunked linear
  // attention's `mma(cast(state, bf16), ...)` then `state = mma(..., state)`.
  int reads = 0;
  walk(body, [&](Operation& op) {
    for (size_t i = 0; i < op.num_operands(); ++i) reads += op.operand(i) == mma.operand(2) ? 1 : 0;
  });
  if (reads != 1) return {};
  std::vector<Operation*> arrives;
  for (size_t i = body.position_of(&mma) + 1; i < body.operations().size(); ++i) {
    Operation& op = *body.operations()[i];
    if (op.kind() != OpKind::mbarrier_arrive) continue;
    std::vector<StageOperand> operands{*a};
    if (b) operands.push_back(*b);
    for (const StageOperand& operand : operands)
      if (op.operand(0) == operand.empty && op.operand(1) == operand.read->operand(1)) {
        arrives.push_back(&op);
        break;
      }
  }
  if (arrives.size() != (b ? 2u : 1u)) return {};
  return arrives;
}

// At the builder's insertion point: `if (slot >= 0) { mbarrier_arrive empty, slot }`.
void arrive_if_held(Builder& builder, Value* empty, Value* slot, Value* zero) {
  Value* held = builder.create(OpKind::cmp, {slot, zero}, {Type::scalar(ScalarKind::i1)},
                               {{"predicate", Attribute("ge")}})->result();
  Operation* guard = builder.create(OpKind::if_, {held}, {});
  Builder then_builder(&guard->region(0));
  then_builder.set_location(builder.location());
  then_builder.create(OpKind::mbarrier_arrive, {empty, slot}, {});
  then_builder.create(OpKind::yield, {}, {});
  Builder else_builder(&guard->region(1));
  else_builder.set_location(builder.location());
  else_builder.create(OpKind::yield, {}, {});
}

// Phase 3 for one loop: its deferred mmas' waits and the arrives that release their slots (each
// once, in body order). An arrive comes after every mma reading its slot, so when it runs again
// one iteration later, an mma of that iteration and its wait (pending = 1) have retired every
// mma of the iteration before.
void defer(Operation& loop, const std::vector<Operation*>& waits, const std::vector<Operation*>& arrives) {
  Region& body = loop.region();
  Region& outer = *loop.parent_region();
  for (Operation* wait : waits) wait->set_attr("pending", Attribute(int64_t{1}));

  Builder before(&outer);
  before.set_location(loop.location());
  before.set_insertion_point(&outer, outer.position_of(&loop));
  Value* none = before.constant_index(-1);
  Value* zero = before.constant_index(0);

  std::vector<std::pair<Value*, Value*>> held_after;  // (empty barrier, the loop's held slot)
  for (Operation* arrive : arrives) {
    Value* empty = arrive->operand(0);
    Value* slot = arrive->operand(1);
    std::string name = empty->name_hint().empty() ? "held" : empty->name_hint() + "_held";
    loop.add_operand(none);
    Value* held = body.add_argument(index_type(), name);
    Value* result = loop.add_result(index_type());
    result->set_name_hint(name);
    held_after.push_back({empty, result});
    body.terminator()->add_operand(slot);

    const size_t at = body.position_of(arrive);
    Builder inside(&body);
    inside.set_location(arrive->location());
    inside.set_insertion_point(&body, at);
    body.take(at);  // the arrive, replaced by the guarded arrive of the held slot
    arrive_if_held(inside, empty, held, zero);
  }

  Builder after(&outer);
  after.set_location(loop.location());
  after.set_insertion_point(&outer, outer.position_of(&loop) + 1);
  after.create(OpKind::mma_wait, {}, {}, {{"pending", Attribute(int64_t{0})}});
  for (const auto& [empty, held] : held_after) arrive_if_held(after, empty, held, zero);
}

void defer_kernel(Region& body) {
  std::vector<Operation*> mmas;
  walk(body, [&](Operation& op) {
    if (op.kind() == OpKind::mma && enclosing_agent(op)) mmas.push_back(&op);
  });
  // Phase 1, and phase 2 per loop (before any loop is rewritten).
  std::vector<Operation*> loops;
  std::map<Operation*, std::vector<Operation*>> waits, arrives;  // per loop
  for (Operation* mma : mmas) {
    mma->set(attr::async);
    Region& region = *mma->parent_region();
    Builder builder(&region);
    builder.set_location(mma->location());
    builder.set_insertion_point(&region, region.position_of(mma) + 1);
    Operation* wait = builder.create(OpKind::mma_wait, {}, {}, {{"pending", Attribute(int64_t{0})}});
    std::vector<Operation*> releases = deferrable_releases(*mma);
    if (releases.empty()) continue;
    Operation* loop = mma->parent_op();
    if (!waits.count(loop)) loops.push_back(loop);
    waits[loop].push_back(wait);
    for (Operation* arrive : releases)
      if (std::find(arrives[loop].begin(), arrives[loop].end(), arrive) == arrives[loop].end())
        arrives[loop].push_back(arrive);
  }
  for (Operation* loop : loops) {
    std::vector<Operation*>& releases = arrives[loop];
    std::sort(releases.begin(), releases.end(), [&](Operation* x, Operation* y) {
      return loop->region().position_of(x) < loop->region().position_of(y);
    });
    defer(*loop, waits[loop], releases);  // phase 3
  }
}

}  // namespace

bool defer_mma_releases(Module& module, PassContext& ctx) {
  if (ctx.target.mma != target::MmaFamily::wgmma) return true;
  for (auto& kernel : module.kernels()) defer_kernel(kernel->region());
  return true;
}

}  // namespace tilec
