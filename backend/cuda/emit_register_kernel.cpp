// backend/cuda/emit_register_kernel.cpp — a plain kernel as register code (see the header).
//
// Every tile value V of shape (r, c) is `T V[n]`, n = layout.slots_of({r, c}); slot k is
// (row_slot, column_slot, lane-of-vector) in row-major order. Its element coordinates within
// the tile are
//   row    = row_slot · thread_rows + thread_row                          (r > 1, else 0)
//   column = (column_slot · threads_per_row + thread_column) · V + lane   (c > 1, else 0)
// An operand of shape (r', c') broadcast to (r, c) reads its own slot of the same coordinates:
// the slot with the dims where it has extent 1 dropped. Loops over slots carry `#pragma unroll`
// and constant bounds, so nvcc keeps the arrays in registers and folds every index.
// Arithmetic per element is BodyEmitter's (the same expression as the shared-memory form and
// the interpreter); only reductions combine in another order (docs/backend_cuda.md).
// Invariants relied on: the module verified; every scalar uniform across the CTA (so a barrier
// inside for/if is reached by every thread); choose_register_layout accepted the kernel.
#include "backend/cuda/emit_register_kernel.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "backend/cuda/cuda_syntax.h"
#include "backend/cuda/element_spellings.h"
#include "backend/cuda/emit_kernel_body.h"
#include "ir/fold.h"

namespace tilec::cuda {

namespace {

// Whether a cast to index reads a value computed from memory (an id loaded from a tensor, as an
// embedding gather's): such a coordinate may need all 64 bits, as the interpreter's, where the
// 32-bit instantiation would cut an id of 2^32 + 1 to row 1 instead of reading zeros outside the
// table. A value carried around a loop counts as read from memory (not followed).
bool coordinates_from_memory(const Operation& kernel) {
  bool found = false;
  walk(kernel.region(), [&](const Operation& op) {
    if (found || op.kind() != OpKind::cast || op.result()->type().element() != ScalarKind::index ||
        op.operand(0)->type().element() == ScalarKind::index)
      return;
    found = computed_from(op.operand(0), [](const Value& value) {
      const Operation* owner = value.is_argument() ? value.owner_region()->parent_op() : value.defining_op();
      return owner && ((value.is_argument() && owner->kind() == OpKind::for_ && value.index() > 0) ||
                       owner->info().has(kReadsMemory));
    });
  });
  return found;
}

// A bound scale·T + offset, T a host expression of the launcher's parameters that is never
// negative ("" for none: the bound is the number `offset`).
struct Bound {
  std::string text;
  double scale = 1, offset = 0;

  static Bound of_number(double number) { return {"", 0, number}; }
  static Bound of_text(std::string text) { return {std::move(text), 1, 0}; }
  bool constant() const { return text.empty(); }
  // Whether this bound is at least `other` for every value of T (the same T, or a number).
  bool covers(const Bound& other) const {
    return (other.constant() || (text == other.text && scale >= other.scale)) && offset >= other.offset;
  }
  std::string spelled() const {
    if (constant()) return fmt::format("{:.1f}", offset);
    std::string scaled = text;
    if (scale != 1 && scale < 1 && std::floor(1 / scale) == 1 / scale) scaled = fmt::format("{} / {:.1f}", text, 1 / scale);
    else if (scale != 1) scaled = fmt::format("{} * {}", text, scale);
    if (offset == 0) return scaled;
    return fmt::format("({} {} {:.1f})", scaled, offset < 0 ? '-' : '+', std::fabs(offset));
  }
};

// Host expressions (doubles, from the launcher's parameters) bounding |v| for each index value a
// register kernel computes: the launcher takes the 32-bit instantiation only when every bound,
// and every coordinate's reach a tile past it, stays below 2^31. Tensors of at most 2^30
// elements keep in-bounds coordinates small, but a coordinate computed past the tensor must
// still read zeros: `load X at [i * 2^30]` wrapped in int32_t to element 0 at i = 4 (found by a
// helper auditing the docs). Doubles are exact below 2^53 and keep their order above it, so a
// bound never wraps. nullopt: no bound the launcher can compute (a value read from memory, an
// index carried around a loop, a float cast to an index); the kernel then runs in 64 bits.
class IndexBounds {
 public:
  explicit IndexBounds(const KernelPlan& plan) : plan_(plan) {}

  std::optional<Bound> of(const Value* value) {
    auto found = memo_.find(value);
    if (found != memo_.end()) return found->second;
    memo_[value] = std::nullopt;  // a cycle (none in SSA but through loop arguments) stays unknown
    std::optional<Bound> bound = compute(value);
    if (bound && bound->text.size() > 4000) bound.reset();  // a deep expression: not worth the launcher's text
    memo_[value] = bound;
    return bound;
  }

  // The bounds of every index value of the kernel and of every load's and store's coordinate
  // reach that depend on the launch (constants are checked here), each left out where another
  // covers it; false when one has no bound or a constant one is 2^31 or more.
  bool collect(const Operation& kernel, std::vector<std::string>& spelled) {
    bool known = true;
    std::vector<Bound> bounds;
    auto add = [&](const std::optional<Bound>& bound) {
      if (!bound || (bound->constant() && !(bound->offset < 2147483647.0))) known = false;
      if (!bound || bound->constant()) return;
      for (const Bound& kept : bounds)
        if (kept.covers(*bound)) return;
      std::erase_if(bounds, [&](const Bound& kept) { return bound->covers(kept); });
      bounds.push_back(*bound);
    };
    walk(kernel.region(), [&](const Operation& op) {
      if (!known) return;
      for (size_t r = 0; r < op.num_results(); ++r)
        if (const Value* result = op.result(r); result->type().element() == ScalarKind::index &&
                                                (result->type().is_scalar() || result->type().is_tile()))
          add(of(result));
      if (op.kind() != OpKind::load && op.kind() != OpKind::store) return;
      // A coordinate c moves the tile to c·extent (tile coordinates) or c (elements), and its
      // elements reach a tile's extent past that.
      // The extent along each axis is the box's (memory_box); a transposed store's, or one that
      // does not line up, is the tile's largest.
      const Type& tile = moved_tile(op)->type();
      const size_t coordinates = coordinate_count(op);
      std::vector<int64_t> box = memory_box(op, tile, coordinates);
      if (box.size() != coordinates || op.has_attr("transposed")) {
        int64_t largest = 1;
        for (int64_t e : tile.shape()) largest = std::max(largest, e);
        box.assign(coordinates, largest);
      }
      for (size_t d = 0; d < coordinates; ++d) {
        std::optional<Bound> at = of(op.operand(1 + d));
        const double extent = static_cast<double>(box[d]);
        if (at && op.has_attr("elements")) at = plus(*at, extent);
        else if (at) at = times(plus(*at, 1), extent);
        add(at);
      }
    });
    // A tensor's extent D is at most 2^30 already (index32_fits): a bound s·D + c below 2^31 at
    // D = 2^30 is left out.
    walk(kernel.region(), [&](const Operation& op) {
      if (op.kind() != OpKind::dim) return;
      const std::string extent = of(op.result())->text;
      std::erase_if(bounds, [&](const Bound& kept) {
        return kept.text == extent && kept.scale * 1073741824.0 + kept.offset < 2147483647.0;
      });
    });
    for (const Bound& bound : bounds) spelled.push_back(bound.spelled());
    return known;
  }

