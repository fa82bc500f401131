// tests/unit/pass_manager_test.cpp — pass contracts: PassManager::add refuses a pipeline whose
// passes read attributes their requirements do not publish, or require a pass not added yet;
// PassManager::run reports a pass that reads or writes a published attribute outside its
// contract; the real pipeline satisfies its own contracts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ir/attribute_audit.h"
#include "ir/attribute_keys.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"

namespace tilec::testing {
namespace {

using ::testing::HasSubstr;

bool nothing(Module&, PassContext&) { return true; }

// The message add() throws for `pass`, or "" when it accepts it.
std::string refusal(PassManager& pm, Pass pass) {
  try {
    pm.add(std::move(pass));
  } catch (const std::logic_error& error) {
    return error.what();
  }
  return "";
}

TEST(PassContracts, ThePipelineKeepsItsOwnContracts) {
  PassManager pipeline = build_pipeline();
  // Every key a pass reads is published by a pass it requires (add() checked it); and the keys
  // generate-schedule publishes are read downstream, so the table is not empty by mistake.
  const Pass* schedule = nullptr;
  for (const Pass& pass : pipeline.passes())
    if (pass.name == "generate-schedule") schedule = &pass;
  ASSERT_NE(schedule, nullptr);
  EXPECT_THAT(schedule->publishes, ::testing::Contains(std::string_view(attr::stage.name)));
  EXPECT_THAT(schedule->reads, ::testing::Contains(std::string_view(attr::latency.name)));
}

TEST(PassContracts, AReadWithoutItsPublisherAmongTheRequirementsIsRefused) {
  PassManager pm;
  EXPECT_EQ(refusal(pm, {.name = "fold", .run = nothing}), "");
  EXPECT_EQ(refusal(pm, {.name = "schedule", .requires_passes = {"fold"}, .run = nothing,
                         .publishes = {attr::stage.name}}),
            "");
  // Requires only fold, reads what schedule publishes: refused, naming the pass to require.
  EXPECT_THAT(refusal(pm, {.name = "sync", .requires_passes = {"fold"}, .run = nothing, .reads = {attr::stage.name}}),
              HasSubstr("pass 'sync' reads the attribute 'stage', which none of the passes it requires publishes "
                        "(require schedule)"));
  // Through a requirement's requirement it is accepted.
  EXPECT_EQ(refusal(pm, {.name = "order", .requires_passes = {"schedule"}, .run = nothing}), "");
  EXPECT_EQ(refusal(pm, {.name = "sync", .requires_passes = {"order"}, .run = nothing, .reads = {attr::stage.name}}),
            "");
  // A key nobody publishes, and a requirement not added before.
  EXPECT_THAT(refusal(pm, {.name = "late", .requires_passes = {"fold"}, .run = nothing, .reads = {attr::ii.name}}),
              HasSubstr("no pass before it publishes it"));
  EXPECT_THAT(refusal(pm, {.name = "early", .requires_passes = {"later"}, .run = nothing}),
              HasSubstr("pass 'early' requires 'later', which is not added before it"));
}

// One kernel of three ops, as IR text (no pass recorded yet).
constexpr std::string_view kKernel = R"(module {passes = ["parse"]}

kernel @k(%X: tensor<N, f32>) loc(1:1) {
  %N = dim %X {axis = 0} : index loc(1:1)
  %0 = constant {value = 8} : index loc(2:3)
  return
}
)";

// Runs `passes` over kKernel; returns the status and what was reported.
std::pair<PipelineStatus, std::string> run_passes(std::vector<Pass> passes) {
  DiagnosticEngine diagnostics("k.tir", "");
  std::unique_ptr<Module> module = parse_module(kKernel, diagnostics);
  if (!module) return {PipelineStatus::input_error, diagnostics.render_all()};
  PassManager pm;
  for (Pass& pass : passes) pm.add(std::move(pass));
  PassContext ctx{.diagnostics = diagnostics};
  PipelineStatus status = pm.run(*module, ctx, PipelineOptions{});
  return {status, diagnostics.render_all()};
}

// Each op of the first kernel.
void for_each_op(Module& module, const std::function<void(Operation&)>& visit) {
  for (const auto& op : module.kernels().front()->region().operations()) visit(*op);
}

TEST(PassContracts, APassThatTouchesAnAttributeOutsideItsContractIsAnInternalError) {
  auto stamp = [](Module& module, PassContext&) {  // writes `stage`
    for_each_op(module, [](Operation& op) { op.set(attr::stage, 0); });
    return true;
  };
  auto look = [](Module& module, PassContext&) {  // reads `stage` and `ii`
    int64_t seen = 0;
    for_each_op(module, [&](Operation& op) { seen += op.get(attr::stage) + op.get(attr::ii); });
    return seen >= 0;
  };
  // Declared: accepted.
  EXPECT_EQ(run_passes({{.name = "stamp", .run = stamp, .publishes = {attr::stage.name, attr::ii.name}},
                        {.name = "look", .requires_passes = {"stamp"}, .run = look,
                         .reads = {attr::stage.name, attr::ii.name}}})
                .first,
            PipelineStatus::ok);
  // A write the contract does not publish.
  auto [status, message] = run_passes({{.name = "stamp", .run = stamp}});
  EXPECT_EQ(status, PipelineStatus::internal_error);
  EXPECT_THAT(message, HasSubstr("internal error: pass 'stamp' writes 'stage' outside its contract"));
  // Reads it does not list: each key named once, in the order read.
  std::tie(status, message) =
      run_passes({{.name = "stamp", .run = stamp, .publishes = {attr::stage.name}},
                  {.name = "look", .requires_passes = {"stamp"}, .run = look}});
  EXPECT_EQ(status, PipelineStatus::internal_error);
  EXPECT_THAT(message, HasSubstr("pass 'look' reads 'stage', reads 'ii' outside its contract"));
  // A pass may read what it publishes itself.
  EXPECT_EQ(run_passes({{.name = "both", .run = [&](Module& module, PassContext& ctx) {
                           return stamp(module, ctx) && look(module, ctx);
                         }, .publishes = {attr::stage.name, attr::ii.name}}})
                .first,
            PipelineStatus::ok);
}

TEST(PassContracts, AnAuditSeesOnlyTypedAccessesWhileItIsOpen) {
  DiagnosticEngine diagnostics("k.tir", "");
  std::unique_ptr<Module> module = parse_module(kKernel, diagnostics);
  ASSERT_TRUE(module);
  Operation& op = *module->kernels().front()->region().operations().front();
  op.set(attr::order, 3);  // no audit open: nothing to check
  const std::vector<std::string_view> reads = {attr::order.name};
  AttributeAudit outer(reads, {});
  EXPECT_EQ(op.get(attr::order), 3);
  op.set_attr("stage", Attribute(int64_t{1}));  // by name: not audited
  {
    AttributeAudit inner({}, {});  // the innermost audit is the one checked
    op.remove(attr::cycle);
    EXPECT_EQ(inner.violations(), std::vector<std::string>{"writes 'cycle'"});
  }
  op.set(attr::ii, 2);
  EXPECT_EQ(outer.violations(), std::vector<std::string>{"writes 'ii'"});
}

}  // namespace
}  // namespace tilec::testing
