// runtime/interpreter/interpreter.cpp — executes a kernel: argument binding, the host prologue,
// the grid, and one TileExecution per tile.
//
// Phases of a launch:
//   1. Bind: each kernel parameter gets its argument; tensor extents are checked against the
//      type (static extents equal, a symbol equal to its binding or bound here on first use).
//   2. Prologue: the scalar ops before `grid_ids` run once, on the "host" execution.
//   3. Grid: the extents give the tile count (a multiple of `cluster` when a tiles grid has
//      one); the TileRunner calls the body once per tile index; the tile's coordinates are the
//      index in row-major order (last extent fastest).
//   4. Each tile runs the ops after `grid_ids` in a TileExecution whose own values sit in a
//      private map layered over the prologue's (read-only while tiles run, so tiles share
//      nothing but the output buffers and the race-check owner table).
// The pipe, barrier and stage-buffer ops run in sync_ops.cpp and warp_specialize in
// agent_threads.cpp, on the same TileExecution (tile_execution.h).
// Structured control flow runs recursively: `for` rebinds its region arguments each
// iteration, `if` runs one of its regions; both take their results from the region's `yield`.
// Cost: an op costs one pass over its result (mma: M·N·K), plus a hash lookup per operand.
#include "runtime/interpreter/interpreter.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "ir/attribute_keys.h"
#include "ir/ir.h"
#include "runtime/interpreter/element_semantics.h"
#include "runtime/interpreter/float_formats.h"
#include "runtime/interpreter/tile_arithmetic.h"
#include "runtime/interpreter/cta_state.h"
#include "runtime/interpreter/tile_execution.h"
#include "runtime/interpreter/tile_runner.h"