 private:
  static Bound plus(Bound a, double number) {
    a.offset += number;
    return a;
  }
  static Bound times(Bound a, double factor) {  // factor >= 0
    a.scale *= factor;
    a.offset *= factor;
    if (a.scale == 0) a.text.clear();
    return a;
  }
  static Bound sum(const Bound& a, const Bound& b) {
    if (b.constant()) return plus(a, b.offset);
    if (a.constant()) return plus(b, a.offset);
    if (a.text == b.text) return {a.text, a.scale + b.scale, a.offset + b.offset};
    return plus(Bound::of_text(fmt::format("({} + {})", Bound{a.text, a.scale, 0}.spelled(), Bound{b.text, b.scale, 0}.spelled())),
                a.offset + b.offset);
  }
  static Bound product(const Bound& a, const Bound& b) {
    if (b.constant()) return times(a, b.offset);
    if (a.constant()) return times(b, a.offset);
    return Bound::of_text(fmt::format("({} * {})", a.spelled(), b.spelled()));
  }
  static Bound larger(const Bound& a, const Bound& b) {
    if (a.covers(b)) return a;
    if (b.covers(a)) return b;
    if (a.text == b.text) return {a.text, std::max(a.scale, b.scale), std::max(a.offset, b.offset)};
    return Bound::of_text(fmt::format("std::fmax({}, {})", a.spelled(), b.spelled()));
  }
  // Below an exclusive upper end `a`: a - 1 (an empty range runs nothing, so a negative bound
  // never meets a value).
  static Bound below(const Bound& a) { return plus(a, -1); }
  // The constant divisor of a div or cdiv, when it is one other than 0.
  static std::optional<double> constant_divisor(const Operation& op) {
    const Operation* divisor = op.operand(1)->defining_op();
    if (!divisor || divisor->kind() != OpKind::constant || !divisor->attr("value") || !divisor->attr("value")->is_int() ||
        divisor->int_attr("value") == 0)
      return std::nullopt;
    return std::fabs(static_cast<double>(divisor->int_attr("value")));
  }

  std::optional<Bound> compute(const Value* value) {
    if (value->is_argument()) {
      const Operation* owner = value->owner_region()->parent_op();
      if (owner && owner->kind() == OpKind::kernel) {
        for (const ParamPlan& param : plan_.params)
          if (param.value == value && !is_float(value->type().element()))
            return Bound::of_text(fmt::format("std::fabs(double({}))", param.name));
        return std::nullopt;
      }
      // A loop's induction variable lies between its bounds; carried values are not followed.
      if (owner && owner->kind() == OpKind::for_ && value->index() == 0) {
        auto low = of(owner->operand(0)), high = of(owner->operand(1));
        if (!low || !high) return std::nullopt;
        return larger(*low, below(*high));
      }
      return std::nullopt;
    }
    const Operation& op = *value->defining_op();
    // An unsigned value a difference, a negation or a complement made wraps to the top of its type
    // (0 - 1 in u32 is 2^32 - 1), however small its operands (a hunt's cast(s - 1, index)).
    if (const std::optional<IntegerRange> range = integer_range(value->type().element());
        range && range->lowest == 0 && value->type().element() != ScalarKind::i1 &&
        (op.kind() == OpKind::sub || op.kind() == OpKind::neg || op.kind() == OpKind::not_))
      return Bound::of_number(static_cast<double>(range->highest));
    auto a = op.num_operands() > 0 ? of(op.operand(0)) : std::nullopt;
    auto b = op.num_operands() > 1 ? of(op.operand(1)) : std::nullopt;
    switch (op.kind()) {
      case OpKind::constant:
        if (const Attribute* v = op.attr("value"); v && v->is_int())
          return Bound::of_number(std::fabs(static_cast<double>(v->as_int())));
        return std::nullopt;
      case OpKind::dim: return Bound::of_text(fmt::format("double({})", plan_.expression(value)));  // >= 0: index32_fits
      case OpKind::grid_ids: {  // 0 <= coordinate < extent
        auto extent = of(op.operand(value->index()));
        if (!extent) return std::nullopt;
        return below(*extent);
      }
      case OpKind::sm_count: return Bound::of_number(1 << 20);  // an SM count: far below any bound that matters
      case OpKind::iota: return Bound::of_number(static_cast<double>(value->type().element_count()));
      case OpKind::zeros: return Bound::of_number(0);
      case OpKind::cast: {
        ScalarKind from = op.operand(0)->type().element();
        if (from == ScalarKind::i1) return Bound::of_number(1);
        if (is_float(from)) return std::nullopt;
        // A value that may be negative wraps to the top of an unsigned type (cast(-1, u32) is
        // 2^32 - 1), however small its magnitude: bounded by the type's largest.
        const std::optional<IntegerRange> to = integer_range(value->type().element());
        const std::optional<IntegerRange> range = integer_range(from);
        if (to && to->lowest == 0 && !(range && range->lowest == 0) && !never_negative(op.operand(0)))
          return Bound::of_number(static_cast<double>(to->highest));
        if (a) return a;
        // A narrow integer computed otherwise lies in its type's range.
        if (range)
          return Bound::of_number(static_cast<double>(std::max(-range->lowest, range->highest)));
        return std::nullopt;
      }
      case OpKind::shl: {
        const Operation* shift = op.operand(1)->defining_op();
        if (!a || !shift || shift->kind() != OpKind::constant || !shift->attr("value")->is_int()) return std::nullopt;
        const int64_t n = shift->int_attr("value");
        if (n < 0 || n > 63) return Bound::of_number(0);  // shl_i64 gives 0
        return times(*a, std::ldexp(1.0, static_cast<int>(n)));
      }
      case OpKind::select: {
        auto c = of(op.operand(2));
        if (!b || !c) return std::nullopt;
        return larger(*b, *c);
      }
      default: break;
    }
    if (!a) return std::nullopt;
    switch (op.kind()) {
      // |a / d| <= |a| / |d| and |cdiv(a, d)| <= |a| / |d| + 1 for a constant d other than 0;
      // otherwise |a / b| <= max(|a|, 1) (by 0: -1, by -1: -a) and |cdiv(a, b)| <= |a| + 1.
      case OpKind::div:
        if (auto d = constant_divisor(op)) return times(*a, 1 / *d);
        return larger(*a, Bound::of_number(1));
      case OpKind::cdiv:
        if (auto d = constant_divisor(op)) return plus(times(*a, 1 / *d), 1);
        return plus(*a, 1);
      case OpKind::not_: return plus(*a, 1);
      case OpKind::rem: case OpKind::neg: case OpKind::abs: case OpKind::shr: case OpKind::reduce_max:
      case OpKind::reduce_min: case OpKind::scan_max: case OpKind::scan_min: case OpKind::reshape:
      case OpKind::transpose: case OpKind::item:
        return a;
      case OpKind::reduce_sum: case OpKind::scan_sum:
        return times(*a, static_cast<double>(op.operand(0)->type().element_count()));
      default: break;
    }
    if (!b) return std::nullopt;
    switch (op.kind()) {
      case OpKind::add: case OpKind::sub: return sum(*a, *b);
      case OpKind::mul: return product(*a, *b);
      case OpKind::max: case OpKind::min: return larger(*a, *b);
      case OpKind::and_: case OpKind::or_: case OpKind::xor_:  // below twice the larger, in two's complement
        return plus(times(larger(*a, *b), 2), 1);
      default: return std::nullopt;
    }
  }

  const KernelPlan& plan_;
  std::unordered_map<const Value*, std::optional<Bound>> memo_;
};

int log2_of(int64_t power_of_two) {
  int bits = 0;
  while ((int64_t{1} << bits) < power_of_two) ++bits;
  return bits;
}

class RegisterEmitter {
 public:
  RegisterEmitter(const KernelPlan& plan, const RegisterLayout& layout, std::string& out)
      : plan_(plan), layout_(layout), out_(out), names_(plan.names), scalar_(plan, BodyMode::cta, writer_) {
    scalar_.set_index_type("Index");
    slot_ = names_.unique("k");
    vector_slot_ = names_.unique("s");
    part_ = names_.unique("j");
    row_ = names_.unique("row");
    column_ = names_.unique("column");
    warps_ = layout_.threads / 32;
    // Tensors the kernel both stores and loads: their threads may hold different elements of
    // the two tiles (the layouts follow the shapes), so every access waits for the earlier ones.
    // Tensors two stores may write one element of from different threads (`store Y[0] max= x;`
    // then `store Y at [7] min= ...`, or one store at element coordinates that move in a loop):
    // each store waits for the earlier ones, so the element is written in program order.
    std::set<const Value*> loaded;
    std::map<const Value*, std::vector<const Operation*>> stores;
    walk(plan_.kernel->region(), [&](const Operation& op) {
      if (op.kind() == OpKind::store) stores[op.operand(0)].push_back(&op);
      if (op.kind() == OpKind::load || op.kind() == OpKind::tma_load) loaded.insert(op.operand(0));
    });
    for (const auto& [tensor, ops] : stores) {
      if (loaded.count(tensor)) stored_and_loaded_.insert(tensor);
      for (size_t i = 0; i < ops.size(); ++i)
        for (size_t j = i; j < ops.size(); ++j)
          if (!stores_in_thread_order(*ops[i], *ops[j])) stored_twice_.insert(tensor);
    }
  }

