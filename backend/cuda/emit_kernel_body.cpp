// backend/cuda/emit_kernel_body.cpp — op by op, the statements of a kernel body.
//
// Every tile op becomes one loop over the result's elements in row-major order; the loop
// variable `elem` is the element's linear index. An operand of another shape is read through
// NumPy-style broadcasting: its index keeps the coordinates of `elem` along the dims where the
// operand is not 1. In `cta` mode the loop is strided by the CTA's threads and followed by
// __syncthreads(), so an op starts only when every element of its operands is written; in
// `reference` mode one thread runs the loop. Either way the arithmetic is the same expression
// (compute() below), so both kernels compute the same bits.
// Invariants relied on: the module verified (shapes broadcast, yields match results), every
// scalar is uniform across the CTA (it derives from parameters, grid coordinates and loop
// indices only), so a __syncthreads() inside for/if is reached by every thread.
#include "backend/cuda/emit_kernel_body.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>

#include "backend/cuda/cuda_syntax.h"
#include "backend/cuda/element_spellings.h"

namespace tilec::cuda {

namespace {

// Π shape[first..last).
int64_t product(const std::vector<int64_t>& shape, size_t first, size_t last) {
  int64_t n = 1;
  for (size_t i = first; i < last; ++i) n *= shape[i];
  return n;
}

// Row-major strides of `shape`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) strides[d] = product(shape, d + 1, shape.size());
  return strides;
}

// An element of type `kind` as the f32 or int64_t a sum accumulates it in (narrow floats widened).
std::string widened(ScalarKind kind, const std::string& element) {
  return is_float(kind) && kind != ScalarKind::f32 ? fmt::format("to_f32({})", element) : element;
}

// The accumulator `acc` (f32 or int64_t) narrowed back to `kind`.
std::string narrowed_accumulator(ScalarKind kind) {
  if (kind == ScalarKind::f32 || kind == ScalarKind::i64 || kind == ScalarKind::index) return "acc";
  return is_float(kind) ? fmt::format("from_f32<{}>(acc)", element_type(kind))
                        : fmt::format("static_cast<{}>(acc)", element_type(kind));
}

// The coordinate along dim `d` of the element with linear index `linear` in `shape`.
std::string coordinate(const std::vector<int64_t>& shape, size_t d, const std::string& linear) {
  if (shape[d] == 1) return "0";
  std::string text = linear;
  int64_t stride = product(shape, d + 1, shape.size());
  if (stride != 1) text += fmt::format(" / {}", stride);
  if (product(shape, 0, d) != 1) text += fmt::format(" % {}", shape[d]);
  return text;
}

// Linear index, in a tile of shape `operand`, of the element that broadcasts to element `elem`
// of a tile of shape `result` (same rank; each operand dim equal to the result's or 1).
std::string broadcast_index(const std::vector<int64_t>& operand, const std::vector<int64_t>& result) {
  if (operand == result) return "elem";
  std::vector<int64_t> strides = strides_of(operand);
  std::string text;
  for (size_t d = 0; d < operand.size(); ++d) {
    if (operand[d] == 1) continue;
    std::string term = coordinate(result, d, "elem");
    if (strides[d] != 1) term += fmt::format(" * {}", strides[d]);
    text += (text.empty() ? "" : " + ") + term;
  }
  return text.empty() ? "0" : text;
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? separator : "") + parts[i];
  return text;
}

const char* comparison(const std::string& predicate) {
  if (predicate == "lt") return "<";
  if (predicate == "le") return "<=";
  if (predicate == "gt") return ">";
  if (predicate == "ge") return ">=";
  if (predicate == "eq") return "==";
  return "!=";
}

// `index0 * D1 + index1`: the row-major offset of the element in its tensor.
std::string tensor_offset(const std::vector<std::string>& extents) {
  std::string text = "index0";
  for (size_t d = 1; d < extents.size(); ++d) {
    if (d > 1) text = "(" + text + ")";
    text = fmt::format("{} * {} + index{}", text, extents[d], d);
  }
  return text;
}

}  // namespace

BodyEmitter::BodyEmitter(const KernelPlan& plan, BodyMode mode, CodeWriter& out)
    : plan_(plan), mode_(mode), out_(out), names_(plan.names) {}

// Attributes the scheduling passes publish (docs/passes/): they describe when an op issues, not
// what it computes, so the per-op comments leave them out.
static bool is_schedule_annotation(const std::string& name) {
  static const std::set<std::string> names = {attr::latency.name, attr::resources.name, attr::resource_kind.name,
                                              attr::order.name,   attr::cycle.name,     attr::stage.name,
                                              attr::group.name,   attr::group_pending.name, attr::ii.name,
                                              attr::stages.name,  attr::generator.name};
  return names.count(name) || name.rfind("tileas.", 0) == 0;
}

// `// y = add x, b : tile<64x1024xf32, reg>  (line 7)`, in the emitted names.
void BodyEmitter::comment(const Operation& op) {
  std::vector<std::string> results, operands, attributes, types;
  for (size_t i = 0; i < op.num_results(); ++i) {
    results.push_back(plan_.expression(op.result(i)));
    types.push_back(op.result(i)->type().to_string());
  }
  for (const Value* operand : op.operands()) operands.push_back(plan_.expression(operand));
  for (const auto& [name, value] : op.attributes())
    if (!is_schedule_annotation(name)) attributes.push_back(value.is_unit() ? name : name + " = " + value.to_string());
  std::string text = "// ";
  if (!results.empty()) text += join(results, ", ") + " = ";
  text += std::string(op.name());
  if (!operands.empty()) text += " " + join(operands, ", ");
  if (!attributes.empty()) text += " {" + join(attributes, ", ") + "}";
  if (!types.empty()) text += " : " + join(types, ", ");
  if (op.location().known()) text += fmt::format("  (line {})", op.location().line);
  out_.line(text);
}

void BodyEmitter::tile_loop(int64_t count, const std::function<void()>& body) {
  {
    CodeWriter::Block loop =
        out_.block(mode_ == BodyMode::cta
                       ? fmt::format("for (int elem = threadIdx.x; elem < {}; elem += kBlockThreads) {{", count)
                       : fmt::format("for (int elem = 0; elem < {}; ++elem) {{", count));
    body();
  }
  if (mode_ == BodyMode::cta) out_.line("__syncthreads();");
}