namespace tilec::runtime {

namespace detail {

// Refuse tiles so large that allocating them would be the failure (2^28 elements = 1 GiB f32).
constexpr int64_t kLargestTile = int64_t{1} << 28;

TileExecution::TileExecution(const ValueMap* base, LaunchState& launch, int64_t tile)
    : base_(base), launch_(launch), tile_(tile), owned_cta_(std::make_unique<CtaState>()), cta_(owned_cta_.get()) {}

TileExecution::TileExecution(const TileExecution& parent, int agent)
    : parent_(&parent), launch_(parent.launch_), tile_(parent.tile_), cta_(parent.cta_), agent_(agent) {}

TileExecution::~TileExecution() = default;

const RuntimeValue* TileExecution::lookup(const Value* value) const {
  auto it = values_.find(value);
  if (it != values_.end()) return &it->second;
  if (parent_) return parent_->lookup(value);
  if (base_) {
    auto at = base_->find(value);
    if (at != base_->end()) return &at->second;
  }
  return nullptr;
}

const TileValue* TileExecution::tile_operand(const Operation& op, size_t i) {
  if (i >= op.num_operands()) return fail(op, fmt::format("is missing operand {}", i)), nullptr;
  const RuntimeValue* v = lookup(op.operand(i));
  if (!v) return fail(op, fmt::format("operand {} has no value (used before its definition)", i)), nullptr;
  if (v->tensor) return fail(op, fmt::format("operand {} is a tensor, not a tile or scalar", i)), nullptr;
  return &v->tile;
}

bool TileExecution::integer_operand(const Operation& op, size_t i, int64_t& out) {
  const TileValue* v = tile_operand(op, i);
  if (!v) return false;
  if (!v->shape.empty() || v->holds_floats())
    return fail(op, fmt::format("operand {} must be an integer or index scalar", i));
  out = v->ints[0];
  return true;
}

HostBuffer* TileExecution::tensor_operand(const Operation& op, size_t i) {
  if (i >= op.num_operands()) return fail(op, fmt::format("is missing operand {}", i)), nullptr;
  const RuntimeValue* v = lookup(op.operand(i));
  if (!v || !v->tensor) return fail(op, fmt::format("operand {} must be a tensor parameter", i)), nullptr;
  return v->tensor;
}

bool TileExecution::set_result(const Operation& op, TileValue value, size_t index) {
  if (index >= op.num_results()) return fail(op, "has too few results");
  const Type& type = op.result(index)->type();
  std::vector<int64_t> shape = type.is_tile() ? type.shape() : std::vector<int64_t>{};
  if ((!type.is_tile() && !type.is_scalar()) || value.shape != shape || value.element != type.element())
    return fail(op, fmt::format("computes a {} value of shape [{}] but its result type is {}",
                                to_string(value.element), fmt::join(value.shape, "x"), type.to_string()));
  values_[op.result(index)] = RuntimeValue{std::move(value), nullptr};
  return true;
}

bool TileExecution::run_ops(const Region& region, size_t first, std::vector<RuntimeValue>* yielded) {
  const auto& ops = region.operations();
  for (size_t i = first; i < ops.size(); ++i) {
    const Operation& op = *ops[i];
    if (op.kind() == OpKind::return_) return true;
    if (op.kind() == OpKind::yield) {
      if (!yielded) return fail(op, "appears outside a for or if region");
      yielded->clear();
      for (size_t k = 0; k < op.num_operands(); ++k) {
        const RuntimeValue* v = lookup(op.operand(k));
        if (!v) return fail(op, fmt::format("operand {} has no value", k));
        yielded->push_back(*v);
      }
      return true;
    }
    if (!execute(op)) return false;
    if (op.has_attr("tile_index") && op.num_results() == 1)
      if (const RuntimeValue* walked = lookup(op.result()); walked && !walked->tile.ints.empty())
        walked_tile_ = walked->tile.ints[0];
  }
  return true;
}

bool TileExecution::execute(const Operation& op) {
  const OpKind kind = op.kind();
  const OpInfo& info = op.info();
  if (op.num_operands() < static_cast<size_t>(info.min_operands) ||
      (info.max_operands >= 0 && op.num_operands() > static_cast<size_t>(info.max_operands)) ||
      (info.results >= 0 && op.num_results() != static_cast<size_t>(info.results)))
    return fail(op, "has the wrong number of operands or results");
  for (size_t r = 0; r < op.num_results(); ++r) {
    const Type& type = op.result(r)->type();
    if (!type.is_tile()) continue;
    bool negative = std::any_of(type.shape().begin(), type.shape().end(), [](int64_t d) { return d < 0; });
    if (negative || type.element_count() > kLargestTile)
      return fail(op, fmt::format("its result {} is too large or malformed to interpret", type.to_string()));
  }
  if (!info.has(kTerminator) && (!check_view_reads(op) || !check_in_flight_reads(op))) return false;
  TileValue out;
  std::string problem;
  switch (kind) {
    case OpKind::constant: return execute_constant(op);
    case OpKind::dim: {
      HostBuffer* tensor = tensor_operand(op, 0);
      if (!tensor) return false;
      const Attribute* axis = op.attr("axis");
      if (!axis || !axis->is_int() || axis->as_int() < 0 || axis->as_int() >= static_cast<int64_t>(tensor->rank()))
        return fail(op, "needs an integer 'axis' within the tensor's rank");
      return set_result(op, TileValue::scalar_int(ScalarKind::index, tensor->dims()[static_cast<size_t>(axis->as_int())]));
    }
    case OpKind::add: case OpKind::sub: case OpKind::mul: case OpKind::div: case OpKind::rem:
    case OpKind::cdiv: case OpKind::max: case OpKind::min: case OpKind::cmp: case OpKind::pow: case OpKind::atan2:
    case OpKind::and_: case OpKind::or_: case OpKind::xor_: case OpKind::shl: case OpKind::shr: case OpKind::randint: {
      const TileValue* a = tile_operand(op, 0);
      const TileValue* b = a ? tile_operand(op, 1) : nullptr;
      if (!b) return false;
      std::string predicate;
      if (kind == OpKind::cmp) {
        const Attribute* attribute = op.attr("predicate");
        if (!attribute || !attribute->is_string()) return fail(op, "needs a string 'predicate'");
        predicate = attribute->as_string();
      }
      // A `positive_divisor` (persistent-tiles' index arithmetic) promises what the CUDA
      // backend relies on to divide with plain `/` and `%`.
      if (op.has_attr("positive_divisor") && !b->holds_floats())
        for (int64_t divisor : b->ints)
          if (divisor <= 0) return fail(op, fmt::format("is marked positive_divisor but divides by {}", divisor));
      problem = evaluate_binary(kind, predicate, *a, *b, out);
      break;
    }
    case OpKind::neg: case OpKind::exp: case OpKind::exp2: case OpKind::sqrt: case OpKind::rsqrt: case OpKind::relu:
    case OpKind::tanh: case OpKind::erf: case OpKind::log: case OpKind::log2: case OpKind::sin: case OpKind::cos:
    case OpKind::log1p: case OpKind::expm1: case OpKind::tan: case OpKind::atan:
    case OpKind::asin: case OpKind::acos: case OpKind::sinh: case OpKind::cosh:
    case OpKind::sigmoid: case OpKind::abs:
    case OpKind::floor: case OpKind::ceil: case OpKind::round: case OpKind::trunc: case OpKind::not_: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      problem = evaluate_unary(kind, *a, out);
      break;
    }
    case OpKind::cast: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      problem = evaluate_cast(*a, op.result()->type().element(), out);
      break;
    }
    case OpKind::bitcast: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      problem = evaluate_bitcast(*a, op.result()->type().element(), out);
      break;
    }
    case OpKind::fma: {
      const TileValue* a = tile_operand(op, 0);
      const TileValue* b = a ? tile_operand(op, 1) : nullptr;
      const TileValue* c = b ? tile_operand(op, 2) : nullptr;
      if (!c) return false;
      problem = evaluate_fma(*a, *b, *c, out);
      break;
    }
    case OpKind::select: {
      const TileValue* c = tile_operand(op, 0);
      const TileValue* a = c ? tile_operand(op, 1) : nullptr;
      const TileValue* b = a ? tile_operand(op, 2) : nullptr;
      if (!b) return false;
      problem = evaluate_select(*c, *a, *b, out);
      break;
    }
    case OpKind::zeros:
    case OpKind::full: {
      const Type& type = op.result()->type();
      if (!type.is_tile()) return fail(op, "its result must be a tile");
      out = TileValue::zeros(type.element(), type.shape());
      if (kind == OpKind::full) {
        const TileValue* fill = tile_operand(op, 0);
        if (!fill) return false;
        if (!fill->shape.empty() || fill->element != type.element())
          return fail(op, "the fill value must be a scalar of the tile's element type");
        if (out.holds_floats()) out.floats.assign(out.floats.size(), fill->floats[0]);
        else out.ints.assign(out.ints.size(), fill->ints[0]);
      }
      break;
    }
    case OpKind::iota: {
      const Type& type = op.result()->type();
      int64_t axis = op.int_attr("axis", -1);
      if (!type.is_tile() || is_float(type.element()) || axis < 0 ||
          axis >= static_cast<int64_t>(type.rank()))
        return fail(op, "gives a tile of integers and needs an 'axis' within its rank");
      out = TileValue::zeros(type.element(), type.shape());
      // Row-major: the index along `axis` of element e is (e / stride) % extent.
      int64_t stride = 1;
      for (size_t d = static_cast<size_t>(axis) + 1; d < type.rank(); ++d) stride *= type.shape()[d];
      for (size_t e = 0; e < out.ints.size(); ++e)
        out.ints[e] = static_cast<int64_t>(e) / stride % type.shape()[static_cast<size_t>(axis)];
      break;
    }
    case OpKind::scan_sum: case OpKind::scan_prod: case OpKind::scan_max: case OpKind::scan_min: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      const Attribute* axis = op.attr("axis");
      if (!axis || !axis->is_int()) return fail(op, "needs an integer 'axis'");
      problem = evaluate_scan(op.kind(), axis->as_int(), *a, out);
      break;
    }
    case OpKind::sort: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      const Attribute* axis = op.attr("axis");
      if (!axis || !axis->is_int()) return fail(op, "needs an integer 'axis' attribute");
      problem = evaluate_sort(axis->as_int(), op.int_attr("descending", 0) != 0, *a, out);
      break;
    }
    case OpKind::item: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      if (a->count() != 1) return fail(op, "takes a tile of one element");
      out = a->holds_floats() ? TileValue::scalar_float(a->element, a->floats[0])
                              : TileValue::scalar_int(a->element, a->ints[0]);
      break;
    }
    case OpKind::reshape: {  // row-major: the elements as they are, under the result's shape
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      out = *a;
      out.shape = op.result()->type().shape();
      if (out.count() != a->count()) return fail(op, "gives a tile of as many elements as its operand");
      break;
    }
    case OpKind::transpose: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      problem = evaluate_transpose(*a, transpose_dims(op), out);
      break;
    }
    case OpKind::slice: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      problem = evaluate_slice(*a, slice_starts(op), slice_steps(op), op.result()->type().shape(), out);
      break;
    }
    case OpKind::concat:
    case OpKind::interleave: {
      std::vector<const TileValue*> parts;
      for (size_t i = 0; i < op.num_operands(); ++i) {
        parts.push_back(tile_operand(op, i));
        if (!parts.back()) return false;
      }
      problem = op.kind() == OpKind::concat ? evaluate_concat(parts, op.int_attr("axis", -1), out)
                                            : evaluate_interleave(parts, op.int_attr("axis", -1), out);
      break;
    }
    case OpKind::reduce_sum:
    case OpKind::reduce_max:
    case OpKind::reduce_min: {
      const TileValue* a = tile_operand(op, 0);
      if (!a) return false;
      const Attribute* axis = op.attr("axis");
      if (!axis || !axis->is_int()) return fail(op, "needs an integer 'axis'");
      problem = evaluate_reduce(kind, axis->as_int(), *a, out);
      break;
    }
    case OpKind::mma: {
      const TileValue* a = tile_operand(op, 0);
      const TileValue* b = a ? tile_operand(op, 1) : nullptr;
      const TileValue* acc = b ? tile_operand(op, 2) : nullptr;
      if (!acc) return false;
      problem = evaluate_mma(*a, *b, *acc, out);
      if (problem.empty() && op.has(attr::async)) return issue_async_mma(op, std::move(out));
      break;
    }
    case OpKind::load:
    case OpKind::tma_load: return execute_load(op);
    case OpKind::store: return execute_store(op);
    case OpKind::for_: return execute_for(op);
    case OpKind::if_: return execute_if(op);
    case OpKind::grid_ids: return fail(op, "must sit directly in the kernel body, once");
    case OpKind::sm_count:
      return set_result(op, TileValue::scalar_int(ScalarKind::index, op.int_attr("workers", launch_.sm_count)));
    case OpKind::assert_: return execute_assert(op);
    case OpKind::warp_specialize: return execute_warp_specialize(op);
    case OpKind::agent: return fail(op, "must sit directly in a warp_specialize region");
    default:
      if (op_info(kind).has(kSync)) return execute_sync(op);  // sync_ops.cpp
      return fail(op, "the interpreter cannot run this op");
  }
  if (!problem.empty()) return fail(op, problem);
  return set_result(op, std::move(out));
}

