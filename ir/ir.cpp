// ir/ir.cpp — IR object plumbing: ownership, attributes, walking, use rewriting.
#include "ir/ir.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

namespace tilec {

Operation::Operation(OpKind kind, Location location) : kind_(kind), location_(location) {}
Operation::~Operation() = default;

void Operation::set_operands(std::vector<Value*> values) {
  operands_.assign(values.begin(), values.end());
}

Value* Operation::add_result(Type type) {
  results_.push_back(std::make_unique<Value>(std::move(type), this, nullptr,
                                             static_cast<unsigned>(results_.size())));
  return results_.back().get();
}

const Attribute* Operation::attr(const std::string& name) const {
  auto it = attributes_.find(name);
  return it == attributes_.end() ? nullptr : &it->second;
}

int64_t Operation::int_attr(const std::string& name, int64_t fallback) const {
  const Attribute* a = attr(name);
  return a && a->is_int() ? a->as_int() : fallback;
}

std::string Operation::string_attr(const std::string& name, const std::string& fallback) const {
  const Attribute* a = attr(name);
  return a && a->is_string() ? a->as_string() : fallback;
}

Region& Operation::add_region() {
  regions_.push_back(std::make_unique<Region>(this));
  return *regions_.back();
}

Operation* Operation::parent_op() const { return parent_ ? parent_->parent_op() : nullptr; }

Value* Region::add_argument(Type type, std::string name_hint) {
  arguments_.push_back(std::make_unique<Value>(std::move(type), nullptr, this,
                                               static_cast<unsigned>(arguments_.size())));
  arguments_.back()->set_name_hint(std::move(name_hint));
  return arguments_.back().get();
}

Operation* Region::terminator() const {
  if (operations_.empty()) return nullptr;
  Operation* last = operations_.back().get();
  return last->info().has(kTerminator) ? last : nullptr;
}

Operation* Region::append(std::unique_ptr<Operation> op) {
  op->set_parent_region(this);
  operations_.push_back(std::move(op));
  return operations_.back().get();
}

Operation* Region::insert(size_t position, std::unique_ptr<Operation> op) {
  op->set_parent_region(this);
  auto it = operations_.insert(operations_.begin() + static_cast<std::ptrdiff_t>(position),
                               std::move(op));
  return it->get();
}

std::unique_ptr<Operation> Region::take(size_t position) {
  std::unique_ptr<Operation> op = std::move(operations_.at(position));
  operations_.erase(operations_.begin() + static_cast<std::ptrdiff_t>(position));
  op->set_parent_region(nullptr);
  return op;
}

size_t Region::position_of(const Operation* op) const {
  for (size_t i = 0; i < operations_.size(); ++i)
    if (operations_[i].get() == op) return i;
  throw std::logic_error("Region::position_of: the op is not in this region");
}

Operation* Module::find_kernel(std::string_view name) const {
  for (const auto& kernel : kernels_)
    if (kernel_name(*kernel) == name) return kernel.get();
  return nullptr;
}

std::string kernel_name(const Operation& kernel) { return kernel.string_attr("sym_name"); }

bool defined_inside(const Value& value, const Operation& op) {
  const Region* region = value.is_argument() ? value.owner_region() : value.defining_op()->parent_region();
  for (const Operation* around = region ? region->parent_op() : nullptr; around; around = around->parent_op())
    if (around == &op) return true;
  return false;
}

bool never_negative(const Value* value, int depth) {
  if (depth > 64) return false;
  auto all = [&](const Operation& op) {
    for (const Value* operand : op.operands())
      if (!never_negative(operand, depth + 1)) return false;
    return true;
  };
  if (value->is_argument()) {
    const Operation* loop = value->owner_region()->parent_op();
    return loop && loop->kind() == OpKind::for_ && value->index() == 0 && never_negative(loop->operand(0), depth + 1) &&
           never_negative(loop->operand(2), depth + 1);
  }
  const Operation& op = *value->defining_op();
  switch (op.kind()) {
    case OpKind::dim: case OpKind::grid_ids: case OpKind::sm_count: return true;
    case OpKind::constant: return op.attr("value") && op.attr("value")->is_int() && op.int_attr("value") >= 0;
    case OpKind::add: case OpKind::mul: case OpKind::min: case OpKind::cdiv: return all(op);
    case OpKind::max:
      return std::any_of(op.operands().begin(), op.operands().end(),
                         [&](const Value* operand) { return never_negative(operand, depth + 1); });
    case OpKind::div:
      return never_negative(op.operand(0), depth + 1) &&
             (op.has_attr("positive_divisor") || never_negative(op.operand(1), depth + 1));
    case OpKind::rem: return never_negative(op.operand(0), depth + 1);  // C's remainder has the dividend's sign
    default: return false;
  }
}

bool computed_from(const Value* value, const std::function<bool(const Value&)>& found) {
  std::vector<const Value*> work{value};
  std::unordered_set<const Value*> seen;
  while (!work.empty()) {
    const Value* next = work.back();
    work.pop_back();
    if (!seen.insert(next).second) continue;
    if (found(*next)) return true;
    const Operation* owner = next->is_argument() ? next->owner_region()->parent_op() : next->defining_op();
    if (owner) work.insert(work.end(), owner->operands().begin(), owner->operands().end());
  }
  return false;
}

void walk(Region& region, const std::function<void(Operation&)>& visit) {
  for (auto& op : region.operations()) {
    visit(*op);
    for (size_t r = 0; r < op->num_regions(); ++r) walk(op->region(r), visit);
  }
}

void walk(const Region& region, const std::function<void(const Operation&)>& visit) {
  for (const auto& op : region.operations()) {
    visit(*op);
    for (size_t r = 0; r < op->num_regions(); ++r) walk(static_cast<const Region&>(op->region(r)), visit);
  }
}

std::optional<TensorAccess> tensor_access(const Operation& op) {
  const OpInfo& info = op.info();
  if (info.tensor_operand < 0 || static_cast<size_t>(info.tensor_operand) >= op.num_operands()) return std::nullopt;
  return TensorAccess{.tensor = op.operand(static_cast<size_t>(info.tensor_operand)),
                      .reads = info.has(kReadsMemory) || accumulates(op),
                      .writes = info.has(kWritesMemory)};
}

StoreCombine store_combine(const Operation& op) {
  if (op.kind() != OpKind::store || !op.has_attr("accumulate")) return StoreCombine::none;
  const Attribute& how = *op.attr("accumulate");
  if (how.is_string()) return parse_store_combine_attribute(how.as_string()).value_or(StoreCombine::add);
  return StoreCombine::add;  // unit; the verifier refuses any other value
}

OpKind combining_op(StoreCombine combine) {
  switch (combine) {
    case StoreCombine::add: return OpKind::add;
    case StoreCombine::max: return OpKind::max;
    case StoreCombine::min: return OpKind::min;
    case StoreCombine::and_: return OpKind::and_;
    case StoreCombine::or_: return OpKind::or_;
    case StoreCombine::xor_: return OpKind::xor_;
    case StoreCombine::none: break;
  }
  throw std::logic_error("combining_op: a store that overwrites combines nothing");
}

StoreCombine store_combine_of_reduction(OpKind reduction) {
  switch (reduction) {
    case OpKind::reduce_sum: return StoreCombine::add;
    case OpKind::reduce_max: return StoreCombine::max;
    case OpKind::reduce_min: return StoreCombine::min;
    default: return StoreCombine::none;
  }
}

bool accumulates(const Operation& op) { return store_combine(op) != StoreCombine::none; }

bool combines_atomically(StoreCombine combine, ScalarKind element) {
  if (is_bitwise(combine))
    return element == ScalarKind::i32 || element == ScalarKind::u32 || element == ScalarKind::i64;
  return accumulates_atomically(element);
}

std::string combinable_elements(StoreCombine combine, std::string_view conjunction) {
  return std::string(is_bitwise(combine) ? "" : "f32, f16, bf16, ") + "i32, u32 " + std::string(conjunction) + " i64";
}

bool accumulates_atomically(ScalarKind element) {
  switch (element) {
    case ScalarKind::f32: case ScalarKind::f16: case ScalarKind::bf16:
    case ScalarKind::i32: case ScalarKind::u32: case ScalarKind::i64: return true;
    default: return false;
  }
}

bool contains(const Region& region, OpKind kind) {
  for (const auto& op : region.operations()) {
    if (op->kind() == kind) return true;
    for (size_t r = 0; r < op->num_regions(); ++r)
      if (contains(op->region(r), kind)) return true;
  }
  return false;
}

void walk(Module& module, const std::function<void(Operation&)>& visit) {
  for (auto& kernel : module.kernels()) {
    visit(*kernel);
    for (size_t r = 0; r < kernel->num_regions(); ++r) walk(kernel->region(r), visit);
  }
}

void replace_all_uses(Region& region, Value* from, Value* to) {
  walk(region, [&](Operation& op) {
    for (size_t i = 0; i < op.num_operands(); ++i)
      if (op.operand(i) == from) op.set_operand(i, to);
  });
}

bool has_uses(Region& region, const Value* value) {
  bool used = false;
  walk(region, [&](Operation& op) {
    for (Value* operand : op.operands()) used |= operand == value;
  });
  return used;
}

namespace {

std::vector<int64_t> integer_array(const Attribute* array) {
  std::vector<int64_t> values;
  if (!array || !array->is_array()) return values;
  for (const Attribute& value : array->as_array()) {
    if (!value.is_int()) return {};
    values.push_back(value.as_int());
  }
  return values;
}

}  // namespace

std::vector<int64_t> transpose_dims(const Operation& transpose) {
  const Attribute* dims = transpose.attr("dims");
  return dims ? integer_array(dims) : std::vector<int64_t>{1, 0};
}

std::vector<int64_t> slice_starts(const Operation& slice) { return integer_array(slice.attr("starts")); }

std::vector<int64_t> slice_steps(const Operation& slice) {
  if (!slice.has_attr("steps") && slice.num_results() == 1)
    return std::vector<int64_t>(slice.result()->type().rank(), 1);
  return integer_array(slice.attr("steps"));
}

bool is_dimension_permutation(const std::vector<int64_t>& dims, size_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return dims.size() == rank;
}

std::vector<int64_t> permuted_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> result;
  for (int64_t d : dims) result.push_back(shape.at(static_cast<size_t>(d)));
  return result;
}

