// tests/emulate/layout_tables_test.cpp — the emulator's layouts (runtime/emulate/layouts.h) and
// engine arithmetic (tensor_ops.h) against the reference tables in
// ../shared/reference/layouts/ (computed with CuTe, see the README there).
//
// Every entry of every table is checked: smem_canonical (descriptors decoded, then the address
// of every element of every k-step, at base 0 and at a 1024-aligned base, and for 64-row
// sub-blocks), wgmma_accumulator, wgmma_register_a (16-bit), tcgen05_instr_desc, tcgen05_ld,
// tma_swizzle (the formula and a real tma_load_2d). The matrix-multiply tests lay their
// operands out through the tables' chunk_offsets, never through operand_address, so they check
// the gather independently of the formulas they exercise. The rules encode_tensor_map enforces,
// TMA out-of-bounds fill and store clipping are in tma_rules_test.cpp; the integer forms (s8/u8
// operands, s32 accumulators) in integer_mma_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/emulate/layouts.h"
#include "runtime/emulate/tensor_ops.h"
#include "tests/emulate/layout_tables.h"

namespace {

using nlohmann::json;
using namespace tilec_emu;
using namespace tilec_emu::layout;
using namespace tilec_emu::reference;

Swizzle swizzle_named(const std::string& name) {
  if (name == "32B") return Swizzle::bytes32;
  if (name == "64B") return Swizzle::bytes64;
  if (name == "128B") return Swizzle::bytes128;
  return Swizzle::none;
}

// A descriptor with its start-address field replaced by `start` (bytes).
uint64_t with_start(uint64_t descriptor, uint32_t start) {
  return (descriptor & ~uint64_t{0x3fff}) | ((start >> 4) & 0x3fff);
}

// --- smem_canonical.json -------------------------------------------------------------------------
TEST(SmemCanonical, EveryElementOfEveryKStep) {
  LOAD_TABLE(table, "smem_canonical.json");
  ASSERT_EQ(table["cases"].size(), 52u);
  long elements = 0, descriptors = 0, samples = 0;
  for (const json& tile : table["cases"]) {
    SCOPED_TRACE(tile["id"].get<std::string>());
    const bool mn_major = tile["major"] == "MN";
    const int element_bytes = tile["element_bits"].get<int>() / 8;
    const int mn_extent = tile["mn"].get<int>(), instr_k = tile["instr_k"].get<int>();
    const Swizzle swizzle = swizzle_named(tile["swizzle"]);
    // The sample rows spell out the same offsets as the chunks.
    for (size_t i = 0; i < tile["sample_rows"].size(); ++i)
      for (int k = 0; k < tile["k"].get<int>(); ++k, ++samples)
        ASSERT_EQ(tile["sample_offsets"][i][k].get<uint32_t>(), table_offset(tile, tile["sample_rows"][i].get<int>(), k));
    for (const json& step : tile["k_steps"]) {
      const int k0 = step["k0"].get<int>();
      for (const char* generation : {"desc_sm90", "desc_sm100"}) {
        if (step[generation].is_null()) {
          EXPECT_TRUE(element_bytes == 1 && mn_major) << "only 8-bit MN-major tiles lack an sm_90 descriptor";
          continue;
        }
        SCOPED_TRACE(std::string(generation) + " k0=" + std::to_string(k0));
        const uint64_t raw = parse_hex(step[generation]);
        auto decode = [&](uint64_t descriptor) {
          return std::string(generation) == "desc_sm90" ? decode_sm90_descriptor(descriptor)
                                                        : decode_sm100_descriptor(descriptor);
        };
        MatrixDescriptor decoded = decode(raw);
        ++descriptors;
        ASSERT_EQ(decoded.error, "");
        EXPECT_EQ(decoded.start, step["start"].get<uint32_t>());
        EXPECT_EQ(decoded.leading_bytes, tile["lbo"].get<uint32_t>());
        EXPECT_EQ(decoded.stride_bytes, tile["sbo"].get<uint32_t>());
        EXPECT_EQ(decoded.base_offset, 0u);
        EXPECT_EQ(decoded.swizzle, swizzle);
        EXPECT_EQ(swizzle_width(decoded.swizzle), tile["swizzle_width_bytes"].get<int>());
        // The whole tile at base 0 and at a 1024-aligned base.
        for (uint32_t base : {0u, 0x2400u}) {
          MatrixDescriptor at_base = decode(raw + (base >> 4));
          for (int mn = 0; mn < mn_extent; ++mn)
            for (int k = 0; k < instr_k; ++k, ++elements)
              ASSERT_EQ(operand_address(at_base, mn_major, element_bytes, mn, k), base + table_offset(tile, mn, k0 + k))
                  << "base " << base << " element (" << mn << ", " << k0 + k << ")";
        }
        // 64-row sub-blocks (a WGMMA A slice, a B operand narrower than the tile) start at the
        // table offset of their first element with the same LBO/SBO.
        const int atom_mn = tile["atom_mn"].get<int>();
        if (mn_extent > 64 && 64 % atom_mn == 0)
          for (int first = 64; first < mn_extent; first += 64) {
            MatrixDescriptor block = decode(with_start(raw, table_offset(tile, first, k0)));
            for (int mn = 0; mn < 64; ++mn)
              for (int k = 0; k < instr_k; ++k, ++elements)
                ASSERT_EQ(operand_address(block, mn_major, element_bytes, mn, k), table_offset(tile, first + mn, k0 + k))
                    << "sub-block at row " << first << ", element (" << mn << ", " << k << ")";
          }
      }
    }
    // Every element of the tile is covered by exactly one k-step.
    EXPECT_EQ(tile["k_steps"].size() * instr_k, tile["k"].get<size_t>());
  }
  RecordProperty("elements", std::to_string(elements));
  std::printf("smem_canonical: %ld descriptors, %ld element addresses, %ld sample offsets checked\n", descriptors,
              elements, samples);
}

TEST(SmemCanonical, DescriptorRejections) {
  const uint64_t good90 = 0x4000004000010000ull, good100 = 0x4000404000010000ull;
  EXPECT_EQ(decode_sm90_descriptor(good90).error, "");
  EXPECT_EQ(decode_sm100_descriptor(good100).error, "");
  EXPECT_NE(decode_sm90_descriptor(good90 | uint64_t{1} << 46).error.find("bits 46-48"), std::string::npos);
  EXPECT_NE(decode_sm90_descriptor(good90 | uint64_t{1} << 55).error.find("bits 52-61"), std::string::npos);
  EXPECT_NE(decode_sm90_descriptor(good90 | uint64_t{1} << 15).error.find("bits 14-15"), std::string::npos);
  EXPECT_NE(decode_sm90_descriptor(good90 | uint64_t{1} << 31).error.find("bits 30-31"), std::string::npos);
  EXPECT_NE(decode_sm90_descriptor(good90 | uint64_t{2} << 49).error.find("base offset"), std::string::npos);
  EXPECT_NE(decode_sm100_descriptor(good90).error.find("bits 46-48 (version"), std::string::npos);
  EXPECT_NE(decode_sm100_descriptor(good100 | uint64_t{1} << 52).error.find("bit 52 (LBO mode"), std::string::npos);
  EXPECT_NE(decode_sm100_descriptor(good100 | uint64_t{1} << 57).error.find("bits 53-60"), std::string::npos);
  const uint64_t no_swizzle100 = good100 & ~(uint64_t{7} << 61);
  for (uint64_t value : {3u, 5u, 7u})
    EXPECT_NE(decode_sm100_descriptor(no_swizzle100 | value << 61).error.find("bits 61-63 (swizzle)"), std::string::npos)
        << value;
  EXPECT_NE(decode_sm100_descriptor(no_swizzle100 | uint64_t{1} << 61).error.find("32-byte atoms"), std::string::npos);
}

// --- wgmma_accumulator.json and wgmma_register_a.json --------------------------------------------
TEST(WgmmaFragments, Accumulator) {
  LOAD_TABLE(table, "wgmma_accumulator.json");
  long checked = 0;
  int f32_cases = 0, f16_cases = 0;
  for (const json& entry : table["cases"]) {
    SCOPED_TRACE(entry["id"].get<std::string>());
    const int registers = entry["registers_per_thread"].get<int>();
    ASSERT_EQ(entry["threads"].get<int>(), 128);
    for (int thread = 0; thread < 128; ++thread)
      for (int reg = 0; reg < registers; ++reg) {
        if (entry["accumulator"] == "f32") {
          RowColumn position = wgmma_accumulator(thread, reg);
          ASSERT_EQ(position.row, entry["row"][thread][reg].get<int>()) << thread << " " << reg;
          ASSERT_EQ(position.column, entry["col"][thread][reg].get<int>()) << thread << " " << reg;
          ++checked;
        } else {
          // f16 accumulators (tilec does not use them): value 2r + h is the f32 layout's value.
          for (int half = 0; half < 2; ++half, ++checked) {
            RowColumn position = wgmma_accumulator(thread, 2 * reg + half);
            ASSERT_EQ(position.row, entry["row"][thread][reg][half].get<int>());
            ASSERT_EQ(position.column, entry["col"][thread][reg][half].get<int>());
          }
        }
      }
    (entry["accumulator"] == "f32" ? f32_cases : f16_cases) += 1;
  }
  EXPECT_EQ(f32_cases, 6);
  EXPECT_EQ(f16_cases, 6);
  std::printf("wgmma_accumulator: %ld (thread, register[, half]) entries checked\n", checked);
}

TEST(WgmmaFragments, RegisterA16And8Bit) {
  LOAD_TABLE(table, "wgmma_register_a.json");
  long checked = 0;
  std::set<std::string> found;
  for (const json& entry : table["cases"]) {
    const std::string id = entry["id"];
    if (id != "b16_64x16" && id != "b8_64x32") continue;
    found.insert(id);
    const bool bytes = id == "b8_64x32";  // four 8-bit parts per register, else two 16-bit halves
    for (int thread = 0; thread < 128; ++thread)
      for (int reg = 0; reg < 4; ++reg)
        for (int part = 0; part < (bytes ? 4 : 2); ++part, ++checked) {
          RowColumn position =
              bytes ? wgmma_register_a_b8(thread, reg, part) : wgmma_register_a_b16(thread, reg, part);
          ASSERT_EQ(position.row, entry["row"][thread][reg][part].get<int>()) << id;
          ASSERT_EQ(position.column, entry["col"][thread][reg][part].get<int>()) << id;
        }
  }
  EXPECT_EQ(found.size(), 2u);
  std::printf("wgmma_register_a: %ld b16 and b8 entries checked\n", checked);
}

// --- tcgen05_instr_desc.json ---------------------------------------------------------------------
ElementFormat format_named(const std::string& name) {
  if (name == "f16") return ElementFormat::f16;
  if (name == "bf16") return ElementFormat::bf16;
  if (name == "e4m3") return ElementFormat::e4m3;
  if (name == "e5m2") return ElementFormat::e5m2;
  if (name == "f32") return ElementFormat::f32;
  return ElementFormat::unknown;
}

TEST(Tcgen05InstructionDescriptor, EveryEntry) {
  LOAD_TABLE(table, "tcgen05_instr_desc.json");
  ASSERT_EQ(table["descriptors"].size(), 240u);
  for (const json& entry : table["descriptors"]) {
    SCOPED_TRACE(entry["idesc"].get<std::string>() + " kind::" + entry["kind"].get<std::string>());
    const uint32_t idesc = static_cast<uint32_t>(parse_hex(entry["idesc"]));
    const MmaKind kind = entry["kind"] == "f16" ? MmaKind::f16 : MmaKind::f8f6f4;
    const json& fields = entry["fields"];
    InstructionDescriptor decoded = decode_instruction_descriptor(idesc, kind);
    EXPECT_EQ(decoded.error, "");
    EXPECT_EQ(decoded.d_format, format_named(entry["d"]));
    EXPECT_EQ(decoded.a_format, format_named(entry["a"]));
    EXPECT_EQ(decoded.b_format, format_named(entry["b"]));
    EXPECT_EQ(decoded.d_format, fields["d_format"] == 1 ? ElementFormat::f32 : ElementFormat::f16);
    EXPECT_EQ(decoded.a_mn_major, entry["a_major"] == "MN");
    EXPECT_EQ(decoded.b_mn_major, entry["b_major"] == "MN");
    EXPECT_EQ(decoded.a_mn_major, fields["a_major"] == 1);
    EXPECT_EQ(decoded.b_mn_major, fields["b_major"] == 1);
    EXPECT_EQ(decoded.negate_a, fields["negate_a"] == 1);
    EXPECT_EQ(decoded.negate_b, fields["negate_b"] == 1);
    EXPECT_EQ(decoded.m, entry["m"].get<int>());
    EXPECT_EQ(decoded.n, entry["n"].get<int>());
    EXPECT_EQ(decoded.m, fields["m_dim"].get<int>() << 4);
    EXPECT_EQ(decoded.n, fields["n_dim"].get<int>() << 3);
    // The fields the decoder only validates: the table has them all zero, as does the word.
    for (const char* zero : {"sparse_id2", "sparse", "saturate", "max_shift"}) EXPECT_EQ(fields[zero], 0) << zero;
    EXPECT_EQ(idesc & 0xc000000fu, 0u);
    const int a_format = fields["a_format"].get<int>(), b_format = fields["b_format"].get<int>();
    EXPECT_EQ((idesc >> 7) & 7, static_cast<uint32_t>(a_format));
    EXPECT_EQ((idesc >> 10) & 7, static_cast<uint32_t>(b_format));
  }
  std::printf("tcgen05_instr_desc: %zu descriptors checked\n", table["descriptors"].size());
}

TEST(Tcgen05InstructionDescriptor, Rejections) {
  const uint32_t good = 0x08410490u;  // kind::f16, bf16 × bf16 → f32, M = 128, N = 256
  ASSERT_EQ(decode_instruction_descriptor(good, MmaKind::f16).error, "");
  auto error_of = [](uint32_t idesc, MmaKind kind) { return decode_instruction_descriptor(idesc, kind).error; };
  auto with_m = [&](int m) { return (good & ~(0x1fu << 24)) | static_cast<uint32_t>(m >> 4) << 24; };
  auto with_n = [&](uint32_t idesc, int n) { return (idesc & ~(0x3fu << 17)) | static_cast<uint32_t>(n >> 3) << 17; };
  EXPECT_NE(error_of(with_m(256), MmaKind::f16).find("m (bits 24-28"), std::string::npos);
  EXPECT_NE(error_of(with_m(32), MmaKind::f16).find("m (bits 24-28"), std::string::npos);
  EXPECT_NE(error_of(with_n(good, 8), MmaKind::f16).find("multiple of 16"), std::string::npos);
  EXPECT_NE(error_of(with_n(good, 264), MmaKind::f16).find("n (bits 17-22"), std::string::npos);
  EXPECT_NE(error_of(with_n(good, 0), MmaKind::f16).find("n (bits 17-22"), std::string::npos);
  EXPECT_EQ(error_of(with_n(with_m(64), 8), MmaKind::f16), "");
  EXPECT_EQ(error_of(with_n(with_m(64), 248), MmaKind::f16), "");
  EXPECT_NE(error_of(good | 1u << 2, MmaKind::f16).find("bit 2 (sparse"), std::string::npos);
  EXPECT_NE(error_of(good | 1u << 0, MmaKind::f16).find("bits 0-1"), std::string::npos);
  EXPECT_NE(error_of(good | 1u << 3, MmaKind::f16).find("bit 3 (saturate"), std::string::npos);
  EXPECT_NE(error_of(good | 1u << 30, MmaKind::f16).find("bits 30-31"), std::string::npos);
  EXPECT_NE(error_of(good | 1u << 23, MmaKind::f16).find("bit 23"), std::string::npos);
  EXPECT_NE(error_of((good & ~(3u << 4)) | 2u << 4, MmaKind::f16).find("d_format"), std::string::npos);
  EXPECT_NE(error_of((good & ~(7u << 7)) | 2u << 7, MmaKind::f16).find("tf32"), std::string::npos);
  EXPECT_NE(error_of(good & ~(7u << 7), MmaKind::f16).find("one type"), std::string::npos);  // f16 × bf16
  EXPECT_NE(error_of((good & ~(7u << 10)) | 5u << 10, MmaKind::f8f6f4).find("not emulated"), std::string::npos);
  EXPECT_NE(error_of((good & ~(7u << 10)) | 2u << 10, MmaKind::f8f6f4).find("b_format"), std::string::npos);
  EXPECT_NE(error_of((good & ~(7u << 7)) | 7u << 7, MmaKind::f16).find("a_format"), std::string::npos);
  // kind::tf32: both formats 2 (the f16 kind's bf16 encoding is refused there), D f32.
  const uint32_t tf32 = (good & ~(0x3fu << 7)) | 2u << 7 | 2u << 10;
  EXPECT_EQ(error_of(tf32, MmaKind::tf32), "");
  EXPECT_EQ(decode_instruction_descriptor(tf32, MmaKind::tf32).a_format, ElementFormat::tf32);
  EXPECT_NE(error_of(good, MmaKind::tf32).find("kind::tf32 takes 2"), std::string::npos);
  EXPECT_NE(error_of(tf32 & ~(3u << 4), MmaKind::tf32).find("kind::tf32 takes 1 (f32)"), std::string::npos);
}

TmemShape shape_named(const std::string& name) {
  if (name == "16x64b") return TmemShape::lanes16_bits64;
  if (name == "16x128b") return TmemShape::lanes16_bits128;
  if (name == "16x256b") return TmemShape::lanes16_bits256;
  if (name == "16x32bx2") return TmemShape::lanes16_bits32x2;
  EXPECT_EQ(name, "32x32b") << "unknown tcgen05.ld shape";
  return TmemShape::lanes32_bits32;
}

// --- tcgen05_ld.json -------------------------------------------------------------------------------
TEST(Tcgen05Load, EveryForm) {
  LOAD_TABLE(table, "tcgen05_ld.json");
  ASSERT_EQ(table["tables"].size(), 27u);
  long checked = 0;
  for (const json& form : table["tables"]) {
    const std::string id = form["id"];
    SCOPED_TRACE(id);
    const std::string shape_name = id.substr(0, id.find('.'));
    const int repeat = std::stoi(id.substr(id.find(".x") + 2));
    const TmemShape shape = shape_named(shape_name);
    for (int thread = 0; thread < 32; ++thread)
      for (int reg = 0; reg < form["registers_per_thread"].get<int>(); ++reg, ++checked) {
        LaneColumn position = tmem_access(shape, repeat, thread, reg);
        ASSERT_EQ(position.lane, form["lane"][thread][reg].get<int>()) << thread << " " << reg;
        ASSERT_EQ(position.column, form["column"][thread][reg].get<int>()) << thread << " " << reg;
      }
  }
  std::printf("tcgen05_ld: %ld (thread, register) entries checked\n", checked);
}

// --- tma_swizzle.json --------------------------------------------------------------------------------
TEST(TmaSwizzle, EveryBoxByFormulaAndByLoad) {
  LOAD_TABLE(table, "tma_swizzle.json");
  ASSERT_EQ(table["boxes"].size(), 8u);
  long checked = 0;
  for (const json& box : table["boxes"]) {
    SCOPED_TRACE(box["id"].get<std::string>());
    const Swizzle swizzle = swizzle_named(box["swizzle"]);
    const int rows = box["box_rows"].get<int>(), row_bytes = box["row_bytes"].get<int>();
    const uint32_t element_bytes = box["element_bytes"].get<uint32_t>();
    const uint32_t columns = box["box_cols"].get<uint32_t>();
    ASSERT_EQ(columns * element_bytes, static_cast<uint32_t>(row_bytes));
    for (int row = 0; row < rows; ++row)
      for (int byte = 0; byte < row_bytes; ++byte, ++checked) {
        uint32_t expected = box["chunk_offsets"][row][byte / 16].get<uint32_t>() + byte % 16;
        ASSERT_EQ(tma_box_offset(swizzle, row_bytes, row, byte), expected) << row << " " << byte;
        ASSERT_EQ(apply_swizzle(swizzle, 0x2400 + row * row_bytes + byte), 0x2400 + expected);
      }
    // The same box through a tensor map: element (row, column) of a tensor whose bytes count up
    // lands where the table says, at a 1024-aligned destination.
    const uint64_t extents[2] = {columns * 2, static_cast<uint64_t>(rows) * 2};
    const uint64_t strides[1] = {extents[0] * element_bytes};
    const uint32_t box_dim[2] = {columns, static_cast<uint32_t>(rows)}, element_strides[2] = {1, 1};
    std::vector<uint8_t> global(extents[0] * extents[1] * element_bytes + 16);
    uint8_t* aligned = global.data() + (16 - reinterpret_cast<uintptr_t>(global.data()) % 16) % 16;
    for (size_t i = 0; i < extents[0] * extents[1] * element_bytes; ++i) aligned[i] = static_cast<uint8_t>(i * 7 + i / 251);
    std::string error;
    TensorMapFields map = encode_tensor_map(box["element"] == "bf16" ? 9 : 7, 2, aligned, extents, strides, box_dim,
                                            element_strides, 0, box["cu_tensor_map_swizzle"].get<uint32_t>(), 0, error);
    ASSERT_EQ(error, "");
    ASSERT_EQ(tensor_map_swizzle(map), swizzle);
    std::vector<uint8_t> shared(0x2400 + rows * row_bytes, 0xee);
    const int32_t inner = static_cast<int32_t>(columns), outer = rows / 2;
    EXPECT_EQ(tma_load_2d(map, inner, outer, shared.data(), 0x2400), static_cast<uint32_t>(rows * row_bytes));
    for (int row = 0; row < rows; ++row)
      for (int byte = 0; byte < row_bytes; ++byte) {
        size_t source = (static_cast<size_t>(outer + row) * extents[0] + inner) * element_bytes + byte;
        uint32_t destination = 0x2400 + box["chunk_offsets"][row][byte / 16].get<uint32_t>() + byte % 16;
        ASSERT_EQ(shared[destination], aligned[source]) << row << " " << byte;
      }
    // And through a 4-D map whose box has a unit middle dimension (a <BQ, D> tile of a [B, S, H,
    // D] tensor: its rows lie H rows of the tensor apart): the same shared-memory layout, read
    // from every third row of batch 1, middle 2.
    const uint64_t extents_4d[4] = {columns * 2, 3, static_cast<uint64_t>(rows) * 2, 2};
    const uint64_t strides_4d[3] = {extents_4d[0] * element_bytes, 3 * extents_4d[0] * element_bytes,
                                    3 * extents_4d[0] * extents_4d[2] * element_bytes};
    const uint32_t box_4d[4] = {columns, 1, static_cast<uint32_t>(rows), 1}, element_strides_4d[4] = {1, 1, 1, 1};
    std::vector<uint8_t> global_4d(strides_4d[2] * 2 + 16);
    uint8_t* aligned_4d = global_4d.data() + (16 - reinterpret_cast<uintptr_t>(global_4d.data()) % 16) % 16;
    for (size_t i = 0; i < strides_4d[2] * 2; ++i) aligned_4d[i] = static_cast<uint8_t>(i * 7 + i / 251);
    TensorMapFields map_4d = encode_tensor_map(box["element"] == "bf16" ? 9 : 7, 4, aligned_4d, extents_4d, strides_4d,
                                               box_4d, element_strides_4d, 0, box["cu_tensor_map_swizzle"].get<uint32_t>(),
                                               0, error);
    ASSERT_EQ(error, "");
    std::fill(shared.begin(), shared.end(), 0xee);
    const int32_t at[4] = {inner, 2, outer, 1};
    EXPECT_EQ(tma_load(map_4d, at, shared.data(), 0x2400), static_cast<uint32_t>(rows * row_bytes));
    for (int row = 0; row < rows; ++row)
      for (int byte = 0; byte < row_bytes; ++byte) {
        size_t source = static_cast<size_t>(strides_4d[2] + (outer + row) * strides_4d[1] + 2 * strides_4d[0]) +
                        inner * element_bytes + static_cast<size_t>(byte);
        uint32_t destination = 0x2400 + box["chunk_offsets"][row][byte / 16].get<uint32_t>() + byte % 16;
        ASSERT_EQ(shared[destination], aligned_4d[source]) << "4-D: " << row << " " << byte;
      }
  }
  std::printf("tma_swizzle: %ld box bytes checked\n", checked);
}

// --- operand conversion -------------------------------------------------------------------------------
TEST(OperandConversion, ExactValues) {
  auto f16 = [](uint16_t bits) { return operand_to_float(OperandType::f16, reinterpret_cast<const uint8_t*>(&bits)); };
  auto bf16 = [](uint16_t bits) { return operand_to_float(OperandType::bf16, reinterpret_cast<const uint8_t*>(&bits)); };
  auto e4m3 = [](uint8_t bits) { return operand_to_float(OperandType::e4m3, &bits); };
  auto e5m2 = [](uint8_t bits) { return operand_to_float(OperandType::e5m2, &bits); };
  EXPECT_EQ(f16(0x3c00), 1.0f);
  EXPECT_EQ(f16(0xc000), -2.0f);
  EXPECT_EQ(f16(0x7bff), 65504.0f);
  EXPECT_EQ(f16(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(f16(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isinf(f16(0xfc00)) && f16(0xfc00) < 0);
  EXPECT_TRUE(std::isnan(f16(0x7e00)));
  EXPECT_EQ(bf16(0x3f80), 1.0f);
  EXPECT_EQ(bf16(0xc2f7), -123.5f);
  EXPECT_EQ(e4m3(0x38), 1.0f);
  EXPECT_EQ(e4m3(0x7e), 448.0f);
  EXPECT_EQ(e4m3(0xfe), -448.0f);
  EXPECT_EQ(e4m3(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3(0x0f), std::ldexp(1.0f, -6) * 1.875f);
  EXPECT_TRUE(std::isnan(e4m3(0x7f)));
  EXPECT_EQ(e4m3(0x78), 256.0f);  // exponent 15 is a normal exponent in e4m3
  EXPECT_EQ(e5m2(0x3c), 1.0f);
  EXPECT_EQ(e5m2(0x7b), 57344.0f);
  EXPECT_EQ(e5m2(0x01), std::ldexp(1.0f, -16));
  EXPECT_TRUE(std::isinf(e5m2(0x7c)));
  EXPECT_TRUE(std::isnan(e5m2(0x7d)));
  EXPECT_EQ(operand_bytes(OperandType::bf16), 2);
  EXPECT_EQ(operand_bytes(OperandType::e5m2), 1);
  // tf32: an f32 pattern whose low 13 mantissa bits are ignored (truncation toward zero).
  auto tf32 = [](uint32_t bits) { return operand_to_float(OperandType::tf32, reinterpret_cast<const uint8_t*>(&bits)); };
  EXPECT_EQ(operand_bytes(OperandType::tf32), 4);
  EXPECT_EQ(tf32(0x3f800000), 1.0f);
  EXPECT_EQ(tf32(0x3f801fff), 1.0f);                           // 1 + 8191·2^-23: below tf32's ulp of 2^-10
  EXPECT_EQ(tf32(0x3f802000), 1.0f + std::ldexp(1.0f, -10));   // the first bit tf32 keeps
  EXPECT_EQ(tf32(0xbf803fff), -(1.0f + std::ldexp(1.0f, -10))); // toward zero for negatives too
  EXPECT_EQ(tf32(0x00001fff), 0.0f);                           // a subnormal below the kept bits
  EXPECT_TRUE(std::isinf(tf32(0x7f800000)));
  EXPECT_TRUE(std::isnan(tf32(0x7f800001)));                   // a NaN stays NaN, not infinity
}

// --- matrix multiply against a naive product ---------------------------------------------------------
// A tile of smem_canonical placed in a shared-memory byte array at `base` with random elements
// written through the table's offsets; value(mn, k) is the element as float.
struct PlacedTile {
  const json* tile = nullptr;
  uint32_t base = 0;
  std::vector<float> values;  // [mn][k]
  int mn = 0, k = 0;
  float value(int row, int column) const { return values[static_cast<size_t>(row) * k + column]; }
};

PlacedTile place_tile(const json& tile, std::vector<uint8_t>& shared, uint32_t base, OperandType type, std::mt19937& random) {
  PlacedTile placed{&tile, base, {}, tile["mn"].get<int>(), tile["k"].get<int>()};
  placed.values.resize(static_cast<size_t>(placed.mn) * placed.k);
  const int element_bytes = operand_bytes(type);
  for (int mn = 0; mn < placed.mn; ++mn)
    for (int k = 0; k < placed.k; ++k) {
      uint8_t bytes[2];
      if (element_bytes == 2) {
        // bf16/f16 with a random sign, 7 random mantissa bits and a small exponent range.
        uint16_t bits = static_cast<uint16_t>(type == OperandType::bf16 ? 0x3e00 + (random() % 0x200)
                                                                        : 0x3400 + (random() % 0x1000));
        if (random() % 2) bits |= 0x8000;
        std::memcpy(bytes, &bits, 2);
      } else {
        bytes[0] = static_cast<uint8_t>(0x20 + random() % 0x38);  // finite e4m3/e5m2, no NaN
        if (random() % 2) bytes[0] |= 0x80;
      }
      std::memcpy(&shared[base + table_offset(tile, mn, k)], bytes, element_bytes);
      placed.values[static_cast<size_t>(mn) * placed.k + k] = operand_to_float(type, bytes);
    }
  return placed;
}

// D[m][n] = sum over k in order of a(m, k)·b(n, k), one float multiply and add per step.
std::vector<float> naive_product(const PlacedTile& a, const PlacedTile& b, int rows, int k_extent) {
  std::vector<float> d(static_cast<size_t>(rows) * b.mn, 0.0f);
  for (int m = 0; m < rows; ++m)
    for (int n = 0; n < b.mn; ++n) {
      float sum = 0.0f;
      for (int k = 0; k < k_extent; ++k) {
        float product = a.value(m, k) * b.value(n, k);
        sum = sum + product;
      }
      d[static_cast<size_t>(m) * b.mn + n] = sum;
    }
  return d;
}

TEST(MatrixMultiply, WgmmaAgainstNaiveProduct) {
  LOAD_TABLE(table, "smem_canonical.json");
  std::mt19937 random(7);
  int pairs = 0;
  for (const json& a_tile : table["cases"]) {
    if (a_tile["mn"] != 64 || a_tile["element_bits"] != 16) continue;
    for (const json& b_tile : table["cases"]) {
      if (b_tile["element_bits"] != 16 || b_tile["k"] != a_tile["k"] || b_tile["mn"].get<int>() > 256) continue;
      SCOPED_TRACE(a_tile["id"].get<std::string>() + " × " + b_tile["id"].get<std::string>());
      const OperandType type = pairs % 2 ? OperandType::f16 : OperandType::bf16;
      std::vector<uint8_t> shared(0x1000 + 0x20000);
      PlacedTile a = place_tile(a_tile, shared, 0x1000, type, random);
      PlacedTile b = place_tile(b_tile, shared, 0x1000 + 0x8000, type, random);
      const int n = b.mn;
      std::vector<float> d(64 * static_cast<size_t>(n), 12345.0f), d_registers = d;
      for (size_t step = 0; step < a_tile["k_steps"].size(); ++step) {
        uint64_t a_descriptor = parse_hex(a_tile["k_steps"][step]["desc_sm90"]) + (a.base >> 4);
        uint64_t b_descriptor = parse_hex(b_tile["k_steps"][step]["desc_sm90"]) + (b.base >> 4);
        bool a_mn = a_tile["major"] == "MN", b_mn = b_tile["major"] == "MN";
        wgmma_compute(shared.data(), n, type, type, a_descriptor, a_mn, nullptr, b_descriptor, b_mn, step > 0, d.data());
        // A from registers: the dense 64×16 values of this k-step.
        std::vector<float> a_dense(64 * 16);
        for (int m = 0; m < 64; ++m)
          for (int k = 0; k < 16; ++k) a_dense[m * 16 + k] = a.value(m, 16 * static_cast<int>(step) + k);
        wgmma_compute(shared.data(), n, type, type, 0, false, a_dense.data(), b_descriptor, b_mn, step > 0, d_registers.data());
      }
      std::vector<float> expected = naive_product(a, b, 64, a.k);
      for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_EQ(d[i], expected[i]) << "D[" << i / n << "][" << i % n << "]";
        ASSERT_EQ(d_registers[i], expected[i]) << "registers: D[" << i / n << "][" << i % n << "]";
      }
      ++pairs;
    }
  }
  EXPECT_GE(pairs, 40);
  std::printf("wgmma_compute: %d A×B tile pairs checked\n", pairs);
}

// tf32 (no 32-bit cases in the tables): a canonical layout is defined in bytes, rows of 16-byte
// chunks (CuTe derives every type's K-major atom from one bit-level atom), so a K-major tile of
// tf32 is the 16-bit tile of twice its columns: element (mn, j) is the 4 bytes at the 16-bit
// offset of (mn, 2j), and a 32-byte k-step (16 16-bit elements, 8 tf32 ones) has the same
// descriptor. Values get random low mantissa bits, which the tensor cores ignore: `values` hold
// each with its low 13 bits cleared.
PlacedTile place_tf32_tile(const json& tile16, std::vector<uint8_t>& shared, uint32_t base, std::mt19937& random) {
  PlacedTile placed{&tile16, base, {}, tile16["mn"].get<int>(), tile16["k"].get<int>() / 2};
  placed.values.resize(static_cast<size_t>(placed.mn) * placed.k);
  for (int mn = 0; mn < placed.mn; ++mn)
    for (int j = 0; j < placed.k; ++j) {
      uint32_t bits = 0x3e000000u + static_cast<uint32_t>(random() % 0x1000000u);  // [0.125, 0.5)
      if (random() % 2) bits |= 0x80000000u;
      std::memcpy(&shared[base + table_offset(tile16, mn, 2 * j)], &bits, 4);
      const uint32_t kept = bits & ~0x1fffu;
      std::memcpy(&placed.values[static_cast<size_t>(mn) * placed.k + j], &kept, 4);
    }
  return placed;
}

TEST(MatrixMultiply, Tf32TilesAreTheSixteenBitLayoutsInBytesWithTheLowBitsIgnored) {
  LOAD_TABLE(table, "smem_canonical.json");
  std::mt19937 random(13);
  int wgmma_pairs = 0, tcgen05_pairs = 0;
  for (const json& a_tile : table["cases"]) {
    const int m = a_tile["mn"].get<int>();
    if (a_tile["element_bits"] != 16 || a_tile["major"] != "K" || m > 128) continue;
    for (const json& b_tile : table["cases"]) {
      if (b_tile["element_bits"] != 16 || b_tile["major"] != "K" || b_tile["k"] != a_tile["k"]) continue;
      SCOPED_TRACE(a_tile["id"].get<std::string>() + " × " + b_tile["id"].get<std::string>() + " as tf32");
      std::vector<uint8_t> shared(0x1000 + 0x20000);
      PlacedTile a = place_tf32_tile(a_tile, shared, 0x1000, random);
      PlacedTile b = place_tf32_tile(b_tile, shared, 0x1000 + 0x10000, random);
      const int n = b.mn;
      const std::vector<float> expected = naive_product(a, b, m, a.k);
      if (m == 64) {  // WGMMA: M = 64
        std::vector<float> d(64 * static_cast<size_t>(n), 12345.0f);
        for (size_t step = 0; step < a_tile["k_steps"].size(); ++step)
          wgmma_compute(shared.data(), n, OperandType::tf32, OperandType::tf32, parse_hex(a_tile["k_steps"][step]["desc_sm90"]) + (a.base >> 4),
                        false, nullptr, parse_hex(b_tile["k_steps"][step]["desc_sm90"]) + (b.base >> 4), false, step > 0,
                        d.data());
        for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(d[i], expected[i]) << "WGMMA D[" << i / n << "][" << i % n << "]";
        ++wgmma_pairs;
      }
      // tcgen05.mma kind::tf32 (formats 2), D f32 at TMEM column 0, M = 64 (layout F) or 128.
      const uint32_t idesc = 1u << 4 | 2u << 7 | 2u << 10 | static_cast<uint32_t>(n >> 3) << 17 | static_cast<uint32_t>(m >> 4) << 24;
      std::vector<uint32_t> tmem(128 * 512, 0);
      for (size_t step = 0; step < a_tile["k_steps"].size(); ++step)
        ASSERT_EQ(tcgen05_mma_compute(shared.data(), tmem.data(), 0, parse_hex(a_tile["k_steps"][step]["desc_sm100"]) + (a.base >> 4),
                                      parse_hex(b_tile["k_steps"][step]["desc_sm100"]) + (b.base >> 4), idesc, MmaKind::tf32,
                                      step > 0),
                  "");
      for (int row = 0; row < m; ++row)
        for (int j = 0; j < n; ++j) {
          const int lane = m == 128 ? row : 32 * (row / 16) + row % 16;
          float value;
          std::memcpy(&value, &tmem[static_cast<size_t>(lane) * 512 + j], 4);
          ASSERT_EQ(value, expected[static_cast<size_t>(row) * n + j]) << "tcgen05 D[" << row << "][" << j << "]";
        }
      ++tcgen05_pairs;
    }
  }
  EXPECT_GE(wgmma_pairs, 8);
  EXPECT_GE(tcgen05_pairs, 16);
  std::printf("tf32: %d WGMMA and %d tcgen05 tile pairs checked\n", wgmma_pairs, tcgen05_pairs);
}

// WGMMA of e4m3 x e5m2 (either order): each operand converted by its own type.
TEST(MatrixMultiply, WgmmaMixesE4m3AndE5m2) {
  LOAD_TABLE(table, "smem_canonical.json");
  std::mt19937 random(17);
  const json& a_tile = find_case(table, "b8_K_128B_64x128");
  for (const char* b_id : {"b8_K_128B_128x128", "b8_K_64B_256x128"})
    for (auto [a_type, b_type] : {std::pair{OperandType::e4m3, OperandType::e5m2}, std::pair{OperandType::e5m2, OperandType::e4m3}}) {
      SCOPED_TRACE(std::string("b8_K_128B_64x128 × ") + b_id);
      const json& b_tile = find_case(table, b_id);
      std::vector<uint8_t> shared(0x1000 + 0x20000);
      PlacedTile a = place_tile(a_tile, shared, 0x1000, a_type, random);
      PlacedTile b = place_tile(b_tile, shared, 0x1000 + 0x8000, b_type, random);
      std::vector<float> d(64 * static_cast<size_t>(b.mn), 12345.0f);
      for (size_t step = 0; step < a_tile["k_steps"].size(); ++step)
        wgmma_compute(shared.data(), b.mn, a_type, b_type, parse_hex(a_tile["k_steps"][step]["desc_sm90"]) + (a.base >> 4), false,
                      nullptr, parse_hex(b_tile["k_steps"][step]["desc_sm90"]) + (b.base >> 4), false, step > 0, d.data());
      const std::vector<float> expected = naive_product(a, b, 64, a.k);
      for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(d[i], expected[i]) << "D[" << i / b.mn << "][" << i % b.mn << "]";
    }
}

// tcgen05.mma with D at `column` of TMEM; checks D and that nothing else in TMEM changed.
void check_tcgen05(const json& table, const std::string& a_id, const std::string& b_id, OperandType a_type,
                   OperandType b_type, int m, std::mt19937& random) {
  SCOPED_TRACE(a_id + " × " + b_id + " M=" + std::to_string(m));
  const json& a_tile = find_case(table, a_id);
  const json& b_tile = find_case(table, b_id);
  std::vector<uint8_t> shared(0x1000 + 0x20000);
  PlacedTile a = place_tile(a_tile, shared, 0x1000, a_type, random);
  PlacedTile b = place_tile(b_tile, shared, 0x1000 + 0x10000, b_type, random);
  const bool f8 = operand_bytes(a_type) == 1;
  auto format = [&](OperandType type) {
    return static_cast<uint32_t>(type == OperandType::bf16 || type == OperandType::e5m2 ? 1 : 0);
  };
  const uint32_t idesc = 1u << 4 | format(a_type) << 7 | format(b_type) << 10 |
                         static_cast<uint32_t>(a_tile["major"] == "MN") << 15 |
                         static_cast<uint32_t>(b_tile["major"] == "MN") << 16 | static_cast<uint32_t>(b.mn >> 3) << 17 |
                         static_cast<uint32_t>(m >> 4) << 24;
  const uint32_t column = 512 - static_cast<uint32_t>(b.mn) - 8;
  std::vector<uint32_t> tmem(128 * 512);
  for (size_t i = 0; i < tmem.size(); ++i) tmem[i] = static_cast<uint32_t>(i * 2654435761u);
  const std::vector<uint32_t> before = tmem;
  for (size_t step = 0; step < a_tile["k_steps"].size(); ++step) {
    uint64_t a_descriptor = parse_hex(a_tile["k_steps"][step]["desc_sm100"]) + (a.base >> 4);
    uint64_t b_descriptor = parse_hex(b_tile["k_steps"][step]["desc_sm100"]) + (b.base >> 4);
    ASSERT_EQ(tcgen05_mma_compute(shared.data(), tmem.data(), column, a_descriptor, b_descriptor, idesc,
                                  f8 ? MmaKind::f8f6f4 : MmaKind::f16, step > 0),
              "");
  }
  std::vector<float> expected = naive_product(a, b, m, a.k);
  for (int lane = 0; lane < 128; ++lane)
    for (uint32_t col = 0; col < 512; ++col) {
      // Layout D (M = 128): row = lane. Layout F (M = 64): rows 16w..16w+15 in lanes 32w..32w+15.
      int row = m == 128 ? lane : (lane % 32 < 16 ? 16 * (lane / 32) + lane % 32 : -1);
      uint32_t cell = tmem[static_cast<size_t>(lane) * 512 + col];
      if (row >= 0 && col >= column && col < column + static_cast<uint32_t>(b.mn)) {
        float value;
        std::memcpy(&value, &cell, 4);
        ASSERT_EQ(value, expected[static_cast<size_t>(row) * b.mn + (col - column)]) << "lane " << lane << " column " << col;
      } else {
        ASSERT_EQ(cell, before[static_cast<size_t>(lane) * 512 + col]) << "lane " << lane << " column " << col;
      }
    }
}

TEST(MatrixMultiply, Tcgen05AgainstNaiveProduct) {
  LOAD_TABLE(table, "smem_canonical.json");
  std::mt19937 random(11);
  check_tcgen05(table, "b16_K_128B_128x64", "b16_MN_128B_256x64", OperandType::bf16, OperandType::bf16, 128, random);
  check_tcgen05(table, "b16_K_128B_128x64", "b16_K_128B_128x64", OperandType::bf16, OperandType::bf16, 128, random);
  check_tcgen05(table, "b16_MN_64B_128x64", "b16_MN_32B_128x64_mnfirst", OperandType::f16, OperandType::f16, 128, random);
  check_tcgen05(table, "b16_K_none_128x64", "b16_MN_none_256x64", OperandType::bf16, OperandType::bf16, 128, random);
  check_tcgen05(table, "b16_K_128B_64x64", "b16_MN_128B_64x64", OperandType::bf16, OperandType::bf16, 64, random);
  check_tcgen05(table, "b16_MN_32B_64x16", "b16_K_32B_64x16", OperandType::f16, OperandType::f16, 64, random);
  check_tcgen05(table, "b8_K_128B_128x128", "b8_MN_128B_256x128", OperandType::e4m3, OperandType::e5m2, 128, random);
  check_tcgen05(table, "b8_MN_64B_128x128", "b8_K_none_128x128", OperandType::e5m2, OperandType::e4m3, 128, random);
}

TEST(MatrixMultiply, Tcgen05Rejections) {
  std::vector<uint8_t> shared(0x10000);  // B: 256 rows of SBO = 1024 bytes
  std::vector<uint32_t> tmem(128 * 512);
  const uint64_t descriptor = 0x4000404000010000ull;
  const uint32_t f32_d = 0x08410490u, f16_d = 0x08410480u;
  EXPECT_EQ(tcgen05_mma_compute(shared.data(), tmem.data(), 256, descriptor, descriptor, f32_d, MmaKind::f16, false), "");
  EXPECT_NE(tcgen05_mma_compute(shared.data(), tmem.data(), 257, descriptor, descriptor, f32_d, MmaKind::f16, false)
                .find("outside TMEM's 512 columns"),
            std::string::npos);
  EXPECT_EQ(tcgen05_mma_compute(shared.data(), tmem.data(), 0, descriptor, descriptor, f16_d, MmaKind::f16, false),
            "f16 accumulators in TMEM are not emulated");
  EXPECT_NE(tcgen05_mma_compute(shared.data(), tmem.data(), 0, descriptor, descriptor, f32_d | 4, MmaKind::f16, false)
                .find("invalid instruction descriptor 0x08410494"),
            std::string::npos);
  EXPECT_NE(tcgen05_mma_compute(shared.data(), tmem.data(), 0, descriptor & ~(uint64_t{1} << 46), descriptor, f32_d,
                                MmaKind::f16, false)
                .find("invalid A descriptor"),
            std::string::npos);
}

}  // namespace
