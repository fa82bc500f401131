// runtime/emulate/tensor_ops.h — what the asynchronous engines compute, as pure functions over
// bytes: TMA box copies (tensor maps as cuTensorMapEncodeTiled validates and encodes them),
// WGMMA and tcgen05.mma arithmetic. No scheduling, no hazards: runtime/emulate/cta.cpp decides
// when each runs and what it may touch; these say what it does (the PTX ISA, layouts.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/emulate/layouts.h"

namespace tilec_emu {

// The fields of a 2-D..5-D tiled tensor map that the emulation uses, kept inside the opaque
// 128-byte CUtensorMap (see encode_tensor_map). Dimension 0 is the innermost.
struct TensorMapFields {
  uint32_t magic = 0;          // kTensorMapMagic once encoded
  uint32_t data_type = 0;      // CUtensorMapDataType value
  uint32_t rank = 0;           // 1..5
  uint32_t element_bytes = 0;  // from data_type
  uint32_t swizzle = 0;        // CUtensorMapSwizzle value (0 none, 1 32B, 2 64B, 3 128B)
  uint32_t oob_fill = 0;       // CUtensorMapFloatOOBfill value (0 zeros, 1 NaN request zero FMA)
  uint64_t global_address = 0;
  uint64_t extents[5] = {};      // elements per dimension
  uint64_t strides_bytes[5] = {};  // stride of dimension d ≥ 1 in bytes (strides_bytes[0] = element_bytes)
  uint16_t box[5] = {};          // box extent per dimension, elements (1..256)
  uint8_t element_strides[5] = {};  // 1..8 (narrow types: the fields fit in 128 bytes)
};
constexpr uint32_t kTensorMapMagic = 0x7e1ec0deu;
static_assert(sizeof(TensorMapFields) <= 128, "a CUtensorMap is 128 bytes");

// Validates the arguments of cuTensorMapEncodeTiled as the driver does (rank, 16-byte aligned
// global address and strides, strides ≥ the row they span, box extents 1..256, inner box bytes
// a multiple of 16 and at most the swizzle span, element strides 1..8, interleave none) and
// returns the fields; `error` names the first rule broken (empty: ok). `strides_bytes` is the
// driver's globalStrides: rank - 1 entries, the byte strides of dimensions 1..rank-1. Interleaved
// layouts and the packed sub-byte data types are rejected as not emulated; oob_fill
// NAN_REQUEST_ZERO_FMA is accepted for floating-point types only (and loads still fill zeros).
TensorMapFields encode_tensor_map(uint32_t data_type, uint32_t rank, const void* global_address,
                                  const uint64_t* extents, const uint64_t* strides_bytes, const uint32_t* box,
                                  const uint32_t* element_strides, uint32_t interleave, uint32_t swizzle,
                                  uint32_t oob_fill, std::string& error);

layout::Swizzle tensor_map_swizzle(const TensorMapFields& map);

// One TMA load: the box at element coordinates `coordinates` (map.rank of them, dimension 0
// innermost) of `map` into shared memory at byte address `destination` (of the window starting
// at `shared`). Elements outside the tensor are written as zeros. Returns the bytes written (the
// box's full size, which is what the transaction count is completed with, whether or not part of
// the box was out of bounds). The box is ceil(box / elementStride) elements per dimension,
// packed rows of dimension-0 elements × element bytes (dimension 1 numbering the rows fastest,
// then 2, ...), each 16-byte chunk at its swizzled absolute address (layout::apply_swizzle).
uint32_t tma_load(const TensorMapFields& map, const int32_t* coordinates, uint8_t* shared, uint32_t destination);
// The reverse: writes the in-bounds part of the box at `source` to global memory; with `combine`,
// calls it on each element instead (the tensor's element, then the box's: cp.reduce.async.bulk).
using CombineElement = void (*)(uint32_t data_type, uint8_t* element, const uint8_t* value);
void tma_store(const TensorMapFields& map, const int32_t* coordinates, const uint8_t* shared, uint32_t source,
               CombineElement combine = nullptr);
// The same at (inner, outer) of a rank-1 or rank-2 map (a rank-1 map is one row).
uint32_t tma_load_2d(const TensorMapFields& map, int32_t inner, int32_t outer, uint8_t* shared,
                     uint32_t destination);
void tma_store_2d(const TensorMapFields& map, int32_t inner, int32_t outer, const uint8_t* shared,
                  uint32_t source);
// Which shared bytes [first, first + count) a box touches (for hazard tracking): the box's
// bytes are contiguous from `address` (box_rows × row_bytes).
uint32_t tma_box_bytes(const TensorMapFields& map);

// Element types of the tensor-core operands. tf32 is an f32 bit pattern whose low 13 mantissa
// bits the tensor cores ignore (the value is truncated toward zero to 10 mantissa bits); s8 and
// u8 are 8-bit integers (-128..127, 0..255), which floats hold exactly.
enum class OperandType { f16, bf16, e4m3, e5m2, tf32, s8, u8 };
int operand_bytes(OperandType type);
bool operand_is_integer(OperandType type);  // s8, u8
float operand_to_float(OperandType type, const uint8_t* bytes);

// WGMMA m64nNk16 (16-bit operands), k32 (8-bit: A and B may be e4m3 and e5m2 in either order) or
// k8 (tf32), f32 accumulate, dense 64×N row-major D:
// D = (scale_d ? D : 0) + A·B, where A is 64×K from shared memory (descriptor `a`, K-major
// unless a_mn_major) or, when `a_registers` is not null, a dense 64×K row-major array of floats
// (already gathered from the register fragments), and B is K×N from shared memory (descriptor
// `b`: element (k, n) is operand element (mn = n, k); b_mn_major = "transposed" = N-major).
// The caller validates: n a multiple of 8 in 8..256, descriptors that decode without error
// (layout::decode_sm90_descriptor(...).error), operands inside `shared`.
void wgmma_compute(const uint8_t* shared, int n, OperandType a_type, OperandType b_type, uint64_t a, bool a_mn_major,
                   const float* a_registers, uint64_t b, bool b_mn_major, bool scale_d, float* d);
// WGMMA m64nNk32 with s8/u8 operands (A and B each either) and s32 accumulate, dense 64×N
// row-major D: D = (scale_d ? D : 0) + A·B, every product exact and the sums wrapping at 32 bits
// (two's complement). A and B from shared memory, K-major: PTX has no other form for them. The
// caller validates as for the float form.
void wgmma_compute(const uint8_t* shared, int n, OperandType a_type, OperandType b_type, uint64_t a, uint64_t b,
                   bool scale_d, int32_t* d);

// tcgen05.mma.cta_group::1 kind::f16 / kind::tf32 / kind::f8f6f4 with D in TMEM (f32 per idesc),
// and kind::i8 (s8/u8 operands, s32 D: the cells hold int32 bit patterns, exact products, sums
// wrapping at 32 bits as in the WGMMA integer form):
// D[row m, columns from column(tmem)] (+)= A·B for m < M. `tmem` is the array of 128 lanes ×
// 512 columns of 32-bit cells (lane-major: cell = lane * 512 + column). A and B from shared
// memory descriptors (sm_100 encoding). Returns an empty string or what was invalid.
// Rows live where the PTX ISA's cta_group::1 data-path layouts put them: M = 128, row r in lane
// lane(tmem) + r (layout D); M = 64, rows 16w..16w+15 in lanes lane(tmem) + 32w .. +15 (layout F,
// the first half of each warp's 32-lane quarter). negate_a/negate_b of idesc are applied.
// f16 D is reported as not emulated; so are columns past 512 and lanes past 127.
std::string tcgen05_mma_compute(const uint8_t* shared, uint32_t* tmem, uint32_t tmem_address, uint64_t a,
                                uint64_t b, uint32_t idesc, layout::MmaKind kind, bool accumulate);

}  // namespace tilec_emu