  // Whether two stores of one tensor (or one store with itself, over the iterations of its loops)
  // need no barrier between them: both combine the same way (atomics that commute), or tiles of
  // one shape at tile coordinates going out the same way (so a thread holds the same element of
  // each) with the same coordinates (each element written by one thread, in program order) or
  // coordinates that differ only in one dimension, by two different constants (no element in
  // common: rope's two halves of a row). A store at element coordinates that a loop moves is
  // paired with itself: its tile shifts by elements, from thread to thread.
  bool stores_in_thread_order(const Operation& a, const Operation& b) const {
    if (accumulates(a) && store_combine(a) == store_combine(b)) return true;
    if (&a == &b) return !(a.has_attr("elements") || a.has_attr("box")) || !coordinates_move_in_a_loop(a);
    if (a.has_attr("elements") || b.has_attr("elements") || a.has_attr("box") || b.has_attr("box") ||
        a.num_operands() != b.num_operands() || a.operands().back()->type() != b.operands().back()->type() ||
        stages_column(a) != stages_column(b))
      return false;
    int differing = 0;
    for (size_t i = 1; i <= coordinate_count(a); ++i) {
      if (a.operand(i) == b.operand(i)) continue;
      const std::optional<int64_t> x = constant_integer(a.operand(i)), y = constant_integer(b.operand(i));
      if (!x || !y) return false;
      if (*x != *y) ++differing;
    }
    return differing <= 1;
  }

  // Whether a coordinate of `store` is computed inside a loop around it (the loop's variable, or
  // from it).
  static bool coordinates_move_in_a_loop(const Operation& store) {
    for (const Operation* loop = store.parent_op(); loop; loop = loop->parent_op()) {
      if (loop->kind() != OpKind::for_) continue;
      for (size_t i = 1; i <= coordinate_count(store); ++i)
        if (defined_inside(*store.operand(i), *loop)) return true;
    }
    return false;
  }

  // Whether a store goes out through emit_column_store: a plain store of a <rows, 1> column into
  // a [M, 1] matrix, staged in shared memory and written by the first threads, several rows each.
  bool stages_column(const Operation& op) const {
    if (op.kind() != OpKind::store || accumulates(op) || store_mask(op)) return false;
    const std::vector<int64_t>& shape = op.operands().back()->type().shape();
    const std::vector<std::string>& extents = plan_.tensor_dims.at(op.operand(0));
    const int64_t width = 16 / byte_size(op.operands().back()->type().element());
    return !op.has_attr("elements") && !op.has_attr("box") && shape.size() == 2 && extents.size() == 2 &&
           shape[1] == 1 && extents[1] == "1" && shape[0] == layout_.rows && layout_.rows != 1 &&
           shape[0] % width == 0 && shape[0] / width <= layout_.threads;
  }

  int64_t emit_kernel();
  int64_t reduction_bytes() const { return (uses_second_area_ ? 2 : 1) * area_bytes_; }
  int64_t shared_bytes() const { return reduction_bytes() + column_bytes_; }