std::vector<int64_t> memory_box(const Operation& op, const Type& tile, size_t tensor_rank) {
  const Attribute* box = op.attr("box");
  if (!box) return shape_in_tensor(tile, tensor_rank);
  if (!box->is_array() || box->as_array().size() > tensor_rank) return {};
  std::vector<int64_t> extents(tensor_rank - box->as_array().size(), 1);
  for (const Attribute& extent : box->as_array()) {
    if (!extent.is_int() || extent.as_int() < 1) return {};
    extents.push_back(extent.as_int());
  }
  return extents;
}

const Value* moved_tile(const Operation& op) {
  if (op.kind() == OpKind::store) return op.num_operands() > 0 ? op.operands().back() : nullptr;
  if (op.kind() == OpKind::load || op.kind() == OpKind::tma_load) return op.num_results() > 0 ? op.result() : nullptr;
  return nullptr;
}

const Value* store_mask(const Operation& op) {
  if (op.kind() != OpKind::store || !op.has_attr("masked") || op.num_operands() < 3) return nullptr;
  return op.operand(op.num_operands() - 2);
}

bool mask_fits(const Type& mask, const Type& tile) {
  if (mask.element() != ScalarKind::i1) return false;
  if (mask.is_scalar()) return true;
  if (!mask.is_tile() || !tile.is_tile() || mask.rank() != tile.rank()) return false;
  for (size_t d = 0; d < mask.rank(); ++d)
    if (mask.shape()[d] != 1 && mask.shape()[d] != tile.shape()[d]) return false;
  return true;
}

size_t coordinate_count(const Operation& op) {
  const size_t after_tensor = op.num_operands() > 0 ? op.num_operands() - 1 : 0;
  if (op.kind() != OpKind::store) return after_tensor;
  const size_t trailing = op.has_attr("masked") ? 2 : 1;  // the mask and the tile
  return after_tensor >= trailing ? after_tensor - trailing : 0;
}

std::vector<int64_t> stored_shape(const Operation& op, const Type& tile) {
  if (!op.has_attr("transposed") || tile.rank() != 2) return tile.shape();
  return {tile.shape()[1], tile.shape()[0]};
}

bool same_but_unit_dims(const std::vector<int64_t>& box, const std::vector<int64_t>& shape) {
  auto squeezed = [](const std::vector<int64_t>& extents) {
    std::vector<int64_t> kept;
    for (int64_t extent : extents)
      if (extent != 1) kept.push_back(extent);
    return kept;
  };
  return squeezed(box) == squeezed(shape);
}

}  // namespace tilec
