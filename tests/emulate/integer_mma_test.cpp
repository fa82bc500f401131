// tests/emulate/integer_mma_test.cpp — the integer tensor-core forms (s8/u8 operands, s32
// accumulators) against a naive int64 product: WGMMA m64nNk32.s32 (tensor_ops.h wgmma_compute)
// and tcgen05.mma kind::i8 (tcgen05_mma_compute), and the kind::i8 instruction descriptor.
//
// Operands are placed through the 8-bit tiles of smem_canonical.json (a layout is defined in
// bytes, so an s8 or u8 tile is laid out exactly as an e4m3 one), never through operand_address.
// Their bytes are random except rows 0, 1 and 2, which are all 0x80, 0xff and 0x7f (-128, -1, 127
// as s8; 128, 255, 127 as u8), so -128 × -128 and 255 × 127 are among the products. Each form is
// run twice: from a D its first k-step must ignore, and accumulating onto a D near INT32_MAX,
// where the sums of the large positive products pass 2^31 and must wrap.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/emulate/layouts.h"
#include "runtime/emulate/tensor_ops.h"
#include "tests/emulate/layout_tables.h"

namespace {

using namespace tilec_emu;
using namespace tilec_emu::layout;
using namespace tilec_emu::reference;

// An 8-bit tile placed at `base`; value(mn, k) is the integer its byte reads as.
struct IntegerTile {
  uint32_t base = 0;
  int mn = 0, k = 0;
  std::vector<int64_t> values;  // [mn][k]
  int64_t value(int row, int column) const { return values[static_cast<size_t>(row) * k + column]; }
};

IntegerTile place_integer_tile(const json& tile, std::vector<uint8_t>& shared, uint32_t base, OperandType type,
                               std::mt19937& random) {
  IntegerTile placed{base, tile["mn"].get<int>(), tile["k"].get<int>(), {}};
  placed.values.resize(static_cast<size_t>(placed.mn) * placed.k);
  for (int mn = 0; mn < placed.mn; ++mn)
    for (int k = 0; k < placed.k; ++k) {
      const uint8_t byte = mn == 0 ? 0x80 : mn == 1 ? 0xff : mn == 2 ? 0x7f : static_cast<uint8_t>(random());
      shared[base + table_offset(tile, mn, k)] = byte;
      placed.values[static_cast<size_t>(mn) * placed.k + k] =
          type == OperandType::s8 ? int64_t{static_cast<int8_t>(byte)} : int64_t{byte};
    }
  return placed;
}

// D[m][j] = sum over k of a(m, k)·b(j, k) for j < n, exact.
std::vector<int64_t> naive_product(const IntegerTile& a, const IntegerTile& b, int rows, int n) {
  std::vector<int64_t> d(static_cast<size_t>(rows) * n, 0);
  for (int m = 0; m < rows; ++m)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < a.k; ++k) d[static_cast<size_t>(m) * n + j] += a.value(m, k) * b.value(j, k);
  return d;
}

// An exact sum as a 32-bit two's complement register holds it.
int32_t wrapped(int64_t sum) { return static_cast<int32_t>(static_cast<uint32_t>(sum)); }

// A D to start from near INT32_MAX, different in every element.
int32_t near_max(size_t i) { return INT32_MAX - 1000 - static_cast<int32_t>(i % 97); }

const char* type_name(OperandType type) { return type == OperandType::s8 ? "s8" : "u8"; }

