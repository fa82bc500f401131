// backend/cuda/kernel_plan.cpp — names, parameters, grid and shared-memory layout of a kernel.
//
// Phases, each one walk in program order (so the plan, and the emitted text, is deterministic):
//   1. Parameters: dimension symbols first (they keep their exact names: `int64_t N`), then
//      tensors and scalars, then one `T_dimK` per unknown (`?`) dimension.
//   2. Support check: every op kind and every value type the backend knows; the first
//      unsupported thing of each op is reported at its location.
//   3. Values: each scalar gets an expression (a `dim` is its extent, an unnamed constant its
//      literal, anything else a variable); each tile value a buffer; a `for`'s results reuse
//      its carried values' variables and buffers.
//   4. Liveness: number the ops in pre-order; a buffer lives from its defining op to its last
//      use, a use inside a loop the value is defined outside of counting as a use at the
//      loop's last op (the next iteration reads it again); a carried buffer lives through its
//      whole loop.
//   5. Placement: first fit in definition order, 16-byte aligned, at the lowest offset no
//      buffer with an overlapping (inclusive) live range occupies. Inclusive ranges keep an
//      op's operands and result apart; the barrier after every tile op makes reuse safe: a
//      buffer is written only after every read of its previous tenant has finished.
// Cost: O(ops · depth) for liveness, O(buffers²) for placement.
#include "backend/cuda/kernel_plan.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <set>

#include "backend/cuda/cuda_syntax.h"

namespace tilec::cuda {

namespace {

class Planner {
 public:
  Planner(const Operation& kernel, DiagnosticEngine& diagnostics)
      : kernel_(kernel), diagnostics_(diagnostics) {}

  std::optional<KernelPlan> run(const std::string& name) {
    plan_.kernel = &kernel_;
    plan_.name = name;
    names_.reserve(plan_.name + "_kernel");  // the __global__ function and its launcher, which
    names_.reserve("launch_" + plan_.name);  // take the user's names as parameters
    names_.reserve(plan_.name + "_reference");        // --emit-harness: the reference kernel and its
    names_.reserve(plan_.name + "_reference_flops");  // work counter, which a parameter would hide
    const Region& body = kernel_.region();
    for (const auto& op : body.operations())
      plan_.tensor_core = plan_.tensor_core || op->kind() == OpKind::warp_specialize;
    if (plan_.tensor_core) names_.reserve_tensor_core_locals();  // before any user name is given out
    plan_parameters(body);
    if (!plan_.tensor_core) check_supported(body);
    if (failed_) return std::nullopt;
    for (const auto& op : body.operations()) {
      if (op->kind() == OpKind::grid_ids) plan_.grid = op.get();
    }
    if (plan_.grid && plan_.grid->string_attr("schedule") == "tiles")
      plan_.cluster_size = plan_.grid->int_attr("cluster", 1);
    if (plan_.grid) {
      for (const auto& op : body.operations()) {
        if (op.get() == plan_.grid) break;
        plan_.pre_grid.push_back(op.get());
      }
      plan_launch_checks(body);
    }
    plan_values(body);
    compute_live_ranges(body);
    place_buffers();
    plan_.names = names_;
    return std::move(plan_);
  }

 private:
  // Walks the ops before the grid from the last: an op is launch-only when it is an assert, or
  // when launch-only ops read its results and device code does not.
  void plan_launch_checks(const Region& body) {
    std::unordered_set<const Value*> device_reads, check_reads;
    bool after_grid = false;
    for (const auto& op : body.operations()) {
      after_grid = after_grid || op.get() == plan_.grid;
      if (!after_grid) continue;
      walk_reads(*op, device_reads);
    }
    for (auto it = plan_.pre_grid.rbegin(); it != plan_.pre_grid.rend(); ++it) {
      const Operation& op = **it;
      bool device = false, check = op.kind() == OpKind::assert_;
      for (size_t i = 0; i < op.num_results(); ++i) {
        device = device || device_reads.count(op.result(i));
        check = check || check_reads.count(op.result(i));
      }
      if (check && !device) {
        plan_.launch_checks.insert(&op);
        check_reads.insert(op.operands().begin(), op.operands().end());
      } else {
        device_reads.insert(op.operands().begin(), op.operands().end());
      }
    }
  }
  // Adds the operands of `op` and of every op nested in it to `reads`.
  static void walk_reads(const Operation& op, std::unordered_set<const Value*>& reads) {
    reads.insert(op.operands().begin(), op.operands().end());
    for (size_t r = 0; r < op.num_regions(); ++r)
      walk(op.region(r),
           [&](const Operation& nested) { reads.insert(nested.operands().begin(), nested.operands().end()); });
  }

