// ir/verifier.cpp — the IR verifier. It checks, and reports with the op's location:
//
//  1. Structure: every top-level op is a `kernel` with a string `sym_name`, names are unique;
//     every op has the operand, result and region counts of its op-table row.
//  2. Terminators: a kernel body ends in `return`, a `for`/`if` region in `yield`; a terminator
//     appears nowhere else.
//  3. SSA dominance: an operand is a region argument or an earlier result of the same region or
//     of an enclosing region (inside the same kernel); nothing is used before it is defined.
//  4. Types per op: index bounds for `for`, carried values match inits, region arguments,
//     yields and results; `if` takes an i1 and both regions yield the results' types;
//     elementwise operands broadcast to the result type; reductions keep the axis with extent 1;
//     `transpose` swaps a 2-D tile's extents; `slice` stays inside its operand; `concat`'s tiles
//     differ only along its axis; `interleave`'s tiles are of one type and its result as many
//     times longer along its axis; `reshape` keeps the element type and count; `bitcast` keeps the
//     shape and the element width (8, 16 or 32 bits; not i1 or index);
//     `item` gives the scalar of a one-element tile; `sort` keeps its tile's type (not i1), its
//     `descending` 0 or 1;
//     `load`/`tma_load`/`store` take a tensor and one index per dimension and match its element
//     type (a `masked` store's mask, before its tile, is i1 and broadcasts to it); `mma` shapes are [M,K]·[K,N] + [M,N] and its `async` is a unit attribute;
//     `grid_ids` takes and gives index values; `dim` reads an axis of a tensor; `constant` holds
//     a value of its result's kind; `rem` and `cdiv` take integers; exp, exp2, fma, sqrt, rsqrt,
//     tanh, erf, log, log2, log1p, expm1, sin, cos, tan, atan, atan2, asin, acos, sinh, cosh,
//     sigmoid, pow, floor, ceil, round and trunc take floats;
//     `and`, `or`, `xor` and `not` take integers or i1, `shl` and `shr` integers; `randint`
//     two integers (not i1; each of any integer type), giving u32.
//  5. Placement: `grid_ids` sits directly in a kernel body at most once, and only pure scalar
//     ops and `assert`s come before it (the launcher evaluates them on the host); an `assert`
//     (of an i1 scalar, its `text` a string) sits directly in a kernel body, before its `grid_ids`.
//  6. Attributes: `axis` is an integer in range; `pipeline` an integer in 1..16; `predicate` one of
//     lt le gt ge eq ne; the schedule constraints `tileas.schedule.constraint.gid`,
//     `leader_gid` (integers ≥ 0), `max_depth` (integer ≥ 1) and `force_serial_execution` (unit);
//     the published schedule: `stage`, `order`, `cycle` integers ≥ 0, `ii` and `stages`
//     integers ≥ 1 (`stages` at most kMaxScheduleStages, and an op's `stage` below its
//     loop's `stages`), `generator` "serial" or "cost-based"; a `grid_ids {schedule = "tiles"}`
//     with `cluster` has one extent and a cluster of 1, 2, 4 or 8 CTAs.
//  7. Pipe, mutex, synchronization and agent ops: ir/verify_pipe_ops.cpp, ir/verify_sync_ops.cpp.
#include "ir/verifier.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <set>
#include <unordered_set>

#include "ir/attribute_keys.h"
#include "ir/ir.h"
#include "ir/verify_sync.h"

namespace tilec {

namespace {

// A store's `accumulate`: unit (add) or the string "max", "min", "and", "or" or "xor".
bool valid_accumulate(const Attribute& how) {
  if (how.is_unit()) return true;
  if (!how.is_string()) return false;
  return parse_store_combine_attribute(how.as_string()).has_value();
}

class Verifier {
 public:
  explicit Verifier(DiagnosticEngine& diagnostics) : diagnostics_(diagnostics) {}

