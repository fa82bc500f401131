// ir/ir.h — values, operations, regions and the module.
//
// Ownership: a Module owns its kernels (operations of kind `kernel`); an Operation owns its
// results, attributes and regions; a Region (a single block: structured control flow only)
// owns its arguments and operations. A Value is an op result or a region argument and is
// referred to by raw pointer; pointers stay valid while the owner lives.
// Use lists are not kept: passes that rewrite uses call replace_all_uses on the region.
#pragma once

#include <boost/container/flat_map.hpp>
#include <boost/container/small_vector.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/attribute_audit.h"
#include "ir/attribute_keys.h"
#include "ir/attributes.h"
#include "ir/diagnostic.h"
#include "ir/op_table.h"
#include "ir/types.h"

namespace tilec {

class Operation;
class Region;

class Value {
 public:
  Value(Type type, Operation* defining_op, Region* owner_region, unsigned index)
      : type_(std::move(type)), defining_op_(defining_op), owner_region_(owner_region),
        index_(index) {}

  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = std::move(type); }
  // The op whose result this is, or null for a region argument.
  Operation* defining_op() const { return defining_op_; }
  // The region whose argument this is, or null for an op result.
  Region* owner_region() const { return owner_region_; }
  unsigned index() const { return index_; }
  bool is_argument() const { return owner_region_ != nullptr; }

  // A readable name from the source (a DSL variable); the printer makes names unique.
  const std::string& name_hint() const { return name_hint_; }
  void set_name_hint(std::string name) { name_hint_ = std::move(name); }

 private:
  Type type_;
  Operation* defining_op_;
  Region* owner_region_;
  unsigned index_;
  std::string name_hint_;
};

using AttributeMap = boost::container::flat_map<std::string, Attribute>;

class Operation {
 public:
  Operation(OpKind kind, Location location);
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  OpKind kind() const { return kind_; }
  const OpInfo& info() const { return op_info(kind_); }
  std::string_view name() const { return info().name; }
  Location location() const { return location_; }
  void set_location(Location location) { location_ = location; }

  // Operands.
  size_t num_operands() const { return operands_.size(); }
  Value* operand(size_t i) const { return operands_[i]; }
  const boost::container::small_vector<Value*, 4>& operands() const { return operands_; }
  void add_operand(Value* value) { operands_.push_back(value); }
  void set_operand(size_t i, Value* value) { operands_[i] = value; }
  void set_operands(std::vector<Value*> values);

  // Results.
  size_t num_results() const { return results_.size(); }
  Value* result(size_t i = 0) const { return results_[i].get(); }
  Value* add_result(Type type);

  // Attributes, sorted by name.
  const AttributeMap& attributes() const { return attributes_; }
  bool has_attr(const std::string& name) const { return attributes_.count(name) != 0; }
  const Attribute* attr(const std::string& name) const;
  int64_t int_attr(const std::string& name, int64_t fallback = 0) const;
  std::string string_attr(const std::string& name, const std::string& fallback = "") const;
  void set_attr(std::string name, Attribute value) { attributes_[std::move(name)] = std::move(value); }
  void remove_attr(const std::string& name) { attributes_.erase(name); }
  // The same through a typed key (ir/attribute_keys.h): the attributes passes publish. While a
  // pass runs, AttributeAudit (ir/attribute_audit.h) checks these accesses against its contract.
  template <typename T>
  bool has(AttrKey<T> key) const { return audited_read(key.name)->has_attr(key.name); }
  int64_t get(AttrKey<int64_t> key, int64_t fallback = 0) const {
    return audited_read(key.name)->int_attr(key.name, fallback);
  }
  std::string get(AttrKey<std::string> key, const std::string& fallback = "") const {
    return audited_read(key.name)->string_attr(key.name, fallback);
  }
  const Attribute* get(AttrKey<void> key) const { return audited_read(key.name)->attr(key.name); }  // an array
  void set(AttrKey<int64_t> key, int64_t value) { audited_write(key.name)->set_attr(key.name, Attribute(value)); }
  void set(AttrKey<std::string> key, std::string value) {
    audited_write(key.name)->set_attr(key.name, Attribute(std::move(value)));
  }
  void set(AttrKey<void> key, Attribute value) { audited_write(key.name)->set_attr(key.name, std::move(value)); }
  void set(AttrKey<UnitAttr> key) { audited_write(key.name)->set_attr(key.name, Attribute(UnitAttr{})); }
  template <typename T>
  void remove(AttrKey<T> key) { audited_write(key.name)->remove_attr(key.name); }