  void unsupported(const Operation& op, const std::string& what) {
    diagnostics_.error(op.location(),
                       fmt::format("the CUDA backend does not support {} yet", what));
    failed_ = true;
  }

  // Phase 1.
  void plan_parameters(const Region& body) {
    std::unordered_map<std::string, std::string> symbols;
    for (size_t i = 0; i < body.num_arguments(); ++i) {
      const Type& type = body.argument(i)->type();
      if (!type.is_tensor()) continue;
      for (const Dim& dim : type.dims()) {
        if (dim.is_static() || dim.symbol.empty() || symbols.count(dim.symbol)) continue;
        symbols[dim.symbol] = names_.unique(dim.symbol);
        plan_.dim_params.push_back(symbols[dim.symbol]);
        plan_.dim_names.push_back(dim.symbol);
      }
    }
    for (size_t i = 0; i < body.num_arguments(); ++i) {
      const Value* argument = body.argument(i);
      const Type& type = argument->type();
      if (!type.is_tensor() && !type.is_scalar()) {
        unsupported(kernel_, fmt::format("a kernel parameter of type {}", type.to_string()));
        continue;
      }
      ParamPlan param;
      param.value = argument;
      param.name = names_.unique(argument->name_hint().empty() ? fmt::format("arg{}", i)
                                                               : argument->name_hint());
      plan_.params.push_back(param);
      plan_.expressions[argument] = param.name;
    }
    for (const ParamPlan& param : plan_.params) {
      const Type& type = param.value->type();
      if (!type.is_tensor()) continue;
      std::vector<std::string> extents;
      for (size_t axis = 0; axis < type.dims().size(); ++axis) {
        const Dim& dim = type.dims()[axis];
        if (dim.is_static()) {
          extents.push_back(integer_literal(dim.extent));
        } else if (!dim.symbol.empty()) {
          extents.push_back(symbols.at(dim.symbol));
        } else {
          extents.push_back(names_.unique(fmt::format("{}_dim{}", param.name, axis)));
          plan_.dim_params.push_back(extents.back());
          plan_.dim_names.push_back(extents.back());
        }
      }
      plan_.tensor_dims[param.value] = std::move(extents);
    }
    walk(body, [&](const Operation& op) {
      auto access = tensor_access(op);
      if (!access || !access->writes) return;
      for (ParamPlan& param : plan_.params)
        if (param.value == access->tensor) {
          param.written = true;
          const StoreCombine combine = store_combine(op);
          param.added = param.added || combine == StoreCombine::add;
          param.float_extrema = param.float_extrema || ((combine == StoreCombine::max || combine == StoreCombine::min) &&
                                                        is_float(access->tensor->type().element()));
        }
    });
  }

