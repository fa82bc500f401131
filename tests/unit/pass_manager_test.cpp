// tests/unit/pass_manager_test.cpp — pass contracts: PassManager::add refuses a pipeline whose
// passes read attributes their requirements do not publish, or require a pass not added yet;
// the real pipeline satisfies its own contracts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "ir/attribute_keys.h"
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

}  // namespace
}  // namespace tilec::testing