// A failed assert names the dims and scalar parameters its condition reads, with their values.
bool TileExecution::execute_assert(const Operation& op) {
  const TileValue* condition = tile_operand(op, 0);
  if (!condition) return false;
  if (!condition->shape.empty() || condition->element != ScalarKind::i1) return fail(op, "needs an i1 scalar");
  if (condition->ints[0] != 0) return true;
  std::vector<std::string> values;
  std::set<const Value*> seen;
  std::vector<const Value*> work{op.operand(0)};
  while (!work.empty()) {
    const Value* value = work.back();
    work.pop_back();
    if (!seen.insert(value).second) continue;
    const Operation* definition = value->defining_op();
    if (!definition || definition->kind() == OpKind::dim) {
      const RuntimeValue* known = lookup(value);
      if (known && !known->tensor && known->tile.shape.empty() && !value->name_hint().empty())
        values.push_back(known->tile.holds_floats()
                             ? fmt::format("{} = {}", value->name_hint(), known->tile.as_double(0))
                             : fmt::format("{} = {}", value->name_hint(), known->tile.ints[0]));
      continue;
    }
    for (const Value* operand : definition->operands()) work.push_back(operand);
  }
  std::sort(values.begin(), values.end());
  const std::string text = op.has_attr("text") ? op.string_attr("text") : "its condition";
  fail_report(op.location(), fmt::format("assert {} does not hold at launch{}", text,
                                         values.empty() ? "" : fmt::format(" ({})", fmt::join(values, ", "))));
  error_.refused_launch = true;
  return false;
}

bool TileExecution::execute_constant(const Operation& op) {
  const Type& type = op.result()->type();
  const Attribute* value = op.attr("value");
  if (!type.is_scalar()) return fail(op, "a constant is a scalar");
  if (!value) return fail(op, "needs a 'value'");
  if (value->is_int()) return set_result(op, TileValue::scalar_int(type.element(), value->as_int()));
  if (value->is_bool()) return set_result(op, TileValue::scalar_int(type.element(), value->as_bool()));
  if (value->is_float()) {
    if (!is_float(type.element())) return fail(op, "a float 'value' needs a float result type");
    return set_result(op, TileValue::scalar_float(type.element(), static_cast<float>(value->as_float())));
  }
  return fail(op, fmt::format("'value' must be a number, not {}", value->kind_name()));
}