  // Regions (each a single block).
  size_t num_regions() const { return regions_.size(); }
  Region& region(size_t i = 0) const { return *regions_[i]; }
  Region& add_region();

  // The region this op sits in, and the op that owns that region (null at the top).
  Region* parent_region() const { return parent_; }
  Operation* parent_op() const;
  void set_parent_region(Region* parent) { parent_ = parent; }

 private:
  // This operation, after telling an open AttributeAudit about the access (the typed accessors).
  const Operation* audited_read(const char* name) const {
    if (AttributeAudit* audit = AttributeAudit::active()) audit->note_read(name);
    return this;
  }
  Operation* audited_write(const char* name) {
    if (AttributeAudit* audit = AttributeAudit::active()) audit->note_write(name);
    return this;
  }

  OpKind kind_;
  Location location_;
  boost::container::small_vector<Value*, 4> operands_;
  boost::container::small_vector<std::unique_ptr<Value>, 1> results_;
  AttributeMap attributes_;
  std::vector<std::unique_ptr<Region>> regions_;
  Region* parent_ = nullptr;
};

class Region {
 public:
  explicit Region(Operation* parent_op) : parent_op_(parent_op) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  Operation* parent_op() const { return parent_op_; }

  size_t num_arguments() const { return arguments_.size(); }
  Value* argument(size_t i) const { return arguments_[i].get(); }
  Value* add_argument(Type type, std::string name_hint = {});

  using OpList = std::vector<std::unique_ptr<Operation>>;
  OpList& operations() { return operations_; }
  const OpList& operations() const { return operations_; }
  bool empty() const { return operations_.empty(); }
  Operation* terminator() const;

  // Appends or inserts an op, taking ownership; returns it.
  Operation* append(std::unique_ptr<Operation> op);
  Operation* insert(size_t position, std::unique_ptr<Operation> op);
  // Removes the op at `position` and returns it (ownership back to the caller).
  std::unique_ptr<Operation> take(size_t position);
  size_t position_of(const Operation* op) const;

 private:
  Operation* parent_op_;
  std::vector<std::unique_ptr<Value>> arguments_;
  OpList operations_;
};

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Module attributes: `source` (file name), `target`, `passes` (those already run), ...
  AttributeMap& attributes() { return attributes_; }
  const AttributeMap& attributes() const { return attributes_; }

  std::vector<std::unique_ptr<Operation>>& kernels() { return kernels_; }
  const std::vector<std::unique_ptr<Operation>>& kernels() const { return kernels_; }
  Operation* find_kernel(std::string_view name) const;

 private:
  AttributeMap attributes_;
  std::vector<std::unique_ptr<Operation>> kernels_;
};

// The kernel's symbol name (its `sym_name` attribute).
std::string kernel_name(const Operation& kernel);

// Whether `value` is defined inside `op`'s regions: by an op nested there, or as an argument of
// one of them (a loop's induction variable or carried value).
bool defined_inside(const Value& value, const Operation& op);

// Whether an index is known never to be negative: grid coordinates, dims, SM counts, constants
// of 0 or more, a loop's induction variable from such a start by such a step, and sums,
// products and minima of such, maxima with one such operand, quotients by a positive divisor and
// remainders of such a dividend. A coordinate computed otherwise (`n - 1`, a scalar parameter) may be negative: a
// load there must read zeros, not the memory before the tensor.
bool never_negative(const Value* value, int depth = 0);

// Whether `found` holds for `value` or for a value it is computed from: the operands of its
// defining op, transitively (a region argument's: its op's operands, a loop's bounds and initial
// values). Each value is visited once.
bool computed_from(const Value* value, const std::function<bool(const Value&)>& found);

// Visits every op nested under `region` in program order (pre-order: an op before its regions).
void walk(Region& region, const std::function<void(Operation&)>& visit);
void walk(const Region& region, const std::function<void(const Operation&)>& visit);
void walk(Module& module, const std::function<void(Operation&)>& visit);

// The global tensor an op itself reads or writes, from the op table (kReadsMemory, kWritesMemory
// and the tensor operand): load, tma_load and tma_load_async read it, store writes it (and
// reads it too when it accumulates). The one place passes, the interpreter and the backends
// learn an op's memory effect; a for/if has none of its own (walk its regions).
struct TensorAccess {
  Value* tensor = nullptr;
  bool reads = false;
  bool writes = false;
};
std::optional<TensorAccess> tensor_access(const Operation& op);

