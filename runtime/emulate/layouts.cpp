// runtime/emulate/layouts.cpp — the PTX ISA's data layouts (layouts.h), written from the ISA's
// definitions of the shared-memory matrix descriptor, the canonical operand layouts, the WGMMA
// register fragments, the tcgen05 instruction descriptor and the tcgen05.ld shapes.
//
// Every function is a closed formula over integers, no tables and no state:
//   1. swizzle: Sw<B,4,3> on byte addresses, address XOR (((address >> 7) mod 2^B) << 4);
//   2. matrix descriptors: bit-field extraction, then a check of every reserved or fixed field
//      (the error names the bits and what they hold);
//   3. the canonical address of operand element (mn, k) from start/LBO/SBO (K-major: rows of
//      K bytes, 8-row groups SBO apart; MN-major: MN is contiguous, 8-k groups SBO apart when
//      swizzled), the swizzle applied to the absolute address;
//   4. the fragment maps (WGMMA accumulator and register A, tcgen05.ld), one expression each;
//   5. the tcgen05 instruction descriptor: fields, then the shape and format rules of
//      tcgen05.mma.cta_group::1 for kind::f16, kind::tf32, kind::f8f6f4 and kind::i8.
// tests/emulate/layout_tables_test.cpp checks each against ../shared/reference/layouts/.
#include "runtime/emulate/layouts.h"

#include <string>

namespace tilec_emu::layout {
namespace {

// Bits [first, first + count) of `value`.
uint64_t bits(uint64_t value, int first, int count) { return (value >> first) & ((uint64_t{1} << count) - 1); }

// log2(W / 16): the number of address bits the swizzle XORs.
int swizzle_bit_count(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::none: return 0;
    case Swizzle::bytes32: return 1;
    case Swizzle::bytes64: return 2;
    case Swizzle::bytes128: return 3;
  }
  return 0;
}

std::string hex(uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), digits[value & 15]);
    value >>= 4;
  } while (value != 0);
  return "0x" + text;
}

// Appends "; " + message to `error` (several broken rules are all reported).
void add_error(std::string& error, const std::string& message) {
  if (!error.empty()) error += "; ";
  error += message;
}

// Requires bits [first, first + count) of `value` to equal `expected`.
void require_field(std::string& error, uint64_t value, int first, int count, uint64_t expected, const char* what) {
  uint64_t field = bits(value, first, count);
  if (field == expected) return;
  std::string range = count == 1 ? "bit " + std::to_string(first)
                                 : "bits " + std::to_string(first) + "-" + std::to_string(first + count - 1);
  add_error(error, range + " (" + what + ") are " + hex(field) + ", must be " + hex(expected));
}

// The fields common to both descriptor generations: start, LBO, SBO, base offset, and the
// reserved bits 14-15 and 30-31.
MatrixDescriptor decode_common_fields(uint64_t descriptor) {
  MatrixDescriptor decoded;
  decoded.start = static_cast<uint32_t>(bits(descriptor, 0, 14) << 4);
  decoded.leading_bytes = static_cast<uint32_t>(bits(descriptor, 16, 14) << 4);
  decoded.stride_bytes = static_cast<uint32_t>(bits(descriptor, 32, 14) << 4);
  decoded.base_offset = static_cast<uint32_t>(bits(descriptor, 49, 3));
  require_field(decoded.error, descriptor, 14, 2, 0, "reserved");
  require_field(decoded.error, descriptor, 30, 2, 0, "reserved");
  // The base offset corrects the swizzle phase of a start address that is not aligned to the
  // pattern's repeat; the emulator swizzles absolute addresses and does not model it.
  if (decoded.base_offset != 0)
    add_error(decoded.error, "bits 49-51 (base offset) are " + hex(decoded.base_offset) +
                                 ": a nonzero base offset is not emulated");
  return decoded;
}

}  // namespace

// --- 1. swizzle ------------------------------------------------------------------------------
int swizzle_width(Swizzle swizzle) { return 16 << swizzle_bit_count(swizzle); }

const char* swizzle_name(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::none: return "none";
    case Swizzle::bytes32: return "32B";
    case Swizzle::bytes64: return "64B";
    case Swizzle::bytes128: return "128B";
  }
  return "?";
}

