// passes/persistent_tiles.cpp — the persistent-tiles pass (docs/passes/persistent_tiles.md).
//
// What: a kernel whose `grid_ids %e0, %e1 [, %e2]` has `schedule = "persistent"` becomes
//     %workers = sm_count                         (the `workers` attribute when the grid gives one)
//     %w = grid_ids %workers {schedule = "tiles"}
//     for %i in 0 .. cdiv(e0 * e1, workers) {     (%i: the per-worker iteration clock)
//       %t = i * workers + w
//       if %t < e0 * e1 { (m, n) = decode(t); <the original body> }
//     }
// so each worker CTA runs the body for tiles w, w + workers, ... in the order of
// persistent/tile_order.h (column-major unless `order = "row"`, swizzle panels of `swizzle`
// tiles along the slow axis). Tiles past the total are skipped by the `if`: the body is never
// run for them. A third extent (batches) is the slowest axis: tile t is tile t rem (e0 * e1) of
// batch t div (e0 * e1), so the total is e0 * e1 * e2.
// With `cluster = C > 1` (a power of two up to 8) the C CTAs of a cluster sit at consecutive
// worker ids: the workers are rounded down to a multiple of C (at least C) by index ops after
// sm_count, the worker grid carries `cluster = C` (the launcher's cluster dimension), worker w
// is CTA w rem C of cluster w div C, the clusters walk the "cluster tiles" of
// (cdiv(e0, C), e1) as above, and cluster tile (row, n) gives its rank-r CTA the tile
// (row * C + r, n), skipped by a second `if` when that is past e0 (a ragged last cluster row).
// A `grid tiles` kernel with mma (one CTA per tile; the tensor-core backend only runs the walking
// form) gets the same rewrite with one worker per tile: %workers is the tile count, no sm_count,
// one round (cdiv(tiles, tiles), left unfolded), and the worker grid carries the unit attribute
// `per_tile`. Either form reads one or two extents as (e0, 1) and (e0, e1). An extent not known
// to be non-negative (from a scalar) is asserted `>= 0` before the worker grid (the old grid's
// refusal of a negative extent, checked by the launcher) and read as max(e, 0).
// Phases per kernel: 1. find and check the persistent grid (one to three extents, cluster size);
// 2. build the worker grid, the tile loop and the guards before the old grid; 3. move the body
// into the innermost guard and replace the old coordinates by the decoded ones; 4. erase the
// old grid.
// Invariants kept: the same set of tiles runs the same body exactly once; SSA dominance (the
// decode is emitted in the guard, before the moved body). Runs right after fold-constants, so
// the tile loop is an ordinary loop for the scheduling and sync passes (docs/passes/README.md).
// Cost: O(ops of the kernel) for the move and the use replacement.
#include "passes/persistent_tiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "backend/target.h"
#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/fold.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "passes/persistent_tiles/tile_order.h"

namespace tilec {

namespace {

Type index_type() { return Type::scalar(ScalarKind::index); }

// Index arithmetic that emits ops through a builder, folding operations on two constants
// (ir/fold.h: what would overflow stays an op).
struct IrArithmetic {
  Builder& builder;

