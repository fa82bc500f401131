// ir/types.h — the IR's types.
//
//   scalars   i1 i8 i16 i32 i64 u8 u16 u32 index f16 bf16 f32 f8e4m3 f8e5m2
//   tensor    tensor<M, K, bf16>        global memory; each dim a symbol, a number or `?`
//   tile      tile<128x64xbf16, smem>   a tile with a static shape in smem, tmem or registers
//   token     the result of an async op
//   mutex, mbarrier, pipe<tile<...>, DEPTH>   after materialization
// Types are small values compared structurally; `to_string` gives the text form that
// ir/parser.cpp reads back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

enum class ScalarKind : uint8_t { i1, i32, i64, index, f16, bf16, f32, f8e4m3, f8e5m2, i8, i16, u8, u16, u32 };

std::string_view to_string(ScalarKind kind);
// The type's name after "a" or "an", as it is read aloud ("an i32", "an f32", "a bf16", "a u8").
std::string with_article(ScalarKind kind);
std::optional<ScalarKind> parse_scalar_kind(std::string_view text);
bool is_float(ScalarKind kind);
bool is_integer(ScalarKind kind);  // integers and index
// Bytes one element occupies in memory (f8 → 1, bf16 → 2, i1 → 1, i8 → 1, index → 8).
int byte_size(ScalarKind kind);
// The bits of an element a bitcast reads: 8 × byte_size, and 0 for i1 and index, which have no
// width of their own to read (a mask; a 64-bit or 32-bit index by the launcher's choice).
int bitcast_width(ScalarKind kind);
// The largest finite value of a float element type (f32, f16, bf16, f8e4m3, f8e5m2).
double largest_finite_number(ScalarKind element);
// A number as the nearest value of a float element type, rounded once from the double (ties to
// even, subnormals kept): f16's 1 + 2^-11 + 2^-40 is 1 + 2^-10, where rounding through f32 first
// gave 1. `overflows` says whether it rounded past the largest finite value: it is then inf (f8:
// the largest, saturated). The front end's numbers and `--scalar` values round so.
double round_to_element(ScalarKind element, double value, bool& overflows);
// The values of an integer element type narrower than 64 bits (i1: 0 and 1; i8, i16, i32 in
// two's complement; u8, u16, u32 from 0): what a number must fit, where arithmetic wraps to and
// where a cast from a float saturates. nullopt for i64, index and the floats.
struct IntegerRange {
  int64_t lowest, highest;
};
std::optional<IntegerRange> integer_range(ScalarKind kind);
// Whether `mma` takes operands of these element types: the same type, two 8-bit floats (e4m3 x
// e5m2 and e5m2 x e4m3 mix, as the FP8 tensor-core instructions do) or two 8-bit integers (i8 x
// u8 mix, as the integer ones do).
bool mma_operands_combine(ScalarKind a, ScalarKind b);
// The accumulator type of an `mma` with operands of this element type: f32 for the floats, i32
// for i8 and u8; nullopt where the tensor cores take no such operand.
std::optional<ScalarKind> mma_accumulator(ScalarKind operand);

enum class MemorySpace : uint8_t { reg, smem, tmem };
std::string_view to_string(MemorySpace space);
std::optional<MemorySpace> parse_memory_space(std::string_view text);

// One dimension of a tensor: a static extent, a named symbol (bound at launch) or unknown.
struct Dim {
  int64_t extent = -1;  // >= 0 when static
  std::string symbol;   // non-empty when named
  static Dim fixed(int64_t n) { return {n, {}}; }
  static Dim named(std::string name) { return {-1, std::move(name)}; }
  static Dim unknown() { return {}; }
  bool is_static() const { return extent >= 0; }
  friend bool operator==(const Dim&, const Dim&) = default;
};

class Type {
 public:
  enum class Kind : uint8_t { none, scalar, tensor, tile, token, mutex, mbarrier, pipe };

  Type() = default;
  static Type scalar(ScalarKind element);
  static Type tensor(std::vector<Dim> dims, ScalarKind element);
  static Type tile(std::vector<int64_t> shape, ScalarKind element,
                   MemorySpace space = MemorySpace::reg);
  static Type token();
  static Type mutex();
  static Type mbarrier();
  static Type pipe(const Type& payload, int64_t depth);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::none; }
  bool is_scalar() const { return kind_ == Kind::scalar; }
  bool is_tensor() const { return kind_ == Kind::tensor; }
  bool is_tile() const { return kind_ == Kind::tile; }
  bool is_index() const { return is_scalar() && element_ == ScalarKind::index; }

  // Element type of scalars, tensors, tiles (and the payload element of a pipe).
  ScalarKind element() const { return element_; }
  const std::vector<int64_t>& shape() const { return shape_; }  // tile shape, pipe payload shape
  const std::vector<Dim>& dims() const { return dims_; }        // tensor dims
  MemorySpace space() const { return space_; }
  int64_t depth() const { return depth_; }  // pipe depth
  size_t rank() const { return is_tensor() ? dims_.size() : shape_.size(); }
  int64_t element_count() const;  // tiles: product of the shape

  Type with_element(ScalarKind element) const;
  Type with_space(MemorySpace space) const;
  Type with_shape(std::vector<int64_t> shape) const;
  // The tile type a pipe carries.
  Type payload() const;

  std::string to_string() const;
  // As a .tile program writes it, for messages a source's author reads: tile<128, 64, f32> (the
  // shape and element of zeros<...>), without the IR's memory space; other kinds as to_string.
  std::string to_source_string() const;
  friend bool operator==(const Type&, const Type&) = default;

 private:
  Kind kind_ = Kind::none;
  ScalarKind element_ = ScalarKind::f32;
  MemorySpace space_ = MemorySpace::reg;
  int64_t depth_ = 0;
  std::vector<int64_t> shape_;
  std::vector<Dim> dims_;
};

}  // namespace tilec

namespace tilec {
// The result type of an elementwise op over `a` and `b` (broadcasting): a scalar broadcasts to
// any tile; two tiles need the same rank and each dim equal or 1. The element types must match.
// Returns none (is_none()) when they do not combine; the result tile lives in registers.
Type broadcast_type(const Type& a, const Type& b);

// A load or store may move a tile of lower rank than its tensor's: a slice. Its shape in the
// tensor's rank has a leading 1 for each dimension the tile lacks, so the coordinates there, in
// units of one element, pick the slice (e.g. the batch of a [B, M, K] tensor that a <BM, BK>
// tile reads). Expects tile.rank() <= tensor_rank.
std::vector<int64_t> shape_in_tensor(const Type& tile, size_t tensor_rank);
}  // namespace tilec