  // Phase 2.
  // Tensor-core, TMA and synchronization ops are reported once per kernel, at the kernel,
  // naming each kind with its first location (a gemm uses dozens of them).
  void check_supported(const Region& body) {
    std::vector<const Operation*> tensor_core_ops;
    walk(body, [&](const Operation& op) {
      if (op.info().has(kSync) || op.kind() == OpKind::warp_specialize || op.kind() == OpKind::agent) {
        if (std::none_of(tensor_core_ops.begin(), tensor_core_ops.end(),
                         [&](const Operation* seen) { return seen->kind() == op.kind(); }))
          tensor_core_ops.push_back(&op);
        return;
      }
      auto check_type = [&](const Type& type) {
        if (type.is_scalar() || type.is_tile()) return true;
        if (type.is_tensor() && (tensor_access(op) || op.kind() == OpKind::dim))
          return true;
        unsupported(op, fmt::format("values of type {} in '{}'", type.to_string(), op.name()));
        return false;
      };
      for (Value* operand : op.operands())
        if (!check_type(operand->type())) return;
      for (size_t i = 0; i < op.num_results(); ++i)
        if (!check_type(op.result(i)->type())) return;
      for (size_t r = 0; r < op.num_regions(); ++r)
        for (size_t i = 0; i < op.region(r).num_arguments(); ++i)
          if (!check_type(op.region(r).argument(i)->type())) return;
      if (op.info().has(kElementwise) && op.num_operands() > 0) {
        ScalarKind element = op.operand(op.kind() == OpKind::select ? 1 : 0)->type().element();
        bool floating = is_float(element);
        if (!op.info().takes_operands(floating))
          unsupported(op, fmt::format("'{}' of {}", op.name(), to_string(element)));
        else if (element == ScalarKind::i1 && !op.info().has(kBitwise) && op.kind() != OpKind::cast &&
                 op.kind() != OpKind::cmp && op.kind() != OpKind::select)
          unsupported(op, fmt::format("arithmetic ('{}') on i1", op.name()));
      }
      if (op.kind() == OpKind::for_) check_carried_tiles(op);
    });
    if (tensor_core_ops.empty()) return;
    // An mma loop no TMA load feeds was not split into agents: say what makes one (found by a
    // helper writing kernels from the docs: both operands computed).
    const Operation* mma = nullptr;
    walk(kernel_.region(), [&](const Operation& op) {
      if (!mma && op.kind() == OpKind::mma) mma = &op;
    });
    if (mma) {
      diagnostics_.error(mma->location(),
                         "this mma's loop has no operand TMA copies, which the tensor-core backend builds its "
                         "pipeline around: load A or B unchanged (mma(load X[m, k] : <BM, BK>, b, acc), scaling "
                         "the result instead of the operand), or give a computed B an 8- or 16-bit weight to "
                         "start from (cast(load Wq[k, n] : <BK, BN>, f32) * scale: TMA copies the i8 tile)");
      failed_ = true;
      return;
    }
    std::vector<std::string> kinds;
    for (const Operation* op : tensor_core_ops)
      kinds.push_back(fmt::format("'{}' ({}:{})", op->name(), op->location().line, op->location().column));
    diagnostics_.error(kernel_.location(),
                       fmt::format("kernel @{} uses {}, which the plain CUDA backend cannot emit: stage buffers, "
                                   "pipes, mbarriers and events are emitted only in a kernel that warp-specialize "
                                   "split into a TMA producer and compute agents (a loop with mma on TMA-loaded "
                                   "tiles); a loop without mma needs none of them (generate-schedule keeps it to "
                                   "one stage), so write it without them",
                                   kernel_name(kernel_), fmt::join(kinds, ", ")));
    failed_ = true;
  }

  // A yield that passes carried tile j on as carried tile i != j would need a staging buffer.
  void check_carried_tiles(const Operation& loop) {
    const Region& body = loop.region();
    const Operation* yield = body.terminator();
    if (!yield) return;
    for (size_t i = 0; i < yield->num_operands(); ++i) {
      const Value* next = yield->operand(i);
      if (!next->type().is_tile() || next->owner_region() != &body) continue;
      if (next->index() != i + 1)
        unsupported(loop, "a loop that permutes its carried tiles");
    }
  }

  // Phase 3.
  void plan_values(const Region& body) {
    walk(body, [&](const Operation& op) {
      if (op.kind() == OpKind::for_) {
        const Region& loop_body = op.region();
        plan_.expressions[loop_body.argument(0)] = fresh_name(loop_body.argument(0), "iv");
        for (size_t i = 1; i < loop_body.num_arguments(); ++i) {
          const Value* carried = loop_body.argument(i);
          define(carried);
          plan_.expressions[op.result(i - 1)] = plan_.expressions[carried];
          if (carried->type().is_tile() && !plan_.tensor_core) buffer_of_[op.result(i - 1)] = buffer_of_.at(carried);
        }
        return;
      }
      for (size_t i = 0; i < op.num_results(); ++i) {
        const Value* result = op.result(i);
        if (op.kind() == OpKind::dim) {
          plan_.expressions[result] =
              plan_.tensor_dims.at(op.operand(0))[static_cast<size_t>(op.int_attr("axis"))];
        } else if (op.kind() == OpKind::constant && result->name_hint().empty()) {
          plan_.expressions[result] = literal(*op.attr("value"), result->type().element());
        } else {
          define(result);
        }
      }
    });
  }