// How `op` combines each element with what the tensor holds (StoreCombine, ir/op_table.h);
// `none` for a plain store and every other op.
StoreCombine store_combine(const Operation& op);
// The elementwise op a combine applies to the tensor's element and the stored one (add, max,
// min; std::logic_error for none; combining_op(OpKind) in ir/op_table.h is a reduction's), and
// the combine a reduction's result folds into (reduce_sum: add, reduce_max: max, reduce_min:
// min; none for any other op).
OpKind combining_op(StoreCombine combine);
StoreCombine store_combine_of_reduction(OpKind reduction);
// Whether `op` is a store that combines (any of add, max, min) rather than overwrites.
bool accumulates(const Operation& op);
// The element types a combining store takes: those CUDA's atomicAdd adds (f32, f16, bf16, i32,
// u32, and i64 as a 64-bit unsigned add); atomicMax/atomicMin take the integers, and a
// compare-and-swap loop takes max and min of the floats.
bool accumulates_atomically(ScalarKind element);
// Whether a store may combine `element`s that way: the bitwise ones (atomicAnd, atomicOr,
// atomicXor) take i32, u32 and i64; add, max and min what accumulates_atomically says.
bool combines_atomically(StoreCombine combine, ScalarKind element);
// Those element types for messages, the last joined by `conjunction`: "i32, u32 or i64" for the
// bitwise combines, "f32, f16, bf16, i32, u32 or i64" for the others.
std::string combinable_elements(StoreCombine combine, std::string_view conjunction);

// The permutation a `transpose` applies: result dimension i is operand dimension dims[i]. Its
// `dims` attribute (`permute(x, 2, 0, 1)`), or [1, 0] without one (a 2-D tile's rows and columns
// swapped); empty when `dims` is not an array of integers (the verifier reports it).
std::vector<int64_t> transpose_dims(const Operation& transpose);
// A `slice`'s first element along each dimension (`starts`) and the distance between the elements
// it takes (`steps`, all 1 when absent); empty when the attribute is not an array of integers (the
// verifier reports it).
std::vector<int64_t> slice_starts(const Operation& slice);
std::vector<int64_t> slice_steps(const Operation& slice);
// Whether `dims` names each of 0 .. rank - 1 once.
bool is_dimension_permutation(const std::vector<int64_t>& dims, size_t rank);
// The shape `shape` has after the permutation `dims` (shape[dims[0]], shape[dims[1]], ...).
std::vector<int64_t> permuted_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims);

// The extents a load's, tma_load's (stage-buffer tma_load_async's) or store's tile covers in its
// tensor of rank `tensor_rank`: its `box` attribute when it has one (the tile read or written
// through unit dimensions: a <BQ, D> tile as the box [BQ, 1, D] of a [B, S, H, D] tensor), else the
// tile's own shape; either with a slice's leading 1s (shape_in_tensor). Empty when `box` is not
// an array of positive integers of at most `tensor_rank` extents (the verifier reports it).
std::vector<int64_t> memory_box(const Operation& op, const Type& tile, size_t tensor_rank);
// The tile a load or tma_load reads (its result) or a store writes (its last operand); null for
// any other op.
const Value* moved_tile(const Operation& op);
// A masked store (`store T[i, j] = x if m`, unit attribute `masked`) writes only the elements
// where its i1 mask holds: the operand before the tile, of the tile's rank (or a scalar), whose
// shape broadcasts to the tile's. Its mask, or null for an unmasked store and any other op.
const Value* store_mask(const Operation& op);
// Whether `mask` may mask a store of `tile`: i1, a scalar or a tile of the tile's rank whose shape
// broadcasts to it (the verifier's rule, which lowering meets).
bool mask_fits(const Type& mask, const Type& tile);
// How many coordinate operands a load, tma_load or store has: those after the tensor, before a
// store's mask and tile.
size_t coordinate_count(const Operation& op);
// The shape `op`'s tile has in memory: a transposed tma_load's [C, R] for its [R, C] result (the
// box it reads, before the transpose), else the tile's own.
std::vector<int64_t> stored_shape(const Operation& op, const Type& tile);
// Whether `box` holds the elements of `shape` in the same row-major order: the same extents once
// the 1s are left out of both.
bool same_but_unit_dims(const std::vector<int64_t>& box, const std::vector<int64_t>& shape);

// Whether an op of `kind` is nested under `region` (at any depth).
bool contains(const Region& region, OpKind kind);

// Rewrites every use of `from` under `region` (nested regions included) to `to`.
void replace_all_uses(Region& region, Value* from, Value* to);

// Counts the uses of each value under `region`.
bool has_uses(Region& region, const Value* value);

}  // namespace tilec
