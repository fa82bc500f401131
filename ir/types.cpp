// ir/types.cpp — type constructors and their text form.
#include "ir/types.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace tilec {

namespace {
constexpr std::array<std::string_view, 14> kScalarNames = {
    "i1", "i32", "i64", "index", "f16", "bf16", "f32", "f8e4m3", "f8e5m2", "i8", "i16", "u8", "u16", "u32"};
constexpr std::array<std::string_view, 3> kSpaceNames = {"reg", "smem", "tmem"};
}  // namespace

std::string_view to_string(ScalarKind kind) { return kScalarNames[static_cast<size_t>(kind)]; }

std::optional<ScalarKind> parse_scalar_kind(std::string_view text) {
  for (size_t i = 0; i < kScalarNames.size(); ++i)
    if (kScalarNames[i] == text) return static_cast<ScalarKind>(i);
  return std::nullopt;
}

bool is_float(ScalarKind kind) {
  return kind == ScalarKind::f16 || kind == ScalarKind::bf16 || kind == ScalarKind::f32 ||
         kind == ScalarKind::f8e4m3 || kind == ScalarKind::f8e5m2;
}
bool is_integer(ScalarKind kind) { return !is_float(kind); }

std::optional<IntegerRange> integer_range(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::i1: return IntegerRange{0, 1};
    case ScalarKind::i8: return IntegerRange{-128, 127};
    case ScalarKind::i16: return IntegerRange{-32768, 32767};
    case ScalarKind::i32: return IntegerRange{-2147483648LL, 2147483647LL};
    case ScalarKind::u8: return IntegerRange{0, 255};
    case ScalarKind::u16: return IntegerRange{0, 65535};
    case ScalarKind::u32: return IntegerRange{0, 4294967295LL};
    default: return std::nullopt;
  }
}

std::string with_article(ScalarKind kind) {
  const std::string_view name = to_string(kind);
  // i.. ("eye") and f.. ("ef") take "an"; bf16 and u.. ("you") take "a".
  return std::string(name.front() == 'i' || name.front() == 'f' ? "an " : "a ") + std::string(name);
}

bool mma_operands_combine(ScalarKind a, ScalarKind b) {
  auto eight_bit_float = [](ScalarKind kind) { return kind == ScalarKind::f8e4m3 || kind == ScalarKind::f8e5m2; };
  auto eight_bit_integer = [](ScalarKind kind) { return kind == ScalarKind::i8 || kind == ScalarKind::u8; };
  return a == b || (eight_bit_float(a) && eight_bit_float(b)) || (eight_bit_integer(a) && eight_bit_integer(b));
}

std::optional<ScalarKind> mma_accumulator(ScalarKind operand) {
  switch (operand) {
    case ScalarKind::bf16: case ScalarKind::f16: case ScalarKind::f8e4m3: case ScalarKind::f8e5m2: case ScalarKind::f32:
      return ScalarKind::f32;
    case ScalarKind::i8: case ScalarKind::u8: return ScalarKind::i32;
    default: return std::nullopt;
  }
}

int bitcast_width(ScalarKind kind) {
  return kind == ScalarKind::i1 || kind == ScalarKind::index ? 0 : 8 * byte_size(kind);
}

int byte_size(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::i1: return 1;
    case ScalarKind::i8: return 1;
    case ScalarKind::i16: return 2;
    case ScalarKind::u8: return 1;
    case ScalarKind::u16: return 2;
    case ScalarKind::u32: return 4;
    case ScalarKind::i32: return 4;
    case ScalarKind::i64: return 8;
    case ScalarKind::index: return 8;
    case ScalarKind::f16: return 2;
    case ScalarKind::bf16: return 2;
    case ScalarKind::f32: return 4;
    case ScalarKind::f8e4m3: return 1;
    case ScalarKind::f8e5m2: return 1;
  }
  return 0;
}

std::string_view to_string(MemorySpace space) { return kSpaceNames[static_cast<size_t>(space)]; }

std::optional<MemorySpace> parse_memory_space(std::string_view text) {
  for (size_t i = 0; i < kSpaceNames.size(); ++i)
    if (kSpaceNames[i] == text) return static_cast<MemorySpace>(i);
  return std::nullopt;
}

Type Type::scalar(ScalarKind element) {
  Type t;
  t.kind_ = Kind::scalar;
  t.element_ = element;
  return t;
}
Type Type::tensor(std::vector<Dim> dims, ScalarKind element) {
  Type t;
  t.kind_ = Kind::tensor;
  t.element_ = element;
  t.dims_ = std::move(dims);
  return t;
}
Type Type::tile(std::vector<int64_t> shape, ScalarKind element, MemorySpace space) {
  Type t;
  t.kind_ = Kind::tile;
  t.element_ = element;
  t.shape_ = std::move(shape);
  t.space_ = space;
  return t;
}
Type Type::token() {
  Type t;
  t.kind_ = Kind::token;
  return t;
}
Type Type::mutex() {
  Type t;
  t.kind_ = Kind::mutex;
  return t;
}
Type Type::mbarrier() {
  Type t;
  t.kind_ = Kind::mbarrier;
  return t;
}
Type Type::pipe(const Type& payload, int64_t depth) {
  Type t = payload;
  t.kind_ = Kind::pipe;
  t.depth_ = depth;
  return t;
}

