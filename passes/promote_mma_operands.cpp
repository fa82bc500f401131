// passes/promote_mma_operands.cpp — the promote-mma-operands pass.
//
// What: loads feeding only mma operands become tma_loads into shared memory (see the header).
// Phases, per kernel:
//   0. Unit dimensions in memory (fold_unit_reshapes), then split_mma_loads: a load read by
//      mmas (as B, or transposed) and by other ops gets a second load every mma use reads.
//      Unit dimensions: `reshape<BQ, D>(load T[b, i, h, 0] : <BQ, 1, D>)` of a load
//      only it uses becomes `load T[b, i, h, 0] {box = [BQ, 1, D]} : <BQ, D>` (in a kernel with
//      mma, where it feeds only mma operands, directly or through a transpose), and
//      `store T[...] = reshape<BQ, 1, D>(x)` of a reshape only it uses becomes
//      `store T[...] = x {box = [BQ, 1, D]}`: a tile between the tensor's dimensions ([B, S, H, D]
//      attention) moves as one TMA box with no reshape, and a plain kernel's 2-D tile stays a
//      register tile (rank-3 tiles are not). The same for a column and the vector holding it, in
//      every kernel: `reshape<BM, 1>(load S[m] : <BM>)` becomes `load S[m] {box = [BM]} :
//      <BM, 1>` (a load of its own where the vector has other uses), `store L[b, h, i] =
//      reshape<BQ>(lse)` a store {box = [BQ]} of the column.
//   1. Count each value's uses as an mma `a`/`b` operand and its other uses.
//   2. A transpose used only as mma operands, of a load used only as mma operands and by such
//      transposes, becomes one `tma_load {transposed}` of the loaded box (the transpose goes,
//      and the load once nothing else reads it; otherwise the load becomes a tma_load of its own
//      in 3: a tile both ways, two TMA boxes). Transposes of one load in one region in the same
//      role share the box.
//   3. Every other load used only as mma operands becomes a tma_load with a shared-memory result
//      (two, one per role, when it is the A of one mma and the B of another).
//   4. A 2-D 8- or 16-bit load that only elementwise ops, slices, concats and interleaves carry
//      into mmas' B (a computed B's quantized weight) becomes a tma_load whose shared-memory
//      result those ops read, where its loop's stage buffers, `pipeline` deep, and the computed
//      Bs' staging fit the target's shared memory (fits_shared_memory); elsewhere it stays a
//      register load.
// A load with `elements` (element coordinates) keeps them: its TMA box starts at that element.
// Invariants kept: results are unchanged (a tma_load reads what the load read; the interpreter
// checks it before and after); the replacement sits at the replaced op's position, so SSA
// dominance holds. Runs first: the scheduler and the sync passes see the TMA loads.
// Cost: O(ops) per kernel, plus a use rewrite per promoted load and a walk per transpose and
// per promoted load (their mma roles).
#include "passes/promote_mma_operands.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "backend/target.h"
#include "ir/clone.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

// The users of each value (an op once per operand that names it).
std::unordered_map<const Value*, std::vector<Operation*>> users_of(Region& body) {
  std::unordered_map<const Value*, std::vector<Operation*>> users;
  walk(body, [&](Operation& op) {
    for (Value* operand : op.operands()) users[operand].push_back(&op);
  });
  return users;
}

// Whether every use of `value` is an mma's a or b (not its accumulator).
bool only_mma_operands(const std::unordered_map<const Value*, std::vector<Operation*>>& users, const Value* value) {
  auto it = users.find(value);
  return it != users.end() && !it->second.empty() &&
         std::all_of(it->second.begin(), it->second.end(), [&](const Operation* user) {
           return user->kind() == OpKind::mma && user->operand(2) != value;
         });
}

// The dimension of `shape` (rank 2 or more) that holds a 2-D tile's rows when its other
// dimensions but the last are 1: the last one before the last that is not 1, else 0.
size_t row_dimension(const std::vector<int64_t>& shape) {
  size_t rows = shape.size() - 2;
  while (rows > 0 && shape[rows] == 1) --rows;
  return rows;
}

// Whether `box` holds the 2-D `tile` with unit middle dimensions: [.., R, 1, .., 1, C] for [R, C]
// (leading 1s are a slice's), the form the tensor-core backend moves as one TMA box.
bool middle_box(const std::vector<int64_t>& box, const std::vector<int64_t>& tile) {
  if (tile.size() != 2 || box.size() < 3 || box.back() != tile[1] || !same_but_unit_dims(box, tile)) return false;
  return box[row_dimension(box)] == tile[0];
}