std::string BodyEmitter::element_of(const Value* operand, const std::vector<int64_t>& shape) const {
  const std::string& name = plan_.expression(operand);
  if (!operand->type().is_tile()) return name;
  return fmt::format("{}[{}]", name, broadcast_index(operand->type().shape(), shape));
}

// True when an integer division's divisor is a constant other than 0 and -1, or one the IR
// marks `positive_divisor` (checked by the interpreter), so C's `/` and `%` give the
// interpreter's results.
static bool divisor_is_safe(const Operation& op) {
  if (op.has_attr("positive_divisor")) return true;
  const Operation* divisor = op.num_operands() == 2 ? op.operand(1)->defining_op() : nullptr;
  if (!divisor || divisor->kind() != OpKind::constant) return false;
  const Attribute* value = divisor->attr("value");
  return value && value->is_int() && value->as_int() != 0 && value->as_int() != -1;
}

// The expression of one result element from its operands' elements (docs/ir.md, Arithmetic).
std::string BodyEmitter::compute(const Operation& op, const std::vector<std::string>& args) const {
  ScalarKind result = op.result()->type().element();
  ScalarKind input = op.operand(op.kind() == OpKind::select ? 1 : 0)->type().element();
  std::string result_type(result == ScalarKind::index ? std::string_view(index_type_) : element_type(result));
  // Index arithmetic in a type other than int64_t goes through the prelude's index helpers.
  const std::string integer_helpers =
      input == ScalarKind::index && index_type_ != "int64_t" ? fmt::format("index<{}>", index_type_) : "i64";
  const ElementSpelling* spelling = element_spelling(op.kind());
  auto spell = [&](std::string_view pattern, const std::vector<std::string>& operands) {
    return fmt::format(fmt::runtime(pattern), fmt::arg("a", operands[0]),
                       fmt::arg("b", operands.size() > 1 ? operands[1] : ""),
                       fmt::arg("c", operands.size() > 2 ? operands[2] : ""), fmt::arg("int", integer_helpers));
  };

  if (op.kind() == OpKind::select) return fmt::format("({} ? {} : {})", args[0], args[1], args[2]);
  // A one-element tile's element: slot 0 of its array (shared memory after the barrier that ends
  // the loop writing it; in the register form every thread holds it there).
  if (op.kind() == OpKind::item) return fmt::format("{}[0]", args[0]);
  if (op.kind() == OpKind::cast) {
    const std::string& x = args[0];
    if (input == result) return x;
    if (is_float(input) && is_float(result)) {
      std::string f32 = input == ScalarKind::f32 ? x : fmt::format("to_f32({})", x);
      return result == ScalarKind::f32 ? f32 : fmt::format("from_f32<{}>({})", result_type, f32);
    }
    if (is_float(input))
      return fmt::format("float_to_int<{}>({})", result_type,
                         input == ScalarKind::f32 ? x : fmt::format("to_f32({})", x));
    if (is_float(result)) return fmt::format("int_to_float<{}>({})", result_type, x);
    if (result == ScalarKind::i1) return fmt::format("({} != 0)", x);
    return fmt::format("static_cast<{}>({})", result_type, x);
  }

  if (op.kind() == OpKind::bitcast)
    return fmt::format("bits_as<{}>(static_cast<{}>({}))", result_type, element_type(input), args[0]);

  if (is_float(input)) {
    bool narrow = input != ScalarKind::f32;
    std::vector<std::string> f32;
    for (const std::string& arg : args) f32.push_back(narrow ? fmt::format("to_f32({})", arg) : arg);
    if (op.kind() == OpKind::cmp)
      return fmt::format("({} {} {})", f32[0], comparison(op.string_attr("predicate")), f32[1]);
    // No row: rejected by compute_kernel_plan.
    std::string value = spelling && !spelling->f32.empty() ? spell(spelling->f32, f32) : "/* unsupported */ 0.0f";
    return narrow ? fmt::format("from_f32<{}>({})", result_type, value) : value;
  }

  // Integers: 64-bit arithmetic, narrowed back to i32 where that is the element type.
  if (op.kind() == OpKind::cmp)
    return fmt::format("({} {} {})", args[0], comparison(op.string_attr("predicate")), args[1]);
  if (input == ScalarKind::i1 && spelling && !spelling->mask.empty()) return spell(spelling->mask, args);  // bool
  bool narrow = integer_range(input).has_value();  // i1, i8, i16, i32, u8, u16, u32: computed in int64_t
  std::vector<std::string> wide;
  for (const std::string& arg : args) wide.push_back(narrow ? fmt::format("int64_t({})", arg) : arg);
  std::string value = "/* unsupported */ 0";  // no row: rejected by compute_kernel_plan
  if (spelling && !spelling->safe_divisor.empty() && divisor_is_safe(op))
    value = spell(spelling->safe_divisor, wide);
  else if (may_overflow_int64(op.kind(), input))
    value = spell(spelling->wrapping, wide);
  else if (spelling && !spelling->integer.empty())
    value = spell(spelling->integer, wide);
  return narrow ? fmt::format("static_cast<{}>({})", result_type, value) : value;
}