uint32_t apply_swizzle(Swizzle swizzle, uint32_t address) {
  uint32_t mask = (1u << swizzle_bit_count(swizzle)) - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

// --- 2. matrix descriptors -------------------------------------------------------------------
MatrixDescriptor decode_sm90_descriptor(uint64_t descriptor) {
  MatrixDescriptor decoded = decode_common_fields(descriptor);
  require_field(decoded.error, descriptor, 46, 3, 0, "reserved in the sm_90 descriptor");
  require_field(decoded.error, descriptor, 52, 10, 0, "reserved in the sm_90 descriptor");
  switch (bits(descriptor, 62, 2)) {
    case 0: decoded.swizzle = Swizzle::none; break;
    case 1: decoded.swizzle = Swizzle::bytes128; break;
    case 2: decoded.swizzle = Swizzle::bytes64; break;
    case 3: decoded.swizzle = Swizzle::bytes32; break;
  }
  return decoded;
}

MatrixDescriptor decode_sm100_descriptor(uint64_t descriptor) {
  MatrixDescriptor decoded = decode_common_fields(descriptor);
  require_field(decoded.error, descriptor, 46, 3, 1, "version, fixed 0b001 in the sm_100 descriptor");
  require_field(decoded.error, descriptor, 52, 1, 0, "LBO mode: only relative byte offsets are emulated");
  require_field(decoded.error, descriptor, 53, 8, 0, "fixed 0 in the sm_100 descriptor");
  uint64_t layout_type = bits(descriptor, 61, 3);
  switch (layout_type) {
    case 0: decoded.swizzle = Swizzle::none; break;
    case 2: decoded.swizzle = Swizzle::bytes128; break;
    case 4: decoded.swizzle = Swizzle::bytes64; break;
    case 6: decoded.swizzle = Swizzle::bytes32; break;
    case 1:
      add_error(decoded.error, "bits 61-63 (swizzle) are 1: 128B swizzle with 32-byte atoms is not emulated");
      break;
    default:
      add_error(decoded.error, "bits 61-63 (swizzle) are " + hex(layout_type) +
                                   ", must be 0 (none), 1 (128B/32B atom), 2 (128B), 4 (64B) or 6 (32B)");
      break;
  }
  return decoded;
}

// --- 3. the canonical operand address ----------------------------------------------------------
uint32_t operand_address(const MatrixDescriptor& d, bool mn_major, int element_bytes, int mn, int k) {
  const uint32_t width = static_cast<uint32_t>(swizzle_width(d.swizzle));
  const uint32_t eb = static_cast<uint32_t>(element_bytes);
  uint32_t offset = 0;
  if (!mn_major) {
    // Rows of the MN dimension; the k bytes of a row are contiguous (16-byte core-matrix
    // columns LBO apart when unswizzled, one W-byte swizzle row otherwise).
    uint32_t row = static_cast<uint32_t>(mn);
    uint32_t k_bytes = static_cast<uint32_t>(k) * eb;
    if (d.swizzle == Swizzle::none)
      offset = (row % 8) * 16 + (row / 8) * d.stride_bytes + (k_bytes % 16) + (k_bytes / 16) * d.leading_bytes;
    else
      offset = (row % 8) * width + (row / 8) * d.stride_bytes + k_bytes;
  } else {
    // MN is contiguous: 16-byte (none) or W-byte (swizzled) pieces of MN, one per k row.
    uint32_t mn_bytes = static_cast<uint32_t>(mn) * eb;
    uint32_t kk = static_cast<uint32_t>(k);
    if (d.swizzle == Swizzle::none)
      offset = (mn_bytes % 16) + (mn_bytes / 16) * d.stride_bytes + (kk % 8) * 16 + (kk / 8) * d.leading_bytes;
    else
      offset = (mn_bytes % width) + (mn_bytes / width) * d.leading_bytes + (kk % 8) * width + (kk / 8) * d.stride_bytes;
  }
  return apply_swizzle(d.swizzle, d.start + offset);
}

// --- 4. register fragments ---------------------------------------------------------------------
RowColumn wgmma_accumulator(int thread, int reg) {
  // Warp w of the warpgroup owns rows 16w..16w+15; within a warp, lane / 4 picks the row of an
  // 8-row half, lane mod 4 a pair of columns; registers walk (column pair, row half, 8-column group).
  RowColumn position;
  position.row = 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((reg / 2) % 2);
  position.column = 8 * (reg / 4) + 2 * (thread % 4) + (reg % 2);
  return position;
}

RowColumn wgmma_register_a_b16(int thread, int reg, int half) {
  // The 64×16 A fragment is the f32 accumulator layout of a 64×16 tile, two values per register.
  return wgmma_accumulator(thread, 2 * reg + half);
}

RowColumn wgmma_register_a_b8(int thread, int reg, int byte) {
  // The accumulator's rows (register parity: the 8-row half); lane mod 4 holds four consecutive
  // columns (not two), and registers 2 and 3 the columns 16 further.
  RowColumn position;
  position.row = 16 * (thread / 32) + (thread % 32) / 4 + 8 * (reg % 2);
  position.column = 16 * (reg / 2) + 4 * (thread % 4) + byte;
  return position;
}

// --- 5. the tcgen05 instruction descriptor -----------------------------------------------------
namespace {

const char* format_name(ElementFormat format) {
  switch (format) {
    case ElementFormat::f16: return "f16";
    case ElementFormat::bf16: return "bf16";
    case ElementFormat::tf32: return "tf32";
    case ElementFormat::e4m3: return "e4m3";
    case ElementFormat::e5m2: return "e5m2";
    case ElementFormat::f32: return "f32";
    case ElementFormat::s8: return "s8";
    case ElementFormat::u8: return "u8";
    case ElementFormat::s32: return "s32";
    case ElementFormat::unknown: return "unknown";
  }
  return "?";
}

// The A/B format field (3 bits) of `kind`; `error` gets a message for encodings the emulator
// does not accept.
ElementFormat decode_operand_format(uint32_t field, MmaKind kind, const char* operand, std::string& error) {
  std::string where = std::string(operand) + "_format";
  if (kind == MmaKind::tf32) {
    if (field == 2) return ElementFormat::tf32;
    add_error(error, where + " is " + std::to_string(field) + ", kind::tf32 takes 2 (tf32)");
    return ElementFormat::unknown;
  }
  if (kind == MmaKind::i8) {
    if (field == 0) return ElementFormat::u8;
    if (field == 1) return ElementFormat::s8;
    add_error(error, where + " is " + std::to_string(field) + ", kind::i8 takes 0 (u8) or 1 (s8)");
    return ElementFormat::unknown;
  }
  if (kind == MmaKind::f16) {
    if (field == 0) return ElementFormat::f16;
    if (field == 1) return ElementFormat::bf16;
    if (field == 2) {
      add_error(error, where + " is 2 (tf32), which is kind::tf32, not kind::f16");
      return ElementFormat::tf32;
    }
    add_error(error, where + " is " + std::to_string(field) + ", kind::f16 takes 0 (f16) or 1 (bf16)");
    return ElementFormat::unknown;
  }
  if (field == 0) return ElementFormat::e4m3;
  if (field == 1) return ElementFormat::e5m2;
  if (field >= 3 && field <= 5) {
    add_error(error, where + " is " + std::to_string(field) + " (an f6/f4 type): not emulated");
    return ElementFormat::unknown;
  }
  add_error(error, where + " is " + std::to_string(field) + ", kind::f8f6f4 takes 0 (e4m3), 1 (e5m2), 3, 4 or 5");
  return ElementFormat::unknown;
}

}  // namespace

InstructionDescriptor decode_instruction_descriptor(uint32_t idesc, MmaKind kind) {
  InstructionDescriptor decoded;
  std::string& error = decoded.error;
  require_field(error, idesc, 0, 2, 0, "sparsity selector");
  require_field(error, idesc, 2, 1, 0, "sparse: only dense MMA is emulated");
  if (kind != MmaKind::i8) require_field(error, idesc, 3, 1, 0, "saturate, kind::i8 only");
  else if (bits(idesc, 3, 1) != 0) add_error(error, "bit 3 (saturate) is 1: saturating kind::i8 is not emulated");
  require_field(error, idesc, 6, 1, 0, "reserved");
  require_field(error, idesc, 23, 1, 0, "reserved");
  require_field(error, idesc, 29, 1, 0, "reserved");
  require_field(error, idesc, 30, 2, 0, "max shift, .ws only");

  uint32_t d_field = static_cast<uint32_t>(bits(idesc, 4, 2));
  if (kind == MmaKind::i8) {
    // Integer products accumulate in s32 only.
    if (d_field == 2) decoded.d_format = ElementFormat::s32;
    else add_error(error, "d_format (bits 4-5) is " + std::to_string(d_field) + ", kind::i8 takes 2 (s32)");
  } else if (d_field == 0) {
    decoded.d_format = ElementFormat::f16;
  } else if (d_field == 1) {
    decoded.d_format = ElementFormat::f32;
  } else {
    add_error(error, "d_format (bits 4-5) is " + std::to_string(d_field) + ", must be 0 (f16) or 1 (f32)");
  }
  if (kind == MmaKind::tf32 && d_field == 0) add_error(error, "d_format (bits 4-5) is 0 (f16), kind::tf32 takes 1 (f32)");

  decoded.a_format = decode_operand_format(static_cast<uint32_t>(bits(idesc, 7, 3)), kind, "a", error);
  decoded.b_format = decode_operand_format(static_cast<uint32_t>(bits(idesc, 10, 3)), kind, "b", error);
  if (kind == MmaKind::f16 && decoded.a_format != decoded.b_format &&
      decoded.a_format != ElementFormat::unknown && decoded.b_format != ElementFormat::unknown)
    add_error(error, std::string("kind::f16 needs A and B of one type, not ") + format_name(decoded.a_format) +
                         " and " + format_name(decoded.b_format));

  decoded.negate_a = bits(idesc, 13, 1) != 0;
  decoded.negate_b = bits(idesc, 14, 1) != 0;
  if (kind == MmaKind::i8) {
    require_field(error, idesc, 13, 1, 0, "negate A, not allowed for kind::i8");
    require_field(error, idesc, 14, 1, 0, "negate B, not allowed for kind::i8");
  }
  decoded.a_mn_major = bits(idesc, 15, 1) != 0;
  decoded.b_mn_major = bits(idesc, 16, 1) != 0;
  decoded.n = static_cast<int>(bits(idesc, 17, 6) << 3);
  decoded.m = static_cast<int>(bits(idesc, 24, 5) << 4);

  if (decoded.m != 64 && decoded.m != 128)
    add_error(error, "m (bits 24-28 << 4) is " + std::to_string(decoded.m) + ", cta_group::1 takes 64 or 128");
  int n_step = decoded.m == 128 ? 16 : 8;
  if (decoded.n < n_step || decoded.n > 256 || decoded.n % n_step != 0)
    add_error(error, "n (bits 17-22 << 3) is " + std::to_string(decoded.n) + ", M = " + std::to_string(decoded.m) +
                         " takes a multiple of " + std::to_string(n_step) + " in " + std::to_string(n_step) +
                         "..256");
  return decoded;
}

// --- 6. tcgen05.ld / tcgen05.st and TMA boxes -------------------------------------------------
LaneColumn tmem_access(TmemShape shape, int repeat, int thread, int reg) {
  LaneColumn position;
  switch (shape) {
    case TmemShape::lanes32_bits32:
      position.lane = thread;
      position.column = reg;
      break;
    case TmemShape::lanes16_bits64:
      position.lane = thread / 4 + 8 * (thread % 2);
      position.column = 2 * reg + (thread / 2) % 2;
      break;
    case TmemShape::lanes16_bits128:
      position.lane = thread / 4 + 8 * (reg % 2);
      position.column = 4 * (reg / 2) + thread % 4;
      break;
    case TmemShape::lanes16_bits256:
      position.lane = thread / 4 + 8 * ((reg / 2) % 2);
      position.column = 8 * (reg / 4) + 2 * (thread % 4) + reg % 2;
      break;
    case TmemShape::lanes16_bits32x2:
      // Lanes 16..31 read the second half, immHalfSplitoff = repeat columns to the right.
      position.lane = thread % 16;
      position.column = reg + repeat * (thread / 16);
      break;
  }
  return position;
}

uint32_t tma_box_offset(Swizzle swizzle, int row_bytes, int row, int byte) {
  return apply_swizzle(swizzle, static_cast<uint32_t>(row * row_bytes + byte));
}

}  // namespace tilec_emu::layout