 private:
  void comment(const Operation& op) { scalar_.emit_comment(op); }  // the shared-memory form's comment
  std::string type_of(ScalarKind kind) const {
    return kind == ScalarKind::index ? "Index" : std::string(element_type(kind));
  }
  int64_t slots(const Value* value) const { return layout_.slots_of(value->type().shape()); }
  // `#pragma unroll` and `for (int k = 0; k < count; ++k) {`, closed when the block ends.
  CodeWriter::Block open_loop(const std::string& variable, int64_t count) {
    writer_.line("#pragma unroll");
    return writer_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}) {{", variable, count));
  }
  void declare(const Value* value) {
    writer_.line(fmt::format("{} {}[{}];", type_of(value->type().element()), plan_.expression(value), slots(value)));
  }

  // Row slot, column slot and vector lane of slot `k` of a tile of shape `shape`.
  struct SlotParts {
    std::string row_slot, column_slot, lane;
  };
  SlotParts parts_of(const std::vector<int64_t>& shape, const std::string& k) const;
  // The slot, in an operand of shape `operand`, that broadcasts to slot `k` of shape `result`.
  std::string broadcast_slot(const std::vector<int64_t>& operand, const std::vector<int64_t>& result,
                             const std::string& k) const;
  std::string operand_element(const Value* operand, const std::vector<int64_t>& result, const std::string& k) const;
  // The element's coordinate within its tile along `axis`, for a slot split into `parts`.
  std::string coordinate(const std::vector<int64_t>& shape, int axis, const SlotParts& parts) const;
  // A C++ condition that slot `parts` lies inside the frame (empty when every slot does).
  std::string inside_frame(const std::vector<int64_t>& shape, const SlotParts& parts) const;
  // The condition that this thread is the one that writes a value replicated across threads
  // (empty when it is the only holder).
  std::string owns(const std::vector<int64_t>& shape) const;

  void emit_op(const Operation& op);
  void emit_scalar(const Operation& op);
  void emit_elementwise(const Operation& op);
  void emit_fill(const Operation& op);
  void emit_reduction(const Operation& op);
  void emit_memory(const Operation& op);
  std::string vector_start_check(const Operation& op, size_t column_operand, int64_t width) const;
  bool emit_column_store(const Operation& op);
  void emit_grid_ids(const Operation& op);
  void emit_for(const Operation& op);
  void emit_if(const Operation& op);
  void emit_copy(const Value* target, const Value* source);
  void emit_yield(const Region& region, const std::vector<const Value*>& targets);

  const KernelPlan& plan_;
  const RegisterLayout& layout_;
  std::set<const Value*> stored_and_loaded_;
  std::set<const Value*> stored_twice_;  // by two store ops that may share an element (stores_in_thread_order)
  std::string& out_;
  NameTable names_;
  std::string body_;  // the kernel's statements, written before its head (which needs their shared memory)
  CodeWriter writer_{body_, 1};
  BodyEmitter scalar_;  // op comments, scalar arithmetic and assignments, as the shared-memory form writes them
  std::string slot_, vector_slot_, part_, row_, column_;  // the emitter's own variables
  int64_t warps_ = 8;
  int nesting_ = 0;  // enclosing for and if ops
  int next_area_ = 0;
  int64_t area_bytes_ = 0;  // the largest reduction's partials; two areas alternate
  int64_t column_bytes_ = 0;  // the largest column staged for a vector store (after the areas)
  bool column_being_read_ = false;  // a staged column's storers may still read the staging
  bool uses_warp_ = false, uses_lane_ = false, uses_second_area_ = false;
};

RegisterEmitter::SlotParts RegisterEmitter::parts_of(const std::vector<int64_t>& shape, const std::string& k) const {
  int64_t width = layout_.width_of(shape), columns = layout_.column_slots_of(shape),
          rows = layout_.row_slots_of(shape);
  SlotParts parts;
  auto divide = [](const std::string& text, int64_t by) {
    return by == 1 ? text : fmt::format("{} / {}", grouped(text), by);
  };
  parts.lane = width == 1 ? "0" : fmt::format("{} % {}", grouped(k), width);
  std::string vector_index = divide(k, width);
  parts.column_slot = columns == 1 ? "0"
                      : rows == 1  ? vector_index
                                   : fmt::format("{} % {}", grouped(vector_index), columns);
  parts.row_slot = rows == 1 ? "0" : divide(k, width * columns);
  return parts;
}

std::string RegisterEmitter::broadcast_slot(const std::vector<int64_t>& operand, const std::vector<int64_t>& result,
                                            const std::string& k) const {
  // As many slots as the result: the dims the operand drops hold one slot each, so slot k is k.
  if (as_matrix(operand) == as_matrix(result) || layout_.slots_of(operand) == layout_.slots_of(result)) return k;
  if (layout_.slots_of(operand) == 1) return "0";
  SlotParts parts = parts_of(result, k);
  std::vector<std::string> terms;
  int64_t width = layout_.width_of(operand), columns = layout_.column_slots_of(operand);
  if (layout_.row_slots_of(operand) > 1 && parts.row_slot != "0")
    terms.push_back(width * columns == 1 ? parts.row_slot
                                         : fmt::format("{} * {}", grouped(parts.row_slot), width * columns));
  if (columns > 1 && parts.column_slot != "0")
    terms.push_back(width == 1 ? parts.column_slot : fmt::format("{} * {}", grouped(parts.column_slot), width));
  if (width > 1 && parts.lane != "0") terms.push_back(parts.lane);
  if (terms.empty()) return "0";
  std::string text;
  for (const std::string& term : terms) text += (text.empty() ? "" : " + ") + term;
  return text;
}

std::string RegisterEmitter::operand_element(const Value* operand, const std::vector<int64_t>& result,
                                             const std::string& k) const {
  if (!operand->type().is_tile()) return plan_.expression(operand);
  return fmt::format("{}[{}]", plan_.expression(operand), broadcast_slot(operand->type().shape(), result, k));
}

std::string RegisterEmitter::coordinate(const std::vector<int64_t>& shape, int axis, const SlotParts& parts) const {
  std::vector<int64_t> m = as_matrix(shape);
  if (m[static_cast<size_t>(axis)] == 1) return "0";
  if (axis == 0) {
    std::string slot =
        parts.row_slot == "0" ? "" : fmt::format("{} * {} + ", grouped(parts.row_slot), layout_.thread_rows);
    return layout_.thread_rows == 1 ? (parts.row_slot == "0" ? "0" : parts.row_slot) : slot + "thread_row";
  }
  std::string vector = parts.column_slot == "0" ? "thread_column"
                                                : fmt::format("{} * {} + thread_column", grouped(parts.column_slot),
                                                              layout_.threads_per_row);
  if (layout_.threads_per_row == 1) vector = parts.column_slot == "0" ? "0" : parts.column_slot;
  if (layout_.vector == 1) return vector;
  std::string text = fmt::format("{} * {}", grouped(vector), layout_.vector);
  return parts.lane == "0" ? text : text + " + " + parts.lane;
}

std::string RegisterEmitter::inside_frame(const std::vector<int64_t>& shape, const SlotParts& parts) const {
  std::vector<int64_t> m = as_matrix(shape);
  std::vector<std::string> checks;
  if (m[0] > 1 && layout_.padded_rows())
    checks.push_back(fmt::format("{} < {}", coordinate(shape, 0, parts), layout_.rows));
  if (m[1] > 1 && layout_.padded_columns())
    checks.push_back(fmt::format("{} < {}", coordinate(shape, 1, parts), layout_.columns));
  std::string text;
  for (const std::string& check : checks) text += (text.empty() ? "" : " && ") + check;
  return text;
}

std::string RegisterEmitter::owns(const std::vector<int64_t>& shape) const {
  std::vector<int64_t> m = as_matrix(shape);
  std::vector<std::string> checks;
  if ((m[0] == 1 || !layout_.distributed(0)) && layout_.thread_rows > 1) checks.push_back("thread_row == 0");
  if ((m[1] == 1 || !layout_.distributed(1)) && layout_.threads_per_row > 1) checks.push_back("thread_column == 0");
  std::string text;
  for (const std::string& check : checks) text += (text.empty() ? "" : " && ") + check;
  return text;
}

void RegisterEmitter::emit_op(const Operation& op) {
  if (plan_.launch_checks.count(&op)) return;  // the launcher's
  switch (op.kind()) {
    case OpKind::constant:
      if (!op.result()->name_hint().empty())
        writer_.line(fmt::format("const {} {} = {};", type_of(op.result()->type().element()),
                                 plan_.expression(op.result()),
                                 literal(*op.attr("value"), op.result()->type().element())));
      return;
    case OpKind::dim:
    case OpKind::return_:
    case OpKind::yield: return;
    case OpKind::grid_ids: emit_grid_ids(op); return;
    case OpKind::sm_count:
      writer_.line(fmt::format("const Index {} = {};", plan_.expression(op.result()),
                               op.has_attr("workers") ? std::to_string(op.int_attr("workers"))
                                                      : "static_cast<Index>(tilec_sm_count())"));
      return;
    case OpKind::for_: emit_for(op); return;
    case OpKind::if_: emit_if(op); return;
    case OpKind::load:
    case OpKind::tma_load:
    case OpKind::store: emit_memory(op); return;
    case OpKind::reduce_sum:
    case OpKind::reduce_max:
    case OpKind::reduce_min: emit_reduction(op); return;
    case OpKind::zeros:
    case OpKind::full:
    case OpKind::iota: emit_fill(op); return;
    // One matrix under two shapes (a row <N> as <1, N>; choose_register_layout leaves other
    // reshapes to shared memory): the same slots.
    case OpKind::reshape: {
      comment(op);
      declare(op.result());
      CodeWriter::Block loop = open_loop(slot_, slots(op.result()));
      writer_.line(fmt::format("{}[{}] = {}[{}];", plan_.expression(op.result()), slot_, plan_.expression(op.operand(0)),
                               slot_));
      return;
    }
    default: break;
  }
  if (op.result()->type().is_tile()) emit_elementwise(op);
  else emit_scalar(op);
}

void RegisterEmitter::emit_scalar(const Operation& op) {
  std::vector<std::string> args;
  for (const Value* operand : op.operands()) args.push_back(plan_.expression(operand));
  writer_.line(fmt::format("const {} {} = {};", type_of(op.result()->type().element()), plan_.expression(op.result()),
                           scalar_.element_expression(op, args)));
}

void RegisterEmitter::emit_elementwise(const Operation& op) {
  std::vector<int64_t> shape = op.result()->type().shape();
  std::vector<std::string> args;
  for (const Value* operand : op.operands()) args.push_back(operand_element(operand, shape, slot_));
  comment(op);
  declare(op.result());
  CodeWriter::Block loop = open_loop(slot_, slots(op.result()));
  writer_.line(fmt::format("{}[{}] = {};", plan_.expression(op.result()), slot_, scalar_.element_expression(op, args)));
}

void RegisterEmitter::emit_fill(const Operation& op) {
  const Type& type = op.result()->type();
  std::string value;
  if (op.kind() == OpKind::zeros) {
    value = zero_literal(type.element());
  } else if (op.kind() == OpKind::full) {
    value = plan_.expression(op.operand(0));
  } else {  // iota: the element's coordinate along `axis` (rank 1: the column)
    int axis = static_cast<int>(op.int_attr("axis"));
    if (type.rank() == 1) axis = 1;
    value = fmt::format("static_cast<{}>({})", type_of(type.element()),
                        coordinate(type.shape(), axis, parts_of(type.shape(), slot_)));
  }
  comment(op);
  declare(op.result());
  CodeWriter::Block loop = open_loop(slot_, slots(op.result()));
  writer_.line(fmt::format("{}[{}] = {};", plan_.expression(op.result()), slot_, value));
}

// A thread combines its own slots in increasing order, then the threads of its warp that hold
// other parts of the same output (butterfly: every one ends with the same bits, since a + b is
// b + a), then, if the reduced extent spans warps, the warps' partials in warp order.
void RegisterEmitter::emit_reduction(const Operation& op) {
  const Value* input = op.operand(0);
  const Value* result = op.result();
  std::vector<int64_t> in_shape = input->type().shape(), out_shape = result->type().shape();
  int axis = static_cast<int>(op.int_attr("axis"));
  if (in_shape.size() == 1) axis = 1;
  ScalarKind kind = input->type().element();
  bool floating = is_float(kind), sum = op.kind() == OpKind::reduce_sum;
  std::string accumulator = floating ? "float" : "int64_t";
  bool maximum = op.kind() == OpKind::reduce_max;
  // max_f32 (fmaxf) and min_f32 (fminf) return the other operand of a NaN, so NAN is their
  // identity, and a row of NaNs stays NaN as in the interpreter.
  std::string identity = sum ? (floating ? "0.0f" : "0") : floating ? "NAN" : maximum ? "INT64_MIN" : "INT64_MAX";
  auto combine = [&](const std::string& a, const std::string& b) {
    return combining_expression(op.kind(), floating, a, b);
  };
  auto widen = [&](const std::string& element) {
    if (floating) return kind == ScalarKind::f32 ? element : fmt::format("to_f32({})", element);
    return fmt::format("static_cast<int64_t>({})", element);
  };
  std::string narrow = kind == ScalarKind::f32 || kind == ScalarKind::i64 ? "{}"
                       : floating ? fmt::format("from_f32<{}>({{}})", element_type(kind))
                                  : fmt::format("static_cast<{}>({{}})", type_of(kind));

  // Input slots combined into output slot o: axis 1 walks a row's slots, axis 0 a column's.
  int64_t row_width = layout_.column_slots_of(in_shape) * layout_.width_of(in_shape);
  bool spread = as_matrix(in_shape)[static_cast<size_t>(axis)] > 1 && layout_.distributed(axis);
  int64_t count = !spread ? 1 : axis == 1 ? row_width : layout_.row_slots_of(in_shape);
  std::string o = names_.unique("o");
  auto input_slot = [&](const std::string& j) {
    if (!spread) return o;
    return axis == 1 ? fmt::format("{} * {} + {}", o, row_width, j) : fmt::format("{} * {} + {}", j, row_width, o);
  };

  // Thread bits of the reduced axis: columns are the low log2(threads_per_row) bits.
  int column_bits = log2_of(layout_.threads_per_row), all_bits = log2_of(layout_.threads);
  int low = axis == 1 ? 0 : column_bits, high = axis == 1 ? column_bits : all_bits;
  if (!spread) high = low;
  std::vector<int64_t> shuffle_masks;
  for (int bit = low; bit < std::min(high, 5); ++bit) shuffle_masks.push_back(int64_t{1} << bit);
  int warp_low = std::max(low, 5) - 5, warp_high = std::max(high, 5) - 5;
  int64_t warp_group = int64_t{1} << (warp_high - warp_low);  // warps holding parts of one output

  comment(op);
  declare(result);
  std::string partials;
  int64_t outputs = slots(result);
  if (warp_group > 1) {
    area_bytes_ = std::max(area_bytes_, outputs * warps_ * 32 * (floating ? 4 : 8));
    uses_second_area_ = uses_second_area_ || next_area_ == 1;
    partials = names_.unique(plan_.expression(result) + "_partials");
    writer_.line(fmt::format("{0}* const {1} = reinterpret_cast<{0}*>(shared_memory + {2});  // area {3}",
                             accumulator, partials, next_area_ == 0 ? "0" : "kReductionArea", next_area_));
    uses_warp_ = uses_lane_ = true;
  }
  auto step = [&](const std::string& j) {
    std::string element = widen(fmt::format("{}[{}]", plan_.expression(input), input_slot(j)));
    std::string text = fmt::format("acc = {};", combine("acc", element));
    std::string inside = inside_frame(in_shape, parts_of(in_shape, input_slot(j)));
    return inside.empty() ? text : fmt::format("if ({}) {}", inside, text);
  };
  {
    CodeWriter::Block loop = open_loop(o, outputs);
    writer_.line(fmt::format("{} acc = {};", accumulator, identity));
    if (count == 1) {
      writer_.line(step("0"));
    } else {
      writer_.line("#pragma unroll");
      writer_.line(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}) {2}", part_, count, step(part_)));
    }
    for (int64_t mask : shuffle_masks)
      writer_.line(
          fmt::format("acc = {};", combine("acc", fmt::format("__shfl_xor_sync(0xffffffffu, acc, {})", mask))));
    if (warp_group == 1) {
      writer_.line(fmt::format("{}[{}] = {};", plan_.expression(result), o, fmt::format(fmt::runtime(narrow), "acc")));
      return;
    }
    // Every lane writes its own partial: lane L of another warp of the group holds the same
    // output's other part (the group differs only in reduced warp bits, and the butterfly made
    // the lanes that differ in reduced lane bits equal).
    writer_.line(fmt::format("{}[({} * {} + warp) * 32 + lane] = acc;", partials, o, warps_));
  }
  writer_.line("__syncthreads();  // the warps' partials are written");
  int64_t group_mask = (warp_group - 1) << warp_low;
  std::string first_warp = fmt::format("(warp & ~{})", group_mask);
  {
    CodeWriter::Block loop = open_loop(o, outputs);
    writer_.line(fmt::format("{} acc = {}[({} * {} + {}) * 32 + lane];", accumulator, partials, o, warps_, first_warp));
    writer_.line("#pragma unroll");
    writer_.line(fmt::format(
        "for (int {0} = 1; {0} < {1}; ++{0}) acc = {2};", part_, warp_group,
        combine("acc", fmt::format("{}[({} * {} + ({} | {})) * 32 + lane]", partials, o, warps_, first_warp,
                                   warp_low == 0 ? part_ : fmt::format("({} << {})", part_, warp_low)))));
    writer_.line(fmt::format("{}[{}] = {};", plan_.expression(result), o, fmt::format(fmt::runtime(narrow), "acc")));
  }
  // The next reduction writes the other area. One inside a loop meets itself again in the next
  // iteration, and which area follows one inside an `if` depends on the branch taken, so those
  // wait for every read before going on.
  if (nesting_ > 0) writer_.line("__syncthreads();  // every warp has read the partials");
  next_area_ = 1 - next_area_;
}

// A load at element coordinates starts its rows at any column: whole vectors need that column
// (operand `column_operand`) to be a multiple of the vector width too (" && (c % V == 0)"; ""
// for tile coordinates).
std::string RegisterEmitter::vector_start_check(const Operation& op, size_t column_operand, int64_t width) const {
  if (!op.has_attr("elements")) return "";
  std::string column = plan_.expression(op.operand(column_operand));
  if (column == "0") return "";
  return fmt::format(" && ({} % {} == 0)", column, width);
}

// load and store: per vector slot, the element's tensor coordinates, then the prelude's
// load_vector / store_vector (16 bytes at once where the row and the pointer allow).
void RegisterEmitter::emit_memory(const Operation& op) {
  bool store = op.kind() == OpKind::store;
  const Value* tensor = op.operand(0);
  if (stored_and_loaded_.count(tensor))
    writer_.line(fmt::format("__syncthreads();  // {} is stored and loaded here: the block's earlier accesses are done",
                             plan_.expression(tensor)));
  else if (store && stored_twice_.count(tensor))
    writer_.line(fmt::format("__syncthreads();  // {} is written by several stores: the block's earlier ones are done",
                             plan_.expression(tensor)));
  const bool adds = accumulates(op);  // one atomic per element (+=, max=, min=): no vectors, no staged column
  const Value* mask = store_mask(op);  // a masked store: element by element, those where it holds
  const bool per_element = adds || mask;
  if (emit_column_store(op)) return;
  const Value* tile = moved_tile(op);
  std::vector<int64_t> shape = tile->type().shape();
  std::vector<int64_t> m = as_matrix(shape);
  const std::vector<std::string>& extents = plan_.tensor_dims.at(tensor);
  bool two_d = shape.size() == 2;
  // Where the tile lies in its tensor: its columns along the last dimension and its rows (a 2-D
  // tile's) along `row_dimension`, `pitch` elements apart: rank - 2, or a box's (a <BQ, D> tile
  // of a [B, S, H, D] tensor; register_layout.cpp checks the box's form). Every other
  // coordinate is an element index (a slice's leading ones: shape_in_tensor; a box's unit
  // dimensions) that moves `base` to where the rows start; outside the tensor there are no rows.
  const size_t rank = extents.size();
  const size_t row_dimension = !two_d ? rank : op.has_attr("box") ? cuda::row_dimension(op, rank) : rank - 2;
  // A column_box's rows lie along the last dimension, one element apart, and it has no columns.
  const bool column = column_box(op, rank);
  std::vector<std::string> offsets, in_tensor, after_rows;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (d > row_dimension) after_rows.push_back(extents[d]);
    if (d == row_dimension) continue;
    const std::string& at = plan_.expression(op.operand(1 + d));
    in_tensor.push_back(fmt::format("0 <= {0} && {0} < {1}", at, extents[d]));
    std::vector<std::string> stride{fmt::format("static_cast<int64_t>({})", at)};
    for (size_t e = d + 1; e < rank; ++e) stride.push_back(extents[e]);
    if (at != "0") offsets.push_back(fmt::format("{}", fmt::join(stride, " * ")));
  }
  comment(op);
  std::string base = plan_.expression(tensor);
  if (!offsets.empty()) {
    base = names_.unique(base + (op.has_attr("box") ? "_box" : "_slice"));
    writer_.line(fmt::format("{} {} = {} + {};", store ? "auto* const" : "const auto* const", base,
                             plan_.expression(tensor), fmt::join(offsets, " + ")));
  }
  const std::string row_extent = two_d ? extents[row_dimension] : "1";
  const std::string rows =
      in_tensor.empty() ? row_extent : fmt::format("({} ? {} : 0)", fmt::join(in_tensor, " && "), row_extent);
  const std::string columns = column ? "1" : extents[rank - 1];
  after_rows.push_back(columns);
  // Elements from row to row, where not `columns`.
  const std::string pitch = after_rows.size() > 1 ? fmt::format("{}", fmt::join(after_rows, " * ")) : "";
  const size_t row_operand = 1 + row_dimension, column_operand = rank;
  int64_t width = layout_.width_of(shape);
  int64_t vectors = layout_.row_slots_of(shape) * layout_.column_slots_of(shape);
  if (!store) declare(tile);
  std::string flag = "false";  // whether whole vectors may move (one element: never)
  if (width > 1 && !per_element) {  // a 1-D tensor has no row pitch: only the pointer's alignment matters
    flag = names_.unique(plan_.expression(tensor) + "_vectors");
    writer_.line(fmt::format("const bool {} = vectors_fit<{}>({}, {}){}{};", flag, width, base,
                             two_d ? (pitch.empty() ? columns : pitch) : std::to_string(width),
                             pitch.empty() ? "" : fmt::format(" && {} % {} == 0", grouped(columns), width),
                             vector_start_check(op, column_operand, width)));
  }
  // Vector slot s: row slot s / column_slots, column slot s % column_slots, lane 0.
  std::string first = width == 1 ? vector_slot_ : fmt::format("{} * {}", vector_slot_, width);
  int64_t column_slots = layout_.column_slots_of(shape), row_slots = layout_.row_slots_of(shape);
  SlotParts parts;
  parts.lane = "0";
  parts.column_slot = column_slots == 1 ? "0" : row_slots == 1 ? vector_slot_
                                                               : fmt::format("{} % {}", vector_slot_, column_slots);
  parts.row_slot = row_slots == 1 ? "0" : column_slots == 1 ? vector_slot_
                                                            : fmt::format("{} / {}", vector_slot_, column_slots);
  auto global = [&](int axis, size_t operand) {
    std::string tile_coordinate = plan_.expression(op.operand(operand));
    std::string local = coordinate(shape, axis, parts);
    std::string base = tile_coordinate == "0" ? ""
                       : m[static_cast<size_t>(axis)] == 1 || op.has_attr("elements")
                           ? tile_coordinate
                           : fmt::format("{} * {}", tile_coordinate, m[static_cast<size_t>(axis)]);
    if (base.empty()) return local;
    return local == "0" ? base : base + " + " + local;
  };
  std::string owner = store ? owns(shape) : "";
  std::string inside = store ? inside_frame(shape, parts) : "";
  std::string guard = owner.empty() ? inside : inside.empty() ? owner : owner + " && " + inside;
  CodeWriter::Block loop = open_loop(vector_slot_, vectors);
  writer_.line(fmt::format("const Index {} = {};", row_, two_d ? global(0, row_operand) : "0"));
  writer_.line(fmt::format("const Index {} = {};", column_, column ? "0" : global(1, column_operand)));
  const std::string pitched = pitch.empty() ? "" : ", " + pitch;
  if (per_element) {
    const std::string k = names_.unique("lane");
    const std::string at = fmt::format("{} + {}", column_, k);
    const std::string target = fmt::format("{}[{} * {} + {}]", base, row_, pitch.empty() ? columns : grouped(pitch), at);
    const std::string slot = fmt::format("{} + {}", first, k);
    const std::string element = fmt::format("{}[{}]", plan_.expression(tile), slot);
    const std::string write = adds ? atomic_combine_statement(store_combine(op), tile->type().element(), "&" + target,
                                                              element)
                                   : fmt::format("{} = {};", target, element);
    std::string inside_tensor =
        fmt::format("0 <= {0} && {0} < {1} && 0 <= {2} && {2} < {3}", row_, rows, at, grouped(columns));
    if (mask) inside_tensor += " && " + operand_element(mask, shape, slot);
    std::string body = fmt::format("for (int {0} = 0; {0} < {1}; ++{0}) if ({2}) {3}", k, width, inside_tensor, write);
    writer_.line(guard.empty() ? body : fmt::format("if ({}) {}", guard, body));
    return;
  }
  std::string call = store ? fmt::format("store_vector<{}>({}, {}, {}, {}, {}, {}, &{}[{}]{});", width, base, row_,
                                         column_, rows, columns, flag, plan_.expression(tile), first, pitched)
                           : fmt::format("load_vector<{}>(&{}[{}], {}, {}, {}, {}, {}, {}{});", width,
                                         plan_.expression(tile), first, base, row_, column_, rows, columns, flag,
                                         pitched);
  writer_.line(guard.empty() ? call : fmt::format("if ({}) {}", guard, call));
}