bool TileExecution::execute_for(const Operation& op) {
  int64_t lower = 0, upper = 0, step = 0;
  if (!integer_operand(op, 0, lower) || !integer_operand(op, 1, upper) || !integer_operand(op, 2, step))
    return false;
  if (step <= 0) return fail(op, fmt::format("the step must be positive, got {}", step));
  if (op.num_regions() != 1) return fail(op, "needs one region");
  const Region& body = op.region();
  size_t carried_count = op.num_operands() - 3;
  if (body.num_arguments() != carried_count + 1 || op.num_results() != carried_count)
    return fail(op, "its region arguments and results do not match the carried values");
  std::vector<RuntimeValue> carried;
  for (size_t i = 0; i < carried_count; ++i) {
    const RuntimeValue* v = lookup(op.operand(3 + i));
    if (!v) return fail(op, fmt::format("carried value {} has no value", i));
    carried.push_back(*v);
  }
  std::vector<RuntimeValue> yielded;
  int64_t iterations = 0;
  for (int64_t iv = lower; iv < upper; ++iterations) {
    if (iterations == launch_.max_loop_iterations)
      return fail(op, fmt::format("ran more than {} iterations, the interpreter's limit per loop (it stops loops "
                                  "that would not end): run it with fewer iterations, e.g. smaller --dims or --scalar "
                                  "values",
                                  launch_.max_loop_iterations));
    if (++loop_iterations_ > launch_.max_tile_iterations)
      return fail(op, fmt::format("the tile's loops ran more than {} iterations together (loops in loops), the "
                                  "interpreter's limit per tile: run it with fewer iterations, e.g. smaller --dims or "
                                  "--scalar values",
                                  launch_.max_tile_iterations));
    if ((loop_iterations_ & 1023) == 0 && launch_.past_deadline()) return fail(op, launch_.deadline_message());
    bind(body.argument(0), RuntimeValue{TileValue::scalar_int(ScalarKind::index, iv), nullptr});
    for (size_t i = 0; i < carried_count; ++i) bind(body.argument(1 + i), std::move(carried[i]));
    if (!run_ops(body, 0, &yielded)) return false;
    if (yielded.size() != carried_count)
      return fail(op, fmt::format("its body yields {} values for {} carried", yielded.size(), carried_count));
    carried.swap(yielded);
    if (iv > INT64_MAX - step) break;
    iv += step;
  }
  for (size_t i = 0; i < carried_count; ++i) values_[op.result(i)] = std::move(carried[i]);
  return true;
}

bool TileExecution::execute_if(const Operation& op) {
  const TileValue* condition = tile_operand(op, 0);
  if (!condition) return false;
  if (condition->element != ScalarKind::i1 || !condition->shape.empty())
    return fail(op, "the condition must be an i1 scalar");
  if (op.num_regions() != 2) return fail(op, "needs a then and an else region");
  std::vector<RuntimeValue> yielded;
  if (!run_ops(op.region(condition->ints[0] != 0 ? 0 : 1), 0, &yielded)) return false;
  if (yielded.size() != op.num_results())
    return fail(op, fmt::format("its region yields {} values for {} results", yielded.size(), op.num_results()));
  for (size_t i = 0; i < yielded.size(); ++i) values_[op.result(i)] = std::move(yielded[i]);
  return true;
}

// Walks every position of a tile over a tensor: `visit(tile_index, tensor_index)` for each
// element inside the tensor (tensor coordinates c·B + a).
template <typename Visit>
// `coordinates` are tile coordinates (element origin = coordinate * extent), or with `elements`
// the element coordinates of the tile's first element (a load or store with the `elements`
// attribute).
void for_each_in_bounds(const HostBuffer& tensor, const std::vector<int64_t>& coordinates,
                        const std::vector<int64_t>& shape, Visit visit, bool elements = false) {
  const size_t rank = shape.size();
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (count == 0) return;
  std::vector<int64_t> position(rank, 0), stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * tensor.dims()[d];
  for (int64_t t = 0; t < count; ++t) {
    int64_t linear = 0;
    bool inside = true;
    for (size_t d = 0; d < rank && inside; ++d) {
      int64_t at = (elements ? coordinates[d] : coordinates[d] * shape[d]) + position[d];
      inside = at >= 0 && at < tensor.dims()[d];
      linear += at * stride[d];
    }
    if (inside) visit(t, linear);
    for (size_t d = rank; d-- > 0;) {
      if (++position[d] < shape[d]) break;
      position[d] = 0;
    }
  }
}

// The owner tables' encoding (LaunchState::owners): an element's owner is -1 (none), the tile
// that stored it (>= 0), the one tile that combined into it with combine kind k
// (combined_by(t, k) <= -8), or by_tiles(k) (-2 .. -7) once a second tile does; k is 0 for `+=`,
// 1 for `max=`, 2 for `min=`, 3 to 5 for `&=`, `|=`, `^=` (StoreCombine's order).
constexpr int64_t kKinds = 6;
constexpr int64_t by_tiles(int64_t k) { return -2 - k; }
constexpr int64_t combined_by(int64_t tile, int64_t k) { return -8 - (kKinds * tile + k); }
constexpr int64_t kind_of(int64_t owner) { return owner <= -8 ? (-8 - owner) % kKinds : -2 - owner; }  // owner <= -2
// The one tile that wrote an element (-1: none, or several).
constexpr int64_t writing_tile(int64_t owner) { return owner >= 0 ? owner : owner <= -8 ? (-8 - owner) / kKinds : -1; }

// What tiles combining with kind k do to an element: one tile, several, the bare verb.
struct CombineVerbs {
  const char *one, *several, *base;
};
constexpr CombineVerbs kCombineVerbs[kKinds] = {{"adds to", "add to", "add"},
                                                {"takes the maximum into", "take the maximum into", "take the maximum"},
                                                {"takes the minimum into", "take the minimum into", "take the minimum"},
                                                {"ands bits into", "and bits into", "and bits into it"},
                                                {"ors bits into", "or bits into", "or bits into it"},
                                                {"xors bits into", "xor bits into", "xor bits into it"}};