  void verify(const Module& module) {
    std::set<std::string> names;
    for (const auto& kernel : module.kernels()) {
      if (kernel->kind() != OpKind::kernel) {
        error(*kernel, "only kernels may appear at the top level of a module");
        continue;
      }
      const Attribute* name = kernel->attr("sym_name");
      if (!name || !name->is_string() || name->as_string().empty()) {
        error(*kernel, "a kernel needs a string 'sym_name'");
        continue;
      }
      if (!names.insert(name->as_string()).second)
        error(*kernel, fmt::format("kernel @{} is defined twice", name->as_string()));
      verify_kernel(*kernel);
    }
  }

 private:
  void error(const Operation& op, const std::string& message) {
    diagnostics_.error(op.location(), fmt::format("'{}': {}", op.name(), message));
  }

  void verify_kernel(const Operation& kernel) {
    defined_.clear();
    if (kernel.num_regions() != 1 || kernel.num_operands() || kernel.num_results()) {
      error(kernel, "a kernel has one region, no operands and no results");
      return;
    }
    verify_attributes(kernel);
    const Region& body = kernel.region();
    bool seen_grid = false, seen_non_scalar = false;
    const Operation* first_assert = nullptr;
    for (const auto& op : body.operations()) {
      if (op->kind() == OpKind::assert_ && !first_assert) first_assert = op.get();
      if (op->kind() == OpKind::grid_ids) {
        if (seen_grid) error(*op, "a kernel has at most one grid_ids");
        if (seen_non_scalar) error(*op, "only pure scalar ops may come before grid_ids");
        seen_grid = true;
      } else if (op->kind() == OpKind::assert_) {
        if (seen_grid) error(*op, "an assert comes before grid_ids (the launcher checks it before any tile runs)");
      } else if (!seen_grid) {
        bool scalar_only = op->info().has(kPure) && op->num_regions() == 0;
        for (size_t i = 0; i < op->num_results(); ++i)
          scalar_only &= op->result(i)->type().is_scalar();
        seen_non_scalar |= !scalar_only && !op->info().has(kTerminator);
      }
    }
    if (first_assert && !seen_grid)
      error(*first_assert, "an assert needs the kernel's grid_ids after it (the launcher checks it before sizing "
                           "the grid)");
    verify_region(body, OpKind::return_);
  }

  void verify_region(const Region& region, OpKind expected_terminator) {
    for (size_t i = 0; i < region.num_arguments(); ++i) defined_.insert(region.argument(i));
    const auto& ops = region.operations();
    if (ops.empty() || ops.back()->kind() != expected_terminator) {
      const Operation* owner = region.parent_op();
      if (owner)
        error(*owner, fmt::format("its region must end with '{}'", op_info(expected_terminator).name));
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operation& op = *ops[i];
      if (op.info().has(kTerminator) && i + 1 != ops.size())
        error(op, "a terminator must be the last op of its region");
      if ((op.kind() == OpKind::grid_ids || op.kind() == OpKind::assert_) && region.parent_op() &&
          region.parent_op()->kind() != OpKind::kernel)
        error(op, fmt::format("{} must sit directly in a kernel body", op.name()));
      verify_op(op);
    }
    verify_pipe_region(region, [this](const Operation& at, const std::string& message) { error(at, message); });
    // Values defined in this region go out of scope when it ends.
    for (size_t i = 0; i < region.num_arguments(); ++i) defined_.erase(region.argument(i));
    for (const auto& op : ops)
      for (size_t r = 0; r < op->num_results(); ++r) defined_.erase(op->result(r));
  }

  void verify_op(const Operation& op) {
    const OpInfo& info = op.info();
    if (op.kind() == OpKind::kernel) {
      error(op, "kernels cannot be nested");
      return;
    }
    for (Value* operand : op.operands())
      if (!defined_.count(operand)) error(op, "uses a value that does not dominate it");
    bool arity_ok = true;
    if (op.num_operands() < static_cast<size_t>(info.min_operands) ||
        (info.max_operands >= 0 && op.num_operands() > static_cast<size_t>(info.max_operands))) {
      error(op, fmt::format("has {} operands, expected {}{}", op.num_operands(), info.min_operands,
                            info.max_operands == info.min_operands ? ""
                            : info.max_operands < 0                ? " or more"
                                                   : fmt::format(" to {}", info.max_operands)));
      arity_ok = false;
    }
    if (info.results >= 0 && op.num_results() != static_cast<size_t>(info.results)) {
      error(op, fmt::format("has {} results, expected {}", op.num_results(), info.results));
      arity_ok = false;
    }
    if (op.num_regions() != info.regions) {
      error(op, fmt::format("has {} regions, expected {}", op.num_regions(), info.regions));
      return;
    }
    verify_attributes(op);
    if (arity_ok) {
      verify_types(op);
      OpErrorSink sink = [this](const Operation& at, const std::string& message) { error(at, message); };
      verify_pipe_op(op, sink);
      verify_sync_op(op, sink);
    }
    for (size_t r = 0; r < op.num_regions(); ++r) verify_region(op.region(r), OpKind::yield);
    for (size_t i = 0; i < op.num_results(); ++i) defined_.insert(op.result(i));
  }