// A column tile (r x 1, r the frame's rows) stored into a tensor of one column (a GEMV's
// output): its rows are contiguous in memory but held by different threads, so the owners write
// them to shared memory and the first r / W threads store W each as one 16-byte vector. One
// barrier; a second before the staging is written again: after the store inside for/if, else
// before the next column store. The tile's one column
// is the tensor's only where its column coordinate is 0 (a grid over more columns stores from
// the first only, as the interpreter drops the rest). Returns false (nothing written) for any
// other store, and for element coordinates (`store T at [r, c]`), which the general path takes.
bool RegisterEmitter::emit_column_store(const Operation& op) {
  if (!stages_column(op)) return false;
  const Value* tensor = op.operand(0);
  const Value* tile = op.operands().back();
  const std::vector<int64_t>& shape = tile->type().shape();
  const std::vector<std::string>& extents = plan_.tensor_dims.at(tensor);
  const int64_t bytes = byte_size(tile->type().element()), width = 16 / bytes;
  int64_t rows = shape[0];
  column_bytes_ = std::max(column_bytes_, (rows * bytes + 15) / 16 * 16);
  std::string type = type_of(tile->type().element());
  std::string staged = names_.unique(plan_.expression(tile) + "_column");
  comment(op);
  writer_.line(fmt::format("{0}* const {1} = reinterpret_cast<{0}*>(shared_memory + kColumnStage);", type, staged));
  if (column_being_read_) writer_.line("__syncthreads();  // the column staged before is read");
  SlotParts parts;
  parts.row_slot = layout_.row_slots_of(shape) == 1 ? "0" : vector_slot_;
  parts.column_slot = parts.lane = "0";
  std::string local = coordinate(shape, 0, parts);
  std::string owner = owns(shape);
  std::string guard = layout_.padded_rows() ? fmt::format("{} < {}", local, rows) : "";
  if (!owner.empty()) guard = guard.empty() ? owner : owner + " && " + guard;
  std::string write = fmt::format("{}[{}] = {}[{}];", staged, local, plan_.expression(tile), vector_slot_);
  {
    CodeWriter::Block loop = open_loop(vector_slot_, layout_.row_slots_of(shape));
    writer_.line(guard.empty() ? write : fmt::format("if ({}) {}", guard, write));
  }
  writer_.line("__syncthreads();  // the column is staged");
  std::string flag = names_.unique(plan_.expression(tensor) + "_vectors");
  writer_.line(fmt::format("const bool {} = vectors_fit<{}>({}, {});", flag, width, plan_.expression(tensor), width));
  {
    const std::string tile_column = plan_.expression(op.operand(2));
    CodeWriter::Block storers = writer_.block(fmt::format("if (threadIdx.x < {}{}) {{", rows / width,
                                                          tile_column == "0" ? "" : " && " + tile_column + " == 0"));
    std::string tile_row = plan_.expression(op.operand(1));
    // The one-column tensor read as one row of extents[0] elements.
    writer_.line(fmt::format("const Index {} = {}threadIdx.x * {};", column_,
                             tile_row == "0" ? "" : fmt::format("{} * {} + ", tile_row, rows), width));
    writer_.line(fmt::format("store_vector<{}>({}, Index(0), {}, 1, {}, {}, &{}[threadIdx.x * {}]);", width,
                             plan_.expression(tensor), column_, extents[0], flag, staged, width));
  }
  if (nesting_ > 0) writer_.line("__syncthreads();  // the staged column is read");
  column_being_read_ = nesting_ == 0;
  return true;
}