void BodyEmitter::emit_op(const Operation& op) {
  if (mode_ != BodyMode::host && plan_.launch_checks.count(&op)) return;  // the launcher's
  switch (op.kind()) {
    case OpKind::constant:
      if (!op.result()->name_hint().empty()) {
        ScalarKind kind = op.result()->type().element();
        out_.line(fmt::format("const {} {} = {};", element_type(kind), plan_.expression(op.result()),
                              literal(*op.attr("value"), kind)));
      }
      return;
    case OpKind::dim:
    case OpKind::return_:
    case OpKind::yield:  // emitted by the op that owns the region
      return;
    case OpKind::grid_ids: emit_grid_ids(op); return;
    case OpKind::sm_count:  // the device's SM count (emit_cuda.cpp's sm_count helpers) or `workers`
      out_.line(fmt::format("const int64_t {} = {};", plan_.expression(op.result()),
                            op.has_attr("workers") ? std::to_string(op.int_attr("workers")) : "tilec_sm_count()"));
      return;
    case OpKind::for_: emit_for(op); return;
    case OpKind::if_: emit_if(op); return;
    case OpKind::load:
    case OpKind::tma_load: emit_load(op); return;  // the same read (docs/ir.md); every tile is in smem here
    case OpKind::store: emit_store(op); return;
    case OpKind::reduce_sum:
    case OpKind::reduce_max:
    case OpKind::reduce_min: emit_reduction(op); return;
    case OpKind::transpose: emit_transpose(op); return;
    case OpKind::slice: emit_slice(op); return;
    case OpKind::concat: emit_concat(op); return;
    case OpKind::interleave: emit_interleave(op); return;
    case OpKind::reshape:  // row-major both: element e is element e
      comment(op);
      tile_loop(op.result()->type().element_count(), [&] {
        out_.line(fmt::format("{}[elem] = {}[elem];", plan_.expression(op.result()), plan_.expression(op.operand(0))));
      });
      return;
    case OpKind::scan_sum:
    case OpKind::scan_prod:
    case OpKind::scan_max:
    case OpKind::scan_min: emit_scan(op); return;
    case OpKind::sort: emit_sort(op); return;
    case OpKind::mma: emit_mma(op); return;
    case OpKind::zeros:
    case OpKind::full:
    case OpKind::iota: emit_fill(op); return;
    default: break;
  }
  if (op.result()->type().is_tile()) emit_elementwise_tile(op);
  else emit_scalar(op);
}

void BodyEmitter::emit_scalar(const Operation& op) {
  std::vector<std::string> args;
  for (const Value* operand : op.operands()) args.push_back(plan_.expression(operand));
  out_.line(fmt::format("const {} {} = {};", element_type(op.result()->type().element()),
                        plan_.expression(op.result()), compute(op, args)));
  // item() reads a tile's shared memory outside a tile loop: every thread has read it before a
  // later tile may reuse its bytes (the shared-memory plan lets tiles that never live at once share).
  if (op.kind() == OpKind::item && mode_ == BodyMode::cta) out_.line("__syncthreads();");
}

void BodyEmitter::emit_elementwise_tile(const Operation& op) {
  const Type& type = op.result()->type();
  std::vector<std::string> args;
  for (const Value* operand : op.operands()) args.push_back(element_of(operand, type.shape()));
  comment(op);
  tile_loop(type.element_count(), [&] {
    out_.line(fmt::format("{}[elem] = {};", plan_.expression(op.result()), compute(op, args)));
  });
}

// Result element (i0, i1, ...) reads the operand at i_k along operand dimension dims[k]
// (transpose_dims): for [1, 0], element (i, j) of a [C, R] result reads (j, i) of the [R, C] one.
void BodyEmitter::emit_transpose(const Operation& op) {
  const Type& type = op.result()->type();
  const std::vector<int64_t> dims = transpose_dims(op);
  const std::vector<int64_t> input_strides = strides_of(op.operand(0)->type().shape());
  std::vector<std::string> terms;  // one per operand dimension, outermost first; the last one unscaled
  for (size_t d = 0; d < dims.size(); ++d) {
    const size_t k = static_cast<size_t>(std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) - dims.begin());
    const std::string at = coordinate(type.shape(), k, "elem");
    terms.push_back(d + 1 == dims.size() ? at : fmt::format("{} * {}", at, input_strides[d]));
  }
  comment(op);
  tile_loop(type.element_count(), [&] {
    out_.line(fmt::format("{}[elem] = {}[{}];", plan_.expression(op.result()), plan_.expression(op.operand(0)),
                          join(terms, " + ")));
  });
}

// Result element (i0, i1, ...) reads the operand at (starts[0] + i0·steps[0], ...).
void BodyEmitter::emit_slice(const Operation& op) {
  const Type& type = op.result()->type();
  const std::vector<int64_t> starts = slice_starts(op), steps = slice_steps(op);
  const std::vector<int64_t> input_strides = strides_of(op.operand(0)->type().shape());
  std::vector<std::string> terms;
  for (size_t d = 0; d < starts.size(); ++d) {
    std::string at = coordinate(type.shape(), d, "elem");
    if (steps[d] != 1) at = at == "0" ? at : fmt::format("({}) * {}", at, steps[d]);
    if (starts[d] != 0) at = at == "0" ? std::to_string(starts[d]) : fmt::format("{} + {}", starts[d], at);
    if (at != "0") terms.push_back(input_strides[d] == 1 ? at : fmt::format("({}) * {}", at, input_strides[d]));
  }
  comment(op);
  tile_loop(type.element_count(), [&] {
    out_.line(fmt::format("{}[elem] = {}[{}];", plan_.expression(op.result()), plan_.expression(op.operand(0)),
                          terms.empty() ? "0" : join(terms, " + ")));
  });
}

// Result element (..., i_axis, ...) reads the operand whose span along the axis holds i_axis, at
// i_axis less where that span starts: one test per operand after the first.
void BodyEmitter::emit_concat(const Operation& op) {
  const Type& type = op.result()->type();
  const size_t axis = static_cast<size_t>(op.int_attr("axis"));
  comment(op);
  tile_loop(type.element_count(), [&] {
    out_.line(fmt::format("const int64_t along = {};", coordinate(type.shape(), axis, "elem")));
    int64_t offset = 0;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const int64_t extent = op.operand(i)->type().shape()[axis];
      // The operand's linear index: the result's, moved back by the span's start along the axis
      // and rescaled to the operand's shape (its extent along the axis differs).
      const std::vector<int64_t> from = strides_of(op.operand(i)->type().shape());
      std::vector<std::string> terms;
      for (size_t d = 0; d < type.rank(); ++d) {
        std::string at = d == axis ? (offset == 0 ? "along" : fmt::format("(along - {})", offset))
                                   : coordinate(type.shape(), d, "elem");
        if (at != "0") terms.push_back(from[d] == 1 ? at : fmt::format("({}) * {}", at, from[d]));
      }
      const std::string read = fmt::format("{}[elem] = {}[{}];", plan_.expression(op.result()),
                                           plan_.expression(op.operand(i)), terms.empty() ? "0" : join(terms, " + "));
      const bool last = i + 1 == op.num_operands();
      out_.line(last ? (i == 0 ? read : fmt::format("else {}", read))
                     : fmt::format("{}if (along < {}) {}", i == 0 ? "" : "else ", offset + extent, read));
      offset += extent;
    }
  });
}

