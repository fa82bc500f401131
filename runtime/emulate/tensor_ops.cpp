// runtime/emulate/tensor_ops.cpp — what TMA, WGMMA and tcgen05.mma compute (tensor_ops.h), as
// pure functions over byte arrays.
//
//   1. Tensor maps: encode_tensor_map checks the arguments in the order cuTensorMapEncodeTiled
//      documents them and keeps the fields the copies need.
//   2. TMA boxes: a 2-D box is box_rows rows of row_bytes bytes, packed from the destination
//      address; each 16-byte chunk lands at its swizzled absolute shared address
//      (layout::apply_swizzle). Loads write zeros for elements outside the tensor (negative
//      coordinates or past the extent); stores write only the elements inside it.
//   3. Operand conversion: exact decoders of f16, bf16, e4m3 (OCP FN: no infinities, S.1111.111
//      is NaN) and e5m2 bits to float, turned into tables once; tf32 is an f32 pattern with its
//      low 13 mantissa bits cleared (a NaN kept); s8 and u8 are their integers, exact in float.
//   4. Matrix multiply: A (M×K) and B (K×N) are gathered into dense float arrays through
//      layout::operand_address, one 16-byte chunk at a time (a chunk never straddles a swizzle
//      row, so its bytes stay contiguous); then D[m][j] += A[m][k] · B[k][j] for k in order,
//      row-major, eight columns of D held in registers (vectorized over j). Each D element is
//      accumulated over k in order, one float multiply and one float add per step
//      (-ffp-contract=off: never fused). Integer operands (s32 D) are turned into int32 once;
//      each product is exact and the sums wrap at 32 bits (added as uint32_t, so the order of
//      the additions does not matter).
// Cost: a gather of (M + N)·K elements and M·N·K multiply-adds per instruction.
#include "runtime/emulate/tensor_ops.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tilec_emu {
namespace {

// --- 1. tensor maps ------------------------------------------------------------------------------
// CUtensorMapDataType values (cuda.h) and their sizes; 0 for the packed sub-byte types.
uint32_t data_type_bytes(uint32_t data_type) {
  switch (data_type) {
    case 0: return 1;  // UINT8
    case 1: return 2;  // UINT16
    case 2: return 4;  // UINT32
    case 3: return 4;  // INT32
    case 4: return 8;  // UINT64
    case 5: return 8;  // INT64
    case 6: return 2;  // FLOAT16
    case 7: return 4;  // FLOAT32
    case 8: return 8;  // FLOAT64
    case 9: return 2;  // BFLOAT16
    case 10: return 4;  // FLOAT32_FTZ
    case 11: return 4;  // TFLOAT32
    case 12: return 4;  // TFLOAT32_FTZ
    default: return 0;
  }
}

bool is_float_type(uint32_t data_type) { return data_type >= 6 && data_type <= 12; }

std::string dimension(const char* what, uint32_t d) { return std::string(what) + "[" + std::to_string(d) + "]"; }

}  // namespace