// What a race between a read and another tile's write says to do.
constexpr const char* kReadWriteAdvice =
    "a tile may read only elements no other tile of the launch writes (CTAs run in no set order, so it would read "
    "the old value or the new one): read them from another tensor, or write them in an earlier kernel";

// "+=", "max=", ... for combine kind k.
std::string combine_spelling(int64_t k) { return store_combine_spelling(static_cast<StoreCombine>(k + 1)); }

// Who wrote an element and how, for a race message: "tile 0 stores (=)", "tile 0 adds to (+=)",
// "other tiles add to (+=)". `owner` is not -1.
std::string writers_of(int64_t owner) {
  if (owner >= 0) return fmt::format("tile {} stores (=)", owner);
  const CombineVerbs& v = kCombineVerbs[kind_of(owner)];
  return owner <= -8 ? fmt::format("tile {} {} ({})", writing_tile(owner), v.one, combine_spelling(kind_of(owner)))
                     : fmt::format("other tiles {} ({})", v.several, combine_spelling(kind_of(owner)));
}

bool TileExecution::execute_load(const Operation& op) {
  TileValue out;
  if (!read_tile(op, 0, op.result()->type(), out)) return false;
  return set_result(op, std::move(out));
}

bool TileExecution::read_tile(const Operation& op, size_t first, const Type& type, TileValue& out) {
  if (op.has_attr("transposed")) {  // a TMA load of the [C, R] box, read as its transpose
    if (!type.is_tile() || type.rank() != 2) return fail(op, "a transposed load gives a 2-D tile");
    TileValue stored;
    if (!read_tile_as_stored(op, first, Type::tile(stored_shape(op, type), type.element()), stored))
      return false;
    std::string problem = evaluate_transpose(stored, {1, 0}, out);
    return problem.empty() || fail(op, problem);
  }
  return read_tile_as_stored(op, first, type, out);
}

bool TileExecution::read_tile_as_stored(const Operation& op, size_t first, const Type& type, TileValue& out) {
  HostBuffer* tensor = tensor_operand(op, first);
  if (!tensor) return false;
  // A `box` may hold a tile of more dimensions than the tensor (a column [R, 1] of a vector).
  if (!type.is_tile() || type.rank() < 1 || (type.rank() > tensor->rank() && !op.has_attr("box")) ||
      type.element() != tensor->element())
    return fail(op, fmt::format("cannot load a {} from a {}", type.to_string(), tensor->describe()));
  if (op.num_operands() != first + 1 + tensor->rank())
    return fail(op, fmt::format("takes {} tile coordinates for a rank-{} tensor", op.num_operands() - first - 1, tensor->rank()));
  std::vector<int64_t> coordinates(tensor->rank());
  for (size_t d = 0; d < tensor->rank(); ++d)
    if (!integer_operand(op, first + 1 + d, coordinates[d])) return false;
  out = TileValue::zeros(type.element(), type.shape());
  bool elements = op.has_attr("elements");
  const std::vector<int64_t> shape = memory_box(op, type, tensor->rank());  // a slice's leading 1s, a box's unit dims
  if (shape.empty() || !same_but_unit_dims(shape, type.shape()))
    return fail(op, fmt::format("cannot load a {} through the box {}", type.to_string(), op.attr("box")->to_string()));
  if (out.holds_floats())
    for_each_in_bounds(*tensor, coordinates, shape, [&](int64_t t, int64_t i) {
      out.floats[static_cast<size_t>(t)] = tensor->load_float(i);
    }, elements);
  else
    for_each_in_bounds(*tensor, coordinates, shape, [&](int64_t t, int64_t i) {
      out.ints[static_cast<size_t>(t)] = tensor->load_int(i);
    }, elements);
  return tile_ < 0 || check_read_by_this_tile(op, *tensor, coordinates, shape, elements);
}

// A tensor the kernel also stores: this tile's reads are recorded (LaunchState::readers), and an
// element another tile wrote is a race (CTAs run in no set order: it may read the old value or
// the new one).
bool TileExecution::check_read_by_this_tile(const Operation& op, const HostBuffer& tensor,
                                            const std::vector<int64_t>& coordinates, const std::vector<int64_t>& shape,
                                            bool elements) {
  auto read = launch_.readers.find(&tensor);
  if (read == launch_.readers.end()) return true;
  OwnerTable& readers = *read->second;
  const OwnerTable& owners = *launch_.owners.at(&tensor);
  int64_t writer = -1, race_index = -1;
  for_each_in_bounds(tensor, coordinates, shape, [&](int64_t, int64_t i) {
    if (race_index >= 0) return;
    const int64_t owner = owners[static_cast<size_t>(i)].load();
    if (owner != -1 && writing_tile(owner) != race_tile()) {
      writer = owner;
      race_index = i;
      return;
    }
    auto& reader = readers[static_cast<size_t>(i)];
    for (int64_t seen = reader.load(); seen != race_tile() && seen != -2;)
      if (reader.compare_exchange_weak(seen, seen == -1 ? race_tile() : -2)) break;
  }, elements);
  if (race_index < 0) return true;
  launch_.raced.store(true);
  return fail(op, fmt::format("race: tile {} reads element [{}] of {}, which {}; {}", race_tile(),
                              fmt::join(tensor.coordinates_of(race_index), ", "), launch_.buffer_names.at(&tensor),
                              writers_of(writer), kReadWriteAdvice));
}