  Value* binary(OpKind kind, Value* x, Value* y) {
    auto a = constant_integer(x), b = constant_integer(y);
    if (a && b)
      if (std::optional<int64_t> folded = fold_integer(kind, *a, *b)) return builder.constant_index(*folded);
    Operation* op = builder.create(kind, {x, y}, {index_type()});
    // Every divisor here is a count of tiles, workers or rows left, positive where the op runs
    // (inside the tile guard); the backend then divides with plain `/` and `%`.
    if (kind == OpKind::div || kind == OpKind::rem) op->set_attr("positive_divisor", Attribute());
    return op->result();
  }
  Value* add(Value* x, Value* y) { return binary(OpKind::add, x, y); }
  Value* sub(Value* x, Value* y) { return binary(OpKind::sub, x, y); }
  Value* mul(Value* x, Value* y) { return binary(OpKind::mul, x, y); }
  Value* div(Value* x, Value* y) { return binary(OpKind::div, x, y); }
  Value* rem(Value* x, Value* y) { return binary(OpKind::rem, x, y); }
  Value* min(Value* x, Value* y) { return binary(OpKind::min, x, y); }
  Value* max(Value* x, Value* y) { return binary(OpKind::max, x, y); }
  Value* cdiv(Value* x, Value* y) { return binary(OpKind::cdiv, x, y); }
  Value* constant(int64_t value) { return builder.constant_index(value); }
};

Value* named(Value* value, const char* name) {
  if (value->defining_op() && value->defining_op()->kind() != OpKind::constant) value->set_name_hint(name);
  return value;
}

// At the builder's insertion point: `if (cmp lt value, bound) { } else { yield }` followed by
// the enclosing region's `yield`; returns the then region, still open (no yield yet).
Region& add_guard(Builder& builder, Value* value, Value* bound, const Location& location) {
  Value* in_range = builder.create(OpKind::cmp, {value, bound}, {Type::scalar(ScalarKind::i1)},
                                   {{"predicate", Attribute("lt")}})->result();
  Operation* guard = builder.create(OpKind::if_, {in_range}, {});
  builder.create(OpKind::yield, {}, {});
  Builder else_builder(&guard->region(1));
  else_builder.set_location(location);
  else_builder.create(OpKind::yield, {}, {});
  return guard->region(0);
}

bool has_mma(Operation& kernel) {
  bool found = false;
  walk(kernel.region(), [&](Operation& op) { found = found || op.kind() == OpKind::mma; });
  return found;
}

class PersistentTiles {
  // The tile count's product a · b (both >= 0) stays below 2^63: a grid of more tiles wrapped it,
  // and the launcher launched the few tiles of the wrapped count, successfully (a hunt). Known
  // extents are checked here; others by a launch precondition the launcher and the interpreter
  // check, a ≤ (2^63 - 1) / max(b, 1). False after reporting an error.
  bool tiles_fit(Builder& builder, IrArithmetic& arithmetic, Value* a, Value* b, const Operation& grid) {
    const auto known_a = constant_integer(a), known_b = constant_integer(b);
    if (known_a && known_b) {
      if (*known_b == 0 || *known_a <= INT64_MAX / *known_b) return true;
      diagnostics_.error(grid.location(), fmt::format("the grid has more than 2^63 - 1 tiles ({} times {}); a launch "
                                                      "counts them in 64 bits",
                                                      *known_a, *known_b));
      return false;
    }
    // One statement per op: the order of a call's arguments is the compiler's (gcc and clang built
    // these two ops in opposite orders, and the IR differed).
    Value* at_least_one = arithmetic.max(b, arithmetic.constant(1));
    Value* limit = arithmetic.div(arithmetic.constant(INT64_MAX), at_least_one);
    Value* holds = builder.create(OpKind::cmp, {a, limit}, {Type::scalar(ScalarKind::i1)},
                                  {{"predicate", Attribute("le")}})->result();
    builder.create(OpKind::assert_, {holds}, {}, {{"text", Attribute("the grid's tiles fit in 64 bits")}});
    return true;
  }

 public:
  // The largest cluster along M is the target's (max_cluster).
  PersistentTiles(const target::Target& target, DiagnosticEngine& diagnostics) : target_(target), diagnostics_(diagnostics) {}

  // False after reporting an input error.
  bool run(Operation& kernel) {
    Region& body = kernel.region();
    auto& ops = body.operations();
    size_t grid_position = ops.size();
    bool per_tile = false;  // a `grid tiles` kernel with mma: one worker CTA per tile
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i]->kind() != OpKind::grid_ids) continue;
      const std::string schedule = ops[i]->string_attr("schedule");
      if (schedule == "persistent" || (schedule == "tiles" && has_mma(kernel))) {
        grid_position = i;
        per_tile = schedule == "tiles";
      }
    }
    if (grid_position == ops.size()) return true;
    Operation& grid = *ops[grid_position];