TensorMapFields encode_tensor_map(uint32_t data_type, uint32_t rank, const void* global_address,
                                  const uint64_t* extents, const uint64_t* strides_bytes, const uint32_t* box,
                                  const uint32_t* element_strides, uint32_t interleave, uint32_t swizzle,
                                  uint32_t oob_fill, std::string& error) {
  TensorMapFields map;
  error.clear();
  uint32_t element_bytes = data_type_bytes(data_type);
  if (element_bytes == 0) {
    error = "tensorDataType " + std::to_string(data_type) + " is not emulated (packed sub-byte types)";
    return map;
  }
  if (interleave != 0) {
    error = "interleave " + std::to_string(interleave) + " is not emulated (only CU_TENSOR_MAP_INTERLEAVE_NONE)";
    return map;
  }
  if (rank < 1 || rank > 5) {
    error = "tensorRank " + std::to_string(rank) + " must be 1..5";
    return map;
  }
  if (global_address == nullptr || reinterpret_cast<uintptr_t>(global_address) % 16 != 0) {
    error = "globalAddress must be 16-byte aligned (and not null)";
    return map;
  }
  if (extents == nullptr || box == nullptr || element_strides == nullptr || (rank > 1 && strides_bytes == nullptr)) {
    error = "globalDim, globalStrides, boxDim and elementStrides must not be null";
    return map;
  }
  for (uint32_t d = 0; d < rank; ++d)
    if (extents[d] == 0 || extents[d] > (uint64_t{1} << 32)) {
      error = dimension("globalDim", d) + " = " + std::to_string(extents[d]) + " must be 1..2^32";
      return map;
    }
  // globalStrides has rank - 1 entries: the byte stride of dimensions 1..rank-1.
  uint64_t previous_stride = element_bytes;
  for (uint32_t d = 1; d < rank; ++d) {
    uint64_t stride = strides_bytes[d - 1];
    if (stride % 16 != 0) {
      error = dimension("globalStrides", d - 1) + " = " + std::to_string(stride) + " must be a multiple of 16";
      return map;
    }
    if (stride >= (uint64_t{1} << 40)) {
      error = dimension("globalStrides", d - 1) + " = " + std::to_string(stride) + " must be less than 2^40";
      return map;
    }
    if (stride < extents[d - 1] * previous_stride) {
      error = dimension("globalStrides", d - 1) + " = " + std::to_string(stride) + " must be at least globalDim[" +
              std::to_string(d - 1) + "] times the stride of dimension " + std::to_string(d - 1) + " (" +
              std::to_string(extents[d - 1] * previous_stride) + " bytes)";
      return map;
    }
    previous_stride = stride;
  }
  for (uint32_t d = 0; d < rank; ++d)
    if (box[d] == 0 || box[d] > 256) {
      error = dimension("boxDim", d) + " = " + std::to_string(box[d]) + " must be 1..256";
      return map;
    }
  uint64_t inner_box_bytes = uint64_t{box[0]} * element_bytes;
  if (inner_box_bytes % 16 != 0) {
    error = "boxDim[0] times the element size (" + std::to_string(inner_box_bytes) +
            " bytes) must be a multiple of 16 bytes";
    return map;
  }
  for (uint32_t d = 0; d < rank; ++d)
    if (element_strides[d] == 0 || element_strides[d] > 8) {
      error = dimension("elementStrides", d) + " = " + std::to_string(element_strides[d]) + " must be 1..8";
      return map;
    }
  if (swizzle > 3) {
    error = "swizzle " + std::to_string(swizzle) + " is not emulated (only NONE, 32B, 64B, 128B)";
    return map;
  }
  if (swizzle != 0) {
    uint64_t span = uint64_t{16} << swizzle;
    if (inner_box_bytes > span) {
      error = "with swizzle, the inner box (boxDim[0] times the element size, " + std::to_string(inner_box_bytes) +
              " bytes) must be at most the swizzle span (" + std::to_string(span) + " bytes)";
      return map;
    }
  }
  if (oob_fill > 1) {
    error = "oobFill " + std::to_string(oob_fill) + " must be NONE or NAN_REQUEST_ZERO_FMA";
    return map;
  }
  if (oob_fill == 1 && !is_float_type(data_type)) {
    error = "oobFill NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType";
    return map;
  }

  map.magic = kTensorMapMagic;
  map.data_type = data_type;
  map.rank = rank;
  map.element_bytes = element_bytes;
  map.swizzle = swizzle;
  map.oob_fill = oob_fill;
  map.global_address = reinterpret_cast<uintptr_t>(global_address);
  for (uint32_t d = 0; d < rank; ++d) {
    map.extents[d] = extents[d];
    map.strides_bytes[d] = d == 0 ? element_bytes : strides_bytes[d - 1];
    map.box[d] = box[d];
    map.element_strides[d] = element_strides[d];
  }
  return map;
}