bool TileExecution::execute_store(const Operation& op) {
  HostBuffer* tensor = tensor_operand(op, 0);
  if (!tensor) return false;
  const TileValue* tile = tile_operand(op, op.num_operands() - 1);
  if (!tile) return false;
  if (tile->shape.empty() || (tile->shape.size() > tensor->rank() && !op.has_attr("box")) ||
      tile->element != tensor->element())
    return fail(op, fmt::format("cannot store a {} tile of rank {} into a {}", to_string(tile->element),
                                tile->shape.size(), tensor->describe()));
  if (coordinate_count(op) != tensor->rank())
    return fail(op, fmt::format("takes {} tile coordinates for a rank-{} tensor", coordinate_count(op), tensor->rank()));
  // A masked store writes the elements where its mask (broadcast to the tile) holds.
  std::vector<char> written;
  if (store_mask(op)) {
    const TileValue* mask = tile_operand(op, op.num_operands() - 2);
    if (!mask) return false;
    std::string problem = broadcast_mask(*mask, tile->shape, written);
    if (!problem.empty()) return fail(op, problem);
  }
  std::vector<int64_t> coordinates(tensor->rank());
  for (size_t d = 0; d < tensor->rank(); ++d)
    if (!integer_operand(op, 1 + d, coordinates[d])) return false;
  OwnerTable* owners = nullptr;
  OwnerTable* readers = nullptr;
  if (race_tile() >= 0) {
    auto it = launch_.owners.find(tensor);
    if (it != launch_.owners.end()) owners = it->second.get();
    auto read = launch_.readers.find(tensor);
    if (read != launch_.readers.end()) readers = read->second.get();
  }
  int64_t race_other = -1, race_index = -1, race_reader = -1, reader_index = -1;
  const Type& stored = op.operands().back()->type();
  const std::vector<int64_t> shape = memory_box(op, stored, tensor->rank());  // a slice's leading 1s, a box's unit dims
  if (shape.empty() || !same_but_unit_dims(shape, tile->shape))
    return fail(op, fmt::format("cannot store a {} through the box {}", stored.to_string(), op.attr("box")->to_string()));
  // Each element's owner (kKinds above). Tiles may combine into an element any number of times,
  // all the same way (adds and maxima interleaved in CTA order would give different results), and
  // a tile may both store and combine into one no other tile writes; none may write one another
  // tile reads (readers: in-place kernels).
  const StoreCombine combine = store_combine(op);
  const int64_t kind = std::max<int64_t>(0, static_cast<int64_t>(combine) - 1);
  const bool combines = combine != StoreCombine::none;
  std::unique_lock<std::mutex> combining(launch_.accumulate_mutex, std::defer_lock);
  if (combines) combining.lock();
  auto claim = [&](std::atomic<int64_t>& owner) {  // false: a race
    int64_t seen = owner.load();
    for (;;) {
      const bool own = seen <= -8 && (-8 - seen) / kKinds == race_tile();
      int64_t want;
      if (seen == -1 || seen == race_tile() || own) want = combines && seen != race_tile() ? combined_by(race_tile(), kind) : race_tile();
      else if (combines && seen <= -2 && kind_of(seen) == kind) want = by_tiles(kind);
      else return false;  // another tile stored it, combines into it another way, or (a store) combines into it
      if (seen == want || owner.compare_exchange_weak(seen, want)) return true;
    }
  };
  const auto& semantics = element_semantics(combining_op(combines ? combine : StoreCombine::add));
  for_each_in_bounds(*tensor, coordinates, shape, [&](int64_t t, int64_t i) {
    if (!written.empty() && !written[static_cast<size_t>(t)]) return;  // masked off: not written, no owner
    if (owners && race_index < 0) {
      auto& owner = (*owners)[static_cast<size_t>(i)];
      if (!claim(owner)) {
        race_other = owner.load();
        race_index = i;
      }
    }
    if (readers && race_reader == -1) {
      const int64_t reader = (*readers)[static_cast<size_t>(i)].load();
      if (reader != -1 && reader != race_tile()) {
        race_reader = reader;
        reader_index = i;
      }
    }
    const size_t at = static_cast<size_t>(t);
    if (!combines && tile->holds_floats()) tensor->store_held_float(i, tile->floats[at]);
    else if (!combines) tensor->store_int(i, tile->ints[at]);
    else if (tile->holds_floats() && combine == StoreCombine::add && tensor->element() == ScalarKind::f32)
      tensor->store_float(i, flush_subnormal(flush_subnormal(tensor->load_float(i)) + flush_subnormal(tile->floats[at])));
    else if (tile->holds_floats()) tensor->store_float(i, semantics.f32_binary(tensor->load_float(i), tile->floats[at]));
    else tensor->store_int(i, semantics.integer_binary(tensor->load_int(i), tile->ints[at]));  // wrapped by store_int
  }, op.has_attr("elements"));
  if (race_index >= 0) {
    launch_.raced.store(true);
    const std::string element = fmt::format("element [{}] of {}", fmt::join(tensor->coordinates_of(race_index), ", "),
                                            launch_.buffer_names.at(tensor));
    const CombineVerbs& mine = kCombineVerbs[kind];
    if (race_other < -1 && !combines)
      return fail(op, fmt::format("race: tile {} stores {}, which {}; {} it too, or store it from one tile", race_tile(),
                                  element, writers_of(race_other), kCombineVerbs[kind_of(race_other)].several));
    if (race_other < -1)
      return fail(op, fmt::format("race: tile {} {} {} ({}), which {}; every tile combining into an element must do "
                                  "it the same way (the result would depend on the order of the CTAs)",
                                  race_tile(), mine.one, element, combine_spelling(kind), writers_of(race_other)));
    return fail(op, combines ? fmt::format("race: tile {} {} {}, which tile {} stores (=); every tile writing it "
                                           "must {} ({})", race_tile(), mine.one, element, race_other, mine.base,
                                           combine_spelling(kind))
                             : fmt::format("race: tiles {} and {} both store {}", race_other, race_tile(), element));
  }
  if (race_reader != -1) {
    launch_.raced.store(true);
    return fail(op, fmt::format("race: tile {} {} element [{}] of {}, which {} {}; {}", race_tile(),
                                combines ? kCombineVerbs[kind].one : "stores",
                                fmt::join(tensor->coordinates_of(reader_index), ", "), launch_.buffer_names.at(tensor),
                                race_reader >= 0 ? fmt::format("tile {}", race_reader) : std::string("other tiles"),
                                race_reader >= 0 ? "reads" : "read", kReadWriteAdvice));
  }
  return true;
}