// --- WGMMA m64nNk32.s32 --------------------------------------------------------------------------
TEST(IntegerMma, WgmmaAgainstNaiveProduct) {
  LOAD_TABLE(table, "smem_canonical.json");
  std::mt19937 random(23);
  const json& a_tile = find_case(table, "b8_K_128B_64x128");
  const json& b_tile = find_case(table, "b8_K_none_128x128");
  const auto types = {std::pair{OperandType::s8, OperandType::s8}, std::pair{OperandType::u8, OperandType::s8},
                      std::pair{OperandType::s8, OperandType::u8}, std::pair{OperandType::u8, OperandType::u8}};
  for (auto [a_type, b_type] : types)
    for (int n : {64, 16}) {  // B: the first n rows of its tile
      SCOPED_TRACE(std::string(type_name(a_type)) + " × " + type_name(b_type) + ", n = " + std::to_string(n));
      std::vector<uint8_t> shared(0x1000 + 0x10000);
      const IntegerTile a = place_integer_tile(a_tile, shared, 0x1000, a_type, random);
      const IntegerTile b = place_integer_tile(b_tile, shared, 0x4000, b_type, random);
      const std::vector<int64_t> product = naive_product(a, b, 64, n);
      auto run = [&](std::vector<int32_t>& d, bool accumulate_first) {
        for (size_t step = 0; step < a_tile["k_steps"].size(); ++step)
          wgmma_compute(shared.data(), n, a_type, b_type, parse_hex(a_tile["k_steps"][step]["desc_sm90"]) + (a.base >> 4),
                        parse_hex(b_tile["k_steps"][step]["desc_sm90"]) + (b.base >> 4), accumulate_first || step > 0,
                        d.data());
      };
      // scale-d 0 on the first k-step: whatever D held is ignored.
      std::vector<int32_t> d(product.size());
      for (int32_t& value : d) value = static_cast<int32_t>(random());
      run(d, false);
      for (size_t i = 0; i < product.size(); ++i) ASSERT_EQ(d[i], wrapped(product[i])) << "D[" << i / n << "][" << i % n << "]";
      // scale-d 1 throughout, onto a D near INT32_MAX.
      int wraps = 0;
      for (size_t i = 0; i < d.size(); ++i) d[i] = near_max(i);
      run(d, true);
      for (size_t i = 0; i < product.size(); ++i) {
        ASSERT_EQ(d[i], wrapped(near_max(i) + product[i])) << "accumulated D[" << i / n << "][" << i % n << "]";
        wraps += near_max(i) + product[i] > INT32_MAX;
      }
      EXPECT_GT(wraps, 0) << "no sum passed 2^31";
    }
}