  void verify_attributes(const Operation& op) {
    for (const auto& attribute : op.attributes()) {
      // Named references, not a structured binding: clang 14 (the fuzz build) cannot capture
      // structured bindings in a lambda.
      const auto& name = attribute.first;
      const auto& value = attribute.second;
      auto need_int = [&](int64_t minimum) {
        if (!value.is_int()) error(op, fmt::format("attribute '{}' must be an integer, not {}", name, value.kind_name()));
        else if (value.as_int() < minimum) error(op, fmt::format("attribute '{}' must be >= {}, got {}", name, minimum, value.as_int()));
      };
      if (name == "tileas.schedule.constraint.gid" || name == "tileas.schedule.constraint.leader_gid" ||
          name == attr::stage.name || (name == attr::order.name && op.kind() != OpKind::grid_ids)) {
        need_int(0);
        if (name == attr::stage.name && value.is_int()) check_stage_in_loop(op, value.as_int());
      }
      else if (name == "pipeline") {
        need_int(1);
        if (value.is_int() && value.as_int() > kMaxPipelineStages)
          error(op, fmt::format("the pipeline stage count is {}; at most {} stages are supported", value.as_int(),
                                kMaxPipelineStages));
      } else if (name == "tileas.schedule.constraint.max_depth" || name == attr::ii.name)
        need_int(1);
      else if (name == attr::stages.name) {
        need_int(1);
        if (value.is_int() && value.as_int() > kMaxScheduleStages)
          error(op, fmt::format("attribute 'stages' is {}; a schedule has at most {}", value.as_int(), kMaxScheduleStages));
      }
      else if (name == attr::cycle.name)
        need_int(0);
      else if (name == attr::latency.name) {
        need_int(0);
        if (value.is_int() && value.as_int() > kMaxOpLatency)
          error(op, fmt::format("attribute 'latency' is {}; at most {} cycles", value.as_int(), kMaxOpLatency));
      } else if (name == attr::resources.name)
        verify_resources(op, value);
      else if (name == attr::generator.name && (!value.is_string() || (value.as_string() != "serial" && value.as_string() != "cost-based")))
        error(op, "attribute 'generator' must be \"serial\" or \"cost-based\"");
      else if (name == "tileas.schedule.constraint.force_serial_execution" && !value.is_unit())
        error(op, fmt::format("attribute '{}' takes no value", name));
      else if (name == "axis")
        need_int(0);
      else if (name == "schedule" && op.kind() == OpKind::grid_ids &&
               (!value.is_string() || (value.as_string() != "tiles" && value.as_string() != "persistent")))
        error(op, fmt::format("attribute 'schedule' must be \"tiles\" or \"persistent\", not {}", value.to_string()));
      else if (name == "predicate") {
        static const std::set<std::string> predicates = {"lt", "le", "gt", "ge", "eq", "ne"};
        if (!value.is_string() || !predicates.count(value.as_string()))
          error(op, "attribute 'predicate' must be one of \"lt\" \"le\" \"gt\" \"ge\" \"eq\" \"ne\"");
      }
    }
  }

