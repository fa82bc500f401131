// tests/passes/reorder_events_properties_test.cpp — property tests of the reorder-events pass on
// random kernels built with the IR builder: straight-line (loads, elementwise ops, stores) and
// with `for` loops (that use outer tiles, load, store and carry a tile) and `if`s.
// For each kernel, each of its regions and a small random event limit:
//   - the pass succeeds and the module verifies;
//   - every dependence of the original order holds, checked here from the IR alone: a use (also
//     inside a loop) after its definition, accesses to one tensor where one is a store in their
//     order, loops in their order, nothing across grid_ids;
//   - the peaks recounted by check_order on a segment built here are within the limit whenever
//     the pass did not warn (and program order was over the limit whenever it did);
//   - the interpreter gives identical outputs before and after;
//   - the pass is deterministic (two copies give the same text).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <set>

#include "ir/builder.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "pass_test_support.h"
#include "passes/pass_manager.h"
#include "passes/reorder/check_order.h"
#include "passes/reorder_events_pass.h"

namespace tilec::testing {
namespace {

constexpr int kRows = 3;        // grid tiles; tile i touches row i only, so tiles never race
constexpr int kColumnTiles = 4;
constexpr int kTileWidth = 8;

// Builds a random kernel: after grid_ids, loads, elementwise ops and stores, and (with
// `loops`) `for` loops whose bodies use outer tiles and carry one tile, and `if`s. Same seed, same kernel.
class RandomKernelBuilder {
 public:
  RandomKernelBuilder(uint32_t seed, bool loops) : random_(seed), loops_(loops) {}

  std::unique_ptr<Module> build(int length) {
    auto module = std::make_unique<Module>();
    module->attributes()["source"] = Attribute("random.tir");
    module->attributes()["passes"] = Attribute(Attribute::Array{Attribute("parse"), Attribute("fold-constants")});
    auto kernel = std::make_unique<Operation>(OpKind::kernel, Location{1, 1});
    kernel->set_attr("sym_name", "random");
    Region& body = kernel->add_region();
    const Type tensor = Type::tensor({Dim::fixed(kRows), Dim::fixed(kColumnTiles * kTileWidth)}, ScalarKind::f32);
    for (const char* name : {"X0", "X1", "Y0", "Y1"}) tensors_.push_back(body.add_argument(tensor, name));
    Builder builder(&body);
    at(builder);
    Value* rows = builder.constant_index(kRows);
    at(builder);
    row_ = builder.create(OpKind::grid_ids, {rows}, {Type::scalar(ScalarKind::index)}, {{"schedule", "tiles"}})->result();
    for (int column = 0; column < kColumnTiles; ++column) {
      at(builder);
      columns_.push_back(builder.constant_index(column));
    }
    std::vector<Value*> tiles;
    emit_ops(builder, length, tiles, /*nested=*/false);
    // Every output gets at least one store so both have something to compare.
    for (int output = 2; output < 4; ++output) {
      at(builder);
      builder.create(OpKind::store, {tensors_[output], row_, columns_[0], tiles.back()}, {});
    }
    at(builder);
    builder.create(OpKind::return_, {}, {});
    module->kernels().push_back(std::move(kernel));
    return module;
  }

 private:
  int pick(int bound) { return static_cast<int>(random_() % static_cast<uint32_t>(bound)); }
  Value* any(const std::vector<Value*>& values) { return values[pick(static_cast<int>(values.size()))]; }
  void at(Builder& builder) { builder.set_location({line_++, 3}); }

