// runtime/interpreter/tile_arithmetic.cpp — elementwise ops, casts, reductions and mma on
// TileValues, exactly as docs/ir.md defines them.
//
// Floats: operands are exact values of their element type held in f32; every op computes in
// f32 (the C++ float operations, compiled with -ffp-contract=off so a·b + c is never fused)
// and rounds the result to the element type with round-to-nearest-even. max/min ignore a NaN
// operand (IEEE maxNum, like CUDA's fmaxf) and order -0 below +0, so results never depend on
// operand order. Integers: 64-bit two's complement arithmetic that wraps, then wraps to the
// element width; division by zero has a defined result (below), INT64_MIN / -1 wraps.
#include "runtime/interpreter/tile_arithmetic.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ir/ir.h"
#include "runtime/interpreter/element_semantics.h"
#include "runtime/interpreter/float_formats.h"

namespace tilec::runtime {

int64_t TileValue::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

TileValue TileValue::zeros(ScalarKind element, std::vector<int64_t> shape) {
  TileValue value;
  value.element = element;
  value.shape = std::move(shape);
  if (value.holds_floats()) value.floats.assign(static_cast<size_t>(value.count()), 0.0f);
  else value.ints.assign(static_cast<size_t>(value.count()), 0);
  return value;
}

TileValue TileValue::scalar_int(ScalarKind element, int64_t v) {
  TileValue value = zeros(element, {});
  if (value.holds_floats()) value.floats[0] = integer_to_format(element, v);
  else value.ints[0] = wrap_integer(element, v);
  return value;
}

TileValue TileValue::scalar_float(ScalarKind element, float v) {
  TileValue value = zeros(element, {});
  if (value.holds_floats()) value.floats[0] = round_to_format(element, v);
  else value.ints[0] = float_to_integer(element, v);
  return value;
}

double TileValue::as_double(int64_t i) const {
  return holds_floats() ? floats[static_cast<size_t>(i)] : static_cast<double>(ints[static_cast<size_t>(i)]);
}

bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>& out) {
  if (a.empty()) return out = b, true;
  if (b.empty()) return out = a, true;
  if (a.size() != b.size()) return false;
  out.resize(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return false;
    out[i] = std::max(a[i], b[i]);
  }
  return true;
}

namespace {

// Maps a linear index of the broadcast result to the linear index of one operand.
class SourceIndex {
 public:
  SourceIndex(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& in_shape) {
    if (in_shape == out_shape) return;
    if (in_shape.empty()) {
      scalar_ = true;
      return;
    }
    // Odometer over the result, tracking the operand offset with zero strides on extent-1 dims.
    size_t rank = out_shape.size();
    std::vector<int64_t> stride(rank, 0), position(rank, 0);
    int64_t step = 1;
    for (size_t i = rank; i-- > 0;) {
      stride[i] = in_shape[i] == 1 ? 0 : step;
      step *= in_shape[i];
    }
    int64_t count = 1;
    for (int64_t d : out_shape) count *= d;
    map_.resize(static_cast<size_t>(count));
    int64_t offset = 0;
    for (int64_t i = 0; i < count; ++i) {
      map_[static_cast<size_t>(i)] = offset;
      for (size_t d = rank; d-- > 0;) {
        offset += stride[d];
        if (++position[d] < out_shape[d]) break;
        offset -= stride[d] * position[d];
        position[d] = 0;
      }
    }
    mapped_ = true;
  }
  size_t operator()(int64_t i) const {
    if (scalar_) return 0;
    return static_cast<size_t>(mapped_ ? map_[static_cast<size_t>(i)] : i);
  }