// Row-major: the last coordinate varies fastest along the linear tile number. In 32-bit unsigned
// arithmetic whatever the index type: the launcher runs at most INT_MAX tiles, so the tile
// number and every extent of a non-empty grid are in 1 .. INT_MAX.
void RegisterEmitter::emit_grid_ids(const Operation& op) {
  comment(op);
  size_t rank = op.num_operands();
  auto extent = [&](size_t d) { return fmt::format("static_cast<uint32_t>({})", plan_.expression(op.operand(d))); };
  for (size_t d = 0; d < rank; ++d) {
    std::string text = "tile_number";
    std::string inner;
    for (size_t j = d + 1; j < rank; ++j) inner += (inner.empty() ? "" : " * ") + extent(j);
    if (rank - d - 1 == 1) text += " / " + inner;
    if (rank - d - 1 > 1) text += " / (" + inner + ")";
    if (d > 0) text = fmt::format("{} % {}", rank - d - 1 == 0 ? text : "(" + text + ")", extent(d));
    writer_.line(fmt::format("const Index {} = static_cast<Index>({});", plan_.expression(op.result(d)),
                             rank == 1 ? "tile_number" : text));
  }
}

void RegisterEmitter::emit_copy(const Value* target, const Value* source) {
  CodeWriter::Block loop = open_loop(slot_, slots(target));
  writer_.line(fmt::format("{}[{}] = {};", plan_.expression(target), slot_,
                           operand_element(source, target->type().shape(), slot_)));
}