// --- tcgen05.mma kind::i8 ------------------------------------------------------------------------
// D at the top of TMEM's columns, M = 128 (layout D: row r in lane r) or 64 (layout F: rows
// 16w..16w+15 in lanes 32w..32w+15); every other cell must keep its value.
void check_tcgen05_i8(const json& table, const std::string& a_id, const std::string& b_id, OperandType a_type,
                      OperandType b_type, int m, int n, std::mt19937& random) {
  SCOPED_TRACE(a_id + " (" + type_name(a_type) + ") × " + b_id + " (" + type_name(b_type) + "), M = " +
               std::to_string(m) + ", N = " + std::to_string(n));
  const json& a_tile = find_case(table, a_id);
  const json& b_tile = find_case(table, b_id);
  std::vector<uint8_t> shared(0x1000 + 0x20000);
  const IntegerTile a = place_integer_tile(a_tile, shared, 0x1000, a_type, random);
  const IntegerTile b = place_integer_tile(b_tile, shared, 0x1000 + 0x10000, b_type, random);
  const std::vector<int64_t> product = naive_product(a, b, m, n);
  auto format = [](OperandType type) { return type == OperandType::s8 ? 1u : 0u; };
  const uint32_t idesc = 2u << 4 | format(a_type) << 7 | format(b_type) << 10 |
                         static_cast<uint32_t>(a_tile["major"] == "MN") << 15 |
                         static_cast<uint32_t>(b_tile["major"] == "MN") << 16 | static_cast<uint32_t>(n >> 3) << 17 |
                         static_cast<uint32_t>(m >> 4) << 24;
  const uint32_t column = 512 - static_cast<uint32_t>(n) - 8;
  auto row_of = [&](int lane) { return m == 128 ? lane : (lane % 32 < 16 ? 16 * (lane / 32) + lane % 32 : -1); };
  std::vector<uint32_t> tmem(128 * 512);
  for (size_t i = 0; i < tmem.size(); ++i) tmem[i] = static_cast<uint32_t>(i * 2654435761u);
  for (bool accumulate_first : {false, true}) {
    SCOPED_TRACE(accumulate_first ? "accumulating onto D near INT32_MAX" : "the first k-step ignores D");
    if (accumulate_first)
      for (int lane = 0; lane < 128; ++lane)
        for (int j = 0; j < n; ++j)
          if (const int row = row_of(lane); row >= 0)
            tmem[static_cast<size_t>(lane) * 512 + column + j] =
                static_cast<uint32_t>(near_max(static_cast<size_t>(row) * n + j));
    const std::vector<uint32_t> before = tmem;
    for (size_t step = 0; step < a_tile["k_steps"].size(); ++step)
      ASSERT_EQ(tcgen05_mma_compute(shared.data(), tmem.data(), column,
                                    parse_hex(a_tile["k_steps"][step]["desc_sm100"]) + (a.base >> 4),
                                    parse_hex(b_tile["k_steps"][step]["desc_sm100"]) + (b.base >> 4), idesc, MmaKind::i8,
                                    accumulate_first || step > 0),
                "");
    int wraps = 0;
    for (int lane = 0; lane < 128; ++lane)
      for (uint32_t col = 0; col < 512; ++col) {
        const int row = row_of(lane);
        const uint32_t cell = tmem[static_cast<size_t>(lane) * 512 + col];
        if (row < 0 || col < column || col >= column + static_cast<uint32_t>(n)) {
          ASSERT_EQ(cell, before[static_cast<size_t>(lane) * 512 + col]) << "lane " << lane << " column " << col;
          continue;
        }
        const size_t i = static_cast<size_t>(row) * n + (col - column);
        const int64_t start = accumulate_first ? near_max(i) : 0;
        ASSERT_EQ(static_cast<int32_t>(cell), wrapped(start + product[i])) << "lane " << lane << " column " << col;
        wraps += start + product[i] > INT32_MAX;
      }
    if (accumulate_first) {
      EXPECT_GT(wraps, 0) << "no sum passed 2^31";
    }
  }
}

TEST(IntegerMma, Tcgen05KindI8AgainstNaiveProduct) {
  LOAD_TABLE(table, "smem_canonical.json");
  std::mt19937 random(29);
  check_tcgen05_i8(table, "b8_K_128B_128x128", "b8_K_64B_256x128", OperandType::s8, OperandType::u8, 128, 256, random);
  check_tcgen05_i8(table, "b8_MN_64B_128x128", "b8_MN_128B_256x128", OperandType::u8, OperandType::s8, 128, 128, random);
  check_tcgen05_i8(table, "b8_K_128B_64x128", "b8_K_none_128x128", OperandType::s8, OperandType::s8, 64, 64, random);
  check_tcgen05_i8(table, "b8_K_32B_64x32", "b8_K_32B_64x32", OperandType::u8, OperandType::u8, 64, 40, random);
}

// --- the kind::i8 instruction descriptor ---------------------------------------------------------
// The reference table has no kind::i8 entries; its kind::f8f6f4 ones share every field position.
// With D set to s32 (2) and the formats to u8 (0) / s8 (1), kind::i8 decodes them with the same
// shape and majors.
TEST(IntegerMma, Tcgen05KindI8InstructionDescriptors) {
  LOAD_TABLE(table, "tcgen05_instr_desc.json");
  int checked = 0;
  for (const json& entry : table["descriptors"]) {
    if (entry["kind"] != "f8f6f4") continue;
    const uint32_t f8 = static_cast<uint32_t>(parse_hex(entry["idesc"]));
    for (uint32_t a_format : {0u, 1u})
      for (uint32_t b_format : {0u, 1u}) {
        const uint32_t idesc = (f8 & ~(3u << 4 | 0x3fu << 7)) | 2u << 4 | a_format << 7 | b_format << 10;
        SCOPED_TRACE(entry["idesc"].get<std::string>() + " as kind::i8 " + std::to_string(idesc));
        const InstructionDescriptor decoded = decode_instruction_descriptor(idesc, MmaKind::i8);
        EXPECT_EQ(decoded.error, "");
        EXPECT_EQ(decoded.d_format, ElementFormat::s32);
        EXPECT_EQ(decoded.a_format, a_format ? ElementFormat::s8 : ElementFormat::u8);
        EXPECT_EQ(decoded.b_format, b_format ? ElementFormat::s8 : ElementFormat::u8);
        EXPECT_EQ(decoded.m, entry["m"].get<int>());
        EXPECT_EQ(decoded.n, entry["n"].get<int>());
        EXPECT_EQ(decoded.a_mn_major, entry["a_major"] == "MN");
        EXPECT_EQ(decoded.b_mn_major, entry["b_major"] == "MN");
        ++checked;
      }
  }
  EXPECT_EQ(checked, 6 * 24 * 4);  // 6 kind::f8f6f4 type pairs × 24 shapes and majors, × 4 format pairs
}

