// passes/pipeline.cpp — the pipeline, one line per pass (DESIGN.md §1).
//
// Order matters where a later pass reads what an earlier one published:
//   fold-constants first, so schedules and emitted code see folded bounds and no dead ops.
// Passes of later stages (parse-constraints, build-resources, generate-schedule,
// reorder-events, materialize-schedule, insert-sync, warp-specialize, persistent-tiles) join
// here as they land; each names the passes it requires.
#include "passes/pipeline.h"

#include "passes/fold_constants.h"
#include "passes/reorder_events_pass.h"

namespace tilec {

PassManager build_pipeline() {
  PassManager pm;
  pm.add({"fold-constants", {}, {}, fold_constants});
  // reorder-events reorders the final op order, so it follows every pass that publishes one
  // (generate-schedule will sit just before it) and precedes insert-sync, which allocates the ids.
  pm.add({"reorder-events", {"fold-constants"}, {}, reorder_events});
  return pm;
}

std::vector<std::string> pipeline_stage_names() {
  std::vector<std::string> names{"parse"};
  PassManager pipeline = build_pipeline();
  for (const Pass& pass : pipeline.passes()) names.push_back(pass.name);
  return names;
}

}  // namespace tilec