// Result element (..., i_axis, ...) reads operand i_axis % n at i_axis / n along the axis.
void BodyEmitter::emit_interleave(const Operation& op) {
  const Type& type = op.result()->type();
  const size_t axis = static_cast<size_t>(op.int_attr("axis"));
  const int64_t n = static_cast<int64_t>(op.num_operands());
  const std::vector<int64_t> from = strides_of(op.operand(0)->type().shape());
  std::vector<std::string> terms;
  for (size_t d = 0; d < type.rank(); ++d) {
    const std::string at = d == axis ? fmt::format("along / {}", n) : coordinate(type.shape(), d, "elem");
    if (at != "0") terms.push_back(from[d] == 1 ? at : fmt::format("({}) * {}", at, from[d]));
  }
  const std::string index = terms.empty() ? "0" : join(terms, " + ");
  comment(op);
  tile_loop(type.element_count(), [&] {
    out_.line(fmt::format("const int64_t along = {};", coordinate(type.shape(), axis, "elem")));
    std::string parts;
    for (int64_t k = n - 1; k >= 0; --k) {
      const std::string read = fmt::format("{}[{}]", plan_.expression(op.operand(static_cast<size_t>(k))), index);
      parts = k == n - 1 ? read : fmt::format("along % {} == {} ? {} : {}", n, k, read, parts);
    }
    out_.line(fmt::format("{}[elem] = {};", plan_.expression(op.result()), parts));
  });
}

void BodyEmitter::emit_fill(const Operation& op) {
  const Type& type = op.result()->type();
  std::string value = op.kind() == OpKind::zeros ? zero_literal(type.element())
                      : op.kind() == OpKind::iota
                          ? fmt::format("static_cast<{}>({})", element_type(type.element()),
                                        coordinate(type.shape(), static_cast<size_t>(op.int_attr("axis")), "elem"))
                          : plan_.expression(op.operand(0));
  comment(op);
  tile_loop(type.element_count(),
            [&] { out_.line(fmt::format("{}[elem] = {};", plan_.expression(op.result()), value)); });
}

// One output element per loop iteration; the reduced axis is walked in increasing order and
// floating-point sums accumulate in f32 (docs/ir.md), so every thread count gives the same bits.
void BodyEmitter::emit_reduction(const Operation& op) {
  const Type& input = op.operand(0)->type();
  const Type& output = op.result()->type();
  size_t axis = static_cast<size_t>(op.int_attr("axis"));
  std::vector<int64_t> input_strides = strides_of(input.shape());
  std::vector<std::string> base;
  for (size_t d = 0; d < input.rank(); ++d) {
    if (d == axis || output.shape()[d] == 1) continue;
    std::string term = coordinate(output.shape(), d, "elem");
    if (input_strides[d] != 1) term += fmt::format(" * {}", input_strides[d]);
    base.push_back(term);
  }
  auto input_element = [&](const std::string& position) {
    std::vector<std::string> terms = base;
    if (position != "0")
      terms.push_back(input_strides[axis] == 1 ? position
                                               : fmt::format("{} * {}", position, input_strides[axis]));
    return fmt::format("{}[{}]", plan_.expression(op.operand(0)),
                       terms.empty() ? "0" : join(terms, " + "));
  };
  ScalarKind kind = input.element();
  bool floating = is_float(kind);
  const char* accumulator = floating ? "float" : "int64_t";
  int64_t extent = input.shape()[axis];
  bool sum = op.kind() == OpKind::reduce_sum;

  comment(op);
  tile_loop(output.element_count(), [&] {
    // A sum starts from zero, a maximum or minimum from the first element.
    out_.line(fmt::format("{} acc = {};", accumulator,
                          sum ? (floating ? "0.0f" : "0") : widened(kind, input_element("0"))));
    out_.line(fmt::format("for (int pos = {}; pos < {}; ++pos) acc = {};", sum ? 0 : 1, extent,
                          combining_expression(op.kind(), floating, "acc", widened(kind, input_element("pos")))));
    out_.line(fmt::format("{}[elem] = {};", plan_.expression(op.result()), narrowed_accumulator(kind)));
  });
}

// One line along `axis` per loop iteration (a thread each in `cta` mode): the running sum,
// product, maximum or minimum in index order, f32 for floats (the first element as it is, then
// add_f32 / mul_f32 / max_f32 / min_f32) and int64_t for integers, each prefix narrowed to the
// element type: the interpreter's evaluate_scan.
void BodyEmitter::emit_scan(const Operation& op) {
  const Type& type = op.result()->type();
  const std::vector<int64_t>& shape = type.shape();
  const size_t axis = static_cast<size_t>(op.int_attr("axis"));
  const int64_t inner = product(shape, axis + 1, shape.size());
  const int64_t extent = shape[axis], lines = type.element_count() / extent;
  ScalarKind kind = type.element();
  const bool floating = is_float(kind);
  const std::string in = plan_.expression(op.operand(0)), out = plan_.expression(op.result());
  // elem numbers the lines: (outer o, inner i) is element (o·extent + pos)·inner + i.
  const std::string at = inner == 1 ? fmt::format("elem * {} + pos", extent)
                                    : fmt::format("(elem / {0} * {1} + pos) * {0} + elem % {0}", inner, extent);
  const std::string read = widened(kind, fmt::format("{}[{}]", in, at));
  comment(op);
  const std::string combined = combining_expression(op.kind(), floating, "acc", read);
  tile_loop(lines, [&] {
    out_.line(fmt::format("{} acc = {};", floating ? "float" : "int64_t", floating ? "0.0f" : "0"));
    CodeWriter::Block walk_line = out_.block(fmt::format("for (int pos = 0; pos < {}; ++pos) {{", extent));
    out_.line(fmt::format("acc = pos == 0 ? {} : {};",
                          floating ? read : fmt::format("static_cast<int64_t>({})", read), combined));
    out_.line(fmt::format("{}[{}] = {};", out, at, narrowed_accumulator(kind)));
  });
}