 private:
  bool scalar_ = false, mapped_ = false;
  std::vector<int64_t> map_;
};

template <typename T>
bool compare(const std::string& predicate, T a, T b) {
  if (predicate == "lt") return a < b;
  if (predicate == "le") return a <= b;
  if (predicate == "gt") return a > b;
  if (predicate == "ge") return a >= b;
  if (predicate == "eq") return a == b;
  return a != b;  // "ne"; the predicate was validated by the caller
}

int64_t wrapping(uint64_t value) { return static_cast<int64_t>(value); }

// "" when `element` suits the op's operand-kind trait (kFloatsOnly, ...), else why not.
std::string check_operand_kind(OpKind kind, ScalarKind element) {
  const OpInfo& info = op_info(kind);
  if (info.takes_operands(is_float(element))) return {};
  return fmt::format("'{}' takes {} operands, not {}", info.name, info.operand_kinds(), to_string(element));
}

// One binary op on two floats in f32, and on two integers in 64 bits (element_semantics.h).
float float_binary(OpKind kind, float a, float b) { return element_semantics(kind).f32_binary(a, b); }
int64_t integer_binary(OpKind kind, int64_t a, int64_t b) { return element_semantics(kind).integer_binary(a, b); }

// A tile seen along `axis`: `outer` blocks of `extent` x `inner` elements; element k of line
// (o, in) is at (o·extent + k)·inner + in.
struct AxisLines {
  int64_t outer = 1, extent = 0, inner = 1;
};

// The lines of `shape` along `axis`, or why `axis` names none.
std::string lines_along(const std::vector<int64_t>& shape, int64_t axis, AxisLines& lines) {
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return fmt::format("axis {} is outside the rank-{} tile", axis, shape.size());
  lines = AxisLines{};
  lines.extent = shape[static_cast<size_t>(axis)];
  for (int64_t d = 0; d < axis; ++d) lines.outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) lines.inner *= shape[d];
  return {};
}

}  // namespace

std::string evaluate_binary(OpKind kind, const std::string& predicate, const TileValue& a,
                            const TileValue& b, TileValue& out) {
  // randint's seed and offset are integers of any types (their values, sign- or zero-extended).
  if (a.element != b.element && (kind != OpKind::randint || a.holds_floats() || b.holds_floats()))
    return fmt::format("operands have different element types ({} and {})", to_string(a.element),
                       to_string(b.element));
  std::vector<int64_t> shape;
  if (!broadcast_shapes(a.shape, b.shape, shape)) return "operand shapes do not broadcast";
  bool is_compare = kind == OpKind::cmp;
  if (is_compare && predicate != "lt" && predicate != "le" && predicate != "gt" &&
      predicate != "ge" && predicate != "eq" && predicate != "ne")
    return fmt::format("unknown predicate '{}'", predicate);
  bool floats = a.holds_floats();
  if (std::string problem = check_operand_kind(kind, a.element); !problem.empty()) return problem;
  // A comparison gives i1 masks, randint u32 words.
  out = TileValue::zeros(is_compare ? ScalarKind::i1 : kind == OpKind::randint ? ScalarKind::u32 : a.element, shape);
  SourceIndex from_a(shape, a.shape), from_b(shape, b.shape);
  const int64_t count = out.count();
  for (int64_t i = 0; i < count; ++i) {
    if (floats) {
      float x = a.floats[from_a(i)], y = b.floats[from_b(i)];
      if (is_compare) out.ints[static_cast<size_t>(i)] = compare(predicate, x, y);
      else out.floats[static_cast<size_t>(i)] = round_to_format(a.element, float_binary(kind, x, y));
    } else {
      int64_t x = a.ints[from_a(i)], y = b.ints[from_b(i)];
      if (is_compare) {
        out.ints[static_cast<size_t>(i)] = compare(predicate, x, y);
        continue;
      }
      out.ints[static_cast<size_t>(i)] = wrap_integer(out.element, integer_binary(kind, x, y));
    }
  }
  return {};
}

std::string evaluate_unary(OpKind kind, const TileValue& a, TileValue& out) {
  bool floats = a.holds_floats();
  if (std::string problem = check_operand_kind(kind, a.element); !problem.empty()) return problem;
  const ElementSemantics& semantics = element_semantics(kind);
  out = TileValue::zeros(a.element, a.shape);
  const int64_t count = a.count();
  for (int64_t i = 0; i < count; ++i) {
    size_t at = static_cast<size_t>(i);
    if (floats) out.floats[at] = round_to_format(a.element, semantics.f32_unary(a.floats[at]));
    else out.ints[at] = wrap_integer(a.element, semantics.integer_unary(a.ints[at]));
  }
  return {};
}