// Whether `column` is [R, 1] and `vector` [R] (R > 1): a column whose rows lie along a tensor's
// last dimension (a per-row value of an [M] vector), the form cuda::column_box moves.
bool column_of_vector(const std::vector<int64_t>& column, const std::vector<int64_t>& vector) {
  return column.size() == 2 && column[1] == 1 && column[0] > 1 && vector == std::vector<int64_t>{column[0]};
}

// Whether `op` is a reshape between a 2-D tile and its middle_box, or between a column and the
// vector holding it.
bool unit_reshape(const Operation& op) {
  if (op.kind() != OpKind::reshape || !op.operand(0)->type().is_tile()) return false;
  const std::vector<int64_t>&from = op.operand(0)->type().shape(), &to = op.result()->type().shape();
  return middle_box(from, to) || middle_box(to, from) || column_of_vector(from, to) || column_of_vector(to, from);
}

// The mask of a store through a box, computed again at the stored 2-D tile's shape: a value of
// shape [.., R, 1, .., 1, C] (every dimension 1 but its last and the last other one, its rows, as
// middle_box's; so a row <1, 1, C> and a column <R, 1, 1> too) as [R, C]. Iotas along those two,
// splats, reshapes (of a tile of those extents: a 2-D one, or a rank-4 mask; a row <C> becomes
// <1, C>) and elementwise ops of them are recomputed before the store (appended to `built` in
// order, operands first), the other values reused; null where the mask is computed otherwise (an
// iota along a unit dimension, a load), so the store keeps its reshape. Memoized in `done`; the
// old ops are left for fold-constants to erase.
Value* mask_at_tile_shape(Value* mask, std::vector<std::unique_ptr<Operation>>& built,
                          std::unordered_map<Value*, Value*>& done) {
  if (!mask->type().is_tile()) return mask;
  if (auto it = done.find(mask); it != done.end()) return it->second;
  const std::vector<int64_t>& shape = mask->type().shape();
  if (shape.size() < 2) return done[mask] = nullptr;
  const size_t rows = row_dimension(shape);
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (d != rows && shape[d] != 1) return done[mask] = nullptr;
  const Type flat = mask->type().with_shape({shape[rows], shape.back()});
  Operation* def = mask->defining_op();
  if (!def || def->num_results() != 1 || def->num_regions() != 0) return done[mask] = nullptr;
  ValueMapping at_shape;  // the operands' values at the tile's shape
  const int64_t axis = def->int_attr("axis", -1);
  if (def->kind() == OpKind::reshape) {
    Value* from = def->operand(0);
    const std::vector<int64_t>& extents = from->type().shape();
    if (extents == flat.shape()) return done[mask] = from;
    if (extents.size() >= 2 && same_but_unit_dims(extents, flat.shape()))
      return done[mask] = mask_at_tile_shape(from, built, done);  // the same elements in the same order
    // Else only a row <C> as <1, C> (which every backend broadcasts): the reshape, to that shape.
    if (extents.size() != 1 || flat.shape()[0] != 1 || extents[0] != flat.shape()[1]) return done[mask] = nullptr;
  } else {
    const bool splat = def->kind() == OpKind::zeros || def->kind() == OpKind::full;
    const bool along = axis == static_cast<int64_t>(rows) || axis + 1 == static_cast<int64_t>(shape.size());
    if (!splat && !def->info().has(kElementwise) && !(def->kind() == OpKind::iota && along)) return done[mask] = nullptr;
    if (!splat)  // a splat's operand is its scalar
      for (Value* operand : def->operands()) {
        Value* recomputed = mask_at_tile_shape(operand, built, done);
        if (!recomputed) return done[mask] = nullptr;
        at_shape[operand] = recomputed;
      }
  }
  std::unique_ptr<Operation> copy = clone_operation(*def, at_shape);
  if (def->kind() == OpKind::iota) copy->set_attr("axis", Attribute(int64_t{axis == static_cast<int64_t>(rows) ? 0 : 1}));
  Value* result = copy->result();
  result->set_type(flat);
  built.push_back(std::move(copy));
  return done[mask] = result;
}