  // An op's `stage` is one of its loop's: below the `stages` of the nearest enclosing loop that
  // has them (an op outside any scheduled loop is in stage 0 of the kernel's straight line).
  void check_stage_in_loop(const Operation& op, int64_t stage) {
    for (const Operation* parent = op.parent_op(); parent; parent = parent->parent_op()) {
      if (parent->kind() != OpKind::for_) continue;
      const Attribute* stages = parent->attr(attr::stages.name);
      if (!stages || !stages->is_int()) continue;
      if (stage >= stages->as_int())
        error(op, fmt::format("attribute 'stage' is {}, but its loop's schedule has {} stage{} (0 to {})", stage,
                              stages->as_int(), stages->as_int() == 1 ? "" : "s", stages->as_int() - 1));
      return;
    }
  }

  // build-resources' footprint: [[slot, at, for, occupancy], ...], a slot name and at >= 0, for
  // and occupancy >= 1, each at most kMaxOpLatency (the scheduler's reservation limits).
  void verify_resources(const Operation& op, const Attribute& value) {
    const char* form = "attribute 'resources' must be an array of [\"slot\", at, for, occupancy] (at >= 0, for and "
                       "occupancy >= 1)";
    if (!value.is_array()) {
      error(op, form);
      return;
    }
    for (const Attribute& use : value.as_array()) {
      bool ok = use.is_array() && use.as_array().size() == 4 && use.as_array()[0].is_string();
      for (size_t i = 1; ok && i < 4; ++i) {
        const Attribute& field = use.as_array()[i];
        ok = field.is_int() && field.as_int() >= (i == 1 ? 0 : 1) && field.as_int() <= kMaxOpLatency;
      }
      if (!ok) {
        error(op, fmt::format("{}, each at most {}; got {}", form, kMaxOpLatency, use.to_string()));
        return;
      }
    }
  }

  static bool is_index(const Value* v) { return v->type().is_index(); }