layout::Swizzle tensor_map_swizzle(const TensorMapFields& map) {
  switch (map.swizzle) {
    case 1: return layout::Swizzle::bytes32;
    case 2: return layout::Swizzle::bytes64;
    case 3: return layout::Swizzle::bytes128;
    default: return layout::Swizzle::none;
  }
}

// --- 2. TMA boxes ----------------------------------------------------------------------------------
namespace {

// The elements a box traverses along dimension d: ceil(box / elementStride) (cuda.h).
uint32_t box_elements(const TensorMapFields& map, uint32_t d) {
  if (d >= map.rank) return 1;
  return (map.box[d] + map.element_strides[d] - 1) / map.element_strides[d];
}

// A box is packed rows of row_bytes bytes in shared memory: dimension 0 along a row, the
// other dimensions (1 innermost) numbering the rows. Where box row r lies in the tensor.
struct BoxRow {
  bool inside = true;   // every coordinate but dimension 0's is inside the tensor
  uint64_t offset = 0;  // byte offset of the row's dimension-0 coordinate 0 in global memory
};

BoxRow box_row(const TensorMapFields& map, const int32_t* coordinates, uint32_t r) {
  BoxRow row;
  for (uint32_t d = 1; d < map.rank; ++d) {
    const uint32_t extent = box_elements(map, d);
    const int64_t at = int64_t{coordinates[d]} + int64_t{r % extent} * map.element_strides[d];
    r /= extent;
    if (at < 0 || static_cast<uint64_t>(at) >= map.extents[d]) row.inside = false;
    else row.offset += static_cast<uint64_t>(at) * map.strides_bytes[d];
  }
  return row;
}

uint32_t box_rows(const TensorMapFields& map) {
  uint32_t rows = 1;
  for (uint32_t d = 1; d < map.rank; ++d) rows *= box_elements(map, d);
  return rows;
}

// Copies one packed box row (row_bytes bytes at `row`) to or from shared memory, chunk by
// chunk: bytes [16j, 16j + 16) of box row r live at the swizzled address of
// base + r·row_bytes + 16j.
template <typename CopyChunk>
void for_each_chunk(layout::Swizzle swizzle, uint32_t base, uint32_t row_index, uint32_t row_bytes, CopyChunk copy) {
  uint32_t row_address = base + row_index * row_bytes;
  for (uint32_t offset = 0; offset < row_bytes; offset += 16) {
    uint32_t count = row_bytes - offset < 16 ? row_bytes - offset : 16;
    copy(offset, layout::apply_swizzle(swizzle, row_address + offset), count);
  }
}

}  // namespace

uint32_t tma_box_bytes(const TensorMapFields& map) {
  uint32_t bytes = map.element_bytes;
  for (uint32_t d = 0; d < map.rank; ++d) bytes *= box_elements(map, d);
  return bytes;
}

uint32_t tma_load(const TensorMapFields& map, const int32_t* coordinates, uint8_t* shared, uint32_t destination) {
  const layout::Swizzle swizzle = tensor_map_swizzle(map);
  const auto* global = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(map.global_address));
  const uint32_t columns = box_elements(map, 0), row_bytes = columns * map.element_bytes;
  std::array<uint8_t, 256 * 8> packed{};  // one packed box row
  for (uint32_t r = 0, rows = box_rows(map); r < rows; ++r) {
    const BoxRow row = box_row(map, coordinates, r);
    for (uint32_t c = 0; c < columns; ++c) {
      int64_t x = int64_t{coordinates[0]} + int64_t{c} * map.element_strides[0];
      uint8_t* element = packed.data() + c * map.element_bytes;
      if (row.inside && x >= 0 && static_cast<uint64_t>(x) < map.extents[0])
        std::memcpy(element, global + row.offset + static_cast<uint64_t>(x) * map.element_bytes, map.element_bytes);
      else
        std::memset(element, 0, map.element_bytes);
    }
    for_each_chunk(swizzle, destination, r, row_bytes, [&](uint32_t offset, uint32_t address, uint32_t count) {
      std::memcpy(shared + address, packed.data() + offset, count);
    });
  }
  return tma_box_bytes(map);
}

