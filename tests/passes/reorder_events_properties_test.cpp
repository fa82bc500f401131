// tests/passes/reorder_events_properties_test.cpp — property tests of the reorder-events pass on
// random straight-line kernels (loads, elementwise ops, stores; built with the IR builder).
// For each kernel and a small random event limit:
//   - the pass succeeds and the module verifies;
//   - every dependence of the original order holds, checked here from the IR alone: a use after
//     its definition, accesses to one tensor where one is a store in their order, nothing across
//     grid_ids;
//   - the peaks recounted by check_order on a segment built here are within the limit whenever
//     the pass did not warn (and program order was over the limit whenever it did);
//   - the interpreter gives identical outputs before and after;
//   - the pass is deterministic (two copies give the same text).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>

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

// A kernel of `length` random ops after grid_ids, the same for the same seed.
std::unique_ptr<Module> make_random_module(uint32_t seed, int length) {
  std::mt19937 random(seed);
  auto pick = [&](int bound) { return static_cast<int>(random() % static_cast<uint32_t>(bound)); };
  auto module = std::make_unique<Module>();
  module->attributes()["source"] = Attribute("random.tir");
  module->attributes()["passes"] = Attribute(Attribute::Array{Attribute("parse"), Attribute("fold-constants")});
  auto kernel = std::make_unique<Operation>(OpKind::kernel, Location{1, 1});
  kernel->set_attr("sym_name", "random");
  Region& body = kernel->add_region();
  const Type tensor = Type::tensor({Dim::fixed(kRows), Dim::fixed(kColumnTiles * kTileWidth)}, ScalarKind::f32);
  const Type tile = Type::tile({1, kTileWidth}, ScalarKind::f32);
  std::vector<Value*> tensors;
  for (const char* name : {"X0", "X1", "Y0", "Y1"}) tensors.push_back(body.add_argument(tensor, name));

  Builder builder(&body);
  uint32_t line = 2;
  builder.set_location({line++, 3});
  Value* rows = builder.constant_index(kRows);
  builder.set_location({line++, 3});
  Value* row = builder.create(OpKind::grid_ids, {rows}, {Type::scalar(ScalarKind::index)}, {{"schedule", "tiles"}})->result();
  std::vector<Value*> columns;
  for (int column = 0; column < kColumnTiles; ++column) {
    builder.set_location({line++, 3});
    columns.push_back(builder.constant_index(column));
  }
  std::vector<Value*> tiles;
  const OpKind unary[] = {OpKind::neg, OpKind::relu, OpKind::exp};
  const OpKind binary[] = {OpKind::add, OpKind::sub, OpKind::mul, OpKind::max, OpKind::min};
  for (int step = 0; step < length; ++step) {
    builder.set_location({line++, 3});
    int choice = tiles.empty() ? 0 : pick(10);
    if (choice < 4) {  // load (the stored-to Y tensors too: read after write)
      tiles.push_back(builder.create(OpKind::load, {tensors[pick(4)], row, columns[pick(kColumnTiles)]}, {tile})->result());
    } else if (choice < 6) {
      tiles.push_back(builder.create(unary[pick(3)], {tiles[pick(static_cast<int>(tiles.size()))]}, {tile})->result());
    } else if (choice < 9) {
      Value* left = tiles[pick(static_cast<int>(tiles.size()))];
      Value* right = tiles[pick(static_cast<int>(tiles.size()))];
      tiles.push_back(builder.create(binary[pick(5)], {left, right}, {tile})->result());
    } else {  // store, mostly to the outputs, sometimes over an input
      Value* target = tensors[pick(5) == 0 ? pick(2) : 2 + pick(2)];
      builder.create(OpKind::store, {target, row, columns[pick(kColumnTiles)], tiles[pick(static_cast<int>(tiles.size()))]}, {});
    }
  }
  // Every output gets at least one store so both have something to compare.
  for (int output = 2; output < 4; ++output) {
    builder.set_location({line++, 3});
    builder.create(OpKind::store, {tensors[output], row, columns[0], tiles.back()}, {});
  }
  builder.set_location({line, 3});
  builder.create(OpKind::return_, {}, {});
  module->kernels().push_back(std::move(kernel));
  return module;
}

// The segment of a straight-line body, built here from the op table (not by the pass).
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
    statement.pipe = *reorder::parse_pipe(to_string(op->info().pipe));
    for (const Value* operand : op->operands()) statement.reads.push_back(id(operand, 'v'));
    for (size_t result = 0; result < op->num_results(); ++result) statement.writes.push_back(id(op->result(result), 'v'));
    if (op->kind() == OpKind::load) statement.reads.push_back(id(op->operand(0), 'm'));
    if (op->kind() == OpKind::store) statement.writes.push_back(id(op->operand(0), 'm'));
    if (op->kind() == OpKind::grid_ids) statement.kind = reorder::StatementKind::barrier;
    segment.statements.push_back(std::move(statement));
  }
  return segment;
}