void fold_unit_reshapes(Region& body) {
  auto users = users_of(body);
  const bool has_mma = contains(body, OpKind::mma);
  std::vector<Operation*> dead;
  std::vector<std::pair<Operation*, const Operation*>> reloads;  // a column's reshape, the shared load
  std::vector<Operation*> stores;  // reshapes into unit dimensions that only a store reads
  walk(body, [&](Operation& op) {
    if (!unit_reshape(op) || op.has_attr("box")) return;
    Operation* load = op.operand(0)->defining_op();
    const std::vector<Operation*>& uses = users[op.result()];
    // Every use an mma a or b, or a transpose whose every use is one (a tile read both ways).
    const bool feeds_mma = !uses.empty() && std::all_of(uses.begin(), uses.end(), [&](const Operation* user) {
      if (user->kind() == OpKind::transpose) return only_mma_operands(users, user->result());
      return user->kind() == OpKind::mma && user->operand(2) != op.result();
    });
    const bool drops = op.result()->type().rank() == 2;  // else it adds the unit dimensions
    const bool column = op.operand(0)->type().rank() == 1;  // a vector read as a column
    if (drops && load && load->kind() == OpKind::load && !load->has_attr("box") && users[load->result()].size() == 1 &&
        (feeds_mma || !has_mma || column)) {
      std::vector<Attribute> box;
      for (int64_t extent : load->result()->type().shape()) box.emplace_back(extent);
      load->set_attr("box", Attribute(std::move(box)));
      load->result()->set_type(op.result()->type());
      if (!op.result()->name_hint().empty()) load->result()->set_name_hint(op.result()->name_hint());
      replace_all_uses(body, op.result(), load->result());
      dead.push_back(&op);
      return;
    }
    // A vector loaded once and used as a column and otherwise: the column gets a load of its own.
    if (drops && column && load && load->kind() == OpKind::load && !load->has_attr("box")) {
      reloads.emplace_back(&op, load);
      return;
    }
    if (!drops && uses.size() == 1 && uses.front()->kind() == OpKind::store && !uses.front()->has_attr("box") &&
        uses.front()->operands().back() == op.result() && uses.front()->operand(0) != op.result())
      stores.push_back(&op);
  });
  // A store of a reshape into unit dimensions stores the tile through a box. A masked one's mask is
  // computed again at the tile's shape (mask_at_tile_shape), after the walk, which must not see
  // ops inserted; where it cannot be (or for a column's vector), the store keeps its reshape.
  for (Operation* reshape : stores) {
    Operation& store = *users[reshape->result()].front();
    if (store_mask(store)) {
      if (reshape->result()->type().rank() < 3) continue;
      std::unordered_map<Value*, Value*> done;
      std::vector<std::unique_ptr<Operation>> built;
      Value* mask = mask_at_tile_shape(store.operand(store.num_operands() - 2), built, done);
      if (!mask) continue;
      Region& region = *store.parent_region();
      for (auto& copy : built) region.insert(region.position_of(&store), std::move(copy));
      store.set_operand(store.num_operands() - 2, mask);
    }
    std::vector<Attribute> box;
    for (int64_t extent : reshape->result()->type().shape()) box.emplace_back(extent);
    store.set_attr("box", Attribute(std::move(box)));
    store.set_operand(store.num_operands() - 1, reshape->operand(0));
    dead.push_back(reshape);
  }
  for (Operation* op : dead) op->parent_region()->take(op->parent_region()->position_of(op));
  for (auto [reshape, load] : reloads) {
    auto column = std::make_unique<Operation>(OpKind::load, load->location());
    for (Value* operand : load->operands()) column->add_operand(operand);
    for (const auto& [name, value] : load->attributes()) column->set_attr(name, value);
    column->set_attr("box", Attribute(std::vector<Attribute>{Attribute(load->result()->type().shape()[0])}));
    Value* result = column->add_result(reshape->result()->type());
    result->set_name_hint(reshape->result()->name_hint());
    Value* old = reshape->result();
    Region& region = *reshape->parent_region();
    const size_t position = region.position_of(reshape);
    std::unique_ptr<Operation> taken = region.take(position);
    region.insert(position, std::move(column));
    replace_all_uses(body, old, result);
  }
}