void tma_store(const TensorMapFields& map, const int32_t* coordinates, const uint8_t* shared, uint32_t source,
               CombineElement combine) {
  const layout::Swizzle swizzle = tensor_map_swizzle(map);
  auto* global = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(map.global_address));
  const uint32_t columns = box_elements(map, 0), row_bytes = columns * map.element_bytes;
  std::array<uint8_t, 256 * 8> packed{};
  for (uint32_t r = 0, rows = box_rows(map); r < rows; ++r) {
    const BoxRow row = box_row(map, coordinates, r);
    if (!row.inside) continue;
    for_each_chunk(swizzle, source, r, row_bytes, [&](uint32_t offset, uint32_t address, uint32_t count) {
      std::memcpy(packed.data() + offset, shared + address, count);
    });
    for (uint32_t c = 0; c < columns; ++c) {
      int64_t x = int64_t{coordinates[0]} + int64_t{c} * map.element_strides[0];
      if (x < 0 || static_cast<uint64_t>(x) >= map.extents[0]) continue;
      uint8_t* const element = global + row.offset + static_cast<uint64_t>(x) * map.element_bytes;
      if (combine) combine(map.data_type, element, packed.data() + c * map.element_bytes);
      else std::memcpy(element, packed.data() + c * map.element_bytes, map.element_bytes);
    }
  }
}

uint32_t tma_load_2d(const TensorMapFields& map, int32_t inner, int32_t outer, uint8_t* shared,
                     uint32_t destination) {
  const int32_t coordinates[5] = {inner, outer, 0, 0, 0};
  return tma_load(map, coordinates, shared, destination);
}

void tma_store_2d(const TensorMapFields& map, int32_t inner, int32_t outer, const uint8_t* shared,
                  uint32_t source) {
  const int32_t coordinates[5] = {inner, outer, 0, 0, 0};
  tma_store(map, coordinates, shared, source);
}

