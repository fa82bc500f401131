// passes/reorder_events_pass.cpp — the reorder-events pass (DESIGN.md §1, seeds/003).
//
// What: each region's ops (terminator excepted) form one segment for the event-limited reorder
// engine (passes/reorder/); the ops are put in the engine's order, so that no pipe pair needs
// more than ctx.max_events live cross-pipe events. Per kernel, nested regions first:
//   1. Build the segment, one statement per op: pipe from the op table (none → SIMT); reads its
//      operands, writes its results; load/tma_load also read their tensor, store writes it.
//      `for`/`if` are control statements: they read their operands, every outside value their
//      regions use and every tensor loaded inside; they write their results and every tensor
//      stored inside. `grid_ids` and ops with unknown side effects are barriers.
//   2. Skip the body of a `for` carrying `ii` (modulo-scheduled: its order is the schedule).
//      Otherwise run the engine; it keeps program order when that already fits.
//   3. Check the order independently (check_order on a fresh graph): a bad one is an internal
//      error. Move the ops into the new order.
//   4. A relaxed order warns once per pipe pair above the limit, at the op where the peak is
//      reached, naming the pair, its peak and the limit.
//   5. When the order changed, ops carrying a published `order` get their new rank within their
//      `stage`, and lose their `cycle` (it would contradict the new order).
// Assumes: the module verifies; distinct tensor parameters do not alias. Keeps: SSA dominance,
// the order of accesses to one tensor when one is a store, nothing crosses `grid_ids`, results.
// Deterministic. Cost: O(ops + uses) per segment plus the engine's (docs/passes/reorder_events.md).
#include "passes/reorder_events_pass.h"

#include <fmt/core.h>

#include <map>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/ir.h"
#include "passes/compute_reorder_segment.h"
#include "passes/pass_manager.h"
#include "passes/reorder/check_order.h"
#include "passes/reorder/reorder_events.h"

namespace tilec {

namespace {

class RegionReorderer {
 public:
  RegionReorderer(PassContext& ctx, reorder::ReorderOptions options) : ctx_(ctx), options_(options) {}

  // Reorders `region` and every region nested in it; false after an internal error.
  bool run(Region& region) {
    for (const auto& op : region.operations())
      for (size_t index = 0; index < op->num_regions(); ++index)
        if (!run(op->region(index))) return false;
    Operation* owner = region.parent_op();
    if (owner && owner->kind() == OpKind::for_ && owner->has(attr::ii)) return true;
    return reorder_segment(region);
  }

 private:
  bool internal_error(Location location, const std::string& what) {
    ctx_.diagnostics.error(location, "internal error: reorder-events: " + what);
    return false;
  }

  bool reorder_segment(Region& region) {
    auto& ops = region.operations();
    const size_t count = ops.empty() ? 0 : ops.size() - 1;  // the terminator stays last
    if (count < 2) return true;
    reorder::Segment segment = compute_reorder_segment(region);

    reorder::ReorderResult result;
    try {
      result = reorder::reorder_events(segment, options_);
    } catch (const std::exception& error) {
      return internal_error(ops[0]->location(), error.what());
    }
    // Phase 3: trust nothing; recount on a graph of our own.
    reorder::DependenceGraph graph = reorder::compute_dependences(segment);
    reorder::OrderCheck check = reorder::check_order(segment, graph, result.order);
    if (!check.valid) return internal_error(ops[0]->location(), "the engine's order breaks a dependence: " + check.problem);

    // Phase 4: warnings for a relaxed order.
    if (check.max_peak > options_.max_events) {
      bool proven = false;
      for (const std::string& warning : result.warnings) proven |= warning.find("no order within the limit exists") != std::string::npos;
      for (int pair = 0; pair < reorder::kPairCount; ++pair) {
        if (!check.used[pair] || check.peak[pair] <= options_.max_events) continue;
        const Operation& where = *ops[result.order[check.peak_statement[pair]]];
        ctx_.diagnostics.warning(
            where.location(),
            fmt::format("reorder-events: cannot keep {} within {} live events (--max-events): peak {} after this '{}' "
                        "({})",
                        reorder::pair_name(pair), options_.max_events, check.peak[pair], where.name(),
                        proven ? "no order within the limit exists" : "no order within the limit was found"));
      }
    }

    std::vector<int> identity(count);
    std::iota(identity.begin(), identity.end(), 0);
    if (result.order == identity) return true;

    // Move the ops into the new order; the terminator stays last.
    Region::OpList reordered;
    reordered.reserve(ops.size());
    for (int index : result.order) reordered.push_back(std::move(ops[index]));
    reordered.push_back(std::move(ops.back()));
    ops = std::move(reordered);

    // Phase 5: the published order follows the new program order.
    std::map<int64_t, int64_t> next_rank;  // per stage
    for (size_t index = 0; index < count; ++index) {
      Operation& op = *ops[index];
      if (!op.has(attr::order)) continue;
      op.set(attr::order, next_rank[op.get(attr::stage)]++);
      op.remove(attr::cycle);
    }
    return true;
  }

  PassContext& ctx_;
  reorder::ReorderOptions options_;
};

}  // namespace

bool reorder_events(Module& module, PassContext& ctx) {
  if (ctx.max_events < 1) {
    ctx.diagnostics.error({}, fmt::format("reorder-events: --max-events must be at least 1, not {}", ctx.max_events));
    return false;
  }
  reorder::ReorderOptions options;
  options.max_events = ctx.max_events;
  for (auto& kernel : module.kernels()) {
    RegionReorderer reorderer(ctx, options);
    for (size_t index = 0; index < kernel->num_regions(); ++index)
      if (!reorderer.run(kernel->region(index))) return false;
  }
  return true;
}

}  // namespace tilec
