// passes/pipeline.cpp — the pipeline, one line per pass (DESIGN.md §1).
//
// Order matters where a later pass reads what an earlier one published:
//   promote-mma-operands first: the tile operands of mma become TMA loads for all that follows.
//   fold-constants next, so schedules and emitted code see folded bounds and no dead ops.
//   parse-constraints → build-resources → generate-schedule: the scheduler reads the resolved
//   groups and the per-op footprints the two before it publish as attributes.
//   reorder-events after generate-schedule: it rewrites the published order.
//   materialize-schedule reads the final (stage, order); insert-sync lowers its pipes and mutexes.
//   persistent-tiles first after fold-constants; warp-specialize splits insert-sync's output;
//   prune-named-barriers drops the barriers of mutexes that one agent alone takes;
//   defer-mma-releases makes the mmas asynchronous where the target waits for MMA groups;
//   issuer-only-waits leaves a stage's full waits to the MMA issuer where one thread issues.
// Each pass names the passes it requires and the attribute keys it publishes (writes, or removes)
// and reads; PassManager::add refuses a key read that no required pass publishes, and
// PassManager::run reports a pass that reads or writes a key outside its list (AttributeAudit).
#include "passes/pipeline.h"

#include "ir/attribute_keys.h"
#include "passes/build_resources.h"
#include "passes/defer_mma_releases.h"
#include "passes/fold_constants.h"
#include "passes/generate_schedule_pass.h"
#include "passes/insert_sync.h"
#include "passes/issuer_only_waits.h"
#include "passes/materialize_schedule.h"
#include "passes/parse_constraints.h"
#include "passes/persistent_tiles.h"
#include "passes/promote_mma_operands.h"
#include "passes/prune_named_barriers.h"
#include "passes/reorder_events_pass.h"
#include "passes/warp_specialize.h"

namespace tilec {

PassManager build_pipeline() {
  using namespace attr;  // the typed keys passes publish and read (ir/attribute_keys.h)
  PassManager pm;
  // promote-mma-operands first: which loads feed the tensor cores decides what every later pass
  // schedules (a TMA load is asynchronous, on its own pipe) and synchronizes.
  pm.add({.name = "promote-mma-operands", .run = promote_mma_operands, .reads_target = true});
  pm.add({.name = "fold-constants", .run = fold_constants});
  // persistent-tiles right after fold-constants (before DESIGN.md's place for it): its tile loop
  // is then an ordinary enclosing loop for the scheduler and insert-sync, which carries the
  // pipes' state across tiles with no special case (docs/passes/persistent_tiles.md).
  pm.add({.name = "persistent-tiles", .requires_passes = {"fold-constants"}, .run = persistent_tiles,
          .reads_target = true});
  pm.add({.name = "parse-constraints", .requires_passes = {"fold-constants"}, .run = parse_constraints,
          .publishes = {group.name, group_pending.name}});
  pm.add({.name = "build-resources", .requires_passes = {"fold-constants"}, .run = build_resources,
          .reads_target = true, .publishes = {resource_kind.name, resources.name, latency.name}});
  pm.add({.name = "generate-schedule", .requires_passes = {"parse-constraints", "build-resources"},
          .run = generate_schedule_pass, .reads_target = true,
          .publishes = {stage.name, order.name, cycle.name, ii.name, stages.name, generator.name},
          .reads = {group.name, resource_kind.name, resources.name, latency.name}});
  // reorder-events rewrites the op order published by generate-schedule (keeping modulo-scheduled
  // loop bodies as they are, and removing the cycle of an op it moves), so it follows it;
  // insert-sync allocates event ids after it.
  pm.add({.name = "reorder-events", .requires_passes = {"generate-schedule"}, .run = reorder_events,
          .publishes = {order.name, cycle.name}, .reads = {stage.name, order.name, ii.name}});
  // materialize-schedule reads the final (stage, order), so it follows every pass that moves ops.
  pm.add({.name = "materialize-schedule", .requires_passes = {"reorder-events"}, .run = materialize_schedule,
          .publishes = {order.name}, .reads = {stage.name, order.name, stages.name}});
  // insert-sync lowers materialize-schedule's pipes and mutexes and numbers the events of the
  // final order, so it comes after both.
  pm.add({.name = "insert-sync", .requires_passes = {"materialize-schedule"}, .run = insert_sync,
          .reads = {stage.name, order.name}});
  // warp-specialize splits the synchronized body by the barriers insert-sync created.
  pm.add({.name = "warp-specialize", .requires_passes = {"insert-sync"}, .run = warp_specialize,
          .reads_target = true});
  // prune-named-barriers needs the agents: a mutex only one agent takes orders nothing.
  pm.add({.name = "prune-named-barriers", .requires_passes = {"warp-specialize"}, .run = prune_named_barriers});
  // defer-mma-releases and issuer-only-waits write the target's MMA protocol into the agents
  // warp-specialize made: when MMAs complete (async mmas, mma_waits, the stage releases they
  // allow) and which threads wait for a stage only MMAs read.
  pm.add({.name = "defer-mma-releases", .requires_passes = {"warp-specialize"}, .run = defer_mma_releases,
          .reads_target = true, .publishes = {async.name}});
  pm.add({.name = "issuer-only-waits", .requires_passes = {"warp-specialize"}, .run = issuer_only_waits,
          .reads_target = true, .publishes = {issuer.name}});
  return pm;
}

std::vector<std::string> pipeline_stage_names() {
  std::vector<std::string> names{"parse"};
  PassManager pipeline = build_pipeline();
  for (const Pass& pass : pipeline.passes()) names.push_back(pass.name);
  return names;
}

}  // namespace tilec