// One line along `axis` per loop iteration (a thread each in `cta` mode): the line copied, then
// sorted in place by the prelude's tilec_sort_line (heapsort; sort_prelude).
void BodyEmitter::emit_sort(const Operation& op) {
  const Type& type = op.result()->type();
  const std::vector<int64_t>& shape = type.shape();
  const size_t axis = static_cast<size_t>(op.int_attr("axis"));
  const int64_t inner = product(shape, axis + 1, shape.size());
  const int64_t extent = shape[axis], lines = type.element_count() / extent;
  const std::string in = plan_.expression(op.operand(0)), out = plan_.expression(op.result());
  // elem numbers the lines: (outer o, inner i) starts at element o·extent·inner + i.
  const std::string start = inner == 1 ? fmt::format("elem * {}", extent)
                                       : fmt::format("elem / {0} * {1} + elem % {0}", inner, extent * inner);
  comment(op);
  tile_loop(lines, [&] {
    out_.line(fmt::format("for (int pos = 0; pos < {0}; ++pos) {1}[{2} + pos * {3}] = {4}[{2} + pos * {3}];", extent, out,
                          start, inner, in));
    out_.line(fmt::format("tilec_sort_line(&{}[{}], {}, {}, {});", out, start, extent, inner,
                          op.int_attr("descending", 0) != 0 ? "true" : "false"));
  });
}

// One output element (i, j) per loop iteration: acc[i, j] + Σk a[i, k]·b[k, j], products and
// sums in f32 (narrow floats widened with to_f32, f32 operands read as tf32 with tf32_operand;
// separate multiply and add, no fusion), k in increasing order, rounded once to the accumulator's
// type (docs/ir.md) — the interpreter's order, so both give the same bits. Integers multiply and
// add in 64 bits, wrapping.
void BodyEmitter::emit_mma(const Operation& op) {
  const Value* a = op.operand(0);
  const Value* b = op.operand(1);
  const Value* acc = op.operand(2);
  const std::vector<int64_t>& shape = op.result()->type().shape();
  const int64_t rows = shape[0], columns = shape[1], depth = a->type().shape()[1];
  ScalarKind input = a->type().element(), output = acc->type().element();
  bool floating = is_float(output);
  auto widen = [&](const std::string& element) {
    if (input != ScalarKind::f32) return fmt::format("to_f32({})", element);
    return fmt::format("tf32_operand({})", element);
  };
  std::string row = fmt::format("elem / {}", columns), column = fmt::format("elem % {}", columns);
  // Fresh names: a kernel value may be called `k` or `sum`.
  std::string step = names_.unique("step"), sum = names_.unique("sum");
  std::string left = fmt::format("{}[({}) * {} + {}]", plan_.expression(a), row, depth, step);
  std::string right = fmt::format("{}[{} * {} + {}]", plan_.expression(b), step, columns, column);
  std::string initial = fmt::format("{}[elem]", plan_.expression(acc));

  comment(op);
  const bool counts = mode_ == BodyMode::reference;  // the harness's reference may only count the work
  {
    std::optional<CodeWriter::Block> counted;
    if (counts) counted.emplace(out_.block("if (!count_only) {"));
    tile_loop(rows * columns, [&] {
      if (floating) {
        out_.line(fmt::format("float {} = {};", sum,
                              output == ScalarKind::f32 ? initial : fmt::format("to_f32({})", initial)));
        out_.line(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}) {2} = add_f32({2}, mul_f32({3}, {4}));", step,
                              depth, sum, widen(left), widen(right)));
        out_.line(fmt::format("{}[elem] = {};", plan_.expression(op.result()),
                              output == ScalarKind::f32 ? sum
                                                        : fmt::format("from_f32<{}>({})", element_type(output), sum)));
      } else {
        out_.line(fmt::format("uint64_t {} = static_cast<uint64_t>({});", sum, initial));
        out_.line(fmt::format(
            "for (int {0} = 0; {0} < {1}; ++{0}) {2} += static_cast<uint64_t>({3}) * static_cast<uint64_t>({4});",
            step, depth, sum, left, right));
        out_.line(fmt::format("{}[elem] = static_cast<{}>({});", plan_.expression(op.result()),
                              element_type(output), sum));
      }
    });
  }
  if (counts)
    out_.line(fmt::format("atomicAdd(&{}_reference_flops, {}ull);  // 2·M·N·K of the whole tile", plan_.name,
                          2 * rows * columns * depth));
}

// Declares index0.. (the element's position in the tensor) and `in_bounds` for a load/store. A
// tile of lower rank than its tensor is a slice: its leading coordinates are element indices.
void BodyEmitter::emit_tensor_index(const Operation& op, const Type& tile) {
  const std::vector<std::string>& extents = plan_.tensor_dims.at(op.operand(0));
  // A `transposed` tma_load reads the [C, R] box and gives its transpose [R, C] (docs/ir.md):
  // the tensor's last two dimensions are tile dimensions 1 and 0 (a rank-3 tensor's leading
  // coordinate picks the matrix, as for any slice).
  const bool transposed = op.has_attr("transposed");
  if (transposed && (tile.rank() != 2 || extents.size() < 2))
    throw std::logic_error("emit_tensor_index: a transposed load gives a 2-D tile of a tensor of rank 2 or more, not " +
                           tile.to_string());
  if (op.has_attr("box")) {
    emit_box_index(op, tile);
    return;
  }
  const size_t lead = extents.size() - std::min(extents.size(), tile.rank());  // the slice's leading coordinates
  const std::vector<int64_t> shape = shape_in_tensor(Type::tile(stored_shape(op, tile), tile.element()), extents.size());
  std::vector<std::string> checks;
  for (size_t d = 0; d < shape.size(); ++d) {
    // index_d = tile coordinate * tile extent (or, for a load at element coordinates, the
    // coordinate itself) + the element's coordinate within the tile.
    const std::string& tile_coordinate = plan_.expression(op.operand(1 + d));
    std::vector<std::string> terms;
    if (tile_coordinate != "0")
      terms.push_back(shape[d] == 1 || op.has_attr("elements")
                          ? tile_coordinate
                          : fmt::format("{} * {}", tile_coordinate, shape[d]));
    std::string within = d < lead       ? "0"
                         : transposed ? coordinate(tile.shape(), 1 - (d - lead), "elem")
                                      : coordinate(shape, d, "elem");
    if (within != "0") terms.push_back(within);
    out_.line(fmt::format("const int64_t index{} = {};", d, terms.empty() ? "0" : join(terms, " + ")));
    checks.push_back(fmt::format("0 <= index{0} && index{0} < {1}", d, extents[d]));
  }
  out_.line(fmt::format("const bool in_bounds = {};", join(checks, " && ")));
}