// A tile read as A by one mma and as B by another (or as both by one: X·X) becomes two TMA boxes
// of the same memory, the second just after the first: the backends give a stage buffer one
// role. `position`: the tma_load's in `region`.
void split_roles(Region& body, Region& region, size_t& position) {
  Operation& load = *region.operations()[position];
  Value* result = load.result();
  bool as_a = false, as_b = false;
  walk(body, [&](Operation& user) {
    if (user.kind() != OpKind::mma) return;
    as_a = as_a || user.operand(0) == result;
    as_b = as_b || user.operand(1) == result;
  });
  if (!as_a || !as_b) return;
  auto copy = std::make_unique<Operation>(OpKind::tma_load, load.location());
  for (Value* operand : load.operands()) copy->add_operand(operand);
  for (const auto& [name, value] : load.attributes()) copy->set_attr(name, value);
  Value* b = copy->add_result(result->type());
  b->set_name_hint(result->name_hint());
  region.insert(++position, std::move(copy));
  walk(body, [&](Operation& user) {
    if (user.kind() == OpKind::mma && user.operand(1) == result) user.set_operand(1, b);
  });
}

// The load at `i` in `region` becomes a tma_load of the same operands and attributes whose result,
// in shared memory, every use of the load's reads.
void replace_with_tma_load(Region& body, Region& region, size_t i) {
  const Operation& load = *region.operations()[i];
  auto replacement = std::make_unique<Operation>(OpKind::tma_load, load.location());
  for (Value* operand : load.operands()) replacement->add_operand(operand);
  for (const auto& [name, value] : load.attributes()) replacement->set_attr(name, value);
  Value* result = replacement->add_result(load.result()->type().with_space(MemorySpace::smem));
  result->set_name_hint(load.result()->name_hint());
  Value* old = load.result();
  std::unique_ptr<Operation> taken = region.take(i);
  region.insert(i, std::move(replacement));
  replace_all_uses(body, old, result);
}

// Whether only elementwise ops (same-shaped results, at least one of them: `through_elementwise`
// says whether `value` is one's), slices, concats and interleaves carry `value` into the B of
// mmas, directly or through a transpose only mmas read as B: a dequantized weight,
// cast(cast(load Wq[k, n] : <BK, BN>, f32) * scale, bf16), which the tensor-core backend computes
// element by element into shared memory before the mma reads it.
bool into_computed_b(const std::unordered_map<const Value*, std::vector<Operation*>>& users, const Value* value,
                     bool through_elementwise) {
  auto found = users.find(value);
  if (found == users.end() || found->second.empty()) return false;
  return std::all_of(found->second.begin(), found->second.end(), [&](const Operation* user) {
    if (user->kind() == OpKind::mma)
      return through_elementwise && user->operand(1) == value && user->operand(0) != value && user->operand(2) != value;
    if (user->kind() == OpKind::transpose) {
      if (!through_elementwise) return false;
      auto readers = users.find(user->result());
      return readers != users.end() && !readers->second.empty() &&
             std::all_of(readers->second.begin(), readers->second.end(), [&](const Operation* mma) {
               return mma->kind() == OpKind::mma && mma->operand(1) == user->result() &&
                      mma->operand(0) != user->result() && mma->operand(2) != user->result();
             });
    }
    return carries_into_computed_b(*user, *value) && into_computed_b(users, user->result(), true);
  });
}

}  // namespace

bool carries_into_computed_b(const Operation& user, const Value& input) {
  if (user.num_results() != 1) return false;
  // Columns of it (a slice), or it beside others along the columns (a concat: two int4 halves of
  // a packed byte, side by side along K) or in turn with them (an interleave: the halves of
  // sequentially packed bytes): the backend reads each element where it lies.
  if (user.kind() == OpKind::slice || user.kind() == OpKind::concat || user.kind() == OpKind::interleave)
    return user.result()->type().rank() == 2;
  return user.info().has(kElementwise) && user.result()->type().shape() == input.type().shape();
}

