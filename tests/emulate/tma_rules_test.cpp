// tests/emulate/tma_rules_test.cpp — the emulator's TMA (runtime/emulate/tensor_ops.h) against
// the rules the PTX ISA and the driver state: what encode_tensor_map refuses and keeps, the
// out-of-bounds fill of a load and the clipping of a store, 2-D and 3-D boxes. The layouts
// against the reference tables are in layout_tables_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/emulate/layouts.h"
#include "runtime/emulate/tensor_ops.h"

namespace {

using namespace tilec_emu;
using namespace tilec_emu::layout;

// --- encode_tensor_map rules -------------------------------------------------------------------------
struct TensorMapArguments {
  uint32_t data_type = 9, rank = 2;  // bf16
  alignas(16) uint8_t storage[64];
  const void* address = storage;
  uint64_t extents[5] = {64, 32, 1, 1, 1};
  uint64_t strides[4] = {128, 4096, 4096, 4096};
  uint32_t box[5] = {64, 16, 1, 1, 1};
  uint32_t element_strides[5] = {1, 1, 1, 1, 1};
  uint32_t interleave = 0, swizzle = 3, oob_fill = 0;

  std::string error() {
    std::string message;
    encode_tensor_map(data_type, rank, address, extents, strides, box, element_strides, interleave, swizzle, oob_fill,
                      message);
    return message;
  }
};

void expect_error(TensorMapArguments arguments, const std::string& fragment) {
  std::string error = arguments.error();
  EXPECT_NE(error.find(fragment), std::string::npos) << "error \"" << error << "\" lacks \"" << fragment << "\"";
}

TEST(TensorMap, AcceptsAndKeepsFields) {
  TensorMapArguments arguments;
  std::string error;
  TensorMapFields map = encode_tensor_map(9, 2, arguments.storage, arguments.extents, arguments.strides, arguments.box,
                                          arguments.element_strides, 0, 3, 0, error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(map.magic, kTensorMapMagic);
  EXPECT_EQ(map.element_bytes, 2u);
  EXPECT_EQ(map.strides_bytes[0], 2u);
  EXPECT_EQ(map.strides_bytes[1], 128u);
  EXPECT_EQ(map.extents[1], 32u);
  EXPECT_EQ(map.box[0], 64u);
  EXPECT_EQ(tma_box_bytes(map), 64u * 16 * 2);
  EXPECT_EQ(tensor_map_swizzle(map), Swizzle::bytes128);
}

TEST(TensorMap, RejectsEachRule) {
  TensorMapArguments a;
  ASSERT_EQ(a.error(), "");
  { auto b = a; b.rank = 0; expect_error(b, "tensorRank 0 must be 1..5"); }
  { auto b = a; b.rank = 6; expect_error(b, "tensorRank 6 must be 1..5"); }
  { auto b = a; b.address = b.storage + 8; expect_error(b, "globalAddress must be 16-byte aligned"); }
  { auto b = a; b.strides[0] = 136; expect_error(b, "globalStrides[0] = 136 must be a multiple of 16"); }
  { auto b = a; b.strides[0] = uint64_t{1} << 40; expect_error(b, "must be less than 2^40"); }
  { auto b = a; b.strides[0] = 112; expect_error(b, "globalStrides[0] = 112 must be at least globalDim[0]"); }
  { auto b = a; b.rank = 3; b.strides[1] = 2048; expect_error(b, "globalStrides[1] = 2048 must be at least globalDim[1]"); }
  { auto b = a; b.box[1] = 0; expect_error(b, "boxDim[1] = 0 must be 1..256"); }
  { auto b = a; b.box[1] = 257; expect_error(b, "boxDim[1] = 257 must be 1..256"); }
  { auto b = a; b.box[0] = 12; b.swizzle = 0; expect_error(b, "must be a multiple of 16 bytes"); }
  { auto b = a; b.box[0] = 128; expect_error(b, "at most the swizzle span (128 bytes)"); }
  { auto b = a; b.box[0] = 32; b.swizzle = 1; expect_error(b, "at most the swizzle span (32 bytes)"); }
  { auto b = a; b.box[0] = 128; b.swizzle = 0; b.strides[0] = 256; b.extents[0] = 128; EXPECT_EQ(b.error(), ""); }
  { auto b = a; b.element_strides[0] = 0; expect_error(b, "elementStrides[0] = 0 must be 1..8"); }
  { auto b = a; b.element_strides[1] = 9; expect_error(b, "elementStrides[1] = 9 must be 1..8"); }
  { auto b = a; b.interleave = 1; expect_error(b, "not emulated"); }
  { auto b = a; b.extents[0] = 0; expect_error(b, "globalDim[0] = 0 must be 1..2^32"); }
  { auto b = a; b.extents[1] = (uint64_t{1} << 32) + 1; expect_error(b, "globalDim[1] = 4294967297 must be 1..2^32"); }
  { auto b = a; b.swizzle = 4; expect_error(b, "swizzle 4"); }
  { auto b = a; b.data_type = 13; expect_error(b, "tensorDataType 13"); }
  { auto b = a; b.data_type = 0; b.oob_fill = 1; expect_error(b, "NAN_REQUEST_ZERO_FMA needs a floating-point"); }
}

// --- TMA out-of-bounds fill and store clipping ------------------------------------------------------
// A ragged f32 tensor of 13 × 20 (rows × columns) in rows of 24 elements (96 bytes), value
// 1000·row + column; 8-column × 8-row boxes with 32-byte swizzle.
struct RaggedTensor {
  static constexpr uint64_t kColumns = 20, kRows = 13, kPitch = 24;
  alignas(16) float values[kRows * kPitch];
  TensorMapFields map;
  RaggedTensor() {
    for (uint64_t r = 0; r < kRows; ++r)
      for (uint64_t c = 0; c < kPitch; ++c) values[r * kPitch + c] = c < kColumns ? 1000.0f * r + c : -1.0f;
    const uint64_t extents[2] = {kColumns, kRows}, strides[1] = {kPitch * 4};
    const uint32_t box[2] = {8, 8}, element_strides[2] = {1, 1};
    std::string error;
    map = encode_tensor_map(7, 2, values, extents, strides, box, element_strides, 0, 1, 0, error);
    EXPECT_EQ(error, "");
  }
};

TEST(Tma, LoadFillsOutOfBoundsWithZeros) {
  RaggedTensor tensor;
  for (auto [inner, outer] : {std::pair{-3, 10}, std::pair{16, -2}, std::pair{-8, -8}, std::pair{20, 13}, std::pair{4, 2}}) {
    SCOPED_TRACE(std::to_string(inner) + ", " + std::to_string(outer));
    std::vector<uint8_t> shared(2048, 0xab);
    EXPECT_EQ(tma_load_2d(tensor.map, inner, outer, shared.data(), 1024), 8u * 8 * 4);
    for (int row = 0; row < 8; ++row)
      for (int column = 0; column < 8; ++column) {
        int x = inner + column, y = outer + row;
        bool inside = x >= 0 && x < 20 && y >= 0 && y < 13;
        float expected = inside ? 1000.0f * y + x : 0.0f;
        float value;
        std::memcpy(&value, &shared[1024 + tma_box_offset(Swizzle::bytes32, 32, row, column * 4)], 4);
        ASSERT_EQ(value, expected) << row << " " << column;
      }
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(shared[i], 0xab) << "wrote outside the box";
    for (int i = 1024 + 256; i < 2048; ++i) ASSERT_EQ(shared[i], 0xab) << "wrote outside the box";
  }
}

TEST(Tma, StoreWritesOnlyTheInBoundsPart) {
  for (auto [inner, outer] : {std::pair{16, 10}, std::pair{-5, -3}, std::pair{8, 4}, std::pair{24, 0}}) {
    SCOPED_TRACE(std::to_string(inner) + ", " + std::to_string(outer));
    RaggedTensor tensor;
    std::vector<uint8_t> shared(2048, 0);
    for (int row = 0; row < 8; ++row)
      for (int column = 0; column < 8; ++column) {
        float value = -(100.0f * row + column) - 0.5f;
        std::memcpy(&shared[1024 + tma_box_offset(Swizzle::bytes32, 32, row, column * 4)], &value, 4);
      }
    tma_store_2d(tensor.map, inner, outer, shared.data(), 1024);
    for (uint64_t y = 0; y < RaggedTensor::kRows; ++y)
      for (uint64_t x = 0; x < RaggedTensor::kPitch; ++x) {
        int row = static_cast<int>(y) - outer, column = static_cast<int>(x) - inner;
        bool stored = x < RaggedTensor::kColumns && row >= 0 && row < 8 && column >= 0 && column < 8;
        float expected = stored ? -(100.0f * row + column) - 0.5f : (x < RaggedTensor::kColumns ? 1000.0f * y + x : -1.0f);
        ASSERT_EQ(tensor.values[y * RaggedTensor::kPitch + x], expected) << y << " " << x;
      }
  }
}

// A 3-D map: 3 matrices of 13 × 20 f32 (rows of 24 elements), value 100000·matrix + 1000·row +
// column; boxes of 8 columns × 8 rows × 2 matrices, whose 16 packed rows number the rows of
// the first matrix, then the second's (the PTX ISA's box layout: dimension 1 fastest). Each
// coordinate outside its own extent reads zeros and is not written, so no row reads or writes
// the next matrix's.
TEST(Tma, ThreeDimensionalBoxesStackTheirMatricesAndClipEachOne) {
  constexpr uint64_t kColumns = 20, kRows = 13, kPitch = 24, kMatrices = 3;
  alignas(16) float values[kMatrices * kRows * kPitch];
  auto initial = [&](uint64_t z, uint64_t y, uint64_t x) { return x < kColumns ? 100000.0f * z + 1000.0f * y + x : -1.0f; };
  for (uint64_t z = 0; z < kMatrices; ++z)
    for (uint64_t y = 0; y < kRows; ++y)
      for (uint64_t x = 0; x < kPitch; ++x) values[(z * kRows + y) * kPitch + x] = initial(z, y, x);
  const uint64_t extents[3] = {kColumns, kRows, kMatrices}, strides[2] = {kPitch * 4, kRows * kPitch * 4};
  const uint32_t box[3] = {8, 8, 2}, element_strides[3] = {1, 1, 1};
  std::string error;
  const TensorMapFields map = encode_tensor_map(7, 3, values, extents, strides, box, element_strides, 0, 1, 0, error);
  ASSERT_EQ(error, "");
  auto inside = [&](int x, int y, int z) {
    return x >= 0 && x < static_cast<int>(kColumns) && y >= 0 && y < static_cast<int>(kRows) && z >= 0 &&
           z < static_cast<int>(kMatrices);
  };
  for (auto [x0, y0, z0] : {std::tuple{4, 8, 0}, std::tuple{16, -2, 2}, std::tuple{-3, 10, -1}}) {
    SCOPED_TRACE(std::to_string(x0) + ", " + std::to_string(y0) + ", " + std::to_string(z0));
    const int32_t at[3] = {x0, y0, z0};
    std::vector<uint8_t> shared(2048, 0xab);
    EXPECT_EQ(tma_load(map, at, shared.data(), 1024), 8u * 8 * 2 * 4);
    for (int m = 0; m < 2; ++m)
      for (int row = 0; row < 8; ++row)
        for (int column = 0; column < 8; ++column) {
          int x = x0 + column, y = y0 + row, z = z0 + m;
          float expected = inside(x, y, z) ? 100000.0f * z + 1000.0f * y + x : 0.0f, value;
          std::memcpy(&value, &shared[1024 + tma_box_offset(Swizzle::bytes32, 32, m * 8 + row, column * 4)], 4);
          ASSERT_EQ(value, expected) << m << " " << row << " " << column;
        }
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(shared[i], 0xab) << "wrote outside the box";
    // The same box stored back with every element negated: exactly the in-bounds part changes.
    for (int i = 1024; i < 1024 + 512; i += 4) {
      float value;
      std::memcpy(&value, &shared[i], 4);
      value = -value - 0.5f;
      std::memcpy(&shared[i], &value, 4);
    }
    tma_store(map, at, shared.data(), 1024);
    for (uint64_t z = 0; z < kMatrices; ++z)
      for (uint64_t y = 0; y < kRows; ++y)
        for (uint64_t x = 0; x < kPitch; ++x) {
          int column = static_cast<int>(x) - x0, row = static_cast<int>(y) - y0, m = static_cast<int>(z) - z0;
          bool stored = x < kColumns && column >= 0 && column < 8 && row >= 0 && row < 8 && m >= 0 && m < 2;
          float expected = stored ? -initial(z, y, x) - 0.5f : initial(z, y, x);
          ASSERT_EQ(values[(z * kRows + y) * kPitch + x], expected) << z << " " << y << " " << x;
          values[(z * kRows + y) * kPitch + x] = initial(z, y, x);
        }
  }
}

}  // namespace