// --- 3. operand conversion ---------------------------------------------------------------------
namespace {

float decode_f16(uint16_t bits) {
  float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return mantissa == 0 ? sign * INFINITY : NAN;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
}

float decode_bf16(uint16_t bits) {
  uint32_t word = uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

float decode_e4m3(uint8_t bits) {
  float sign = (bits & 0x80) ? -1.0f : 1.0f;
  int exponent = (bits >> 3) & 0xf;
  int mantissa = bits & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return NAN;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
}

float decode_e5m2(uint8_t bits) {
  float sign = (bits & 0x80) ? -1.0f : 1.0f;
  int exponent = (bits >> 2) & 0x1f;
  int mantissa = bits & 0x3;
  if (exponent == 0x1f) return mantissa == 0 ? sign * INFINITY : NAN;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -16);
  return sign * std::ldexp(static_cast<float>(4 + mantissa), exponent - 17);
}

// The f16 and 8-bit decoders as tables, built once (thread-safe static initialization).
struct ConversionTables {
  std::array<float, 65536> f16;
  std::array<float, 256> e4m3, e5m2;
  ConversionTables() {
    for (uint32_t bits = 0; bits < 65536; ++bits) f16[bits] = decode_f16(static_cast<uint16_t>(bits));
    for (uint32_t bits = 0; bits < 256; ++bits) {
      e4m3[bits] = decode_e4m3(static_cast<uint8_t>(bits));
      e5m2[bits] = decode_e5m2(static_cast<uint8_t>(bits));
    }
  }
};

const ConversionTables& conversion_tables() {
  static const ConversionTables tables;
  return tables;
}

// Converts `count` consecutive operand elements at `bytes` into `out[0], out[stride], ...`.
void convert_elements(OperandType type, const uint8_t* bytes, int count, float* out, int stride) {
  const ConversionTables& tables = conversion_tables();
  for (int i = 0; i < count; ++i) {
    float value = 0;
    switch (type) {
      case OperandType::f16: {
        uint16_t bits;
        std::memcpy(&bits, bytes + 2 * i, 2);
        value = tables.f16[bits];
        break;
      }
      case OperandType::bf16: {
        uint16_t bits;
        std::memcpy(&bits, bytes + 2 * i, 2);
        value = decode_bf16(bits);
        break;
      }
      case OperandType::e4m3: value = tables.e4m3[bytes[i]]; break;
      case OperandType::e5m2: value = tables.e5m2[bytes[i]]; break;
      case OperandType::s8: value = static_cast<float>(static_cast<int8_t>(bytes[i])); break;
      case OperandType::u8: value = static_cast<float>(bytes[i]); break;
      case OperandType::tf32: {
        uint32_t bits;
        std::memcpy(&bits, bytes + 4 * i, 4);
        // A NaN keeps its pattern (dropping the low bits could turn it into an infinity).
        const bool nan = (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
        if (!nan) bits &= ~0x1fffu;
        std::memcpy(&value, &bits, 4);
        break;
      }
    }
    out[i * stride] = value;
  }
}

}  // namespace

int operand_bytes(OperandType type) {
  switch (type) {
    case OperandType::f16: case OperandType::bf16: return 2;
    case OperandType::tf32: return 4;
    default: return 1;
  }
}

bool operand_is_integer(OperandType type) { return type == OperandType::s8 || type == OperandType::u8; }

float operand_to_float(OperandType type, const uint8_t* bytes) {
  float value;
  convert_elements(type, bytes, 1, &value, 1);
  return value;
}

// --- 4. matrix multiply ------------------------------------------------------------------------
namespace {

// Gathers operand `d` (rows mn = 0..rows-1, k = 0..depth-1) into out[mn · mn_stride + k · k_stride].
// K-major: the 16-byte chunks run along k; MN-major: along mn.
void gather_operand(const uint8_t* shared, const layout::MatrixDescriptor& d, bool mn_major, OperandType type,
                    int rows, int depth, float* out, int mn_stride, int k_stride) {
  const int eb = operand_bytes(type);
  const int per_chunk = 16 / eb;
  if (!mn_major) {
    for (int mn = 0; mn < rows; ++mn)
      for (int k = 0; k < depth; k += per_chunk)
        convert_elements(type, shared + layout::operand_address(d, false, eb, mn, k), per_chunk,
                         out + mn * mn_stride + k * k_stride, k_stride);
  } else {
    for (int k = 0; k < depth; ++k)
      for (int mn = 0; mn < rows; mn += per_chunk)
        convert_elements(type, shared + layout::operand_address(d, true, eb, mn, k), per_chunk,
                         out + mn * mn_stride + k * k_stride, mn_stride);
  }
}

// d[m][0..n) += a[m][k] · b[k][0..n), k = 0..depth-1 in order; a is rows×depth, b depth×n,
// d rows×n, all dense row-major, n a multiple of 8. Eight columns at a time stay in registers
// across k (a fixed-size inner loop, vectorized at -O2 without a cost model's help).
void multiply_accumulate(const float* a, const float* b, float* d, int rows, int depth, int n) {
  constexpr int kBlock = 8;
  for (int m = 0; m < rows; ++m) {
    const float* a_row = a + m * depth;
    for (int j0 = 0; j0 < n; j0 += kBlock) {
      float sum[kBlock];
      for (int j = 0; j < kBlock; ++j) sum[j] = d[m * n + j0 + j];
      for (int k = 0; k < depth; ++k) {
        const float a_value = a_row[k];
        const float* b_block = b + k * n + j0;
        for (int j = 0; j < kBlock; ++j) sum[j] = sum[j] + a_value * b_block[j];
      }
      for (int j = 0; j < kBlock; ++j) d[m * n + j0 + j] = sum[j];
    }
  }
}

// The same for integer operands (held exactly by the floats a and b, |value| ≤ 255) and an s32
// D: every product is exact in int32 (|a·b| ≤ 255²) and the sums wrap at 32 bits, as the tensor
// cores' do. They are added as uint32_t: modulo 2^32, with no overflow to be undefined.
void multiply_accumulate(const float* a, const float* b, int32_t* d, int rows, int depth, int n) {
  std::vector<int32_t> a_integers(static_cast<size_t>(rows) * depth), b_integers(static_cast<size_t>(depth) * n);
  for (size_t i = 0; i < a_integers.size(); ++i) a_integers[i] = static_cast<int32_t>(a[i]);
  for (size_t i = 0; i < b_integers.size(); ++i) b_integers[i] = static_cast<int32_t>(b[i]);
  for (int m = 0; m < rows; ++m) {
    // int32 and uint32 name the same object (signed and unsigned variants may alias).
    uint32_t* d_row = reinterpret_cast<uint32_t*>(d + m * n);
    for (int k = 0; k < depth; ++k) {
      const int32_t a_value = a_integers[static_cast<size_t>(m) * depth + k];
      const int32_t* b_row = b_integers.data() + static_cast<size_t>(k) * n;
      for (int j = 0; j < n; ++j) d_row[j] += static_cast<uint32_t>(a_value * b_row[j]);
    }
  }
}

}  // namespace

void wgmma_compute(const uint8_t* shared, int n, OperandType a_type, OperandType b_type, uint64_t a, bool a_mn_major,
                   const float* a_registers, uint64_t b, bool b_mn_major, bool scale_d, float* d) {
  constexpr int kRows = 64;
  const int depth = 32 / operand_bytes(a_type);  // 32 bytes of K per instruction (B's elements are as wide)
  alignas(64) float a_dense[kRows * 32];
  alignas(64) float b_dense[32 * 256];
  const float* a_values = a_registers;
  if (a_values == nullptr) {
    gather_operand(shared, layout::decode_sm90_descriptor(a), a_mn_major, a_type, kRows, depth, a_dense, depth, 1);
    a_values = a_dense;
  }
  // B element (k, n) is operand element (mn = n, k).
  gather_operand(shared, layout::decode_sm90_descriptor(b), b_mn_major, b_type, n, depth, b_dense, 1, n);
  if (!scale_d) std::memset(d, 0, sizeof(float) * kRows * static_cast<size_t>(n));
  multiply_accumulate(a_values, b_dense, d, kRows, depth, n);
}

void wgmma_compute(const uint8_t* shared, int n, OperandType a_type, OperandType b_type, uint64_t a, uint64_t b,
                   bool scale_d, int32_t* d) {
  constexpr int kRows = 64, kDepth = 32;  // 32 bytes of K: 32 one-byte integers
  alignas(64) float a_dense[kRows * kDepth];
  alignas(64) float b_dense[kDepth * 256];
  gather_operand(shared, layout::decode_sm90_descriptor(a), false, a_type, kRows, kDepth, a_dense, kDepth, 1);
  gather_operand(shared, layout::decode_sm90_descriptor(b), false, b_type, n, kDepth, b_dense, 1, n);
  if (!scale_d) std::memset(d, 0, sizeof(int32_t) * kRows * static_cast<size_t>(n));
  multiply_accumulate(a_dense, b_dense, d, kRows, kDepth, n);
}

namespace {

OperandType operand_type(layout::ElementFormat format) {
  switch (format) {
    case layout::ElementFormat::f16: return OperandType::f16;
    case layout::ElementFormat::e4m3: return OperandType::e4m3;
    case layout::ElementFormat::e5m2: return OperandType::e5m2;
    case layout::ElementFormat::tf32: return OperandType::tf32;
    case layout::ElementFormat::s8: return OperandType::s8;
    case layout::ElementFormat::u8: return OperandType::u8;
    default: return OperandType::bf16;
  }
}

// The TMEM lane of accumulator row `row` (PTX ISA, tcgen05 data-path layouts, cta_group::1):
// M = 128 uses lanes 0..127 in order (layout D); M = 64 uses the first 16 lanes of each warp's
// 32-lane quarter (layout F): rows 16w..16w+15 in lanes 32w..32w+15.
uint32_t accumulator_lane(int m, int row) { return m == 128 ? row : 32 * (row / 16) + row % 16; }

// D (+)= A·B on TMEM: `cell(row, j)` is the 32-bit cell of D[row][j], which holds an Accumulator
// (float for an f32 D, int32_t for s32) bit pattern.
template <typename Accumulator, typename Cell>
void multiply_into_tmem(const float* a, const float* b, int m, int depth, int n, bool accumulate, Cell cell) {
  std::vector<Accumulator> d(static_cast<size_t>(m) * n, Accumulator{0});
  if (accumulate)
    for (int row = 0; row < m; ++row)
      for (int j = 0; j < n; ++j) std::memcpy(&d[static_cast<size_t>(row) * n + j], &cell(row, j), 4);
  multiply_accumulate(a, b, d.data(), m, depth, n);
  for (int row = 0; row < m; ++row)
    for (int j = 0; j < n; ++j) std::memcpy(&cell(row, j), &d[static_cast<size_t>(row) * n + j], 4);
}

}  // namespace

std::string tcgen05_mma_compute(const uint8_t* shared, uint32_t* tmem, uint32_t tmem_address, uint64_t a,
                                uint64_t b, uint32_t idesc, layout::MmaKind kind, bool accumulate) {
  layout::InstructionDescriptor instruction = layout::decode_instruction_descriptor(idesc, kind);
  if (!instruction.error.empty()) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", idesc);
    return std::string("invalid instruction descriptor ") + text + ": " + instruction.error;
  }
  layout::MatrixDescriptor a_descriptor = layout::decode_sm100_descriptor(a);
  if (!a_descriptor.error.empty()) return "invalid A descriptor: " + a_descriptor.error;
  layout::MatrixDescriptor b_descriptor = layout::decode_sm100_descriptor(b);
  if (!b_descriptor.error.empty()) return "invalid B descriptor: " + b_descriptor.error;
  if (instruction.d_format == layout::ElementFormat::f16) return "f16 accumulators in TMEM are not emulated";