namespace {

// Whether the loop `region` belongs to still fits the target's shared memory with a stage buffer
// of `extra` more bytes a slot: its TMA-loaded tiles and `extra`, `pipeline` slots deep (the
// depth materialize-schedule gives them at least), and one staging of each computed B (the B of
// an mma that no TMA load fills). An estimate before the schedule and the layout, which decide
// the bytes (the backend reports what does not fit); barriers and alignment take the margin.
bool fits_shared_memory(const Region& region, int64_t extra, int64_t budget) {
  const Operation* loop = region.parent_op();
  const int64_t depth = loop && loop->kind() == OpKind::for_ ? std::max<int64_t>(1, loop->int_attr("pipeline", 1)) : 1;
  int64_t slot = extra, staging = 0;
  auto bytes = [](const Type& tile) { return tile.element_count() * byte_size(tile.element()); };
  for (const auto& op : region.operations()) {
    if (op->kind() == OpKind::tma_load) slot += bytes(op->result()->type());
    if (op->kind() == OpKind::mma) {
      const Operation* b = op->operand(1)->defining_op();
      if (!b || b->kind() != OpKind::tma_load) staging += bytes(op->operand(1)->type());
    }
  }
  constexpr int64_t kMargin = 2048;  // barriers, the base's alignment
  return slot * depth + staging + kMargin <= budget;
}

// Phase 4: a 2-D load that only elementwise ops carry into mmas' B becomes a tma_load with a
// shared-memory result; the elementwise ops then read it there (a quantized weight is copied by
// TMA, not read element by element from global memory). Element types and row lengths TMA copies
// and the tensor-core stage buffers hold.
void promote_computed_b_inputs(Region& body, int64_t shared_budget) {
  auto users = users_of(body);
  std::function<void(Region&)> visit = [&](Region& region) {
    auto& ops = region.operations();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      for (size_t r = 0; r < op.num_regions(); ++r) visit(op.region(r));
      if (op.kind() != OpKind::load || op.result()->type().rank() != 2 || !into_computed_b(users, op.result(), false))
        continue;
      const ScalarKind element = op.result()->type().element();
      if (element != ScalarKind::i8 && element != ScalarKind::u8 && element != ScalarKind::f8e4m3 &&
          element != ScalarKind::f8e5m2 && element != ScalarKind::bf16 && element != ScalarKind::f16)
        continue;
      // Rows a shared-memory swizzle takes (32 or 64 bytes, or whole 128-byte rows); a narrower
      // tile stays a register load.
      const int64_t row_bytes = op.result()->type().shape()[1] * byte_size(element);
      if (row_bytes != 32 && row_bytes != 64 && row_bytes % 128 != 0) continue;
      if (!fits_shared_memory(region, op.result()->type().element_count() * byte_size(element), shared_budget))
        continue;
      replace_with_tma_load(body, region, i);
    }
  };
  visit(body);
}

// A load read by mmas and by other ops too, where an mma reads it as B or transposed
// (`b = load B[k, n]; acc = mma(a, b, acc); store BMax[0, 0] max= max(abs(cast(b, f32)))`, or a
// K read as K and Kᵀ and also reduced), gets a second load just after it that every mma use reads
// (directly, or through a transpose only mmas read); promote_kernel then makes that one TMA boxes,
// as for any load only mmas read (WGMMA and tcgen05 read B from shared memory only), and the first
// keeps the other uses. A load that mmas read only as A, directly, stays one register load: a
// register A.
void split_mma_loads(Region& body) {
  auto users = users_of(body);
  std::vector<Operation*> loads;
  walk(body, [&](Operation& op) {
    if (op.kind() == OpKind::load) loads.push_back(&op);
  });
  for (Operation* load : loads) {
    Value* value = load->result();
    std::vector<std::pair<Operation*, size_t>> mma_reads;  // (user, operand) to read the second load
    bool other = false, needs_shared = false;
    for (Operation* user : users[value]) {
      if (user->kind() == OpKind::mma && user->operand(2) != value) {
        for (size_t k = 0; k < 2; ++k)
          if (user->operand(k) == value) {
            mma_reads.emplace_back(user, k);
            needs_shared = needs_shared || k == 1;
          }
      } else if (user->kind() == OpKind::transpose && only_mma_operands(users, user->result())) {
        mma_reads.emplace_back(user, 0);
        needs_shared = true;
      } else {
        other = true;
      }
    }
    if (mma_reads.empty() || !other || !needs_shared) continue;
    ValueMapping same;
    std::unique_ptr<Operation> copy = clone_operation(*load, same);
    for (auto [user, k] : mma_reads) user->set_operand(k, copy->result());
    Region& region = *load->parent_region();
    region.insert(region.position_of(load) + 1, std::move(copy));
  }
}