  void emit_ops(Builder& builder, int count, std::vector<Value*>& tiles, bool nested) {
    const Type tile = Type::tile({1, kTileWidth}, ScalarKind::f32);
    const OpKind unary[] = {OpKind::neg, OpKind::relu, OpKind::exp};
    const OpKind binary[] = {OpKind::add, OpKind::sub, OpKind::mul, OpKind::max, OpKind::min};
    for (int step = 0; step < count; ++step) {
      at(builder);
      int choice = tiles.empty() ? 0 : pick(loops_ && !nested ? 12 : 10);
      if (choice < 4) {  // load (the stored-to Y tensors too: read after write)
        tiles.push_back(builder.create(OpKind::load, {any(tensors_), row_, any(columns_)}, {tile})->result());
      } else if (choice < 6) {
        tiles.push_back(builder.create(unary[pick(3)], {any(tiles)}, {tile})->result());
      } else if (choice < 9) {
        Value* left = any(tiles);
        Value* right = any(tiles);
        tiles.push_back(builder.create(binary[pick(5)], {left, right}, {tile})->result());
      } else if (choice == 9) {  // store, mostly to the outputs, sometimes over an input
        Value* target = tensors_[pick(5) == 0 ? pick(2) : 2 + pick(2)];
        builder.create(OpKind::store, {target, row_, any(columns_), any(tiles)}, {});
      } else if (choice == 11) {  // if row < c, each branch computing a tile from outer tiles
        Value* condition = builder.create(OpKind::cmp, {row_, any(columns_)}, {Type::scalar(ScalarKind::i1)},
                                          {{"predicate", "lt"}})->result();
        at(builder);
        Operation* branch = builder.create(OpKind::if_, {condition}, {tile});
        for (size_t index = 0; index < 2; ++index) {
          Builder inner(&branch->region(index));
          std::vector<Value*> visible = tiles;
          emit_ops(inner, 1 + pick(4), visible, /*nested=*/true);
          at(inner);
          inner.create(OpKind::yield, {visible.back()}, {});
        }
        tiles.push_back(branch->result());
      } else {  // for k in 0 .. c (0 to 3 trips) carrying one tile; the body sees outer tiles
        Operation* loop = builder.create(OpKind::for_, {columns_[0], any(columns_), columns_[1], any(tiles)}, {tile});
        Region& body = loop->region(0);
        body.add_argument(Type::scalar(ScalarKind::index), "k");
        Value* carried = body.add_argument(tile, "carried");
        Builder inner(&body);
        std::vector<Value*> visible = tiles;
        visible.push_back(carried);
        emit_ops(inner, 1 + pick(5), visible, /*nested=*/true);
        at(inner);
        inner.create(OpKind::yield, {visible.back()}, {});
        tiles.push_back(loop->result());
      }
    }
  }