void RegisterEmitter::emit_yield(const Region& region, const std::vector<const Value*>& targets) {
  const Operation* yield = region.terminator();
  std::vector<std::pair<const Value*, const Value*>> scalars;
  for (size_t i = 0; i < targets.size(); ++i) {
    const Value* source = yield->operand(i);
    if (plan_.expression(source) == plan_.expression(targets[i])) continue;
    if (source->type().is_tile()) emit_copy(targets[i], source);
    else scalars.emplace_back(targets[i], source);
  }
  // BodyEmitter spells the scalar part (with `Index` for index values).
  scalar_.emit_scalar_assignments(scalars);
}

void RegisterEmitter::emit_for(const Operation& op) {
  const Region& body = op.region();
  comment(op);
  std::vector<const Value*> carried;
  for (size_t i = 1; i < body.num_arguments(); ++i) {
    const Value* value = body.argument(i);
    carried.push_back(value);
    if (value->type().is_tile()) {
      declare(value);
      emit_copy(value, op.operand(2 + i));
    } else {
      writer_.line(fmt::format("{} {} = {};", type_of(value->type().element()), plan_.expression(value),
                               plan_.expression(op.operand(2 + i))));
    }
  }
  const std::string& iv = plan_.expression(body.argument(0));
  CodeWriter::Block loop =
      writer_.block(fmt::format("for (Index {0} = {1}; {0} < {2}; {0} += {3}) {{", iv, plan_.expression(op.operand(0)),
                                plan_.expression(op.operand(1)), plan_.expression(op.operand(2))));
  ++nesting_;
  for (const auto& nested : body.operations()) emit_op(*nested);
  emit_yield(body, carried);
  --nesting_;
}

void RegisterEmitter::emit_if(const Operation& op) {
  comment(op);
  std::vector<const Value*> results;
  for (size_t i = 0; i < op.num_results(); ++i) {
    const Value* result = op.result(i);
    results.push_back(result);
    if (result->type().is_tile()) declare(result);
    else writer_.line(fmt::format("{} {}{{}};", type_of(result->type().element()), plan_.expression(result)));
  }
  CodeWriter::Block branches = writer_.block(fmt::format("if ({}) {{", plan_.expression(op.operand(0))));
  ++nesting_;
  for (size_t r = 0; r < 2; ++r) {
    if (r == 1) branches.next("} else {");
    for (const auto& nested : op.region(r).operations()) emit_op(*nested);
    emit_yield(op.region(r), results);
  }
  --nesting_;
}

int64_t RegisterEmitter::emit_kernel() {
  const Operation& kernel = *plan_.kernel;
  for (const auto& op : kernel.region().operations()) {
    if (op.get() == plan_.grid) writer_.line("const uint32_t tile_number = blockIdx.x;");
    emit_op(*op);
  }
  int64_t shared = shared_bytes();

  out_ += "// ---------------------------------------------------------------------------------------------\n";
  out_ += fmt::format("// kernel @{}", kernel_name(kernel));
  if (kernel.location().known()) out_ += fmt::format("  (line {})", kernel.location().line);
  out_ += fmt::format("\n// grid: {} tiles, one CTA of {} threads each\n", describe_grid(plan_), layout_.threads);
  out_ += fmt::format("// tiles in registers: {}\n", layout_.describe());
  std::vector<std::string> uses;
  if (area_bytes_ > 0)
    uses.push_back(fmt::format("{} of warp partials for the reductions", uses_second_area_ ? "two areas" : "one area"));
  if (column_bytes_ > 0) uses.push_back("a column staged for vector stores");
  std::string use_text;
  for (const std::string& use : uses) use_text += (use_text.empty() ? "" : " and ") + use;
  out_ += shared == 0 ? "// shared memory: none\n" : fmt::format("// shared memory: {} bytes, {}\n", shared, use_text);
  out_ += "// ---------------------------------------------------------------------------------------------\n";
  out_ += "template <typename Index>\n";
  out_ += fmt::format("__global__ void TILEC_LAUNCH_BOUNDS({}) {}_kernel({}) {{\n", layout_.threads, plan_.name,
                      parameter_list(plan_, "Index"));
  if (shared > 0) {
    out_ += "  TILEC_DYNAMIC_SHARED(16, shared_memory);\n";
    if (uses_second_area_)
      out_ += fmt::format("  constexpr int kReductionArea = {};  // bytes: the second area's offset\n", area_bytes_);
    if (column_bytes_ > 0)
      out_ += fmt::format("  constexpr int kColumnStage = {};  // bytes: a column staged for vector stores\n",
                          reduction_bytes());
  }
  // (void): a kernel whose tiles are all scalars, or that stores nothing, reads neither (nvcc warned).
  if (layout_.threads_per_row > 1)
    out_ += fmt::format("  const int thread_column = threadIdx.x % {};  (void)thread_column;\n",
                        layout_.threads_per_row);
  if (layout_.thread_rows > 1)
    out_ += fmt::format("  const int thread_row = threadIdx.x / {};  (void)thread_row;\n", layout_.threads_per_row);
  if (uses_warp_) out_ += "  const int warp = threadIdx.x / 32;\n";
  if (uses_lane_) out_ += "  const int lane = threadIdx.x % 32;\n";
  out_ += body_;
  out_ += "}\n\n";

  LaunchSpec launch;
  launch.summary = "one CTA per tile; returns the launch status.";
  launch.threads = std::to_string(layout_.threads);
  launch.arguments = argument_list(plan_);
  launch.shared_bytes = shared;
  launch.kernel = plan_.name + "_kernel<int64_t>";
  launch.narrow_kernel = plan_.name + "_kernel<int32_t>";
  std::vector<std::string> tensors;  // one check per distinct extent list
  for (const ParamPlan& param : plan_.params) {
    if (!param.value->type().is_tensor()) continue;
    std::string extents;
    for (const std::string& extent : plan_.tensor_dims.at(param.value))
      extents += (extents.empty() ? "" : ", ") + extent;
    std::string check = fmt::format("index32_fits({{{}}})", extents);
    if (std::find(tensors.begin(), tensors.end(), check) == tensors.end()) tensors.push_back(check);
  }
  for (const std::string& tensor : tensors)
    launch.narrow_condition += (launch.narrow_condition.empty() ? "" : " && ") + tensor;
  if (launch.narrow_condition.empty()) launch.narrow_condition = "true";
  launch.narrow_comment = "Tensors of at most 2^30 elements: every index fits the 32-bit instantiation.";
  // Static extents of more than 2^30 elements make the 32-bit instantiation unreachable, and nvcc
  // warns of the extents it truncates there (#69-D, which breaks -Werror builds: a hunt).
  const bool static_past_2_30 = std::any_of(plan_.params.begin(), plan_.params.end(), [](const ParamPlan& param) {
    const Type& type = param.value->type();
    if (!type.is_tensor()) return false;
    double elements = 1;
    for (const Dim& dim : type.dims()) elements *= dim.is_static() ? static_cast<double>(dim.extent) : 1.0;
    return elements > static_cast<double>(int64_t{1} << 30);
  });
  std::vector<std::string> bounds;
  if (static_past_2_30) {
    launch.narrow_condition.clear();
    launch.narrow_comment = "A tensor of more than 2^30 elements by its static extents: the 64-bit instantiation only.";
  } else if (coordinates_from_memory(kernel)) {
    launch.narrow_condition.clear();
    launch.narrow_comment = "Coordinates read from memory may need all 64 bits: the 64-bit instantiation only.";
  } else if (!IndexBounds(plan_).collect(kernel, bounds)) {
    launch.narrow_condition.clear();
    launch.narrow_comment = "An index that may reach 2^31, or with no bound the launcher can check (carried around a "
                            "loop, from a float): the 64-bit instantiation only.";
  } else if (!bounds.empty()) {
    launch.narrow_condition += fmt::format(" && index32_bounds_fit({{{}}})", fmt::join(bounds, ", "));
    launch.narrow_comment = "Tensors of at most 2^30 elements and indices bounded below 2^31: the 32-bit instantiation.";
  }
  emit_launcher(plan_, launch, out_);
  return shared;
}

}  // namespace