  std::string fresh_name(const Value* value, const char* fallback) {
    if (!value->name_hint().empty()) return names_.unique(value->name_hint());
    return names_.unique(fmt::format("{}{}", fallback, unnamed_++));
  }

  // Names a scalar variable, or names and places a tile buffer.
  void define(const Value* value) {
    const Type& type = value->type();
    plan_.expressions[value] = fresh_name(value, type.is_tile() ? "t" : "v");
    if (!type.is_tile() || plan_.tensor_core) return;
    BufferPlan buffer;
    buffer.value = value;
    buffer.name = plan_.expressions[value];
    buffer.bytes = type.element_count() * byte_size(type.element());
    buffer_of_[value] = plan_.buffers.size();
    plan_.buffers.push_back(buffer);
  }

  // Phase 4.
  void compute_live_ranges(const Region& body) {
    std::unordered_map<const Operation*, int64_t> position, last_nested;
    int64_t next = 0;
    std::function<void(const Region&)> number = [&](const Region& region) {
      for (const auto& op : region.operations()) {
        position[op.get()] = next++;
        for (size_t r = 0; r < op->num_regions(); ++r) number(op->region(r));
        last_nested[op.get()] = next - 1;
      }
    };
    number(body);
    for (BufferPlan& buffer : plan_.buffers) {
      const Value* value = buffer.value;
      const Operation* owner = value->is_argument() ? value->owner_region()->parent_op()
                                                    : value->defining_op();
      buffer.first_use = position.at(owner);
      buffer.last_use = value->is_argument() ? last_nested.at(owner) : buffer.first_use;
    }
    walk(body, [&](const Operation& op) {
      for (const Value* operand : op.operands()) {
        auto it = buffer_of_.find(operand);
        if (it == buffer_of_.end()) continue;
        BufferPlan& buffer = plan_.buffers[it->second];
        int64_t use = position.at(&op);
        for (const Operation* loop = op.parent_op(); loop && loop->kind() != OpKind::kernel;
             loop = loop->parent_op()) {
          bool defined_inside = buffer.first_use > position.at(loop) &&
                                buffer.first_use <= last_nested.at(loop);
          if (loop->kind() == OpKind::for_ && !defined_inside) use = std::max(use, last_nested.at(loop));
        }
        buffer.last_use = std::max(buffer.last_use, use);
      }
    });
  }

  // Phase 5.
  void place_buffers() {
    std::vector<BufferPlan>& buffers = plan_.buffers;
    // The buffers placed so far by last use: those live at a buffer's first use are found without
    // scanning every earlier one (quadratic in a long kernel's values).
    std::set<std::pair<int64_t, size_t>> placed;
    for (size_t i = 0; i < buffers.size(); ++i) {
      BufferPlan& buffer = buffers[i];
      std::vector<const BufferPlan*> live;
      for (auto it = placed.lower_bound({buffer.first_use, 0}); it != placed.end(); ++it)
        if (buffers[it->second].first_use <= buffer.last_use) live.push_back(&buffers[it->second]);
      placed.insert({buffer.last_use, i});
      std::vector<int64_t> candidates = {0};
      for (const BufferPlan* other : live) candidates.push_back((other->offset + other->bytes + 15) / 16 * 16);
      std::sort(candidates.begin(), candidates.end());
      for (int64_t offset : candidates) {
        bool fits = true;
        for (const BufferPlan* other : live)
          fits &= offset + buffer.bytes <= other->offset || other->offset + other->bytes <= offset;
        if (fits) {
          buffer.offset = offset;
          break;
        }
      }
      plan_.shared_bytes = std::max(plan_.shared_bytes, (buffer.offset + buffer.bytes + 15) / 16 * 16);
    }
  }