  std::mt19937 random_;
  bool loops_;
  uint32_t line_ = 2;
  std::vector<Value*> tensors_, columns_;
  Value* row_ = nullptr;
};

// What an op (with everything nested in it) reads and writes, derived here from the IR.
struct Effects {
  std::set<const Value*> uses;     // values from outside the op
  std::set<const Value*> loads;    // tensors read
  std::set<const Value*> stores;   // tensors written
};

void collect_effects(const Operation& op, Effects& effects, std::set<const Value*>& inside) {
  for (const Value* operand : op.operands()) effects.uses.insert(operand);
  if (op.kind() == OpKind::load || op.kind() == OpKind::tma_load) effects.loads.insert(op.operand(0));
  if (op.kind() == OpKind::store) effects.stores.insert(op.operand(0));
  for (size_t index = 0; index < op.num_regions(); ++index) {
    const Region& region = op.region(index);
    for (size_t argument = 0; argument < region.num_arguments(); ++argument) inside.insert(region.argument(argument));
    for (const auto& nested : region.operations()) {
      for (size_t result = 0; result < nested->num_results(); ++result) inside.insert(nested->result(result));
      collect_effects(*nested, effects, inside);
    }
  }
}

Effects effects_of(const Operation& op) {
  Effects effects;
  std::set<const Value*> inside;
  collect_effects(op, effects, inside);
  std::erase_if(effects.uses, [&](const Value* value) { return inside.count(value) != 0; });
  return effects;
}

bool intersects(const std::set<const Value*>& a, const std::set<const Value*>& b) {
  for (const Value* value : a)
    if (b.count(value)) return true;
  return false;
}

// The segment of a region's ops, built here from the op table and Effects (not by the pass).
reorder::Segment make_segment(const std::vector<Operation*>& ops, std::map<const Value*, int>& numbers) {
  auto id = [&](const Value* value, char prefix) {
    auto [it, inserted] = numbers.try_emplace(value, static_cast<int>(numbers.size()));
    return prefix + std::to_string(it->second);
  };
  reorder::Segment segment;
  for (const Operation* op : ops) {
    if (op->info().has(kTerminator)) continue;
    reorder::Statement statement;
    statement.name = std::string(op->name()) + std::to_string(segment.statements.size());
    statement.pipe = op->info().regions > 0 ? reorder::Pipe::SIMT : *reorder::parse_pipe(to_string(op->info().pipe));
    Effects effects = effects_of(*op);
    for (const Value* used : effects.uses) statement.reads.push_back(id(used, 'v'));
    for (const Value* tensor : effects.loads) statement.reads.push_back(id(tensor, 'm'));
    for (size_t result = 0; result < op->num_results(); ++result) statement.writes.push_back(id(op->result(result), 'v'));
    for (const Value* tensor : effects.stores) statement.writes.push_back(id(tensor, 'm'));
    if (op->info().regions > 0) statement.kind = reorder::StatementKind::control;
    if (op->kind() == OpKind::grid_ids) statement.kind = reorder::StatementKind::barrier;
    segment.statements.push_back(std::move(statement));
  }
  return segment;
}

// The first dependence of `original` that `reordered` breaks, or empty.
std::string find_broken_dependence(const std::vector<Operation*>& original, const std::vector<Operation*>& reordered) {
  std::map<const Operation*, size_t> position;
  for (size_t index = 0; index < reordered.size(); ++index) position[reordered[index]] = index;
  std::vector<Effects> effects;
  for (const Operation* op : original) effects.push_back(effects_of(*op));
  for (size_t later = 0; later < original.size(); ++later) {
    const Operation* consumer = original[later];
    for (size_t earlier = 0; earlier < later; ++earlier) {
      const Operation* producer = original[earlier];
      bool uses = false;
      for (size_t result = 0; result < producer->num_results(); ++result) uses |= effects[later].uses.count(producer->result(result)) != 0;
      bool memory = intersects(effects[earlier].stores, effects[later].stores) ||
                    intersects(effects[earlier].stores, effects[later].loads) ||
                    intersects(effects[earlier].loads, effects[later].stores);
      bool barrier = producer->kind() == OpKind::grid_ids || consumer->kind() == OpKind::grid_ids;
      bool control = producer->num_regions() > 0 && consumer->num_regions() > 0;
      if ((uses || memory || barrier || control || consumer->info().has(kTerminator)) &&
          position[producer] > position[consumer])
        return fmt::format("{} (line {}) now runs after {} (line {})", producer->name(), producer->location().line,
                           consumer->name(), consumer->location().line);
    }
  }
  return {};
}

// Every region under `kernel` with its ops in program order.
std::vector<std::pair<const Region*, std::vector<Operation*>>> region_orders(const Operation& kernel) {
  std::vector<std::pair<const Region*, std::vector<Operation*>>> regions;
  std::vector<const Region*> pending{&kernel.region(0)};
  while (!pending.empty()) {
    const Region* region = pending.back();
    pending.pop_back();
    std::vector<Operation*> ops;
    for (const auto& op : region->operations()) {
      ops.push_back(op.get());
      for (size_t index = 0; index < op->num_regions(); ++index) pending.push_back(&op->region(index));
    }
    regions.emplace_back(region, std::move(ops));
  }
  return regions;
}

// Counts of what the random kernels exercised.
struct Coverage {
  int reordered = 0, warned = 0, fitted_after_reorder = 0, loops = 0, branches = 0;
};

void check_random_kernels(bool loops, Coverage& coverage) {
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + (loops ? " with loops" : ""));
    std::mt19937 random(seed * 7919u);
    const int length = 4 + static_cast<int>(random() % 36);
    const int max_events = 1 + static_cast<int>(random() % 3);
    std::unique_ptr<Module> before = RandomKernelBuilder(seed, loops).build(length);
    std::unique_ptr<Module> after = RandomKernelBuilder(seed, loops).build(length);
    std::unique_ptr<Module> again = RandomKernelBuilder(seed, loops).build(length);
    DiagnosticEngine check_diagnostics;
    ASSERT_TRUE(verify_module(*before, check_diagnostics)) << check_diagnostics.render_all();

