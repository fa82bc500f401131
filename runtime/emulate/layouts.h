// runtime/emulate/layouts.h — the PTX ISA's data layouts, as the CUDA emulator reads them.
//
// Pure functions, no state: decoding of shared-memory matrix descriptors (WGMMA, tcgen05) and
// tcgen05 instruction descriptors, the canonical operand address function, the WGMMA
// accumulator and register-A fragments, the tcgen05.ld lane/column maps and the TMA box
// swizzle. Each is written from the PTX ISA (not from tilec's emitter) and tested against the
// independent tables in ../shared/reference/layouts/ (tests/emulate/layout_tables_test.cpp).
// Shared-memory addresses are byte addresses in the CTA's shared window; the swizzles act on
// absolute addresses, as the hardware's do.
#pragma once

#include <cstdint>
#include <string>

namespace tilec_emu::layout {

// The swizzle of a shared-memory layout: the 16-byte chunks of each W-byte row are XORed with
// the row's index within a block of 8 rows (W = 32, 64, 128; none: no permutation).
enum class Swizzle { none, bytes32, bytes64, bytes128 };

int swizzle_width(Swizzle swizzle);           // W in bytes: 16 (none), 32, 64, 128
const char* swizzle_name(Swizzle swizzle);    // "none", "32B", "64B", "128B"
// address XOR (((address >> 7) mod 2^B) << 4), B = log2(W / 16); none: unchanged.
uint32_t apply_swizzle(Swizzle swizzle, uint32_t address);

// A 64-bit shared-memory matrix descriptor, decoded. `error` is empty when the encoding is one
// the instruction accepts and the emulator models (both: reserved bits 14–15 and 30–31 zero,
// base offset (49–51) zero; sm_90: bits 46–48 and 52–61 zero, any swizzle in 62–63; sm_100:
// version bits 46–48 = 0b001, LBO mode (52) 0, bits 53–60 zero, a swizzle value of 0, 2, 4 or
// 6 in bits 61–63 — 1, 128B with 32-byte atoms, is reported as not emulated). The message
// names the bits and their value.
struct MatrixDescriptor {
  uint32_t start = 0;          // byte address (bits 0–13 << 4)
  uint32_t leading_bytes = 0;  // LBO (bits 16–29 << 4)
  uint32_t stride_bytes = 0;   // SBO (bits 32–45 << 4)
  uint32_t base_offset = 0;    // bits 49–51
  Swizzle swizzle = Swizzle::none;
  std::string error;
};

MatrixDescriptor decode_sm90_descriptor(uint64_t descriptor);
MatrixDescriptor decode_sm100_descriptor(uint64_t descriptor);

// The byte address of element (mn, k) of one MMA k-step's operand (0 ≤ k < 32 bytes' worth of
// elements) under descriptor `d`: the canonical layouts of the PTX ISA ("shared memory matrix
// layout"), K-major or MN-major, `element_bytes` 1, 2 or 4. Swizzle applied.
uint32_t operand_address(const MatrixDescriptor& d, bool mn_major, int element_bytes, int mn, int k);

struct RowColumn {
  int row = 0;
  int column = 0;
};

// WGMMA 64×N accumulator with f32 elements: register `reg` (0 ≤ reg < N/2) of thread `thread`
// (0..127 within the warpgroup) holds D[row][column].
RowColumn wgmma_accumulator(int thread, int reg);
// WGMMA A from registers, 16-bit elements (64×16): half `half` (0 = bits 0–15) of register
// `reg` (0..3) of `thread`.
RowColumn wgmma_register_a_b16(int thread, int reg, int half);
// WGMMA A from registers, 8-bit elements (64×32, e4m3/e5m2): byte `byte` (0 = bits 0–7) of
// register `reg` (0..3) of `thread`.
RowColumn wgmma_register_a_b8(int thread, int reg, int byte);

// A tcgen05 instruction descriptor (the 32-bit idesc of tcgen05.mma), decoded.
enum class MmaKind { f16, tf32, f8f6f4, i8 };
enum class ElementFormat { f16, bf16, tf32, e4m3, e5m2, f32, s8, u8, s32, unknown };
struct InstructionDescriptor {
  ElementFormat d_format = ElementFormat::unknown;  // f16 or f32; s32 (kind::i8)
  ElementFormat a_format = ElementFormat::unknown;
  ElementFormat b_format = ElementFormat::unknown;
  bool a_mn_major = false;  // bit 15
  bool b_mn_major = false;  // bit 16
  bool negate_a = false, negate_b = false;
  int m = 0;  // bits 24–28 << 4
  int n = 0;  // bits 17–22 << 3
  // Empty when valid for `kind`: sparsity, saturate, max shift and reserved bits zero; d f16 or
  // f32; kind::f16: A and B both f16 or both bf16; kind::tf32: both tf32 (2), D f32;
  // kind::f8f6f4: e4m3/e5m2 (f6/f4 formats are reported as not emulated); kind::i8: A and B u8
  // (0) or s8 (1), D s32 (2), no negation (saturate is reported as not emulated);
  // M 64 or 128; N a multiple of 8 (M = 64) or 16 (M = 128) up to 256.
  std::string error;
};
InstructionDescriptor decode_instruction_descriptor(uint32_t idesc, MmaKind kind);

// tcgen05.ld / tcgen05.st shapes.
enum class TmemShape { lanes32_bits32, lanes16_bits64, lanes16_bits128, lanes16_bits256, lanes16_bits32x2 };
struct LaneColumn {
  int lane = 0;    // offset added to the address's lane
  int column = 0;  // offset added to the address's column
};
// Register `reg` of lane `thread` (0..31) of a warp, `repeat` = the .xN of the instruction.
LaneColumn tmem_access(TmemShape shape, int repeat, int thread, int reg);

// TMA: byte offset from a box's (1024-aligned) base of byte `byte` of box row `row`, for rows
// of `row_bytes` bytes (the inner box extent × element size) under `swizzle`.
uint32_t tma_box_offset(Swizzle swizzle, int row_bytes, int row, int byte);

}  // namespace tilec_emu::layout