  void verify_types(const Operation& op) {
    auto type = [&](size_t i) -> const Type& { return op.operand(i)->type(); };
    auto result = [&](size_t i = 0) -> const Type& { return op.result(i)->type(); };
    auto elementwise = [&] {  // operands broadcast to the result (fma's three together)
      if (!op.info().has(kElementwise)) return;
      Type expected = type(0);
      for (size_t i = 1; i < op.num_operands() && !expected.is_none(); ++i) expected = broadcast_type(expected, type(i));
      if (expected.is_tile()) expected = expected.with_space(MemorySpace::reg);
      if (expected.is_none())
        error(op, fmt::format("operands {} do not broadcast", [&] {
                std::vector<std::string> types;
                for (const Value* operand : op.operands()) types.push_back(operand->type().to_string());
                return fmt::format("{}", fmt::join(types, ", "));
              }()));
      else if (!(result() == expected))
        error(op, fmt::format("result must be {}, not {}", expected.to_string(), result().to_string()));
    };
    switch (op.kind()) {
      case OpKind::for_: {
        for (size_t i = 0; i < 3; ++i)
          if (!is_index(op.operand(i))) error(op, "bounds and step must be index values");
        size_t carried = op.num_operands() - 3;
        const Region& body = op.region();
        if (op.num_results() != carried)
          error(op, fmt::format("carries {} values but has {} results", carried, op.num_results()));
        if (body.num_arguments() != carried + 1 || !body.argument(0)->type().is_index()) {
          error(op, "its region takes the index then one argument per carried value");
          break;
        }
        for (size_t i = 0; i < carried && i < op.num_results(); ++i)
          if (!(type(3 + i) == result(i)) || !(body.argument(1 + i)->type() == result(i)))
            error(op, fmt::format("carried value {} has mismatched types", i));
        check_yield(op, body, op);
        break;
      }
      case OpKind::if_: {
        if (!(type(0) == Type::scalar(ScalarKind::i1))) error(op, "the condition must be i1");
        for (size_t r = 0; r < 2; ++r) {
          if (op.region(r).num_arguments()) error(op, "its regions take no arguments");
          check_yield(op, op.region(r), op);
        }
        break;
      }
      case OpKind::grid_ids:
        for (size_t i = 0; i < op.num_operands(); ++i)
          if (!is_index(op.operand(i))) error(op, "grid extents must be index values");
        if (op.num_results() != op.num_operands())
          error(op, "gives one coordinate per grid extent");
        for (size_t i = 0; i < op.num_results(); ++i)
          if (!result(i).is_index()) error(op, "coordinates are index values");
        if (op.has_attr("cluster") && op.string_attr("schedule") == "tiles") {
          const Attribute* cluster = op.attr("cluster");
          const int64_t size = cluster->is_int() ? cluster->as_int() : 0;
          if (size < 1 || size > 8 || (size & (size - 1)) != 0)
            error(op, "'cluster' on a tiles grid is 1, 2, 4 or 8 (CTAs per cluster)");
          else if (size > 1 && op.num_operands() != 1)
            error(op, "a clustered tiles grid has one extent (clusters along x)");
        }
        break;
      case OpKind::assert_: {
        if (!(type(0).is_scalar() && type(0).element() == ScalarKind::i1))
          error(op, fmt::format("its condition is an i1 scalar, not {}", type(0).to_string()));
        const Attribute* text = op.attr("text");
        if (text && !text->is_string()) error(op, "'text' is a string (the condition as written)");
        break;
      }
      case OpKind::sm_count: {
        if (!result().is_index()) error(op, "the SM count is an index value");
        const Attribute* workers = op.attr("workers");
        if (workers && (!workers->is_int() || workers->as_int() < 1)) error(op, "'workers' is a positive integer");
        break;
      }
      case OpKind::constant: {
        const Attribute* value = op.attr("value");
        if (!result().is_scalar()) error(op, "a constant is a scalar");
        else if (!value || !(value->is_int() || value->is_float() || value->is_bool()))
          error(op, "needs a numeric 'value'");
        else if (is_float(result().element()) != value->is_float())
          error(op, fmt::format("'value' ({}) does not match the result type {}", value->kind_name(), result().to_string()));
        break;
      }
      case OpKind::dim:
        if (!type(0).is_tensor()) error(op, "reads a tensor");
        else if (!op.attr("axis") || op.int_attr("axis") >= static_cast<int64_t>(type(0).rank()))
          error(op, "needs an 'axis' within the tensor's rank");
        if (!result().is_index()) error(op, "gives an index");
        break;
      case OpKind::cmp: {
        Type operands = broadcast_type(type(0), type(1));
        if (operands.is_none()) error(op, fmt::format("operands {} and {} do not broadcast", type(0).to_string(), type(1).to_string()));
        else if (!(result() == operands.with_element(ScalarKind::i1)))
          error(op, fmt::format("result must be {}", operands.with_element(ScalarKind::i1).to_string()));
        if (!op.attr("predicate")) error(op, "needs a 'predicate'");
        break;
      }
      case OpKind::randint: {  // u32 words from a seed and an offset, integers of any types
        const auto integer = [](const Type& t) { return is_integer(t.element()) && t.element() != ScalarKind::i1; };
        Type operands = broadcast_type(type(0).with_element(ScalarKind::u32), type(1).with_element(ScalarKind::u32));
        if (!integer(type(0)) || !integer(type(1)))
          error(op, fmt::format("takes integer operands, not {} and {}", type(0).to_string(), type(1).to_string()));
        else if (operands.is_none())
          error(op, fmt::format("operands {} and {} do not broadcast", type(0).to_string(), type(1).to_string()));
        else if (Type expected = operands.is_tile() ? operands.with_element(ScalarKind::u32).with_space(MemorySpace::reg)
                                                     : operands.with_element(ScalarKind::u32);
                 !(result() == expected))
          error(op, fmt::format("result must be {}, not {}", expected.to_string(), result().to_string()));
        break;
      }
      case OpKind::select: {
        // All three broadcast: a tile selector may pick between scalars.
        Type values = broadcast_type(type(1), type(2));
        if (!values.is_none()) values = broadcast_type(type(0).with_element(values.element()), values);
        if (type(0).element() != ScalarKind::i1) error(op, "the selector must be i1");
        if (values.is_none() || !(result() == values)) error(op, "operands and result do not match");
        break;
      }
      case OpKind::cast:
        if (!(type(0).with_element(result().element()).with_space(result().space()) == result()))
          error(op, "changes only the element type");
        break;
      case OpKind::bitcast: {
        const ScalarKind from = type(0).element(), to = result().element();
        if (!(type(0).with_element(to).with_space(result().space()) == result()))
          error(op, "changes only the element type");
        else if (bitcast_width(from) == 0 || bitcast_width(from) != bitcast_width(to))
          error(op, fmt::format("reads {} as {}: bitcast takes element types of the same width (not i1 or index)",
                                to_string(from), to_string(to)));
        break;
      }
      case OpKind::iota: {
        int64_t axis = op.int_attr("axis", -1);
        if (!result().is_tile() || !is_integer(result().element()))
          error(op, "gives a tile of integers");
        else if (axis < 0 || axis >= static_cast<int64_t>(result().rank()))
          error(op, "needs an 'axis' within the tile's rank");
        else if (auto range = integer_range(result().element());
                 range && result().shape()[static_cast<size_t>(axis)] - 1 > range->highest)
          error(op, fmt::format("counts to {} along axis {}, past {}'s largest value {}",
                                result().shape()[static_cast<size_t>(axis)] - 1, axis, to_string(result().element()),
                                range->highest));
        break;
      }
      case OpKind::zeros:
      case OpKind::full:
        if (!result().is_tile()) error(op, "gives a tile");
        if (op.kind() == OpKind::full && !(type(0) == Type::scalar(result().element())))
          error(op, "the fill value must be a scalar of the tile's element type");
        break;
      case OpKind::item:
        if (!type(0).is_tile() || type(0).element_count() != 1 || !(result() == Type::scalar(type(0).element())))
          error(op, fmt::format("gives the scalar of a tile of one element, not {} from {}", result().to_string(),
                                type(0).to_string()));
        break;
      case OpKind::reshape:
        if (!type(0).is_tile() || !result().is_tile() || type(0).element() != result().element() ||
            type(0).element_count() != result().element_count())
          error(op, fmt::format("gives a tile of the same element type and count as its operand, not {} from {}",
                                result().to_string(), type(0).to_string()));
        break;
      case OpKind::transpose: {
        const Type& input = type(0);
        const std::vector<int64_t> dims = transpose_dims(op);
        if (!input.is_tile() || !is_dimension_permutation(dims, input.rank())) {
          error(op, op.has_attr("dims") ? "'dims' must be a permutation of the tile's dimensions"
                                        : "transposes a 2-D tile (or takes 'dims', a permutation of its dimensions)");
          break;
        }
        Type expected = Type::tile(permuted_shape(input.shape(), dims), input.element());
        if (!(result() == expected)) error(op, fmt::format("result must be {}, not {}", expected.to_string(), result().to_string()));
        break;
      }
      case OpKind::slice: {
        const Type& input = type(0);
        const std::vector<int64_t> starts = slice_starts(op), steps = slice_steps(op);
        if (!input.is_tile() || !result().is_tile() || result().rank() != input.rank() ||
            result().element() != input.element()) {
          error(op, fmt::format("slices a tile into a tile of its rank and element type, not {} from {}",
                                result().to_string(), input.to_string()));
          break;
        }
        if (starts.size() != input.rank() || steps.size() != input.rank()) {
          error(op, fmt::format("needs 'starts' (and 'steps', if any): {} integers", input.rank()));
          break;
        }
        for (size_t d = 0; d < input.rank(); ++d)
          if (starts[d] < 0 || steps[d] < 1 ||
              starts[d] + (result().shape()[d] - 1) * steps[d] >= input.shape()[d]) {
            error(op, fmt::format("takes {} elements from {} by {} along dimension {}, past its extent {}",
                                  result().shape()[d], starts[d], steps[d], d, input.shape()[d]));
            break;
          }
        break;
      }
      case OpKind::concat: {
        const Type& first = type(0);
        const int64_t axis = op.int_attr("axis", -1);
        if (!first.is_tile() || axis < 0 || axis >= static_cast<int64_t>(first.rank())) {
          error(op, "concatenates tiles along an 'axis' within their rank");
          break;
        }
        std::vector<int64_t> shape = first.shape();
        shape[static_cast<size_t>(axis)] = 0;
        bool fits = true;
        for (size_t i = 0; i < op.num_operands() && fits; ++i) {
          const Type& t = type(i);
          fits = t.is_tile() && t.rank() == first.rank() && t.element() == first.element();
          for (size_t d = 0; fits && d < t.rank(); ++d)
            fits = d == static_cast<size_t>(axis) || t.shape()[d] == first.shape()[d];
          if (fits) shape[static_cast<size_t>(axis)] += t.shape()[static_cast<size_t>(axis)];
        }
        if (!fits) error(op, fmt::format("concatenates tiles of one element type and rank, equal but along axis {}", axis));
        else if (!(result() == Type::tile(shape, first.element())))
          error(op, fmt::format("result must be {}", Type::tile(shape, first.element()).to_string()));
        break;
      }
      case OpKind::interleave: {
        const Type& first = type(0);
        const int64_t axis = op.int_attr("axis", -1);
        if (!first.is_tile() || axis < 0 || axis >= static_cast<int64_t>(first.rank())) {
          error(op, "interleaves tiles along an 'axis' within their rank");
          break;
        }
        bool same = true;
        for (size_t i = 1; i < op.num_operands(); ++i) same = same && type(i) == first;
        std::vector<int64_t> shape = first.shape();
        shape[static_cast<size_t>(axis)] *= static_cast<int64_t>(op.num_operands());
        if (!same) error(op, "interleaves tiles of one type");
        else if (!(result() == Type::tile(shape, first.element())))
          error(op, fmt::format("result must be {}", Type::tile(shape, first.element()).to_string()));
        break;
      }
      case OpKind::scan_sum:
      case OpKind::scan_prod:
      case OpKind::scan_max:
      case OpKind::scan_min:
      case OpKind::sort: {  // line by line along `axis`, keeping the tile's type
        const Type& input = type(0);
        const bool sort = op.kind() == OpKind::sort;
        int64_t axis = op.int_attr("axis", -1), descending = op.int_attr("descending", 0);
        if (!input.is_tile() || input.element() == ScalarKind::i1)
          error(op, sort ? "sorts a tile of numbers" : "scans a tile of numbers");
        else if (axis < 0 || axis >= static_cast<int64_t>(input.rank())) error(op, "needs an 'axis' within the tile's rank");
        else if (sort && descending != 0 && descending != 1) error(op, "attribute 'descending' must be 0 or 1");
        else if (!(result() == input.with_space(MemorySpace::reg)))
          error(op, fmt::format("result must be {}", input.with_space(MemorySpace::reg).to_string()));
        break;
      }
      case OpKind::reduce_sum:
      case OpKind::reduce_max:
      case OpKind::reduce_min: {
        const Type& input = type(0);
        int64_t axis = op.int_attr("axis", -1);
        if (!input.is_tile()) {
          error(op, "reduces a tile");
          break;
        }
        if (axis < 0 || axis >= static_cast<int64_t>(input.rank())) {
          error(op, "needs an 'axis' within the tile's rank");
          break;
        }
        std::vector<int64_t> shape = input.shape();
        shape[static_cast<size_t>(axis)] = 1;
        Type expected = Type::tile(shape, input.element(), MemorySpace::reg);
        if (!(result() == expected)) error(op, fmt::format("result must be {}", expected.to_string()));
        break;
      }
      case OpKind::load:
      case OpKind::tma_load:
      case OpKind::store: {
        const Type& tensor = type(0);
        size_t coordinates = coordinate_count(op);
        if (!tensor.is_tensor()) {
          error(op, "the first operand must be a tensor");
          break;
        }
        if (coordinates != tensor.rank())
          error(op, fmt::format("takes {} tile coordinates for a rank-{} tensor", coordinates, tensor.rank()));
        for (size_t i = 1; i <= coordinates && i < op.num_operands(); ++i)
          if (!is_index(op.operand(i))) error(op, "tile coordinates must be index values");
        const Type& tile = op.kind() == OpKind::store ? op.operands().back()->type() : result();
        // A tile of lower rank is a slice of the tensor (shape_in_tensor); one moved through a
        // `box` may have more dimensions (a column [R, 1] of a vector), which check_box checks.
        if (!tile.is_tile() || tile.rank() < 1 || (tile.rank() > tensor.rank() && !op.has_attr("box")) ||
            tile.element() != tensor.element())
          error(op, fmt::format("tile {} does not match tensor {}", tile.to_string(), tensor.to_string()));
        else if (op.kind() == OpKind::tma_load && tile.space() != MemorySpace::smem)
          error(op, "a tma_load fills shared memory");
        else if (op.has_attr("accumulate") && (op.kind() != OpKind::store || !valid_accumulate(*op.attr("accumulate"))))
          error(op, "'accumulate' is an attribute of store: `accumulate` (add), or `accumulate = \"max\"`, \"min\", "
                    "\"and\", \"or\" or \"xor\"");
        else if (accumulates(op) && !combines_atomically(store_combine(op), tensor.element()))
          error(op, fmt::format("a combining store ({}) works on {} elements atomically, not {}",
                                store_combine_spelling(store_combine(op)), combinable_elements(store_combine(op), "or"),
                                to_string(tensor.element())));
        else if (op.has_attr("masked") && (op.kind() != OpKind::store || !op.attr("masked")->is_unit()))
          error(op, "'masked' is a unit attribute of store (its operand before the tile is the mask)");
        else if (const Value* mask = store_mask(op); mask && !mask_fits(mask->type(), tile))
          error(op, fmt::format("the mask {} must be i1, a scalar or a tile of the stored tile's rank whose shape "
                                "broadcasts to {}", mask->type().to_string(), tile.to_string()));
        else check_box(op, tile, tensor);
        break;
      }
      case OpKind::mma: {
        const Type &a = type(0), &b = type(1), &acc = type(2);
        if (!a.is_tile() || !b.is_tile() || !acc.is_tile() || a.rank() != 2 || b.rank() != 2 ||
            acc.rank() != 2 || a.shape()[1] != b.shape()[0] || acc.shape()[0] != a.shape()[0] ||
            acc.shape()[1] != b.shape()[1] || !mma_operands_combine(a.element(), b.element()))
          error(op, fmt::format("shapes {} · {} + {} do not form a matrix product", a.to_string(),
                                b.to_string(), acc.to_string()));
        else if (!(result() == acc)) error(op, "the result has the accumulator's type");
        else if (const Attribute* async = op.attr(attr::async.name); async && !async->is_unit())
          error(op, fmt::format("'async' is a unit attribute (write `async`), not {}", async->kind_name()));
        break;
      }
      default: {
        ScalarKind element = op.num_operands() > 0 ? type(0).element() : ScalarKind::f32;
        if (!op.info().takes_operands(is_float(element)))
          error(op, fmt::format("takes {} operands", op.info().operand_kinds()));
        else elementwise();
        break;
      }
    }
  }