std::string evaluate_cast(const TileValue& a, ScalarKind target, TileValue& out) {
  out = TileValue::zeros(target, a.shape);
  const int64_t count = a.count();
  for (int64_t i = 0; i < count; ++i) {
    size_t at = static_cast<size_t>(i);
    if (a.holds_floats() && out.holds_floats()) out.floats[at] = round_to_format(target, a.floats[at]);
    else if (a.holds_floats()) out.ints[at] = float_to_integer(target, a.floats[at]);
    else if (out.holds_floats()) out.floats[at] = integer_to_format(target, a.ints[at]);
    else out.ints[at] = wrap_integer(target, a.ints[at]);
  }
  return {};
}

std::string evaluate_bitcast(const TileValue& a, ScalarKind target, TileValue& out) {
  if (bitcast_width(a.element) == 0 || bitcast_width(a.element) != bitcast_width(target))
    return fmt::format("bitcast from {} to {}: the element types must be of one width", to_string(a.element),
                       to_string(target));
  const uint64_t mask = byte_size(target) == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * byte_size(target))) - 1;
  out = TileValue::zeros(target, a.shape);
  const int64_t count = a.count();
  for (int64_t i = 0; i < count; ++i) {
    size_t at = static_cast<size_t>(i);
    uint64_t bits = a.holds_floats() ? format_bits(a.element, a.floats[at]) : static_cast<uint64_t>(a.ints[at]);
    bits &= mask;
    if (out.holds_floats()) out.floats[at] = decode_float(target, static_cast<uint32_t>(bits));
    else out.ints[at] = wrap_integer(target, static_cast<int64_t>(bits));
  }
  return {};
}

std::string evaluate_fma(const TileValue& a, const TileValue& b, const TileValue& c, TileValue& out) {
  if (!a.holds_floats() || a.element != b.element || a.element != c.element)
    return "fma takes three float operands of one element type";
  std::vector<int64_t> ab, shape;
  if (!broadcast_shapes(a.shape, b.shape, ab) || !broadcast_shapes(ab, c.shape, shape))
    return "operand shapes do not broadcast";
  out = TileValue::zeros(a.element, shape);
  SourceIndex from_a(shape, a.shape), from_b(shape, b.shape), from_c(shape, c.shape);
  const auto fma = element_semantics(OpKind::fma).f32_ternary;
  for (int64_t i = 0; i < out.count(); ++i)
    out.floats[static_cast<size_t>(i)] =
        round_to_format(a.element, fma(a.floats[from_a(i)], b.floats[from_b(i)], c.floats[from_c(i)]));
  return {};
}

std::string evaluate_select(const TileValue& condition, const TileValue& a, const TileValue& b,
                            TileValue& out) {
  if (condition.holds_floats()) return "the selector must be i1";
  if (a.element != b.element) return "the selected values have different element types";
  std::vector<int64_t> values_shape, shape;
  if (!broadcast_shapes(a.shape, b.shape, values_shape) ||
      !broadcast_shapes(condition.shape, values_shape, shape))
    return "operand shapes do not broadcast";
  out = TileValue::zeros(a.element, shape);
  SourceIndex from_condition(shape, condition.shape), from_a(shape, a.shape), from_b(shape, b.shape);
  for (int64_t i = 0; i < out.count(); ++i) {
    bool pick_a = condition.ints[from_condition(i)] != 0;
    size_t at = static_cast<size_t>(i);
    if (out.holds_floats()) out.floats[at] = pick_a ? a.floats[from_a(i)] : b.floats[from_b(i)];
    else out.ints[at] = pick_a ? a.ints[from_a(i)] : b.ints[from_b(i)];
  }
  return {};
}