TEST(IntegerMma, Tcgen05KindI8Rejections) {
  const uint32_t good = 0x08400000u | 2u << 4 | 1u << 7;  // kind::i8, s8 × u8 → s32, M = 128, N = 256
  auto error_of = [](uint32_t idesc) { return decode_instruction_descriptor(idesc, MmaKind::i8).error; };
  ASSERT_EQ(error_of(good), "");
  EXPECT_NE(error_of((good & ~(3u << 4)) | 1u << 4).find("d_format (bits 4-5) is 1, kind::i8 takes 2 (s32)"),
            std::string::npos);
  EXPECT_NE(error_of(good & ~(3u << 4)).find("kind::i8 takes 2 (s32)"), std::string::npos);
  EXPECT_NE(error_of(good | 1u << 13).find("bit 13 (negate A"), std::string::npos);
  EXPECT_NE(error_of(good | 1u << 14).find("bit 14 (negate B"), std::string::npos);
  EXPECT_NE(error_of((good & ~(7u << 7)) | 2u << 7).find("a_format is 2, kind::i8 takes 0 (u8) or 1 (s8)"),
            std::string::npos);
  EXPECT_NE(error_of(good | 5u << 10).find("b_format is 5"), std::string::npos);
  EXPECT_NE(error_of(good | 1u << 3).find("saturating kind::i8 is not emulated"), std::string::npos);
  // The other kinds keep their D formats: s32 (2) is kind::i8's alone.
  EXPECT_NE(decode_instruction_descriptor(good, MmaKind::f8f6f4).error.find("d_format"), std::string::npos);
  // tcgen05.mma refuses what the decoder refuses, before touching TMEM.
  std::vector<uint8_t> shared(0x10000);
  std::vector<uint32_t> tmem(128 * 512, 7);
  const uint64_t descriptor = 0x4000404000010000ull;
  EXPECT_NE(tcgen05_mma_compute(shared.data(), tmem.data(), 0, descriptor, descriptor, good | 1u << 13, MmaKind::i8, true)
                .find("invalid instruction descriptor"),
            std::string::npos);
  EXPECT_EQ(tmem, std::vector<uint32_t>(128 * 512, 7));
}

TEST(IntegerMma, OperandConversion) {
  auto value = [](OperandType type, uint8_t byte) { return operand_to_float(type, &byte); };
  EXPECT_EQ(value(OperandType::s8, 0x80), -128.0f);
  EXPECT_EQ(value(OperandType::s8, 0xff), -1.0f);
  EXPECT_EQ(value(OperandType::s8, 0x7f), 127.0f);
  EXPECT_EQ(value(OperandType::u8, 0x80), 128.0f);
  EXPECT_EQ(value(OperandType::u8, 0xff), 255.0f);
  EXPECT_EQ(operand_bytes(OperandType::s8), 1);
  EXPECT_EQ(operand_bytes(OperandType::u8), 1);
  EXPECT_TRUE(operand_is_integer(OperandType::u8));
  EXPECT_FALSE(operand_is_integer(OperandType::e4m3));
}

}  // namespace