LaunchResult argument_error(std::string message) {
  LaunchResult result;
  result.ok = false;
  result.message = std::move(message);
  return result;
}

// Phase 1: binds parameters; returns an error result or ok.
LaunchResult bind_arguments(const Region& body, std::span<const KernelArgument> arguments,
                            SymbolBindings& symbols, TileExecution& host, LaunchState& launch) {
  if (arguments.size() != body.num_arguments())
    return argument_error(fmt::format("the kernel takes {} arguments, {} were given",
                                      body.num_arguments(), arguments.size()));
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Value* parameter = body.argument(i);
    const Type& type = parameter->type();
    std::string name = parameter->name_hint().empty() ? fmt::format("argument {}", i)
                                                      : "%" + parameter->name_hint();
    RuntimeValue value;
    if (type.is_tensor()) {
      const auto* buffer = std::get_if<HostBuffer*>(&arguments[i]);
      if (!buffer || !*buffer) return argument_error(fmt::format("{} must be a tensor buffer", name));
      HostBuffer& tensor = **buffer;
      if (tensor.element() != type.element() || tensor.rank() != type.rank())
        return argument_error(fmt::format("{} is a {} but the kernel expects {}", name, tensor.describe(), type.to_string()));
      for (size_t d = 0; d < type.rank(); ++d) {
        const Dim& dim = type.dims()[d];
        int64_t extent = tensor.dims()[d];
        if (dim.is_static() && dim.extent != extent)
          return argument_error(fmt::format("{} has extent {} in dimension {}, the type says {}", name, extent, d, dim.extent));
        if (dim.symbol.empty()) continue;
        auto [it, inserted] = symbols.emplace(dim.symbol, extent);
        if (!inserted && it->second != extent)
          return argument_error(fmt::format("{} has extent {} in dimension {}, but {} = {}", name, extent, d, dim.symbol, it->second));
      }
      value.tensor = &tensor;
      launch.buffer_names.emplace(&tensor, name);
    } else if (type.is_scalar()) {
      if (const auto* integer = std::get_if<int64_t>(&arguments[i])) {
        value.tile = TileValue::scalar_int(type.element(), *integer);
      } else if (const auto* real = std::get_if<double>(&arguments[i]); real && is_float(type.element())) {
        value.tile = TileValue::scalar_float(type.element(), static_cast<float>(*real));
      } else {
        return argument_error(fmt::format("{} must be a {} scalar", name, type.to_string()));
      }
    } else {
      return argument_error(fmt::format("{} has type {}, which the interpreter cannot bind", name, type.to_string()));
    }
    host.bind(parameter, std::move(value));
  }
  return {};
}

}  // namespace detail

using namespace detail;

std::string LaunchResult::describe() const {
  std::string where = location.known() ? fmt::format("{}:{}: ", location.line, location.column) : "";
  std::string which = tile >= 0 ? fmt::format(" (tile {})", tile) : "";
  return where + message + which;
}

bool resolve_tensor_dims(const Type& tensor, const SymbolBindings& symbols,
                         std::vector<int64_t>& dims, std::string& message) {
  dims.clear();
  for (const Dim& dim : tensor.dims()) {
    if (dim.is_static()) {
      dims.push_back(dim.extent);
    } else if (auto it = symbols.find(dim.symbol); !dim.symbol.empty() && it != symbols.end()) {
      dims.push_back(it->second);
    } else {
      message = dim.symbol.empty() ? "an extent is unknown ('?')"
                                   : fmt::format("the extent {} is not bound", dim.symbol);
      return false;
    }
  }
  return true;
}