std::string_view register_tile_prelude() {
  return R"(
// ---------------------------------------------------------------------------------------------
// Register tiles (docs/backend_cuda.md): vector loads and stores, index arithmetic.
// ---------------------------------------------------------------------------------------------

// Integer helpers in the kernel's index type (int32_t or int64_t).
// cdiv as cdiv_i64 computes it: the ceiling for any signs, by 0 and -1 as div_i64 divides.
template <typename I> __host__ __device__ inline I cdiv_index(I a, I b) {
  if (b == 0 || b == -1) return static_cast<I>(cdiv_i64(a, b));
  const I r = a % b;
  return a / b + (r != 0 && (r > 0) == (b > 0) ? 1 : 0);
}
template <typename I> __host__ __device__ inline I max_index(I a, I b) { return a < b ? b : a; }
template <typename I> __host__ __device__ inline I min_index(I a, I b) { return a < b ? a : b; }

// Whether a tensor with these extents has at most 2^30 elements, so that every element offset
// and every coordinate up to a tile past its end fits in an int32_t.
inline bool index32_fits(std::initializer_list<int64_t> extents) {
  int64_t elements = 1;
  for (int64_t extent : extents) {
    if (extent < 0 || extent > (int64_t{1} << 30)) return false;
    elements *= extent;
    if (elements > (int64_t{1} << 30)) return false;
  }
  return true;
}

// Whether each bound on an index's magnitude (IndexBounds in emit_register_kernel.cpp: doubles
// from the extents and scalars) stays below 2^31; NaN (inf * 0) does not.
inline bool index32_bounds_fit(std::initializer_list<double> bounds) {
  for (double bound : bounds)
    if (!(bound < 2147483647.0)) return false;
  return true;
}

// V contiguous elements move as one access of V·sizeof(T) bytes through an integer vector type
// (ld/st.global.v4.u32 for 16 bytes); nvcc keeps those whole where it may split a struct copy.
template <int Bytes> struct RawVector;
template <> struct RawVector<16> { using type = uint4; };
template <> struct RawVector<8> { using type = uint2; };
template <> struct RawVector<4> { using type = unsigned int; };
template <> struct RawVector<2> { using type = unsigned short; };
template <> struct RawVector<1> { using type = unsigned char; };

// Bytes of one vector access: V elements, at most 16 bytes (wider vectors move in 16-byte parts).
template <int V, typename T> __host__ __device__ constexpr int vector_access_bytes() { return sizeof(T) * V < 16 ? sizeof(T) * V : 16; }

// Whether rows of `columns` elements starting at `base` allow aligned V-element accesses.
template <int V, typename T, typename I> __device__ inline bool vectors_fit(const T* base, I columns) {
  if (V == 1) return false;
  return reinterpret_cast<uintptr_t>(base) % vector_access_bytes<V, T>() == 0 && columns % V == 0;
}

// Reads elements (row, column .. column + V - 1) of a rows×columns row-major tensor into
// out[0 .. V - 1]; elements outside the tensor read as zero. One vector access when `vectors`
// holds and all V are inside, else one masked access per element.
// The tensor's extents convert to the index type of the coordinates (not deduced from them).
template <typename I> struct IndexOf { using type = I; };

// Rows lie `pitch` elements apart: `columns` unless given (a tile's rows in a [B, S, H, D] tensor
// lie H·D apart).
template <int V, typename T, typename I>
__device__ inline void load_vector(T* out, const T* base, I row, I column, typename IndexOf<I>::type rows,
                                   typename IndexOf<I>::type columns, bool vectors,
                                   typename IndexOf<I>::type pitch = -1) {
  if (pitch < 0) pitch = columns;
  const bool row_inside = 0 <= row && row < rows;
  if (vectors && row_inside && 0 <= column && column + V <= columns) {
    using Raw = typename RawVector<vector_access_bytes<V, T>()>::type;
    constexpr int kPart = sizeof(Raw) / sizeof(T);
#pragma unroll
    for (int part = 0; part < V; part += kPart) {
      const Raw raw = *reinterpret_cast<const Raw*>(base + (row * pitch + column + part));
      memcpy(out + part, &raw, sizeof(Raw));
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < V; ++k)
    out[k] = row_inside && 0 <= column + k && column + k < columns ? base[row * pitch + column + k] : T{};
}

// Writes in[0 .. V - 1] to elements (row, column ..) of the tensor; elements outside are dropped.
template <int V, typename T, typename I>
__device__ inline void store_vector(T* base, I row, I column, typename IndexOf<I>::type rows,
                                    typename IndexOf<I>::type columns, bool vectors, const T* in,
                                    typename IndexOf<I>::type pitch = -1) {
  if (pitch < 0) pitch = columns;
  const bool row_inside = 0 <= row && row < rows;
  if (vectors && row_inside && 0 <= column && column + V <= columns) {
    using Raw = typename RawVector<vector_access_bytes<V, T>()>::type;
    constexpr int kPart = sizeof(Raw) / sizeof(T);
#pragma unroll
    for (int part = 0; part < V; part += kPart) {
      Raw raw;
      memcpy(&raw, in + part, sizeof(Raw));
      // __stwb (a plain write-back store) keeps this a vector store: nvcc would otherwise merge
      // it with the masked path below, whose stores are the same, into scalar stores.
      __stwb(reinterpret_cast<Raw*>(base + (row * pitch + column + part)), raw);
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (row_inside && 0 <= column + k && column + k < columns) base[row * pitch + column + k] = in[k];
}
)";
}

int64_t emit_register_kernel(const KernelPlan& plan, const RegisterLayout& layout, std::string& out) {
  RegisterEmitter emitter(plan, layout, out);
  return emitter.emit_kernel();
}

}  // namespace tilec::cuda