int64_t Type::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

Type Type::with_element(ScalarKind element) const {
  Type t = *this;
  t.element_ = element;
  return t;
}
Type Type::with_space(MemorySpace space) const {
  Type t = *this;
  t.space_ = space;
  return t;
}
Type Type::with_shape(std::vector<int64_t> shape) const {
  Type t = *this;
  t.shape_ = std::move(shape);
  return t;
}
Type Type::payload() const {
  Type t = *this;
  t.kind_ = Kind::tile;
  t.depth_ = 0;
  return t;
}

std::string Type::to_source_string() const {
  if (kind_ != Kind::tile) return to_string();
  std::string s = "tile<";
  for (int64_t d : shape_) s += std::to_string(d) + ", ";
  return s + std::string(tilec::to_string(element_)) + ">";
}

std::string Type::to_string() const {
  switch (kind_) {
    case Kind::none: return "none";
    case Kind::scalar: return std::string(tilec::to_string(element_));
    case Kind::tensor: {
      std::string s = "tensor<";
      for (const Dim& d : dims_) {
        if (d.is_static()) s += std::to_string(d.extent);
        else if (!d.symbol.empty()) s += d.symbol;
        else s += "?";
        s += ", ";
      }
      return s + std::string(tilec::to_string(element_)) + ">";
    }
    case Kind::tile:
    case Kind::pipe: {
      std::string s = "tile<";
      for (int64_t d : shape_) s += std::to_string(d) + "x";
      s += std::string(tilec::to_string(element_)) + ", " +
           std::string(tilec::to_string(space_)) + ">";
      if (kind_ == Kind::pipe) return fmt::format("pipe<{}, {}>", s, depth_);
      return s;
    }
    case Kind::token: return "token";
    case Kind::mutex: return "mutex";
    case Kind::mbarrier: return "mbarrier";
  }
  return "none";
}

}  // namespace tilec

namespace tilec {
std::vector<int64_t> shape_in_tensor(const Type& tile, size_t tensor_rank) {
  std::vector<int64_t> shape(tensor_rank - std::min(tensor_rank, tile.rank()), 1);
  shape.insert(shape.end(), tile.shape().begin(), tile.shape().end());
  return shape;
}

Type broadcast_type(const Type& a, const Type& b) {
  bool a_ok = a.is_scalar() || a.is_tile();
  bool b_ok = b.is_scalar() || b.is_tile();
  if (!a_ok || !b_ok || a.element() != b.element()) return {};
  if (a.is_scalar() && b.is_scalar()) return a;
  if (a.is_scalar()) return b.with_space(MemorySpace::reg);
  if (b.is_scalar()) return a.with_space(MemorySpace::reg);
  if (a.rank() != b.rank()) return {};
  std::vector<int64_t> shape(a.rank());
  for (size_t i = 0; i < a.rank(); ++i) {
    int64_t x = a.shape()[i], y = b.shape()[i];
    if (x != y && x != 1 && y != 1) return {};
    shape[i] = std::max(x, y);
  }
  return Type::tile(std::move(shape), a.element(), MemorySpace::reg);
}
double largest_finite_number(ScalarKind element) {
  return element == ScalarKind::f16      ? 65504.0
         : element == ScalarKind::f8e4m3 ? 448.0
         : element == ScalarKind::f8e5m2 ? 57344.0
         : element == ScalarKind::bf16   ? 3.3895313892515355e38
                                         : 3.4028234663852886e38;
}

double round_to_element(ScalarKind element, double value, bool& overflows) {
  overflows = std::isinf(value);
  if (!std::isfinite(value) || value == 0.0) return value;
  const int mantissa_bits = element == ScalarKind::f16 ? 10 : element == ScalarKind::bf16 ? 7
                            : element == ScalarKind::f8e5m2 ? 2 : element == ScalarKind::f8e4m3 ? 3 : 23;
  const int minimum_exponent = element == ScalarKind::f16 || element == ScalarKind::f8e5m2 ? -14
                               : element == ScalarKind::f8e4m3                           ? -6
                                                                                         : -126;
  int exponent = 0;
  std::frexp(std::fabs(value), &exponent);  // |value| = m · 2^exponent, m in [0.5, 1)
  const int quantum = std::max(exponent - 1, minimum_exponent) - mantissa_bits;
  double magnitude = std::ldexp(std::nearbyint(std::ldexp(std::fabs(value), -quantum)), quantum);  // ties to even
  const double largest = largest_finite_number(element);
  if (magnitude > largest) {
    overflows = true;
    const bool saturates = element == ScalarKind::f8e4m3 || element == ScalarKind::f8e5m2;
    magnitude = saturates ? largest : std::numeric_limits<double>::infinity();
  }
  return std::copysign(magnitude, value);
}

}  // namespace tilec
