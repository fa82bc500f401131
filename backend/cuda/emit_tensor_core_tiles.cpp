// backend/cuda/emit_tensor_core_tiles.cpp — the compute agent's register tiles (fragments,
// elementwise ops, row reductions) and the epilogue (stores per element or through shared
// memory and TMA; the family writes the elements it holds). A part of TensorCoreKernel
// (tensor_core_kernel.h).
#include <fmt/core.h>

#include <string>

#include "backend/cuda/element_spellings.h"
#include "backend/cuda/tensor_core_kernel.h"
#include "ir/ir.h"

namespace tilec::cuda::tensor_core {

// A loop over the registers of a fragment of `rows` x `columns`: `name[i] = value;`, with `row`
// and `column` declared when the value reads them. The thread's lane and warp are computed once,
// before the loop: inside it (signed % and / per register) nvcc left a 64-register loop rolled,
// so the fragments it indexed went to local memory and ptxas serialized the WGMMAs (C7514).
void TensorCoreKernel::emit_fragment_loop(int64_t rows, int64_t columns, const std::string& assignment,
                                          bool position) {
  int64_t count = tc_.layout.count(columns);
  if (!position) {
    writer_.line("#pragma unroll");
    writer_.line(fmt::format("for (int i = 0; i < {}; ++i) {}", count, assignment));
    return;
  }
  CodeWriter::Block scope = writer_.block("{");
  writer_.line(FragmentLayout::position_variables());
  writer_.line("#pragma unroll");
  CodeWriter::Block loop = writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", count));
  writer_.line(fmt::format("const int row = {}, column = {};", tc_.layout.row("i", columns == 1, rows),
                           tc_.layout.column("i", columns)));
  writer_.line("(void)row, (void)column;");
  writer_.line(assignment);
}

void TensorCoreKernel::declare_fragment(const Fragment& fragment) {
  writer_.line(
      fmt::format("{} {}[{}];", element_type(fragment.element), fragment.name, tc_.layout.count(fragment.columns)));
}

void TensorCoreKernel::copy_fragment(const Fragment& to, const Fragment& from) {
  emit_fragment_loop(to.rows, to.columns, fmt::format("{}[i] = {}[i];", to.name, from.name), false);
}

// A tile op whose result the compute threads keep in registers.
void TensorCoreKernel::emit_fragment_op(const Operation& op) {
  const Fragment& result = *tc_.fragment(op.result());
  comment(op);
  declare_fragment(result);
  position_used_ = false;
  ElementContext context;
  context.row_vector = result.columns == 1;
  std::string value = op_element(op, context);
  emit_fragment_loop(result.rows, result.columns, fmt::format("{}[i] = {};", result.name, value), position_used_);
}

// item(): each thread computes the tile's one element itself (a load from global memory, zero
// outside the tensor, and arithmetic on it), at tile position (0, 0).
void TensorCoreKernel::emit_item(const Operation& op) {
  position_used_ = false;
  std::string value = element(op.operand(0), ElementContext{.index = "0"});
  const std::string& name = plan_.expression(op.result());
  std::string type(element_type(op.result()->type().element()));
  if (!position_used_) {
    writer_.line(fmt::format("const {} {} = {};", type, name, value));
    return;
  }
  writer_.line(fmt::format("{} {};", type, name));
  CodeWriter::Block block = writer_.block("{");
  writer_.line("const int row = 0, column = 0;");
  writer_.line("(void)row, (void)column;");
  writer_.line(fmt::format("{} = {};", name, value));
}

std::pair<const char*, std::string> TensorCoreKernel::reduction_step(OpKind kind, ScalarKind element) {
  const bool floating = element == ScalarKind::f32;
  // max_f32 and min_f32 return the other operand of a NaN, so NAN is their identity and a row of
  // NaNs stays NaN, as in the interpreter (from -INFINITY it became -inf).
  const char* identity = kind == OpKind::reduce_max   ? (floating ? "NAN" : "INT32_MIN")
                         : kind == OpKind::reduce_min ? (floating ? "NAN" : "INT32_MAX")
                                                      : (floating ? "0.0f" : "0");
  return {identity, floating ? combining_expression(kind, true, "{0}", "{1}")
                             : fmt::format("static_cast<int32_t>({})", combining_expression(kind, false, "{0}", "{1}"))};
}

// reduce_max / reduce_min / reduce_sum along the columns: each thread over its registers, then
// across the threads holding the other columns of its rows. f32, or i32 (argmax's index
// minimum, an integer accumulator's row sum: a sum wraps, as the interpreter's).
void TensorCoreKernel::emit_reduction(const Operation& op) {
  if (tc_.folded_reductions.count(&op)) return;  // along axis 0, into its stores (emit_folded_store)
  const Fragment& result = *tc_.fragment(op.result());
  const Fragment& input = *tc_.fragment(op.operand(0));
  const auto [identity, combine] = reduction_step(op.kind(), result.element);
  comment(op);
  declare_fragment(result);
  if (input.columns == 1) {  // a column's rows, each one element: the column itself (the threads
    // holding a row hold copies of it, which combining across them would count again)
    writer_.line("#pragma unroll");
    writer_.line(fmt::format("for (int i = 0; i < {}; ++i) {}[i] = {}[i];", tc_.layout.count(1), result.name,
                             input.name));
    return;
  }
  CodeWriter::Block scope = writer_.block("{");
  writer_.line("#pragma unroll");
  writer_.line(fmt::format("for (int i = 0; i < {}; ++i) {}[i] = {};", tc_.layout.count(1), result.name, identity));
  std::string slot = fmt::format("{}[{}]", result.name, tc_.layout.row_slot("i"));
  writer_.line("#pragma unroll");
  writer_.line(fmt::format("for (int i = 0; i < {}; ++i) {} = {};", tc_.layout.count(input.columns), slot,
                           fmt::format(fmt::runtime(combine), slot, input.name + "[i]")));
  std::string exchange, barrier;
  if (tc_.exchange_offset >= 0) {
    writer_.line(FragmentLayout::position_variables());
    writer_.line(fmt::format("{0}* const exchange = reinterpret_cast<{0}*>(shared_aligned + {1});",
                             element_type(result.element), tc_.exchange_offset));
    exchange = "exchange";
    barrier = fmt::format("tilec_named_barrier_sync({}, {});", tc_.private_barrier, tc_.compute_threads);
  }
  writer_.lines(tc_.layout.combine_rows(result.name, combine, exchange, barrier));
}

// An iota's element at tile position (row, column): the position along its axis.
std::string TensorCoreKernel::iota_element(const Operation& op, const std::string& row, const std::string& column) {
  position_used_ = true;
  // Axis 0 of a rank-1 iota (a row vector) runs along the columns.
  const bool along_rows = op.int_attr("axis") == 0 && op.result()->type().rank() == 2;
  return fmt::format("static_cast<{}>({})", element_type(op.result()->type().element()), along_rows ? row : column);
}

// A load's element at tile position (row, column): zero outside the tensor (which, for a load at
// element coordinates, may start above or left of it).
std::string TensorCoreKernel::load_element(const Operation& op, const std::string& row, const std::string& column) {
  const std::vector<int64_t>& shape = op.result()->type().shape();
  // A one-element tile (item()'s) reads neither.
  position_used_ = position_used_ || op.result()->type().element_count() != 1;
  const MatrixAccess access = matrix_access(op, 1);
  const bool column_check = access.column_may_be_negative;
  if (shape.size() == 1 && op.operand(0)->type().rank() == 1) {  // a row vector <N> of a vector: the column is its index
    std::string index = fmt::format("({} + {})", access.column_origin(shape[0]), shape[0] == 1 ? "0" : column);
    return fmt::format("({0}{1} < {2} ? {3}[{1}] : {4})", column_check ? fmt::format("0 <= {} && ", index) : "",
                       index, access.columns, access.base, zero_literal(op.result()->type().element()));
  }
  const bool row_check = access.row_may_be_negative;
  // A row <N> of a matrix (a slice: `load B[e, n] : <BN>`) is its <1, N> tile whose row
  // coordinate is an element index.
  const bool row_slice = shape.size() == 1;
  const int64_t width = shape.back();
  std::string c = width == 1 ? "0" : column;
  std::string index0 = row_slice ? fmt::format("({})", access.row)
                                 : fmt::format("({} + {})", access.row_origin(shape[0]), shape[0] == 1 ? "0" : row);
  std::string index1 = fmt::format("({} + {})", access.column_origin(width), c);
  std::string inside = access.inside + (row_check ? fmt::format("0 <= {} && ", index0) : "") +
                       (column_check ? fmt::format("0 <= {} && ", index1) : "");
  return fmt::format("({6}{0} < {2} && {1} < {3} ? {4}[{0} * {7} + {1}] : {5})", index0, index1, access.rows,
                     access.columns, access.base, zero_literal(op.result()->type().element()), inside, access.pitch);
}

std::string TensorCoreKernel::ElementContext::column() const {
  if (column_is_pinned(column_shift)) return std::to_string(pinned_column(column_shift));  // a broadcast column
  return column_shift == 0 ? column_base : fmt::format("({} + {})", column_base, column_shift);
}

// One element of `value` as a C++ expression: registers of fragments, a TMEM accumulator's
// element, lazily computed values at (`row`, `column`), scalars.
std::string TensorCoreKernel::element(const Value* value, const ElementContext& context) {
  if (!value->type().is_tile()) return plan_.expression(value);
  if (auto read = tc_.lazy_reads.find(value); read != tc_.lazy_reads.end()) return element(read->second, context);
  if (auto named = context.named.find({value, context.column_shift}); named != context.named.end())
    return named->second;
  if (const Accumulator* accumulator = tc_.accumulator(value))
    return context.accumulators.at({accumulator, context.column_shift});
  if (const Fragment* held = tc_.fragment(value)) {
    if (held->columns == 1 && !context.row_vector)
      return fmt::format("{}[{}]", held->name, tc_.layout.row_slot(context.index));
    return fmt::format("{}[{}]", held->name, tc_.layout.sliced_register(context.index, context.column_shift));
  }
  return op_element(*value->defining_op(), context);
}

TensorCoreKernel::ElementContext TensorCoreKernel::hoist_repeated_elements(const Value* value, ElementContext context) {
  // Each value by the column shift it is read at: a value read in two slices is two elements.
  using Read = std::pair<const Value*, int64_t>;
  std::map<Read, int> reads;
  // Where each read is valid: a concat's part only in its own columns (elsewhere its element,
  // at a shifted column, may lie outside its tile: a slot's bytes before its start, a load's
  // column -16). "" is everywhere; kMixed, under two different conditions (not hoisted).
  static const std::string kMixed = "\x01";
  std::map<Read, std::string> guards;
  std::vector<Read> order;  // operands before their users
  auto both = [](const std::string& a, const std::string& b) {
    return a.empty() ? b : b.empty() ? a : fmt::format("{} && {}", a, b);
  };
  auto visit = [&](auto&& self, const Value* v, int64_t shift, const std::string& guard) -> void {
    if (!v->type().is_tile()) return;
    if (auto read = tc_.lazy_reads.find(v); read != tc_.lazy_reads.end()) return self(self, read->second, shift, guard);
    if (tc_.accumulator(v) || tc_.fragment(v)) return;  // registers already
    const Read read{v, shift};
    const bool first = reads[read]++ == 0;
    if (first) {
      guards[read] = guard;
    } else {
      // Read everywhere on one path: valid everywhere. Under another condition: mixed.
      const std::string& known = guards[read];
      const std::string merged = known.empty() || guard.empty() ? "" : known == guard ? known : kMixed;
      if (merged == known) return;
      guards[read] = merged;  // and again through the operands, which change with it
    }
    const Operation& op = *v->defining_op();
    if (op.kind() != OpKind::load && op.kind() != OpKind::full && op.kind() != OpKind::zeros &&
        op.kind() != OpKind::iota && op.kind() != OpKind::stage_read &&
        !moves_positions(op))  // its operands are read at other positions: not hoisted
      for (size_t k = 0; k < op.num_operands(); ++k) {
        std::string inner = guards[read];
        if (op.kind() == OpKind::concat && column_is_pinned(shift)) {  // one column: one part reads it
          if (k != concat_part_at(op, pinned_column(shift))) continue;
        } else if (op.kind() == OpKind::concat && inner != kMixed) {
          // Part k: from its first column to the next part's, in the element's own columns.
          ElementContext at = context;
          at.column_shift = shift;
          if (k > 0) inner = both(inner, fmt::format("!({})", column_below(at, -operand_column_shift(op, k))));
          if (k + 1 < op.num_operands()) inner = both(inner, column_below(at, -operand_column_shift(op, k + 1)));
        }
        self(self, op.operand(k), operand_element_shift(op, k, shift), inner);
      }
    if (first) order.push_back(read);
  };
  visit(visit, value, context.column_shift, "");
  for (const Read& read : order) {
    const auto [v, shift] = read;
    const OpKind kind = v->defining_op()->kind();
    const std::string& guard = guards[read];
    if (reads[read] < 2 || guard == kMixed || kind == OpKind::full || kind == OpKind::zeros ||
        kind == OpKind::reshape || kind == OpKind::slice || kind == OpKind::concat || kind == OpKind::interleave)
      continue;
    std::string name = names_.unique(plan_.expression(v) + "_element");
    ElementContext at = context;
    at.column_shift = shift;
    if (guard.empty())
      writer_.line(fmt::format("const auto {} = {};", name, element(v, at)));
    else  // computed only in its part's columns
      writer_.line(fmt::format("const auto {} = ({}) ? {} : {}{{}};", name, guard, element(v, at),
                               element_type(v->type().element())));
    context.named[read] = name;
  }
  return context;
}

std::string TensorCoreKernel::column_below(const ElementContext& context, int64_t bound) {
  const int64_t column = bound - context.column_shift;  // in the element's own columns
  std::string test = context.index.empty() || !context.in_place() ? "" : tc_.layout.column_below(context.index, column);
  if (test.empty()) {
    position_used_ = true;
    test = fmt::format("{} < {}", context.column_base, column);
  }
  return test;
}

// One element of the tile `op` computes, from its operands' elements.
std::string TensorCoreKernel::op_element(const Operation& op, const ElementContext& context) {
  // A tile of one row broadcast along the rows (a <1, BN> iota, s[1:2] of a <2, BN> load) is its
  // row 0 at every row of the tile that reads it.
  const Type& type = op.result()->type();
  if (type.rank() == 2 && type.shape()[0] == 1 && context.row != "0") {
    ElementContext pinned = context;
    pinned.row = "0";
    return op_element(op, pinned);
  }
  if (op.kind() == OpKind::load) return load_element(op, context.row, context.column());
  if (op.kind() == OpKind::full) return plan_.expression(op.operand(0));
  if (op.kind() == OpKind::zeros) return zero_literal(op.result()->type().element());
  if (op.kind() == OpKind::iota) return iota_element(op, context.row, context.column());
  if (op.kind() == OpKind::stage_read)  // a computed B's input, which TMA copied
    return shared_element(tc_.read_stage(op.result()), plan_.expression(op.result()), context.row, context.column());
  if (moves_positions(op)) return moved_element(op, context);
  if (op.kind() == OpKind::reshape) return element(op.operand(0), context);  // <N> as <1, N>: column c is element c
  if (op.kind() == OpKind::slice) {  // x[:, a:b]: column c is x's column a + c
    ElementContext inner = context;
    inner.column_shift += slice_starts(op)[1];
    return element(op.operand(0), inner);
  }
  if (op.kind() == OpKind::concat) {  // along axis 1: column c is part k's c - o_k, where o_k <= c < o_k + w_k
    if (column_is_pinned(context.column_shift)) {  // one column (broadcast): the part holding it
      const size_t k = concat_part_at(op, pinned_column(context.column_shift));
      ElementContext inner = context;
      inner.column_shift += operand_column_shift(op, k);
      return element(op.operand(k), inner);
    }
    std::string out, close;
    for (size_t k = 0; k < op.num_operands(); ++k) {
      ElementContext inner = context;
      inner.column_shift += operand_column_shift(op, k);
      const std::string part = element(op.operand(k), inner);
      if (k + 1 == op.num_operands()) {
        out += part;
        break;
      }
      // Below the next part's first column.
      out += fmt::format("({} ? {} : ", column_below(context, -operand_column_shift(op, k + 1)), part);
      close += ")";
    }
    return out + close;
  }
  std::vector<std::string> operands;
  for (size_t k = 0; k < op.num_operands(); ++k) {
    ElementContext inner = context;
    inner.column_shift = operand_element_shift(op, k, context.column_shift);
    operands.push_back(element(op.operand(k), inner));
  }
  return body_.element_expression(op, operands);
}

namespace {

// `x * step + start` as C++, without the parts that change nothing.
std::string affine(const std::string& x, int64_t step, int64_t start) {
  const std::string scaled = step == 1 ? x : fmt::format("{} * {}", x, step);
  if (start == 0) return step == 1 ? x : fmt::format("({})", scaled);
  return fmt::format("({} + {})", scaled, start);
}

}  // namespace

// An op that reads its operands at other positions (moves_positions): each operand's element is
// computed at its own row and column, from nothing hoisted at the element's (hold_op allows only
// what the compute threads compute at any position under it).
//   interleave(p_0, ..., p_n-1): position i along the axis is part i % n's at i / n;
//   x[a:b:s, c:d:t]: row r is x's a + r·s, column j its c + j·t;
//   concat(p_0, ..., axis = 0): row r is part k's r - o_k, where o_k <= r < o_k + h_k.
std::string TensorCoreKernel::moved_element(const Operation& op, const ElementContext& context) {
  ElementContext inner = context;
  inner.index.clear();
  inner.named.clear();
  position_used_ = true;
  if (op.kind() == OpKind::slice) {
    const std::vector<int64_t> starts = slice_starts(op), steps = slice_steps(op);
    inner.row = affine(context.row, steps[0], starts[0]);
    if (column_is_pinned(context.column_shift)) {  // one column (broadcast): the one it reads
      inner.column_shift = kPinnedColumn + starts[1] + pinned_column(context.column_shift) * steps[1];
    } else {
      inner.column_base = affine(context.column(), steps[1], starts[1]);
      inner.column_shift = 0;
    }
    return element(op.operand(0), inner);
  }
  const int64_t n = static_cast<int64_t>(op.num_operands());
  if (op.kind() == OpKind::concat) {  // along axis 0
    std::string out, close;
    int64_t offset = 0;
    for (int64_t k = 0; k < n; ++k) {
      inner.row = offset == 0 ? context.row : fmt::format("({} - {})", context.row, offset);
      const std::string part = element(op.operand(static_cast<size_t>(k)), inner);
      offset += op.operand(static_cast<size_t>(k))->type().shape()[0];
      if (k + 1 == n) {
        out += part;
        break;
      }
      out += fmt::format("({} < {} ? {} : ", context.row, offset, part);
      close += ")";
    }
    return out + close;
  }
  std::string along;  // an interleave: the element's position along the axis
  if (op.int_attr("axis") == 0) {
    along = context.row;
    inner.row = fmt::format("({} / {})", along, n);
  } else if (column_is_pinned(context.column_shift)) {  // one column (broadcast): one part, one position
    const int64_t column = pinned_column(context.column_shift);
    inner.column_shift = kPinnedColumn + column / n;
    return element(op.operand(static_cast<size_t>(column % n)), inner);
  } else {
    along = context.column();
    inner.column_base = fmt::format("({} / {})", along, n);
    inner.column_shift = 0;
  }
  std::string out = element(op.operand(static_cast<size_t>(n - 1)), inner);
  for (int64_t k = n - 2; k >= 0; --k) {
    const std::string part = element(op.operand(static_cast<size_t>(k)), inner);
    out = fmt::format("({} % {} == {} ? {} : {})", along, n, k, part, out);
  }
  return out;
}

void TensorCoreKernel::emit_store(const Operation& op) {
  const StorePlan& plan = tc_.store_plans.at(&op);
  if (plan.folded) {
    emit_folded_store(op, plan);
    return;
  }
  if (plan.tma) {
    emit_tma_store(op, plan);
    return;
  }
  const Value* value = op.operands().back();
  const MatrixAccess access = matrix_access(op, 1);
  int64_t rows = value->type().shape()[0], columns = value->type().shape()[1];
  std::string row_base = access.row_origin(rows);
  std::string column_base = access.column_origin(columns);
  comment(op);
  CodeWriter::Block scope = writer_.block("{");
  // A masked store (the analysis made it direct): each element is written where the mask holds.
  store_mask_ = store_mask(op);
  struct Unmask {
    const Value*& mask;
    ~Unmask() { mask = nullptr; }
  } unmask{store_mask_};
  if (columns == 1) {
    // A column (one value per row: a log-sum-exp, a row maximum) from the registers of the
    // threads holding each row; one of them writes it.
    writer_.line(FragmentLayout::position_variables());
    declare_store_corner(access, row_base, column_base, tc_.layout.thread_row(rows), "0");
    writer_.line("#pragma unroll");
    CodeWriter::Block loop = writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", tc_.layout.count(1)));
    emit_store_position(tc_.layout.row_step("i", true), "0");
    emit_store_element(value, access, ElementContext{.row_vector = true}, tc_.layout.column_owner(rows));
    return;
  }
  emit_element_store(value, plan, access, row_base, column_base);
}

// Through shared memory and TMA: each compute warpgroup writes its part of the tile box by box
// (rows of 128 bytes, the 128-byte swizzle: 16-byte chunk c of box row r at chunk c ^ (r % 8))
// into its staging, and one of its threads stores the box. A staging box is written again only
// once the store reading it is done (bulk wait_group.read); TMA leaves out what lies outside
// the tensor.
void TensorCoreKernel::emit_tma_store(const Operation& op, const StorePlan& plan) {
  const Value* value = op.operands().back();
  int64_t rows = value->type().shape()[0], columns = value->type().shape()[1];
  const int64_t per_warpgroup = plan.warpgroup_columns;
  int64_t width = plan.chunk_columns, box_bytes = plan.box_rows * kPanelRowBytes;
  const MatrixAccess access = matrix_access(op, 1);
  std::string row_base = access.row_origin(rows);
  std::string column_base = access.column_origin(columns);
  std::string sync = fmt::format("tilec_named_barrier_sync({} + compute_warpgroup, 128);", tc_.private_barrier + 1);
  comment(op);
  CodeWriter::Block scope = writer_.block("{");
  emit_accumulators_ready(plan);
  writer_.line(FragmentLayout::position_variables());
  writer_.line("const bool storer = compute_thread % 128 == 0;  // issues this warpgroup's TMA stores");
  writer_.line(fmt::format("const uint32_t staging = shared_base + {} + static_cast<uint32_t>(compute_warpgroup) * {};",
                           tc_.store_staging_offset, kStoreStagingBytes));
  writer_.line("unsigned char* const staging_bytes = shared_aligned + (staging - shared_base);");
  writer_.line("#pragma unroll");
  {
    CodeWriter::Block chunks =
        writer_.block(fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", per_warpgroup / width));
    writer_.line(fmt::format("const uint32_t box = static_cast<uint32_t>(chunk % {}) * {};", plan.buffers, box_bytes));
    {
      CodeWriter::Block storer = writer_.block(fmt::format(
          "if (storer) {{  // the box is free once at most {} newer store(s) still read staging", plan.buffers - 1));
      // The first box waits for earlier TMA stores' writes where this one may write over them
      // (Analysis::plan_store_order), else only until they have read their staging.
      const bool waits = !plan.waits_because.empty();
      writer_.line(fmt::format("if (chunk == 0) {}; else tilec_bulk_wait_read<{}>();{}",
                               waits ? "tilec_bulk_wait_all()" : "tilec_bulk_wait_read<0>()", plan.buffers - 1,
                               waits ? "  // first, " + plan.waits_because : ""));
    }
    writer_.line(sync);
    std::string store_row = row_base, store_column = column_base;
    emit_staging_chunk(value, plan, store_row, store_column);
    writer_.line("tilec_fence_proxy_async();  // the box is read by TMA");
    writer_.line(sync);
    // `+=`: TMA adds the box to the tensor (cp.reduce.async.bulk), atomically per element.
    const bool adds = accumulates(op);
    needs_.tma_reduce_add |= adds;
    writer_.line(fmt::format("if (storer) {{ tilec_tma_{}_{}d(&{}, staging + box, {}); tilec_bulk_commit(); }}",
                             adds ? "reduce_add" : "store", access.tma_rank(), plan.map,
                             access.tma_coordinates(store_column, store_row)));
  }
  emit_accumulators_read(plan);
}

// The stored value's element at (row, column) into the staging box at (box_row, box_column).
void TensorCoreKernel::emit_staging_element(const Value* value, ScalarKind kind, const std::string& box_column,
                                            const ElementContext& context) {
  writer_.line(fmt::format("const int byte = ({}) * {};", box_column, byte_size(kind)));
  const ElementContext named = hoist_repeated_elements(value, context);
  writer_.line(fmt::format("*reinterpret_cast<{}*>(staging_bytes + box + {}) = {};", element_type(kind),
                           swizzled_offset("box_row", "byte", kPanelRowBytes), element(value, named)));
}

void TensorCoreKernel::declare_store_corner(const MatrixAccess& access, const std::string& row_base,
                                            const std::string& column_base, const std::string& thread_row,
                                            const std::string& thread_column) {
  writer_.line(fmt::format("const int thread_row = tilec_opaque({}), thread_column = tilec_opaque({});", thread_row,
                           thread_column));
  writer_.line(fmt::format("const int64_t origin0 = {} + thread_row, origin1 = {} + thread_column;", row_base,
                           column_base));
  writer_.line(fmt::format("auto* const corner = {} + (origin0 * {} + origin1);  // this thread's first element",
                           access.base, access.pitch));
}

void TensorCoreKernel::emit_store_position(const std::string& row_step, const std::string& column_step) {
  writer_.line(fmt::format("const int row_step = {}, column_step = {};", row_step, column_step));
  writer_.line("const int row = thread_row + row_step, column = thread_column + column_step;");
  writer_.line("(void)row, (void)column;");
}

void TensorCoreKernel::emit_store_element(const Value* value, const MatrixAccess& access,
                                          const ElementContext& context, const std::string& owner) {
  const ElementContext named = hoist_repeated_elements(value, context);
  std::string condition;  // a masked store's mask at this element
  if (store_mask_) condition = element(store_mask_, hoist_repeated_elements(store_mask_, named));
  emit_stored_expression(element(value, named), value->type().element(), access, owner, condition);
}

void TensorCoreKernel::emit_stored_expression(const std::string& stored, ScalarKind element, const MatrixAccess& access,
                                              const std::string& owner, const std::string& condition) {
  writer_.line("const int64_t index0 = origin0 + row_step, index1 = origin1 + column_step;");
  const std::string target = fmt::format("corner[row_step * {} + column_step]", access.pitch);
  writer_.line(fmt::format("if ({}{}{}{}{}index0 < {} && index1 < {}) {}", owner.empty() ? "" : owner + " && ",
                           condition.empty() ? "" : fmt::format("({}) && ", condition),
                           access.inside, access.row_may_be_negative ? "0 <= index0 && " : "",
                           access.column_may_be_negative ? "0 <= index1 && " : "", access.rows, access.columns,
                           access.combine != StoreCombine::none
                               ? atomic_combine_statement(access.combine, element, "&" + target, stored)
                               : fmt::format("{} = {};", target, stored)));
}

// A store of an axis-0 reduction of a held tile (StorePlan::folded), combined the store's own way
// (the analysis matched it to the reduction's). A column (a whole tile's second step): each
// thread combines the rows it holds, and the column's owner threads (one per row) combine their
// partials into the element. A tile of several columns: each thread combines each element it
// holds into its column's element.
void TensorCoreKernel::emit_folded_store(const Operation& op, const StorePlan& plan) {
  const Operation& reduction = *plan.folded;
  const Fragment& input = *tc_.fragment(reduction.operand(0));
  const MatrixAccess access = matrix_access(op, 1);
  comment(reduction);
  comment(op);
  CodeWriter::Block scope = writer_.block("{");
  writer_.line(FragmentLayout::position_variables());
  if (input.columns > 1) {
    declare_store_corner(access, access.row_origin(1), access.column_origin(input.columns), "0",
                         tc_.layout.thread_column(input.columns));
    writer_.line("#pragma unroll");
    CodeWriter::Block loop =
        writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", tc_.layout.count(input.columns)));
    emit_store_position("0", tc_.layout.column_step("i", input.columns));
    emit_stored_expression(input.name + "[i]", input.element, access, tc_.layout.owner(input.rows));
    return;
  }
  const auto [identity, combine] = reduction_step(reduction.kind(), input.element);
  writer_.line(fmt::format("{} folded = {};", element_type(input.element), identity));
  writer_.line("#pragma unroll");
  writer_.line(fmt::format("for (int i = 0; i < {}; ++i) folded = {};", tc_.layout.count(1),
                           fmt::format(fmt::runtime(combine), "folded", input.name + "[i]")));
  declare_store_corner(access, access.row_origin(1), access.column_origin(1), "0", "0");
  emit_store_position("0", "0");
  emit_stored_expression("folded", input.element, access, tc_.layout.column_owner(input.rows));
}

}  // namespace tilec::cuda::tensor_core