// The same through a `box` (docs/ir.md): the tile's elements in the box's row-major order, which
// a transposed tma_load holds as its [C, R] transpose.
void BodyEmitter::emit_box_index(const Operation& op, const Type& tile) {
  const std::vector<std::string>& extents = plan_.tensor_dims.at(op.operand(0));
  const bool transposed = op.has_attr("transposed");
  const std::vector<int64_t> stored = stored_shape(op, tile);
  const std::vector<int64_t> box = memory_box(op, Type::tile(stored, tile.element()), extents.size());
  if (box.empty() || !same_but_unit_dims(box, stored))
    throw std::logic_error(fmt::format("emit_box_index: the box of '{}' does not hold {}", op.name(), tile.to_string()));
  // Element elem of the tile is element `linear` of the stored box.
  const std::string linear = transposed ? fmt::format("(elem % {} * {} + elem / {})", tile.shape()[1],
                                                      tile.shape()[0], tile.shape()[1])
                                        : "elem";
  std::vector<std::string> checks;
  for (size_t d = 0; d < box.size(); ++d) {
    const std::string& tile_coordinate = plan_.expression(op.operand(1 + d));
    std::vector<std::string> terms;
    if (tile_coordinate != "0")
      terms.push_back(box[d] == 1 || op.has_attr("elements") ? tile_coordinate
                                                             : fmt::format("{} * {}", tile_coordinate, box[d]));
    std::string within = coordinate(box, d, linear);
    if (within != "0") terms.push_back(within);
    out_.line(fmt::format("const int64_t index{} = {};", d, terms.empty() ? "0" : join(terms, " + ")));
    checks.push_back(fmt::format("0 <= index{0} && index{0} < {1}", d, extents[d]));
  }
  out_.line(fmt::format("const bool in_bounds = {};", join(checks, " && ")));
}

void BodyEmitter::emit_load(const Operation& op) {
  const Type& tile = op.result()->type();
  comment(op);
  tile_loop(tile.element_count(), [&] {
    emit_tensor_index(op, tile);
    out_.line(fmt::format("{}[elem] = in_bounds ? {}[{}] : {};", plan_.expression(op.result()),
                          plan_.expression(op.operand(0)), tensor_offset(plan_.tensor_dims.at(op.operand(0))),
                          zero_literal(tile.element())));
  });
}

void BodyEmitter::emit_store(const Operation& op) {
  const Value* value = op.operands().back();
  const Type& tile = value->type();
  comment(op);
  tile_loop(tile.element_count(), [&] {
    emit_tensor_index(op, tile);
    const std::string target = fmt::format("{}[{}]", plan_.expression(op.operand(0)),
                                           tensor_offset(plan_.tensor_dims.at(op.operand(0))));
    const std::string element = fmt::format("{}[elem]", plan_.expression(value));
    const Value* mask = store_mask(op);  // a masked store writes where it holds
    out_.line(fmt::format("if (in_bounds{}) {}", mask ? " && " + element_of(mask, tile.shape()) : "", accumulates(op) ? atomic_combine_statement(store_combine(op), tile.element(), "&" + target, element)
                                                             : fmt::format("{} = {};", target, element)));
  });
}

// Row-major: the last coordinate varies fastest along the linear tile number.
void BodyEmitter::emit_grid_ids(const Operation& op) {
  comment(op);
  size_t rank = op.num_operands();
  for (size_t d = 0; d < rank; ++d) {
    std::vector<std::string> inner;
    for (size_t j = d + 1; j < rank; ++j) inner.push_back(plan_.expression(op.operand(j)));
    std::string text = "tile_number";
    if (inner.size() == 1) text += " / " + inner[0];
    if (inner.size() > 1) text += " / (" + join(inner, " * ") + ")";
    if (d > 0) text += " % " + plan_.expression(op.operand(d));
    out_.line(fmt::format("const int64_t {} = {};", plan_.expression(op.result(d)), text));
  }
  // A coordinate the kernel never reads (grid tiles(1) as (i)) would draw nvcc's warning #177.
  std::vector<bool> used(rank, false);
  walk(*op.parent_region(), [&](const Operation& user) {
    for (const Value* operand : user.operands())
      for (size_t d = 0; d < rank; ++d) used[d] = used[d] || operand == op.result(d);
  });
  for (size_t d = 0; d < rank; ++d)
    if (!used[d]) out_.line(fmt::format("(void){};", plan_.expression(op.result(d))));
}

void BodyEmitter::emit_copy(const std::string& destination, const Value* source) {
  tile_loop(source->type().element_count(),
            [&] { out_.line(fmt::format("{}[elem] = {}[elem];", destination, plan_.expression(source))); });
}

void BodyEmitter::emit_yield(const Region& region, const std::vector<const Value*>& targets) {
  const Operation* yield = region.terminator();
  std::vector<std::pair<const Value*, const Value*>> scalars;  // (target, source)
  for (size_t i = 0; i < targets.size(); ++i) {
    const Value* source = yield->operand(i);
    if (plan_.expression(source) == plan_.expression(targets[i])) continue;
    if (source->type().is_tile()) emit_copy(plan_.expression(targets[i]), source);
    else scalars.emplace_back(targets[i], source);
  }
  emit_scalar_assignments(scalars);
}

void BodyEmitter::emit_scalar_assignments(const std::vector<std::pair<const Value*, const Value*>>& scalars) {
  if (scalars.size() == 1) {
    out_.line(fmt::format("{} = {};", plan_.expression(scalars[0].first),
                          plan_.expression(scalars[0].second)));
    return;
  }
  // Several scalars: read them all before writing any (a yield may swap two carried values).
  std::vector<std::string> temporaries;
  for (const auto& [target, source] : scalars) {
    ScalarKind kind = source->type().element();
    temporaries.push_back(names_.unique("next_" + plan_.expression(target)));
    out_.line(fmt::format("const {} {} = {};", kind == ScalarKind::index ? index_type_ : element_type(kind),
                          temporaries.back(), plan_.expression(source)));
  }
  for (size_t i = 0; i < scalars.size(); ++i)
    out_.line(fmt::format("{} = {};", plan_.expression(scalars[i].first), temporaries[i]));
}