LaunchResult run_kernel(const Operation& kernel, std::span<const KernelArgument> arguments,
                        const SymbolBindings& given_symbols, const LaunchOptions& options) {
  if (kernel.kind() != OpKind::kernel || kernel.num_regions() != 1)
    return argument_error("run_kernel needs a kernel op");
  try {
    const Region& body = kernel.region();
    LaunchState launch;
    launch.max_loop_iterations = options.max_loop_iterations;
    launch.max_tile_iterations = options.max_tile_iterations;
    launch.deadline = options.deadline;
    launch.deadline_seconds = options.deadline_seconds;
    launch.sm_count = options.sm_count;
    SymbolBindings symbols = given_symbols;
    TileExecution host(nullptr, launch, -1);
    if (LaunchResult bound = bind_arguments(body, arguments, symbols, host, launch); !bound.ok)
      return bound;

    // Phase 2: the prologue, up to grid_ids (or the whole body as one tile when there is none).
    const auto& ops = body.operations();
    size_t grid_position = ops.size();
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i]->kind() == OpKind::grid_ids) grid_position = i;
    auto host_failure = [&](int64_t tile) {
      LaunchResult result;
      result.ok = false;
      result.location = host.error().location;
      result.message = host.error().message;
      result.refused_launch = host.error().refused_launch;
      result.tile = tile;
      return result;
    };
    if (grid_position == ops.size()) {
      TileExecution single(&host.values(), launch, 0);
      if (!single.run_ops(body, 0, nullptr)) {
        LaunchResult result{false, single.error().location, single.error().message, 0, 1};
        return result;
      }
      LaunchResult result;
      result.tile_count = 1;
      return result;
    }
    for (size_t i = 0; i < grid_position; ++i)
      if (!host.run_op(*ops[i])) return host_failure(-1);

    // Phase 3: the grid.
    const Operation& grid = *ops[grid_position];
    std::vector<int64_t> extents(grid.num_operands());
    int64_t tile_count = 1;
    for (size_t d = 0; d < extents.size(); ++d) {
      const RuntimeValue* extent = host.lookup(grid.operand(d));
      if (!extent || extent->tensor || !extent->tile.shape.empty() || extent->tile.holds_floats()) {
        host.fail(grid, "grid extents must be index scalars");
        return host_failure(-1);
      }
      extents[d] = extent->tile.ints[0];
      if (extents[d] < 0) {
        host.fail(grid, fmt::format("grid extent {} is negative", extents[d]));
        LaunchResult refused = host_failure(-1);
        refused.refused_launch = true;  // the launcher returns cudaErrorInvalidValue too
        return refused;
      }
    }
    // The launcher refuses more than INT_MAX tiles (a CUDA grid's x extent), so the GPU never runs
    // such a grid: neither does the interpreter (it started on 10^10 tiles and ran for hours). An
    // extent of 0 makes the grid empty, whatever the others.
    constexpr int64_t kMaxTiles = 2147483647;
    bool past_int64 = false;
    for (int64_t extent : extents)
      past_int64 = past_int64 || __builtin_mul_overflow(tile_count, extent, &tile_count);
    if (std::count(extents.begin(), extents.end(), 0) > 0) tile_count = 0;
    else if (past_int64 || tile_count > kMaxTiles) {
      host.fail(grid, fmt::format("the grid has {} tiles; a launch takes at most 2^31 - 1 (the launcher returns "
                                  "cudaErrorInvalidConfiguration): use larger tiles, or a persistent grid",
                                  past_int64 ? std::string("2^63 or more") : std::to_string(tile_count)));
      return host_failure(-1);
    }
    if (grid.num_results() != extents.size()) {
      host.fail(grid, "gives one coordinate per grid extent");
      return host_failure(-1);
    }
    // A clustered tiles grid (persistent-tiles with cluster = C) launches whole clusters on a
    // GPU (the CUDA launcher refuses a grid that is not a multiple of C); so does this one.
    if (const int64_t cluster = grid.string_attr("schedule") == "tiles" ? grid.int_attr("cluster", 1) : 1;
        cluster > 1 && tile_count % cluster != 0) {
      host.fail(grid, fmt::format("a grid of {} CTAs is not whole clusters of {}", tile_count, cluster));
      return host_failure(-1);
    }
    if (options.detect_store_races) {
      walk(const_cast<Region&>(body), [&](Operation& op) {
        auto access = tensor_access(op);
        if (!access || !access->writes) return;
        const RuntimeValue* target = host.lookup(access->tensor);
        if (!target || !target->tensor || launch.owners.count(target->tensor)) return;
        auto table = std::make_unique<OwnerTable>(static_cast<size_t>(target->tensor->element_count()));
        for (auto& owner : *table) owner.store(-1, std::memory_order_relaxed);
        launch.owners.emplace(target->tensor, std::move(table));
      });
      // A stored tensor a load reads too (an in-place kernel) also records its elements' readers.
      walk(const_cast<Region&>(body), [&](Operation& op) {
        auto access = tensor_access(op);
        if (!access || !access->reads || op.kind() == OpKind::store) return;
        const RuntimeValue* target = host.lookup(access->tensor);
        if (!target || !target->tensor || !launch.owners.count(target->tensor) || launch.readers.count(target->tensor))
          return;
        auto table = std::make_unique<OwnerTable>(static_cast<size_t>(target->tensor->element_count()));
        for (auto& reader : *table) reader.store(-1, std::memory_order_relaxed);
        launch.readers.emplace(target->tensor, std::move(table));
      });
    }

    // Phase 4: one execution per tile; the lowest failing tile's error is the launch's.
    auto run_tile = [&](int64_t tile) {
      if (tile > launch.lowest_failed_tile.load(std::memory_order_relaxed)) return;
      if (launch.past_deadline()) {  // many tiles without loops
        std::lock_guard<std::mutex> lock(launch.error_mutex);
        if (tile >= launch.lowest_failed_tile.load()) return;
        launch.lowest_failed_tile.store(tile);
        launch.error = LaunchResult{false, grid.location(), launch.deadline_message(), tile, tile_count};
        return;
      }
      TileExecution execution(&host.values(), launch, tile);
      int64_t rest = tile;
      for (size_t d = extents.size(); d-- > 0;) {
        execution.bind(grid.result(d), RuntimeValue{TileValue::scalar_int(ScalarKind::index, rest % extents[d]), nullptr});
        rest /= extents[d];
      }
      bool ok;
      std::string crash;
      try {
        ok = execution.run_ops(body, grid_position + 1, nullptr);
      } catch (const std::exception& e) {
        ok = false;
        crash = fmt::format("internal error in the interpreter: {}", e.what());
      }
      if (ok) return;
      std::lock_guard<std::mutex> lock(launch.error_mutex);
      if (tile >= launch.lowest_failed_tile.load()) return;
      launch.lowest_failed_tile.store(tile);
      launch.error = LaunchResult{false, execution.error().location,
                                  crash.empty() ? execution.error().message : crash, tile, tile_count};
    };
    SerialTileRunner serial;
    TileRunner& runner = options.runner ? *options.runner : serial;
    runner.run_tiles(tile_count, run_tile);
    if (launch.raced.load() && &runner != &serial) {
      // Which two tiles a race report names depends on the order concurrent tiles reached the
      // element, so on the worker count: the report is a serial rerun's (the lowest tiles that
      // collide), the same on every machine. It stores again; a launch that races has failed.
      for (auto* tables : {&launch.owners, &launch.readers})
        for (auto& [tensor, table] : *tables)
          for (auto& owner : *table) owner.store(-1, std::memory_order_relaxed);
      launch.raced.store(false);
      launch.lowest_failed_tile.store(INT64_MAX);
      serial.run_tiles(tile_count, run_tile);
    }
    if (launch.lowest_failed_tile.load() != INT64_MAX) return launch.error;
    LaunchResult result;
    result.tile_count = tile_count;
    return result;
  } catch (const std::exception& e) {
    return argument_error(fmt::format("internal error in the interpreter: {}", e.what()));
  }
}

}  // namespace tilec::runtime