void promote_kernel(Region& body, int64_t shared_budget) {
  fold_unit_reshapes(body);
  split_mma_loads(body);
  std::unordered_map<const Value*, int> mma_uses, other_uses, uses;
  walk(body, [&](Operation& op) {
    for (size_t i = 0; i < op.num_operands(); ++i) {
      (op.kind() == OpKind::mma && i < 2 ? mma_uses : other_uses)[op.operand(i)]++;
      uses[op.operand(i)]++;
    }
  });
  // transpose(load T[n, k] : <BN, BK>) used only as mma operands becomes one
  // `tma_load T, n, k {transposed} : tile<BK x BN, smem>`: the box is read as stored and the
  // descriptors say so (a K-major B, an MN-major A); no element moves. The load may have other
  // uses, each an mma operand or such a transpose.
  auto is_mma_transpose = [&](const Value* transposed) {  // a transpose's result
    return mma_uses.count(transposed) && mma_uses[transposed] == uses[transposed];
  };
  std::unordered_map<const Value*, int> transposes_of;  // how many mma-only transposes read each value
  walk(body, [&](Operation& op) {
    if (op.kind() == OpKind::transpose && is_mma_transpose(op.result())) ++transposes_of[op.operand(0)];
  });
  auto only_mma_operands = [&](const Value* value) {
    return uses[value] == mma_uses[value] + transposes_of[value];
  };
  // The one role (0: A, 1: B) every mma use of `value` gives it; -1 when there are both.
  auto role_of = [&](const Value* value) {
    int role = -2;
    walk(body, [&](Operation& user) {
      if (user.kind() != OpKind::mma) return;
      for (int i = 0; i < 2; ++i)
        if (user.operand(static_cast<size_t>(i)) == value) role = role == -2 || role == i ? i : -1;
    });
    return role;
  };
  // Transposed boxes made so far, per load, region and role: a later transpose of the same load in
  // the same role reads the same box (grouped-query heads sharing K).
  std::map<std::tuple<const Value*, const Region*, int>, Value*> boxes;
  std::vector<Operation*> dead;  // loads whose every use became a transposed box
  std::function<void(Region&)> fold_transposes = [&](Region& region) {
    auto& ops = region.operations();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      for (size_t r = 0; r < op.num_regions(); ++r) fold_transposes(op.region(r));
      if (op.kind() != OpKind::transpose || !is_mma_transpose(op.result())) continue;
      Operation* load = op.operand(0)->defining_op();
      if (!load || load->kind() != OpKind::load || !only_mma_operands(load->result())) continue;
      const int role = role_of(op.result());
      Value* old = op.result();
      if (auto box = boxes.find({load->result(), &region, role}); role >= 0 && box != boxes.end()) {
        replace_all_uses(body, old, box->second);
        std::unique_ptr<Operation> taken = region.take(i--);  // the next op is at i + 1 again
      } else {
        auto replacement = std::make_unique<Operation>(OpKind::tma_load, load->location());
        for (Value* operand : load->operands()) replacement->add_operand(operand);
        for (const auto& [name, value] : load->attributes()) replacement->set_attr(name, value);
        replacement->set_attr("transposed", Attribute());
        Value* result = replacement->add_result(op.result()->type().with_space(MemorySpace::smem));
        result->set_name_hint(op.result()->name_hint().empty() ? load->result()->name_hint()
                                                               : op.result()->name_hint());
        std::unique_ptr<Operation> taken = region.take(i);
        region.insert(i, std::move(replacement));
        replace_all_uses(body, old, result);
        if (role >= 0) boxes[{load->result(), &region, role}] = result;
        split_roles(body, region, i);  // mma(t, t): a box per role
      }
      // The load stays where it has other uses (the same tile as-is, or another transpose): each
      // of those gets its own TMA box (FlashAttention's backward reads Q and dO both ways).
      --uses[load->result()];
      --transposes_of[load->result()];
      if (--other_uses[load->result()] == 0) other_uses.erase(load->result());
      if (uses[load->result()] == 0) dead.push_back(load);
    }
  };
  fold_transposes(body);
  // After the walk: a load removed from an outer region while an inner one is walked would shift
  // the ops the outer walk has yet to visit.
  for (Operation* load : dead) load->parent_region()->take(load->parent_region()->position_of(load));
  std::function<void(Region&)> visit = [&](Region& region) {
    auto& ops = region.operations();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      for (size_t r = 0; r < op.num_regions(); ++r) visit(op.region(r));
      if (op.kind() != OpKind::load || !mma_uses.count(op.result()) || other_uses.count(op.result())) continue;
      replace_with_tma_load(body, region, i);
      split_roles(body, region, i);
    }
  };
  visit(body);
  promote_computed_b_inputs(body, shared_budget);
}

}  // namespace

bool promote_mma_operands(Module& module, PassContext& ctx) {
  for (auto& kernel : module.kernels()) promote_kernel(kernel->region(), ctx.target.shared_memory_bytes);
  return true;
}

}  // namespace tilec