  const int m = instruction.m, n = instruction.n;
  const uint32_t lane = tmem_address >> 16, column = tmem_address & 0xffff;
  if (column + static_cast<uint32_t>(n) > 512)
    return "accumulator columns " + std::to_string(column) + ".." + std::to_string(column + n - 1) +
           " are outside TMEM's 512 columns";
  if (lane + accumulator_lane(m, m - 1) >= 128)
    return "accumulator lanes from " + std::to_string(lane) + " are outside TMEM's 128 lanes";

  const OperandType a_type = operand_type(instruction.a_format), b_type = operand_type(instruction.b_format);
  const int depth = 32 / operand_bytes(a_type);  // K: 16 (kind::f16), 8 (kind::tf32), 32 (kind::f8f6f4, i8)
  std::vector<float> a_dense(static_cast<size_t>(m) * depth), b_dense(static_cast<size_t>(depth) * n);
  gather_operand(shared, a_descriptor, instruction.a_mn_major, a_type, m, depth, a_dense.data(), depth, 1);
  gather_operand(shared, b_descriptor, instruction.b_mn_major, b_type, n, depth, b_dense.data(), 1, n);
  if (instruction.negate_a)
    for (float& value : a_dense) value = -value;
  if (instruction.negate_b)
    for (float& value : b_dense) value = -value;

  auto cell = [&](int row, int j) -> uint32_t& {
    return tmem[(lane + accumulator_lane(m, row)) * 512 + column + static_cast<uint32_t>(j)];
  };
  if (instruction.d_format == layout::ElementFormat::s32)
    multiply_into_tmem<int32_t>(a_dense.data(), b_dense.data(), m, depth, n, accumulate, cell);
  else
    multiply_into_tmem<float>(a_dense.data(), b_dense.data(), m, depth, n, accumulate, cell);
  return "";
}

}  // namespace tilec_emu