void BodyEmitter::emit_for(const Operation& op) {
  const Region& body = op.region();
  comment(op);
  std::vector<const Value*> carried;
  for (size_t i = 1; i < body.num_arguments(); ++i) {
    const Value* value = body.argument(i);
    const Value* init = op.operand(2 + i);
    carried.push_back(value);
    if (value->type().is_tile()) {
      emit_copy(plan_.expression(value), init);
    } else {
      out_.line(fmt::format("{} {} = {};", element_type(value->type().element()),
                            plan_.expression(value), plan_.expression(init)));
    }
  }
  const std::string& iv = plan_.expression(body.argument(0));
  CodeWriter::Block loop = out_.block(fmt::format("for (int64_t {0} = {1}; {0} < {2}; {0} += {3}) {{", iv,
                                                  plan_.expression(op.operand(0)), plan_.expression(op.operand(1)),
                                                  plan_.expression(op.operand(2))));
  for (const auto& nested : body.operations()) emit_op(*nested);
  emit_yield(body, carried);
}

void BodyEmitter::emit_if(const Operation& op) {
  comment(op);
  std::vector<const Value*> results;
  for (size_t i = 0; i < op.num_results(); ++i) {
    const Value* result = op.result(i);
    results.push_back(result);
    if (!result->type().is_tile())
      out_.line(fmt::format("{} {}{{}};", element_type(result->type().element()),
                            plan_.expression(result)));
  }
  CodeWriter::Block branches = out_.block(fmt::format("if ({}) {{", plan_.expression(op.operand(0))));
  for (size_t r = 0; r < 2; ++r) {
    if (r == 1) branches.next("} else {");
    for (const auto& nested : op.region(r).operations()) emit_op(*nested);
    emit_yield(op.region(r), results);
  }
}

}  // namespace tilec::cuda