  // A `box` (memory_box) holds the tile's elements in the tensor through unit dimensions.
  void check_box(const Operation& op, const Type& tile, const Type& tensor) {
    if (!op.has_attr("box")) return;
    const std::vector<int64_t> box = memory_box(op, tile, tensor.rank());
    const std::vector<int64_t> stored = stored_shape(op, tile);  // a transposed tma_load's box is [C, R]
    if (box.empty())
      error(op, fmt::format("'box' must be an array of at most {} positive extents", tensor.rank()));
    else if (!same_but_unit_dims(box, stored))
      error(op, fmt::format("'box' {} does not hold the tile {} (the same extents but for 1s)",
                            op.attr("box")->to_string(), tile.to_string()));
  }

  void check_yield(const Operation& op, const Region& region, const Operation& owner) {
    const Operation* yield = region.terminator();
    if (!yield || yield->kind() != OpKind::yield) return;  // reported by verify_region
    if (yield->num_operands() != owner.num_results()) {
      error(op, fmt::format("yields {} values for {} results", yield->num_operands(), owner.num_results()));
      return;
    }
    for (size_t i = 0; i < owner.num_results(); ++i)
      if (!(yield->operand(i)->type() == owner.result(i)->type()))
        error(op, fmt::format("yields {} for a result of type {}", yield->operand(i)->type().to_string(),
                              owner.result(i)->type().to_string()));
  }

  DiagnosticEngine& diagnostics_;
  std::unordered_set<const Value*> defined_;
};

}  // namespace

bool verify_module(const Module& module, DiagnosticEngine& diagnostics) {
  int before = diagnostics.error_count();
  Verifier(diagnostics).verify(module);
  return diagnostics.error_count() == before;
}

}  // namespace tilec