  const Operation& kernel_;
  DiagnosticEngine& diagnostics_;
  KernelPlan plan_;
  NameTable names_;
  std::unordered_map<const Value*, size_t> buffer_of_;  // tile value → index in plan_.buffers
  int unnamed_ = 0;
  bool failed_ = false;
};

}  // namespace

std::optional<KernelPlan> compute_kernel_plan(const Operation& kernel, DiagnosticEngine& diagnostics,
                                              const std::string& name) {
  return Planner(kernel, diagnostics).run(name);
}

std::vector<std::string> kernel_names(const Module& module, const std::string& prefix) {
  const auto& kernels = module.kernels();
  std::vector<std::string> names(kernels.size());
  std::set<std::string> functions;  // NAME_kernel and launch_NAME of the names given out
  auto free = [&](const std::string& name) {
    return !functions.count(name + "_kernel") && !functions.count("launch_" + name);
  };
  NameTable table(false);  // hands out main_1, main_2, ... past the names taken
  auto take = [&](size_t i, std::string name) {
    functions.insert(name + "_kernel");
    functions.insert("launch_" + name);
    table.reserve(name);
    names[i] = std::move(name);
  };
  for (size_t i = 0; i < kernels.size(); ++i) {  // first every name that is its own
    const std::string own = prefix + kernel_name(*kernels[i]);
    if (NameTable(false).unique(own) == own && free(own)) take(i, own);
  }
  for (size_t i = 0; i < kernels.size(); ++i) {  // then the others, renamed
    if (!names[i].empty()) continue;
    std::string name = table.unique(prefix + kernel_name(*kernels[i]));
    while (!free(name)) name = table.unique(prefix + kernel_name(*kernels[i]));
    take(i, name);
  }
  return names;
}

std::vector<LaunchParameter> launch_parameters(const KernelPlan& plan) {
  std::vector<LaunchParameter> result;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamPlan& param = plan.params[i];
    const Type& type = param.value->type();
    std::string element(element_type(type.element()));
    LaunchParameter launch;
    launch.type = type.is_tensor() ? fmt::format("{}{}*", param.written ? "" : "const ", element) : element;
    launch.name = param.name;
    launch.param = static_cast<int>(i);
    result.push_back(std::move(launch));
  }
  for (const std::string& dim : plan.dim_params) {
    LaunchParameter launch;
    launch.type = "int64_t";
    launch.name = dim;
    // The first tensor axis whose extent is this dimension (every dimension has one).
    for (size_t i = 0; i < plan.params.size() && launch.dim_tensor < 0; ++i) {
      auto extents = plan.tensor_dims.find(plan.params[i].value);
      if (extents == plan.tensor_dims.end()) continue;
      for (size_t axis = 0; axis < extents->second.size(); ++axis)
        if (extents->second[axis] == dim) {
          launch.dim_tensor = static_cast<int>(i);
          launch.dim_axis = static_cast<int>(axis);
          break;
        }
    }
    result.push_back(std::move(launch));
  }
  return result;
}

bool column_box(const Operation& op, size_t rank) {
  if (!op.has_attr("box") || (op.kind() != OpKind::load && op.kind() != OpKind::store)) return false;
  const Type& tile = moved_tile(op)->type();
  const std::vector<int64_t> box = memory_box(op, tile, rank);
  return tile.rank() == 2 && tile.shape()[1] == 1 && tile.shape()[0] > 1 && !box.empty() &&
         box.back() == tile.shape()[0];
}

size_t row_dimension(const Operation& op, size_t rank) {
  if (column_box(op, rank)) return rank - 1;
  if (rank < 2) return 0;
  const Attribute* box = op.attr("box");
  if (box && box->is_array() && box->as_array().size() <= rank) {
    const Attribute::Array& extents = box->as_array();  // the tensor's trailing dimensions
    const size_t first = rank - extents.size();
    for (size_t d = rank - 1; d-- > first;)
      if (!extents[d - first].is_int() || extents[d - first].as_int() != 1) return d;
  }
  return rank - 2;
}

std::string box_problem(const Operation& op, const std::vector<int64_t>& stored, size_t rank) {
  const Attribute* attribute = op.attr("box");
  if (!attribute || column_box(op, rank)) return "";
  const std::vector<int64_t> box = memory_box(op, Type(), rank);
  const size_t rows = row_dimension(op, rank);
  bool fits = box.size() == rank && rank >= 2 && stored.size() == 2 && box[rows] == stored[0] &&
              box[rank - 1] == stored[1];
  for (size_t d = 0; fits && d < rank; ++d) fits = d == rows || d == rank - 1 || box[d] == 1;
  return fits ? ""
              : fmt::format("a tile moved through the box {} (the tile's columns in the tensor's last dimension, its "
                            "rows in one dimension before it, every other extent 1)", attribute->to_string());
}

}  // namespace tilec::cuda