namespace tilec::cuda {

std::string parameter_list(const KernelPlan& plan, std::string_view dimension_type) {
  std::vector<std::string> parts;
  for (const ParamPlan& param : plan.params) {
    const Type& type = param.value->type();
    std::string_view element = element_type(type.element());
    if (type.is_tensor())
      parts.push_back(fmt::format("{}{}* {}", param.written ? "" : "const ", element, param.name));
    else
      parts.push_back(fmt::format("{} {}", element, param.name));
  }
  for (const std::string& dim : plan.dim_params) parts.push_back(fmt::format("{} {}", dimension_type, dim));
  return join(parts, ", ");
}

std::string argument_list(const KernelPlan& plan) {
  std::vector<std::string> parts;
  for (const ParamPlan& param : plan.params) parts.push_back(param.name);
  for (const std::string& dim : plan.dim_params) parts.push_back(dim);
  return join(parts, ", ");
}

void emit_buffer_declarations(const KernelPlan& plan, CodeWriter& out) {
  for (const BufferPlan& buffer : plan.buffers) {
    std::string_view element = element_type(buffer.value->type().element());
    out.line(fmt::format("{0}* const {1} = reinterpret_cast<{0}*>(shared_memory + {2});", element, buffer.name,
                         buffer.offset));
  }
}

void emit_tile_count(const KernelPlan& plan, bool with_scalar_ops, CodeWriter& out, bool with_launch_checks) {
  if (!plan.grid) {
    out.line("const int64_t tile_count = 1;  // no grid_ids: a single CTA");
    return;
  }
  // Only the pre-grid ops the extents (and the asserts) depend on, in program order.
  std::set<const Value*> needed(plan.grid->operands().begin(), plan.grid->operands().end());
  std::vector<const Operation*> slice, asserts;
  for (auto it = plan.pre_grid.rbegin(); it != plan.pre_grid.rend(); ++it) {
    const bool check = with_launch_checks && (*it)->kind() == OpKind::assert_;
    if (check) asserts.insert(asserts.begin(), *it);
    else if ((*it)->num_results() != 1 || !needed.count((*it)->result())) continue;
    else slice.insert(slice.begin(), *it);
    needed.insert((*it)->operands().begin(), (*it)->operands().end());
  }
  BodyEmitter emitter(plan, BodyMode::host, out);
  if (with_scalar_ops)
    for (const Operation* op : slice) emitter.emit_op(*op);
  for (const Operation* check : asserts) {
    const Location& at = check->location();
    out.line(fmt::format("if (!{}) return cudaErrorInvalidValue;  // assert {}{}",
                         grouped(plan.expression(check->operand(0))),
                         check->has_attr("text") ? check->string_attr("text") : "",
                         at.line ? fmt::format(" (line {})", at.line) : ""));
  }
  std::string tiles;
  for (const Value* extent : plan.grid->operands()) {
    // The interpreter refuses a negative extent computed at launch; so does the launcher.
    if (with_launch_checks && !never_negative(extent)) {
      const int line = plan.grid->location().line;
      out.line(fmt::format("if ({} < 0) return cudaErrorInvalidValue;  // a negative grid extent{}",
                           grouped(plan.expression(extent)), line ? fmt::format(" (line {})", line) : ""));
    }
    tiles = tiles.empty() ? fmt::format("max_i64({}, 0)", plan.expression(extent))
                          : fmt::format("tile_product_i64({}, {})", tiles, plan.expression(extent));
  }
  out.line(fmt::format("const int64_t tile_count = {};", tiles));
}

bool queries_sm_count(const KernelPlan& plan) {
  return std::any_of(plan.pre_grid.begin(), plan.pre_grid.end(), [](const Operation* op) {
    return op->kind() == OpKind::sm_count && !op->has_attr("workers");
  });
}

std::string launcher_declaration(const KernelPlan& plan) {
  return fmt::format("extern \"C\" cudaError_t launch_{}({}{}cudaStream_t stream)", plan.name, parameter_list(plan),
                     plan.params.empty() && plan.dim_params.empty() ? "" : ", ");
}

void emit_launcher(const KernelPlan& plan, const LaunchSpec& spec, std::string& out) {
  CodeWriter writer(out);
  writer.line(fmt::format("// Launches {}_kernel on `stream`: {}", plan.name, spec.summary));
  {
    CodeWriter::Block function = writer.block(launcher_declaration(plan) + " {");
    emit_tile_count(plan, /*with_scalar_ops=*/true, writer, /*with_launch_checks=*/true);
    writer.line("if (tile_count == 0) return cudaSuccess;  // an empty grid: nothing to do");
    writer.line("if (tile_count > INT_MAX) return cudaErrorInvalidConfiguration;");
    writer.lines(spec.setup);
    writer.line(fmt::format("const size_t shared_bytes = {};", spec.shared_bytes));
    std::string kernel = spec.kernel.empty() ? plan.name + "_kernel" : spec.kernel;
    std::vector<std::string> kernels = {kernel};
    if (!spec.narrow_condition.empty()) kernels.insert(kernels.begin(), spec.narrow_kernel);
    if (spec.shared_bytes > 48 * 1024) {
      writer.line("// Above 48 KiB of dynamic shared memory a kernel must opt in.");
      for (size_t i = 0; i < kernels.size(); ++i)
        // Not `status`: the launcher's later checks declare their own (-Wshadow warned of each).
        writer.lines(fmt::format("const cudaError_t opted_in{0} = cudaFuncSetAttribute({1}, "
                                 "cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes));\n"
                                 "if (opted_in{0} != cudaSuccess) return opted_in{0};\n",
                                 i == 0 ? "" : std::to_string(i), kernels[i]));
    }
    if (queries_sm_count(plan)) {
      // Asynchronous, in `stream`: a pageable source is staged before the call returns, and the
      // kernel after it reads the value. A synchronous copy made each launch wait for the kernel
      // before it (a 2048^3 gemm on an H100 ran at 444-467 TFLOP/s, and at 589-592 with this copy;
      // bench/README.md).
      writer.lines("// Device code reads the SM count the host sized the grid with.\n"
                   "const int64_t launch_sm_count = tilec_sm_count();\n"
                   "const cudaError_t copied = cudaMemcpyToSymbolAsync(tilec_sm_count_on_device, &launch_sm_count, "
                   "sizeof(int64_t), 0,\n"
                   "                                                   cudaMemcpyHostToDevice, stream);\n"
                   "if (copied != cudaSuccess) return copied;\n");
    }
    std::string arguments = spec.arguments.empty() ? "" : ", " + spec.arguments;
    auto launch = [&](const std::string& name) {
      if (plan.cluster_size == 1) {
        writer.line(fmt::format("TILEC_LAUNCH({}, static_cast<unsigned>(tile_count), {}, shared_bytes, stream{});",
                                name, spec.threads, arguments));
      } else {
        writer.line(fmt::format("const cudaError_t launched = cudaLaunchKernelEx(&config, {}{});", name, arguments));
        writer.line("if (launched != cudaSuccess) return launched;");
      }
      if (spec.teardown.empty()) {
        writer.line("return cudaGetLastError();");
        return;
      }
      writer.line("if (const cudaError_t failed = cudaGetLastError(); failed != cudaSuccess) return failed;");
      writer.lines(spec.teardown);
    };
    if (plan.cluster_size > 1) {
      // Clusters of (C, 1, 1) CTAs: the C CTAs of a cluster are at consecutive blockIdx.x, which is
      // how the kernel computes its cluster (blockIdx.x div C) and rank (blockIdx.x rem C).
      writer.lines(
          fmt::format("// Clusters of {0} CTAs along x: CTAs {0}c .. {0}c + {1} form cluster c.\n"
                      "if (tile_count % {0} != 0) return cudaErrorInvalidConfiguration;  // whole clusters only\n"
                      "cudaLaunchAttribute cluster_attribute[1];\n"
                      "cluster_attribute[0].id = cudaLaunchAttributeClusterDimension;\n"
                      "cluster_attribute[0].val.clusterDim.x = {0};\n"
                      "cluster_attribute[0].val.clusterDim.y = 1;\n"
                      "cluster_attribute[0].val.clusterDim.z = 1;\n"
                      "cudaLaunchConfig_t config = {{}};\n"
                      "config.gridDim = dim3(static_cast<unsigned>(tile_count), 1, 1);\n"
                      "config.blockDim = dim3({2}, 1, 1);\n"
                      "config.dynamicSmemBytes = shared_bytes;\n"
                      "config.stream = stream;\n"
                      "config.attrs = cluster_attribute;\n"
                      "config.numAttrs = 1;\n",
                      plan.cluster_size, plan.cluster_size - 1, spec.threads));
    }
    if (!spec.narrow_comment.empty()) writer.line("// " + spec.narrow_comment);
    if (!spec.narrow_condition.empty()) {
      CodeWriter::Block narrow = writer.block(fmt::format("if ({}) {{", spec.narrow_condition));
      launch(spec.narrow_kernel);
    }
    launch(kernel);
  }
  writer.line("");
}

namespace {

// A scalar as a reader would write it, from the ops that compute it (depth-limited).
std::string describe_value(const KernelPlan& plan, const Value* value, int depth) {
  const Operation* op = value->defining_op();
  if (!op || depth > 6) return plan.expression(value);
  switch (op->kind()) {
    case OpKind::constant: return op->attr("value")->to_string();
    case OpKind::dim: return plan.expression(value);
    case OpKind::cdiv:
    case OpKind::max:
    case OpKind::min:
      return fmt::format("{}({}, {})", op->name(), describe_value(plan, op->operand(0), depth + 1),
                         describe_value(plan, op->operand(1), depth + 1));
    case OpKind::add:
    case OpKind::sub:
    case OpKind::mul:
    case OpKind::div: {
      const char* symbol = op->kind() == OpKind::add   ? "+"
                           : op->kind() == OpKind::sub ? "-"
                           : op->kind() == OpKind::mul ? "*"
                                                       : "/";
      std::string text = fmt::format("{} {} {}", describe_value(plan, op->operand(0), depth + 1),
                                     symbol, describe_value(plan, op->operand(1), depth + 1));
      return depth == 0 ? text : "(" + text + ")";
    }
    default: return plan.expression(value);
  }
}

}  // namespace

std::string describe_grid(const KernelPlan& plan) {
  if (!plan.grid) return "1";
  std::vector<std::string> extents;
  for (const Value* extent : plan.grid->operands()) extents.push_back(describe_value(plan, extent, 0));
  return join(extents, " x ");
}

}  // namespace tilec::cuda