    // 1. check
    if (per_tile && (grid.num_operands() < 1 || grid.num_operands() > 3 || grid.num_results() != grid.num_operands())) {
      diagnostics_.error(grid.location(), fmt::format("persistent-tiles: a tile grid of a kernel with mma has one to "
                                                      "three extents (M tiles, N tiles, batches); this one has {}",
                                                      grid.num_operands()));
      return false;
    }
    if (!per_tile &&
        (grid.num_operands() < 1 || grid.num_operands() > 3 || grid.num_results() != grid.num_operands())) {
      diagnostics_.error(grid.location(), fmt::format("persistent-tiles: a persistent grid has one to three extents "
                                                      "(M tiles, N tiles, batches); this one has {}",
                                                      grid.num_operands()));
      return false;
    }
    const int64_t cluster = grid.int_attr("cluster", 1);
    if (per_tile && cluster != 1) {
      diagnostics_.error(grid.location(), fmt::format("persistent-tiles: a tile grid of a kernel with mma in clusters of {} "
                                                      "CTAs; write `grid persistent(..., cluster = {})` instead",
                                                      cluster, cluster));
      return false;
    }
    if (cluster < 1 || cluster > target_.max_cluster || (cluster & (cluster - 1)) != 0) {
      diagnostics_.error(grid.location(), fmt::format("grid option cluster = {} must be a power of two from 1 "
                                                      "to {} (the CTAs of a cluster along M)",
                                                      cluster, target_.max_cluster));
      return false;
    }
    persistent::TileOrder order;
    order.swizzle = grid.int_attr("swizzle", 1);
    order.column_major = grid.string_attr("order", "column") != "row";
    // The panel's width times the tile count along it stays in 64 bits (swizzle = 2^62 overflowed).
    if (order.swizzle < 1 || order.swizzle > INT32_MAX) {
      diagnostics_.error(grid.location(), fmt::format("grid option swizzle = {} must be from 1 to 2^31 - 1 (the tiles "
                                                      "a panel spans across its walking order)",
                                                      order.swizzle));
      return false;
    }

    // 2. worker grid, tile loop, guard. With clusters, every count below is per cluster:
    // `total` counts cluster tiles, `clusters` walk them, `rounds` is the per-cluster clock.
    Builder builder(&body);
    builder.set_insertion_point(&body, grid_position);
    builder.set_location(grid.location());
    IrArithmetic arithmetic{builder};
    // The old grid refuses a negative extent at launch (the interpreter does), and the tile count
    // of two would be positive: an assert keeps the refusal (the launcher checks it), and the
    // extent is read as max(e, 0), which never_negative proves and the decode can trust.
    std::vector<Value*> extents;
    for (size_t d = 0; d < grid.num_operands(); ++d) {
      Value* extent = grid.operand(d);
      if (!never_negative(extent)) {
        Value* zero = arithmetic.constant(0);
        Value* holds = builder.create(OpKind::cmp, {extent, zero}, {Type::scalar(ScalarKind::i1)},
                                      {{"predicate", Attribute("ge")}})->result();
        builder.create(OpKind::assert_, {holds}, {}, {{"text", Attribute(fmt::format("grid extent {} >= 0", d + 1))}});
        extent = arithmetic.max(extent, zero);
      }
      extents.push_back(extent);
    }
    Value* rows = extents[0];
    // A one-extent tile grid is a column of tiles: N has one tile.
    Value* columns = extents.size() >= 2 ? extents[1] : arithmetic.constant(1);
    Value* workers = nullptr;
    Value* count = nullptr;
    if (!per_tile) {
      std::vector<std::pair<std::string, Attribute>> count_attributes;
      if (grid.has_attr("workers")) count_attributes.push_back({"workers", *grid.attr("workers")});
      count = builder.create(OpKind::sm_count, {}, {index_type()}, count_attributes)->result();
    }
    Value* cluster_size = nullptr;
    Value* cluster_rows = rows;
    if (per_tile) {
      // one worker per tile: `workers` is the tile count, below
    } else if (cluster == 1) {
      workers = named(count, "workers");
    } else {
      // Whole clusters only: max(C, count div C * C), so the launch grid is a multiple of C.
      named(count, "sms");
      cluster_size = arithmetic.constant(cluster);
      workers = named(arithmetic.max(arithmetic.mul(arithmetic.div(count, cluster_size), cluster_size), cluster_size),
                      "workers");
      cluster_rows = named(arithmetic.cdiv(rows, cluster_size), "cluster_rows");
    }
    Value* batches = extents.size() == 3 ? extents[2] : nullptr;
    if (grid.num_operands() >= 2 && !tiles_fit(builder, arithmetic, cluster_rows, columns, grid)) return false;
    Value* per_batch = grid.num_operands() >= 2 ? arithmetic.mul(cluster_rows, columns) : cluster_rows;
    if (batches && !tiles_fit(builder, arithmetic, per_batch, batches, grid)) return false;
    Value* total = named(batches ? arithmetic.mul(per_batch, batches) : per_batch, "tiles");
    if (per_tile) workers = total;
    Value* walkers = cluster == 1 ? workers : named(arithmetic.div(workers, cluster_size), "clusters");
    // One round per worker when each tile has its own CTA, written as the division all the same
    // (cdiv(tiles, tiles): 1, or -1 and no round for no tiles): nvcc makes straight-line code of a
    // loop of constant trip count 1, in which ptxas serialized the WGMMAs (C7515), as it does
    // not in the walking form's loop.
    Value* rounds = named(arithmetic.cdiv(total, walkers), "rounds");
    std::vector<std::pair<std::string, Attribute>> grid_attributes{{"schedule", Attribute("tiles")}};
    if (cluster > 1) grid_attributes.push_back({"cluster", Attribute(cluster)});
    if (per_tile) grid_attributes.push_back({"per_tile", Attribute()});
    Operation* worker_grid = builder.create(OpKind::grid_ids, {workers}, {index_type()}, grid_attributes);
    Value* worker = named(worker_grid->result(), "worker");
    Value* walker = worker;  // the cluster walking the tiles (the worker itself when C = 1)
    Value* rank = nullptr;   // the CTA's rank in its cluster
    if (cluster > 1) {
      walker = named(arithmetic.div(worker, cluster_size), "cluster");
      rank = named(arithmetic.rem(worker, cluster_size), "rank");
    }
    Value* zero = arithmetic.constant(0);
    Value* one = arithmetic.constant(1);
    Operation* loop = builder.create(OpKind::for_, {zero, rounds, one}, {});
    Region& loop_body = loop->region();
    Value* round = loop_body.add_argument(index_type(), "round");