    auto original = region_orders(*after->kernels()[0]);
    DiagnosticEngine diagnostics, diagnostics_again;
    PassContext ctx{diagnostics}, ctx_again{diagnostics_again};
    ctx.max_events = ctx_again.max_events = max_events;
    ASSERT_TRUE(reorder_events(*after, ctx)) << diagnostics.render_all();
    ASSERT_TRUE(reorder_events(*again, ctx_again));
    ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.render_all();
    EXPECT_EQ(print_module(*after), print_module(*again));
    ASSERT_TRUE(verify_module(*after, check_diagnostics)) << check_diagnostics.render_all();

    for (const auto& [region, ops] : original) {
      std::vector<Operation*> now;
      for (const auto& op : region->operations()) now.push_back(op.get());
      EXPECT_EQ(find_broken_dependence(ops, now), "");
      if (const Operation* owner = region->parent_op(); owner && owner->kind() == OpKind::for_) ++coverage.loops;
      if (const Operation* owner = region->parent_op(); owner && owner->kind() == OpKind::if_) ++coverage.branches;

      // Recount the peaks with the engine's independent checker, on a segment built here.
      std::map<const Value*, int> numbers;
      reorder::Segment segment = make_segment(ops, numbers);
      reorder::DependenceGraph graph = reorder::compute_dependences(segment);
      std::map<const Operation*, int> original_index;
      for (size_t index = 0; index < ops.size(); ++index) original_index[ops[index]] = static_cast<int>(index);
      std::vector<int> order, program_order(segment.statements.size());
      std::iota(program_order.begin(), program_order.end(), 0);
      for (const Operation* op : now)
        if (!op->info().has(kTerminator)) order.push_back(original_index[op]);
      reorder::OrderCheck check = reorder::check_order(segment, graph, order);
      ASSERT_TRUE(check.valid) << check.problem;
      reorder::OrderCheck original_check = reorder::check_order(segment, graph, program_order);
      // Op lines are unique, so a warning belongs to the region holding an op on its line.
      bool warning = false;
      for (const Diagnostic& diagnostic : diagnostics.diagnostics())
        for (const Operation* op : ops) warning |= op->location().line == diagnostic.location.line;
      if (warning) {
        EXPECT_GT(original_check.max_peak, max_events);
        EXPECT_GT(check.max_peak, max_events);  // a warning only for a real excess
        ++coverage.warned;
      } else {
        EXPECT_LE(check.max_peak, max_events);
        if (original_check.max_peak > max_events) ++coverage.fitted_after_reorder;
      }
      if (order != program_order) ++coverage.reordered;
      if (original_check.max_peak <= max_events) {
        EXPECT_EQ(order, program_order) << "an order that fits is kept";
      }
    }

    EXPECT_EQ(compare_runs(*before->kernels()[0], *after->kernels()[0], seed), "");
  }
}

TEST(ReorderEventsProperties, RandomStraightLineKernels) {
  Coverage coverage;
  check_random_kernels(/*loops=*/false, coverage);
  // The generator exercises every branch of the pass.
  EXPECT_GT(coverage.reordered, 10);
  EXPECT_GT(coverage.warned, 3);
  EXPECT_GT(coverage.fitted_after_reorder, 3);
}

TEST(ReorderEventsProperties, RandomKernelsWithLoopsAndIfsKeepTheirSummaries) {
  Coverage coverage;
  check_random_kernels(/*loops=*/true, coverage);
  EXPECT_GT(coverage.loops, 30);
  EXPECT_GT(coverage.branches, 30);
  EXPECT_GT(coverage.reordered, 10);
  EXPECT_GT(coverage.fitted_after_reorder, 3);
}

}  // namespace
}  // namespace tilec::testing