std::string broadcast_mask(const TileValue& mask, const std::vector<int64_t>& shape, std::vector<char>& out) {
  std::vector<int64_t> broadcast;
  if (mask.holds_floats() || mask.element != ScalarKind::i1) return "the store's mask must be i1";
  if (!broadcast_shapes(mask.shape, shape, broadcast) || broadcast != shape)
    return fmt::format("the store's mask of shape [{}] does not broadcast to the tile's [{}]", fmt::join(mask.shape, ", "),
                       fmt::join(shape, ", "));
  SourceIndex from_mask(shape, mask.shape);
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  out.assign(static_cast<size_t>(count), 0);
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = mask.ints[from_mask(i)] != 0;
  return {};
}

namespace {

// Row-major strides of `shape`.
std::vector<int64_t> strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  return stride;
}

void copy_element(const TileValue& from, int64_t i, TileValue& to, int64_t j) {
  if (from.holds_floats()) to.floats[static_cast<size_t>(j)] = from.floats[static_cast<size_t>(i)];
  else to.ints[static_cast<size_t>(j)] = from.ints[static_cast<size_t>(i)];
}

}  // namespace

std::string evaluate_slice(const TileValue& a, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                           const std::vector<int64_t>& shape, TileValue& out) {
  const size_t rank = a.shape.size();
  if (shape.size() != rank || starts.size() != rank || steps.size() != rank)
    return fmt::format("slices a rank-{} tile with {} starts and {} steps into a rank-{} one", rank, starts.size(),
                       steps.size(), shape.size());
  for (size_t d = 0; d < rank; ++d)
    if (starts[d] < 0 || steps[d] < 1 || shape[d] < 1 || starts[d] + (shape[d] - 1) * steps[d] >= a.shape[d])
      return fmt::format("the slice along dimension {} leaves the tile (extent {})", d, a.shape[d]);
  out = TileValue::zeros(a.element, shape);
  const std::vector<int64_t> from = strides(a.shape), to = strides(shape);
  for (int64_t j = 0; j < out.count(); ++j) {
    int64_t i = 0;
    for (size_t d = 0; d < rank; ++d) i += (starts[d] + j / to[d] % shape[d] * steps[d]) * from[d];
    copy_element(a, i, out, j);
  }
  return {};
}

std::string evaluate_concat(const std::vector<const TileValue*>& parts, int64_t axis, TileValue& out) {
  if (parts.empty()) return "concatenates no tiles";
  const TileValue& first = *parts.front();
  const size_t rank = first.shape.size();
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return "needs an 'axis' within the tiles' rank";
  const size_t along = static_cast<size_t>(axis);
  std::vector<int64_t> shape = first.shape;
  shape[along] = 0;
  for (const TileValue* part : parts) {
    if (part->element != first.element || part->shape.size() != rank) return "concatenates tiles of one type and rank";
    for (size_t d = 0; d < rank; ++d)
      if (d != along && part->shape[d] != first.shape[d]) return "concatenated tiles differ off the axis";
    shape[along] += part->shape[along];
  }
  out = TileValue::zeros(first.element, shape);
  const std::vector<int64_t> to = strides(shape);
  int64_t offset = 0;  // where the part starts along the axis
  for (const TileValue* part : parts) {
    const std::vector<int64_t> from = strides(part->shape);
    for (int64_t i = 0; i < part->count(); ++i) {
      int64_t j = 0;
      for (size_t d = 0; d < rank; ++d) j += (i / from[d] % part->shape[d] + (d == along ? offset : 0)) * to[d];
      copy_element(*part, i, out, j);
    }
    offset += part->shape[along];
  }
  return {};
}

std::string evaluate_interleave(const std::vector<const TileValue*>& parts, int64_t axis, TileValue& out) {
  if (parts.empty()) return "interleaves no tiles";
  const TileValue& first = *parts.front();
  const size_t rank = first.shape.size();
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return "needs an 'axis' within the tiles' rank";
  for (const TileValue* part : parts)
    if (part->element != first.element || part->shape != first.shape) return "interleaves tiles of one type";
  const size_t along = static_cast<size_t>(axis);
  const int64_t n = static_cast<int64_t>(parts.size());
  std::vector<int64_t> shape = first.shape;
  shape[along] *= n;
  out = TileValue::zeros(first.element, shape);
  const std::vector<int64_t> from = strides(first.shape), to = strides(shape);
  for (int64_t k = 0; k < n; ++k)  // part k's element i along the axis is the result's n * i + k
    for (int64_t i = 0; i < first.count(); ++i) {
      int64_t j = 0;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t at = i / from[d] % first.shape[d];
        j += (d == along ? at * n + k : at) * to[d];
      }
      copy_element(*parts[static_cast<size_t>(k)], i, out, j);
    }
  return {};
}