    Builder inner(&loop_body);
    inner.set_location(grid.location());
    IrArithmetic loop_arithmetic{inner};
    Value* tile = named(loop_arithmetic.add(loop_arithmetic.mul(round, walkers), walker), "tile");
    // The tile this round walks, which the interpreter's race check counts as the writer and
    // reader (two tiles one CTA walks may not race either). Not a cluster's: its CTAs share it.
    if (cluster == 1) tile->defining_op()->set_attr("tile_index", Attribute());
    Region* then_region = &add_guard(inner, tile, total, grid.location());

    Builder decode_builder(then_region);
    decode_builder.set_location(grid.location());
    IrArithmetic decode_arithmetic{decode_builder};
    // A third extent is the slowest axis: batch b holds tiles b * per_batch ... (b + 1) * per_batch - 1,
    // each batch walked in the two-axis order.
    Value* batch = nullptr;
    Value* in_batch = tile;
    if (batches) {
      batch = decode_arithmetic.div(tile, per_batch);
      in_batch = decode_arithmetic.rem(tile, per_batch);
    }
    auto [m, n] = persistent::decode_tile(decode_arithmetic, in_batch, cluster_rows, columns, order);
    if (cluster > 1) {
      // The rank-r CTA takes M tile row * C + r; a ragged last cluster row has CTAs past e0.
      Value* row = named(m, "cluster_row");
      m = decode_arithmetic.add(decode_arithmetic.mul(row, cluster_size), rank);
      auto rows_constant = constant_integer(rows);
      if (!rows_constant || *rows_constant % cluster != 0) then_region = &add_guard(decode_builder, m, rows, grid.location());
    }
    Value* old_m = grid.result(0);
    Value* old_n = grid.num_results() >= 2 ? grid.result(1) : nullptr;
    if (!old_m->name_hint().empty()) named(m, old_m->name_hint().c_str());
    if (old_n && !old_n->name_hint().empty()) named(n, old_n->name_hint().c_str());
    Value* old_batch = batches ? grid.result(2) : nullptr;
    if (old_batch && !old_batch->name_hint().empty()) named(batch, old_batch->name_hint().c_str());

    // 3. move the body (everything after the old grid but the terminator) into the guard
    size_t old_grid = body.position_of(&grid);
    while (old_grid + 1 < ops.size() && !ops[old_grid + 1]->info().has(kTerminator))
      then_region->append(body.take(old_grid + 1));
    Builder end_builder(then_region);
    end_builder.set_location(grid.location());
    end_builder.create(OpKind::yield, {}, {});
    replace_all_uses(body, old_m, m);
    if (old_n) replace_all_uses(body, old_n, n);
    if (old_batch) replace_all_uses(body, old_batch, batch);

    // 4. the old grid goes
    body.take(old_grid);
    return true;
  }

 private:
  const target::Target& target_;
  DiagnosticEngine& diagnostics_;
};

}  // namespace

bool persistent_tiles(Module& module, PassContext& ctx) {
  bool ok = true;
  for (auto& kernel : module.kernels()) {
    PersistentTiles pass(ctx.target, ctx.diagnostics);
    ok &= pass.run(*kernel);
  }
  return ok;
}

}  // namespace tilec