// The first dependence of `original` that `reordered` breaks, or empty.
std::string find_broken_dependence(const std::vector<Operation*>& original, const std::vector<Operation*>& reordered) {
  std::map<const Operation*, size_t> position;
  for (size_t index = 0; index < reordered.size(); ++index) position[reordered[index]] = index;
  for (size_t later = 0; later < original.size(); ++later) {
    const Operation* consumer = original[later];
    for (size_t earlier = 0; earlier < later; ++earlier) {
      const Operation* producer = original[earlier];
      bool uses = false;
      for (const Value* operand : consumer->operands()) uses |= operand->defining_op() == producer;
      bool memory = producer->kind() != OpKind::grid_ids && consumer->kind() != OpKind::grid_ids &&
                    (producer->kind() == OpKind::store || consumer->kind() == OpKind::store) &&
                    (producer->kind() == OpKind::load || producer->kind() == OpKind::store) &&
                    (consumer->kind() == OpKind::load || consumer->kind() == OpKind::store) &&
                    producer->operand(0) == consumer->operand(0);
      bool barrier = producer->kind() == OpKind::grid_ids || consumer->kind() == OpKind::grid_ids;
      if ((uses || memory || barrier || consumer->info().has(kTerminator)) && position[producer] > position[consumer])
        return fmt::format("{} (line {}) now runs after {} (line {})", producer->name(), producer->location().line,
                           consumer->name(), consumer->location().line);
    }
  }
  return {};
}

TEST(ReorderEventsProperties, RandomStraightLineKernels) {
  int reordered = 0, warned = 0, fitted_after_reorder = 0;
  for (uint32_t seed = 1; seed <= 120; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 random(seed * 7919u);
    const int length = 4 + static_cast<int>(random() % 36);
    const int max_events = 1 + static_cast<int>(random() % 3);
    std::unique_ptr<Module> before = make_random_module(seed, length);
    std::unique_ptr<Module> after = make_random_module(seed, length);
    std::unique_ptr<Module> again = make_random_module(seed, length);
    DiagnosticEngine check_diagnostics;
    ASSERT_TRUE(verify_module(*before, check_diagnostics)) << check_diagnostics.render_all();

    std::vector<Operation*> original = body_ops(*after->kernels()[0]);
    DiagnosticEngine diagnostics, diagnostics_again;
    PassContext ctx{diagnostics}, ctx_again{diagnostics_again};
    ctx.max_events = ctx_again.max_events = max_events;
    ASSERT_TRUE(reorder_events(*after, ctx)) << diagnostics.render_all();
    ASSERT_TRUE(reorder_events(*again, ctx_again));
    ASSERT_FALSE(diagnostics.has_errors()) << diagnostics.render_all();
    EXPECT_EQ(print_module(*after), print_module(*again));
    ASSERT_TRUE(verify_module(*after, check_diagnostics)) << check_diagnostics.render_all();

    std::vector<Operation*> now = body_ops(*after->kernels()[0]);
    EXPECT_EQ(find_broken_dependence(original, now), "");

    // Recount the peaks with the engine's independent checker, on a segment built here.
    std::map<const Value*, int> numbers;
    reorder::Segment segment = make_segment(original, numbers);
    reorder::DependenceGraph graph = reorder::compute_dependences(segment);
    std::map<const Operation*, int> original_index;
    for (size_t index = 0; index < original.size(); ++index) original_index[original[index]] = static_cast<int>(index);
    std::vector<int> order, program_order(segment.statements.size());
    std::iota(program_order.begin(), program_order.end(), 0);
    for (const Operation* op : now)
      if (!op->info().has(kTerminator)) order.push_back(original_index[op]);
    reorder::OrderCheck check = reorder::check_order(segment, graph, order);
    ASSERT_TRUE(check.valid) << check.problem;
    reorder::OrderCheck original_check = reorder::check_order(segment, graph, program_order);
    bool warning = !diagnostics.diagnostics().empty();
    if (warning) {
      EXPECT_GT(original_check.max_peak, max_events);
      EXPECT_GT(check.max_peak, max_events);  // a warning only for a real excess
      ++warned;
    } else {
      EXPECT_LE(check.max_peak, max_events);
      if (original_check.max_peak > max_events) ++fitted_after_reorder;
    }
    if (order != program_order) ++reordered;
    if (original_check.max_peak <= max_events) EXPECT_EQ(order, program_order) << "an order that fits is kept";

    EXPECT_EQ(compare_runs(*before->kernels()[0], *after->kernels()[0], seed), "");
  }
  // The generator exercises every branch of the pass.
  EXPECT_GT(reordered, 10);
  EXPECT_GT(warned, 3);
  EXPECT_GT(fitted_after_reorder, 3);
}

}  // namespace
}  // namespace tilec::testing