std::string evaluate_transpose(const TileValue& a, const std::vector<int64_t>& dims, TileValue& out) {
  const size_t rank = a.shape.size();
  if (!is_dimension_permutation(dims, rank))
    return fmt::format("the dimensions to permute are not a permutation of the rank-{} tile's", rank);
  const std::vector<int64_t> shape = permuted_shape(a.shape, dims);
  out = TileValue::zeros(a.element, shape);
  // The operand's strides, in the result's dimension order: result element (i0, i1, ...) reads
  // operand element i_k along operand dimension dims[k].
  const std::vector<int64_t> stride = strides(a.shape);
  std::vector<int64_t> from_stride(rank);
  for (size_t k = 0; k < rank; ++k) from_stride[k] = stride[static_cast<size_t>(dims[k])];
  const int64_t count = out.count();
  for (int64_t i = 0; i < count; ++i) {
    int64_t from = 0;
    for (size_t k = rank, rest = static_cast<size_t>(i); k-- > 0;) {
      const size_t extent = static_cast<size_t>(shape[k]);
      from += static_cast<int64_t>(rest % extent) * from_stride[k];
      rest /= extent;
    }
    copy_element(a, from, out, i);
  }
  return {};
}

std::string evaluate_scan(OpKind kind, int64_t axis, const TileValue& a, TileValue& out) {
  const OpKind combine = combining_op(kind);
  AxisLines lines;
  if (std::string problem = lines_along(a.shape, axis, lines); !problem.empty()) return problem;
  const int64_t outer = lines.outer, extent = lines.extent, inner = lines.inner;
  out = TileValue::zeros(a.element, a.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * extent + k) * inner + in); };
      float total = 0.0f;
      int64_t running = 0;
      for (int64_t k = 0; k < extent; ++k) {
        if (a.holds_floats()) {
          total = k == 0 ? a.floats[at(k)] : float_binary(combine, total, a.floats[at(k)]);
          out.floats[at(k)] = round_to_format(a.element, total);
        } else {
          running = k == 0 ? a.ints[at(k)] : integer_binary(combine, running, a.ints[at(k)]);
          out.ints[at(k)] = wrap_integer(a.element, running);
        }
      }
    }
  return {};
}

std::string evaluate_sort(int64_t axis, bool descending, const TileValue& a, TileValue& out) {
  AxisLines lines;
  if (std::string problem = lines_along(a.shape, axis, lines); !problem.empty()) return problem;
  const int64_t extent = lines.extent, inner = lines.inner;
  out = a;
  // A strict weak order: numbers by value with -0.0 first, then every NaN (equivalent).
  auto float_before = [](float x, float y) {
    if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
    return x < y || (x == y && std::signbit(x) && !std::signbit(y));
  };
  auto int_before = [](int64_t x, int64_t y) { return x < y; };
  for (int64_t o = 0; o < lines.outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * extent + k) * inner + in); };
      // Gathers the line of `values`, sorts it under `before` (reversed when descending), puts it back.
      auto sort_line = [&](auto& values, auto before) {
        std::vector<std::decay_t<decltype(values[0])>> line(static_cast<size_t>(extent));
        for (int64_t k = 0; k < extent; ++k) line[static_cast<size_t>(k)] = values[at(k)];
        std::stable_sort(line.begin(), line.end(),
                         [&](auto x, auto y) { return descending ? before(y, x) : before(x, y); });
        for (int64_t k = 0; k < extent; ++k) values[at(k)] = line[static_cast<size_t>(k)];
      };
      if (a.holds_floats()) sort_line(out.floats, float_before);
      else sort_line(out.ints, int_before);
    }
  return {};
}

std::string evaluate_reduce(OpKind kind, int64_t axis, const TileValue& a, TileValue& out) {
  AxisLines lines;
  if (std::string problem = lines_along(a.shape, axis, lines); !problem.empty()) return problem;
  const int64_t outer = lines.outer, extent = lines.extent, inner = lines.inner;
  std::vector<int64_t> shape = a.shape;
  shape[static_cast<size_t>(axis)] = 1;
  out = TileValue::zeros(a.element, shape);
  const OpKind combine = combining_op(kind);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      size_t target = static_cast<size_t>(o * inner + in);
      auto source = [&](int64_t k) { return static_cast<size_t>((o * extent + k) * inner + in); };
      if (extent == 0) continue;  // an empty reduction gives zero
      if (a.holds_floats()) {
        float total = a.floats[source(0)];
        for (int64_t k = 1; k < extent; ++k) total = float_binary(combine, total, a.floats[source(k)]);
        out.floats[target] = round_to_format(a.element, total);
      } else {
        int64_t total = a.ints[source(0)];
        for (int64_t k = 1; k < extent; ++k) total = integer_binary(combine, total, a.ints[source(k)]);
        out.ints[target] = wrap_integer(a.element, total);
      }
    }
  }
  return {};
}

std::string evaluate_mma(const TileValue& a, const TileValue& b, const TileValue& acc,
                         TileValue& out) {
  if (a.shape.size() != 2 || b.shape.size() != 2 || acc.shape.size() != 2 ||
      a.shape[1] != b.shape[0] || acc.shape[0] != a.shape[0] || acc.shape[1] != b.shape[1])
    return "shapes do not form a matrix product";
  if (!mma_operands_combine(a.element, b.element) || a.holds_floats() != acc.holds_floats())
    return "operand element types do not combine";
  const int64_t rows = a.shape[0], depth = a.shape[1], columns = b.shape[1];
  // f32 operands are read as the tensor cores read them (tf32): docs/language.md, `mma`.
  std::vector<float> a_tf32, b_tf32;
  const float* a_values = a.floats.data();
  const float* b_values = b.floats.data();
  if (a.element == ScalarKind::f32) {
    a_tf32.assign(a.floats.begin(), a.floats.end());
    b_tf32.assign(b.floats.begin(), b.floats.end());
    for (float& value : a_tf32) value = truncate_to_tf32(value);
    for (float& value : b_tf32) value = truncate_to_tf32(value);
    a_values = a_tf32.data();
    b_values = b_tf32.data();
  }
  out = acc;
  // Loop order m, k, n keeps each out[m, n] summing in increasing k while the inner loop
  // streams rows of b (and vectorizes: separate multiply and add, no fusion).
  if (acc.holds_floats()) {
    std::vector<float> row(static_cast<size_t>(columns));
    for (int64_t m = 0; m < rows; ++m) {
      float* sum = row.data();
      const float* initial = acc.floats.data() + m * columns;
      for (int64_t n = 0; n < columns; ++n) sum[n] = initial[n];
      for (int64_t k = 0; k < depth; ++k) {
        const float left = a_values[m * depth + k];
        const float* right = b_values + k * columns;
        for (int64_t n = 0; n < columns; ++n) {
          float product = left * right[n];
          sum[n] = sum[n] + product;
        }
      }
      float* target = out.floats.data() + m * columns;
      for (int64_t n = 0; n < columns; ++n) target[n] = round_to_format(acc.element, sum[n]);
    }
  } else {
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t k = 0; k < depth; ++k) {
        uint64_t left = static_cast<uint64_t>(a.ints[static_cast<size_t>(m * depth + k)]);
        for (int64_t n = 0; n < columns; ++n) {
          size_t target = static_cast<size_t>(m * columns + n);
          out.ints[target] = wrapping(static_cast<uint64_t>(out.ints[target]) +
                                      left * static_cast<uint64_t>(b.ints[static_cast<size_t>(k * columns + n)]));
        }
      }
    for (int64_t& value : out.ints) value = wrap_integer(acc.element, value);
  }
  return {};
}

}  // namespace tilec::runtime
