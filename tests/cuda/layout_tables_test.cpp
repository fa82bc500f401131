// tests/cuda/layout_tables_test.cpp — the tensor-core backend's layout formulas against the golden
// tables in ../shared/reference/layouts/ (computed with CuTe; its README says how), never against
// the emulator's or our own figures.
//
// The backend's formulas are taken from the backend itself: FragmentLayout's expressions, and the
// CUDA that `tilec compile` writes now for the tensor-core samples (gemm, gemm with BN = 128, 32
// and 16, gemm_f16, gemm_bias_relu, batched_gemm, attention (also BKV = 32), mha, linear, fp8_linear,
// int8_linear, fp8_attention, tf32_linear, gate_up, w8a16_linear, w4a16_linear, w4a8_linear; sm_90a and sm_100a;
// emitted_code.h lists them) and, the same checks
// again, the files in samples/expected/. The emitted expressions are evaluated by a small
// interpreter of the C++ subset they use (integer expressions, `const int` declarations, `for`
// loops with constant bounds), for every compute thread and register.
//
//  1. Accumulator (wgmma_accumulator.json, f32, every N): FragmentLayout::row/column/count
//     (tensor_core_fragments.cpp, sm_90a), and the row/column the sm_90a epilogues declare
//     (emit_tma_store) for each register they store.
//  2. Register A (wgmma_register_a.json, b16_64x16): emit_wgmma's pairs (`tilec_pack_pair(x[2i],
//     x[2i+1])`, pairs 4s..4s+3 as a0..a3 of step s) over FragmentLayout's positions, and the
//     prelude's pack (low half = first) and operand order (tensor_core_prelude.cpp).
//     8-bit (b8_64x32): each word `W[i] = tilec_wgmma_a_bytes(tilec_pack_bytes(x[..], x[..], x[..],
//     x[..]))` of the accumulator-layout tile x (wgmma_accumulator.json), words 4s..4s+3 as a0..a3
//     of step s; the prelude's tilec_pack_bytes and tilec_wgmma_a_bytes (lane shuffles, a byte
//     permute) as written, built with the host compiler over CUDA's shuffle and PRMT semantics.
//  3. Matrix descriptors (smem_canonical.json k_steps): every `tilec_matrix_descriptor(...)` call
//     emit_wgmma / emit_tcgen05_* write (a_address, b_descriptor: start per k-step and per
//     warpgroup, LBO, SBO), evaluated through the prelude's own tilec_matrix_descriptor body
//     (field packing, version and swizzle bits) and compared as 64-bit values; the tile is the one
//     the emitted stage buffer declares (A K-major R x C; B MN-major, C x R, or K-major when the
//     summary says so: a transposed load, samples/linear.tile). Documented
//     exception (README, Verification): LBO when lbo_used is false (attention's 64x64 Kt and V).
//     Also WGMMA's trans-a/trans-b immediates against the tiles' major-ness, and 1024-byte
//     alignment of every tile base. A K-major tile of more K than one swizzle row (BK = 128 of
//     bf16) is that row's tile per panel, the panels one after another (k_panels).
//  4. tcgen05 instruction descriptors (tcgen05_instr_desc.json): the constants emit_tcgen05_*
//     write (tcgen05_instruction), looked up by the kind in the prelude's asm, the A/B types, the
//     accumulator's rows/columns, A K-major, B MN-major or K-major (linear.tile).
//
// tf32 (tf32_linear), which the tables have no cases of: a canonical layout is defined in bytes
// (16-byte chunks), so a K-major f32 tile R x C is the 16-bit tile R x 2C (b16_K_..._Rx2C: same
// descriptors per 32-byte k-step); its kind::tf32 instruction descriptor is the table's kind::f16
// bf16 one with the A and B format fields (bits 7-9, 10-12) set to 2, the README's tf32.
//  5. tcgen05.ld (tcgen05_ld.json, 32x32b.x32, .x16, .x8): the prelude's tilec_tmem_load_W (shape,
//     register order) and, at every call, the TMEM lane/column each register reads (the address the emitter
//     builds plus the table), which must be in the warp's lane quarter and equal the element the
//     code then treats it as: FragmentLayout(sm_100a) for loads into registers
//     (emit_tcgen05_into_registers), the declared row/column for epilogues (emit_tma_store). D of
//     tcgen05.mma cta_group::1 with M = 128 is row m = lane m, column n = column (tmem + n).
//  6. Staging (tma_swizzle.json, f32_128B / bf16_128B): every TMA-store epilogue's
//     `box_row * 128 + ((byte / 16) ^ (box_row % 8)) * 16 + byte % 16` (swizzled_offset),
//     with the box origin of its tilec_tma_store_2d call and the box the launcher encodes
//     (prelude: CU_TENSOR_MAP_SWIZZLE_128B); and sm_100a's A staging from registers
//     (emit_tcgen05_into_registers) against the A tile of smem_canonical.json; a computed B's
//     staging (stage_computed_b) against its B tile there (16-bit, or 8-bit K-major), and its
//     reads of the weight TMA copied (shared_element, tilec_shared_read) against the TMA box of
//     the swizzle the weight's map encodes, at the column each read names (a concat's parts read
//     their weight at shifted columns).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cuda/tensor_core_fragments.h"
#include "emitted_code.h"

namespace tilec::cuda {
namespace {

using nlohmann::json;
using namespace emitted_code;

const std::filesystem::path kLayoutDirectory = std::filesystem::path(TILEC_REFERENCE_DIR) / "layouts";

// Loads a table; an absent directory skips the test (the tables live outside the repository).
#define LOAD_TABLE(variable, name)                                                                      \
  if (!std::filesystem::is_directory(kLayoutDirectory))                                                 \
    GTEST_SKIP() << "reference tables not found at " << kLayoutDirectory << " (../shared/reference)"; \
  const json variable = json::parse(std::ifstream(kLayoutDirectory / (name)))

uint64_t parse_hex(const json& value) { return std::stoull(value.get<std::string>(), nullptr, 16); }

// ------------------------------------------------------------------------------ tables
const json& find_entry(const json& list, const std::string& id) {
  for (const json& entry : list)
    if (entry["id"] == id) return entry;
  throw std::runtime_error("no table entry " + id);
}

// The smem_canonical case of tile `id` ("b16_MN_64B_32x64"), or, where the tables have no tile of
// that size, the smallest larger one of the same bits, major-ness and swizzle whose top-left
// sub-block it is (README 1.2: every sub-block starting on an atom boundary was checked with the
// same LBO/SBO): an MN-major tile whose K rows are the larger one's first K rows (atoms laid K
// first) and whose MN is one atom or whole atoms, or a K-major tile of the larger one's first
// K columns (8-row groups laid MN first) within one atom of K.
const json& canonical_tile(const json& cases, const std::string& id) {
  for (const json& entry : cases)
    if (entry["id"] == id) return entry;
  static const std::regex shape(R"((\w+_\w+_\w+)_(\d+)x(\d+))");
  std::smatch m;
  if (!std::regex_match(id, m, shape)) throw std::runtime_error("no table entry " + id);
  const uint64_t mn = std::stoull(m[2]), k = std::stoull(m[3]);
  const json* best = nullptr;
  for (const json& entry : cases) {
    const std::string other = entry["id"];
    if (!other.starts_with(m[1].str() + "_") || other.ends_with("_mnfirst")) continue;
    const uint64_t atom_mn = entry["atom_mn"], atom_k = entry["atom_k"];
    const bool mn_major = entry["major"] == "MN";
    const bool fits = entry["mn"].get<uint64_t>() >= mn && entry["k"].get<uint64_t>() >= k &&
                      (mn_major ? entry["tile_order"] == "k_first" && (mn <= atom_mn || mn % atom_mn == 0)
                                : entry["tile_order"] == "mn_first" && k <= atom_k);
    if (fits && (!best || entry["tile_bytes"] < (*best)["tile_bytes"])) best = &entry;
  }
  if (!best) throw std::runtime_error("no table entry " + id + " nor a larger tile it is a sub-block of");
  return *best;
}

// A K-major tile of more K than one swizzle atom holds ("b16_K_128B_128x128": 64 bf16 columns a
// 128-byte row): panels of the atom's K, one after another, each all of MN (the tables'
// mn_first order, which lays every MN atom of one K atom before the next K atom, carried on
// along K). The panel's id and K, the panels and the bytes from one to the next; for any other
// tile, the tile itself as its one panel.
struct KPanels {
  std::string id;
  uint64_t k = 0, count = 1, bytes = 0;
};
KPanels k_panels(const std::string& id) {
  static const std::regex k_major(R"((b(\d+)_K_(\d+)B)_(\d+)x(\d+))");
  std::smatch m;
  if (!std::regex_match(id, m, k_major)) return {id, 0, 1, 0};
  const uint64_t swizzle = std::stoull(m[3]), mn = std::stoull(m[4]), k = std::stoull(m[5]);
  const uint64_t atom_k = swizzle * 8 / std::stoull(m[2]);
  if (k <= atom_k) return {id, k, 1, 0};
  EXPECT_EQ(k % atom_k, 0u) << id << ": whole panels of K";
  return {m[1].str() + "_" + std::to_string(mn) + "x" + std::to_string(atom_k), atom_k, k / atom_k, mn * swizzle};
}

// The byte offset of element (mn, k) of tile `id`, panel by panel (k_panels).
uint64_t panelled_offset(const json& cases, const std::string& id, uint64_t mn, uint64_t k);

// The MN extent in a tile id ("b16_MN_64B_32x64": 32).
uint64_t operand_mn(const std::string& id) {
  return std::stoull(id.substr(id.rfind('_') + 1, id.rfind('x') - id.rfind('_') - 1));
}

// The byte offset of element (mn, k) of an smem_canonical tile, from its chunk offsets.
uint64_t table_offset(const json& tile, uint64_t mn, uint64_t k) {
  uint64_t per_chunk = tile["chunk_elems"].get<uint64_t>(), element_bytes = tile["element_bits"].get<uint64_t>() / 8;
  if (tile["major"] == "K") return tile["chunk_offsets"][mn][k / per_chunk].get<uint64_t>() + k % per_chunk * element_bytes;
  return tile["chunk_offsets"][k][mn / per_chunk].get<uint64_t>() + mn % per_chunk * element_bytes;
}

uint64_t panelled_offset(const json& cases, const std::string& id, uint64_t mn, uint64_t k) {
  const KPanels panels = k_panels(id);
  if (panels.count == 1) return table_offset(canonical_tile(cases, id), mn, k);
  return k / panels.k * panels.bytes + table_offset(canonical_tile(cases, panels.id), mn, k % panels.k);
}

struct Position {
  uint64_t row, column;
  bool operator==(const Position&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Position& p) { return out << "(" << p.row << ", " << p.column << ")"; }

// FragmentLayout's element of register `i` of compute thread `thread` (a tile of `rows` x
// `columns`).
Position fragment_position(const FragmentLayout& layout, uint64_t thread, uint64_t i, int64_t columns,
                           int64_t rows = 128) {
  Variables v{{"i", i}, {"lane", thread % 32}, {"warp", (thread % 128) / 32}, {"compute_warpgroup", thread / 128}};
  return {evaluate(layout.row("i", false, rows), v), evaluate(layout.column("i", columns), v)};
}

// The register count of the array `name` as declared (`float acc_1[128];`).
uint64_t declared_count(const Emitted& e, const std::string& name) {
  static std::map<std::string, uint64_t> cache;
  if (auto it = cache.find(e.label + " " + name); it != cache.end()) return it->second;
  auto match = e.search(R"(\b\w+ )" + name + R"(\[(\d+)\];)");
  if (!match) throw std::runtime_error("no declaration of " + name + " in " + e.label);
  return cache[e.label + " " + name] = std::stoull((*match)[1]);
}

// The stage tile `tile<RxCxT, smem>` a descriptor base names (`a`: a slot of pipe_a_buffer), or
// the sm_100a A staging `(shared_base + N)` ("A of the mma ... N bytes at N"), as
// smem_canonical's id; `rows`, `columns`, `element` of the tile; `offset` and `slot_bytes` of
// its place.
struct OperandTile {
  std::string id, element;
  std::string major;  // "K" or "MN", as the smem_canonical tables write it
  uint64_t offset = 0, slot_bytes = 0;
};
// `swizzle`: the bytes the descriptor says, for the A staging (which has no summary of its own).
OperandTile operand_tile(const Emitted& e, const std::string& base, bool is_a, uint64_t k_steps, uint64_t swizzle) {
  OperandTile tile;
  std::smatch match;
  if (std::regex_match(base, match, std::regex(R"(\(shared_base \+ (\d+)(?: \+ computed_b_buffer \* (\d+))?\))")) &&
      !is_a) {
    // A computed B (the compute threads write it): bf16 or f16, [K, N] MN-major or [N, K] K-major;
    // on sm_100a in one of two buffers, whole swizzle atoms apart (the staging writes are checked
    // in buffer 0: the variable is 0 in thread_variables).
    auto summary = e.search(R"(B of the mma at line \d+ \(computed by the compute threads\): (\d+) bytes at )" +
                            match[1].str() + R"(, (K-major|MN-major).*?, (\d+)B swizzle)");
    if (!summary) throw std::runtime_error("no computed B summary for " + base);
    // 16-bit, or 8-bit (W4A8: e4m3 or int8, K-major): the type the staging writes, which sets K
    // per step (16 or 32).
    auto cast = e.search(R"(reinterpret_cast<(\w+)\*>\(staging \+ column / )");
    const std::string type = cast ? (*cast)[1].str() : "";
    tile.element = type == "__half" ? "f16" : type == "__nv_fp8_e4m3" ? "e4m3" : type == "__nv_fp8_e5m2" ? "e5m2"
                 : type == "int8_t" ? "s8" : type == "uint8_t" ? "u8" : "bf16";
    const uint64_t element_bytes = tile.element == "f16" || tile.element == "bf16" ? 2 : 1;
    const uint64_t k = 32 / element_bytes * k_steps, mn = std::stoull((*summary)[1]) / (element_bytes * k);
    tile.major = (*summary)[2] == "K-major" ? "K" : "MN";
    tile.id = std::string(element_bytes == 1 ? "b8_" : "b16_") + tile.major + "_" + (*summary)[3].str() + "B_" +
              std::to_string(mn) + "x" + std::to_string(k);
    tile.offset = std::stoull(match[1]);
    if (match[2].matched) {  // the second buffer's place
      tile.slot_bytes = std::stoull(match[2]);
      EXPECT_GE(tile.slot_bytes, std::stoull((*summary)[1])) << "the staging buffers overlap";
    }
    return tile;
  }
  if (std::regex_match(base, match, std::regex(R"(\(shared_base \+ (\d+)\))"))) {
    auto summary = e.search(R"(A of the mma at line \d+ \(from registers\): (\d+) bytes at )" + match[1].str() + ",");
    if (!summary) throw std::runtime_error("no A staging summary for " + base);
    // The element type the staging writes: 16-bit, e4m3 / e5m2 (b8 tiles) or f32 (tf32: the b16
    // tile of twice the columns, as for stage tiles).
    auto cast = e.search(R"(reinterpret_cast<(\w+)\*>\(staging \+ )");
    const std::string type = cast ? (*cast)[1].str() : "";
    tile.element = type == "__half" ? "f16" : type == "__nv_fp8_e4m3" ? "e4m3" : type == "__nv_fp8_e5m2" ? "e5m2"
                 : type == "float" ? "tf32" : "bf16";
    const uint64_t element_bytes = tile.element == "tf32" ? 4 : tile.element.starts_with("e") ? 1 : 2;
    const uint64_t k = 32 / element_bytes * k_steps, mn = std::stoull((*summary)[1]) / (element_bytes * k);
    const bool tf32 = tile.element == "tf32";
    tile.id = std::string(element_bytes == 1 ? "b8" : "b16") + "_K_" + std::to_string(swizzle) + "B_" +
              std::to_string(mn) + "x" + std::to_string(tf32 ? 2 * k : k);
    tile.offset = std::stoull(match[1]);
    tile.major = "K";
    return tile;
  }
  auto slot = e.search("const uint32_t " + base + R"( = (\w+) \+ static_cast<uint32_t>\(\w+\) \* (\d+);)");
  if (!slot) throw std::runtime_error("no slot declaration of " + base);
  auto buffer = e.search("const uint32_t " + (*slot)[1].str() + R"( = shared_base \+ (\d+);  // \d+ slots of tile<(\d+)x(\d+)x(\w+), smem>)");
  if (!buffer) throw std::runtime_error("no stage buffer " + (*slot)[1].str());
  std::string rows = (*buffer)[2], columns = (*buffer)[3];
  // The tables name 8-bit tiles b8 and their types e4m3 / e5m2 (the IR's f8e4m3 / f8e5m2); an
  // f32 tile (tf32) is the b16 tile of twice the columns (the header says why); 8-bit integers
  // (i8, u8: PTX's s8, u8) are b8 tiles too.
  std::string element = (*buffer)[4];
  const bool integer = element == "i8" || element == "u8";
  const bool eight_bit = element.starts_with("f8") || integer, tf32 = element == "f32";
  const std::string bits = eight_bit ? "b8" : "b16";
  // The summary says how the pipe holds the tile: A as loaded ([M, K]) and a transposed B
  // ([N, K]) K-major, B as loaded ([K, N]) and a transposed A ([K, M]) MN-major. The declared
  // tile is the logical one ([M, K] for A, [K, N] for B); the table's (mn, k) follow it.
  auto summary = e.search("//   pipe " + (*slot)[1].str() +
                          R"(: \w+ slots x \d+ bytes at \d+: (A|B) of mma from \w+ \((K-major|MN-major), .*, (\d+)B swizzle\))");
  if (!summary) throw std::runtime_error("no summary of " + (*slot)[1].str());
  EXPECT_EQ((*summary)[1] == "A", is_a) << "the pipe's role";
  tile.major = (*summary)[2] == "K-major" ? "K" : "MN";
  // (mn, k): A's declared [M, K] is (rows, columns), B's [K, N] (columns, rows).
  const std::string mn = is_a ? rows : columns;
  std::string k = is_a ? columns : rows;
  if (tf32) {
    EXPECT_EQ(tile.major, "K") << "tf32 operands are K-major";
    k = std::to_string(2 * std::stoull(k));
  }
  tile.id = bits + "_" + tile.major + "_" + (*summary)[3].str() + "B_" + mn + "x" + k;
  tile.element = integer ? (element == "i8" ? "s8" : "u8") : eight_bit ? element.substr(2) : tf32 ? "tf32" : element;
  tile.offset = std::stoull((*buffer)[1]);
  tile.slot_bytes = std::stoull((*slot)[2]);
  return tile;
}

// The swizzle bytes of a tilec_matrix_descriptor call's arguments (the helper's default: 128).
uint64_t descriptor_swizzle(const std::vector<std::string>& call) {
  return call.size() == 4 ? evaluate(call[3], {}) : 128;
}

// A descriptor call's address split into the tile base and the start expression (base := 0).
std::pair<std::string, std::string> split_base(const std::string& address) {
  size_t end = address[0] == '(' ? address.find(')') + 1 : address.find(' ');
  return {address.substr(0, end), "0" + address.substr(end)};
}

// Whether `code` starts with a call of a tcgen05.mma wrapper (kind::f16's, or one of another kind:
// tilec_tcgen05_mma_f8f6f4, _tf32, _i8), and with one of either family's MMA wrappers.
bool starts_tcgen05_mma(const std::string& code) {
  static const std::regex call(R"(^tilec_tcgen05_mma(?:_f8f6f4|_tf32|_i8)?\()");
  return std::regex_search(code, call);
}
bool starts_mma(const std::string& code) { return starts_tcgen05_mma(code) || code.starts_with("tilec_wgmma_m64n"); }

// The descriptor calls of each MMA instruction line, grouped by the consecutive lines of one mma
// (one line per k-step).
struct MmaLine {
  size_t line;
  std::vector<std::string> arguments;    // of the wrapper / tilec_tcgen05_mma call
  std::vector<std::vector<std::string>> descriptors;  // of each tilec_matrix_descriptor in it
  size_t step = 0;
};
std::vector<MmaLine> mma_lines(const Emitted& e) {
  std::vector<MmaLine> out;
  static const std::regex call(R"(^(tilec_wgmma_m64n\d+k(?:16|32|8)_\w+|tilec_tcgen05_mma(?:_f8f6f4|_tf32|_i8)?)\()");
  for (size_t i = 0; i < e.lines.size(); ++i) {
    std::string code = code_of(e.lines[i]);
    std::smatch match;
    if (!std::regex_search(code, match, call) || code.find("tilec_matrix_descriptor(") == std::string::npos) continue;
    MmaLine line{i, call_arguments(code, match[1].length()), {}, 0};
    for (size_t at = 0; (at = code.find("tilec_matrix_descriptor(", at)) != std::string::npos; ++at)
      line.descriptors.push_back(call_arguments(code, at + 23));
    if (!out.empty() && out.back().line + 1 == i) line.step = out.back().step + 1;
    out.push_back(line);
  }
  return out;
}
size_t steps_of(const std::vector<MmaLine>& lines, size_t index) {
  size_t last = index;
  while (last + 1 < lines.size() && lines[last + 1].step == lines[last].step + 1) ++last;
  return lines[last].step + 1;
}

// ============================================================================== 1. accumulator
TEST(BackendLayoutTables, AccumulatorIsWgmmaCLayout) {
  LOAD_TABLE(table, "wgmma_accumulator.json");
  long compared = 0;
  for (const json& c : table["cases"]) {
    if (c["accumulator"] != "f32") continue;
    const int64_t n = c["n"].get<int64_t>();
    for (int64_t warpgroups : {1, 2}) {
      FragmentLayout layout(target::MmaFamily::wgmma, warpgroups);
      SCOPED_TRACE(c["id"].get<std::string>() + ", " + std::to_string(warpgroups) + " warpgroup(s)");
      ASSERT_EQ(layout.unsupported(64 * warpgroups, n), "");
      ASSERT_EQ(layout.count(n), c["registers_per_thread"].get<int64_t>());
      for (uint64_t thread = 0; thread < 128 * static_cast<uint64_t>(warpgroups); ++thread)
        for (uint64_t i = 0; i < static_cast<uint64_t>(layout.count(n)); ++i, ++compared) {
          Position expected{64 * (thread / 128) + c["row"][thread % 128][i].get<uint64_t>(), c["col"][thread % 128][i].get<uint64_t>()};
          ASSERT_EQ(fragment_position(layout, thread, i, n), expected) << "thread " << thread << ", register " << i;
        }
    }
  }
  std::printf("accumulator: %ld (thread, register) entries\n", compared);
  EXPECT_GT(compared, 0);
}

// ============================================================================== 2. register A
TEST(BackendLayoutTables, RegisterAPairsAreWgmmaALayout) {
  LOAD_TABLE(table, "wgmma_register_a.json");
  const json& a_layout = find_entry(table["cases"], "b16_64x16");
  static const std::regex pack(R"(for \(int (\w+) = 0; \1 < (\d+); \+\+\1\) (\w+)\[\1\] = tilec_pack_pair\((\w+)\[(.+?)\], \4\[(.+?)\]\);)");
  long compared = 0, sites = 0;
  for (const Emitted& e : emitted_samples()) {
    if (e.blackwell()) continue;
    SCOPED_TRACE(e.label);
    for (auto it = std::sregex_iterator(e.text.begin(), e.text.end(), pack); it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      ++sites;
      std::string index = m[1], pairs = m[3], source = m[4], low = m[5], high = m[6];
      const int64_t columns = 2 * static_cast<int64_t>(declared_count(e, source));
      // The prelude: the first argument is the low half; a0..a3 are the A list in order.
      EXPECT_NE(e.text.find("static_cast<uint32_t>(__bfloat16_as_ushort(low)) | static_cast<uint32_t>(__bfloat16_as_ushort(high)) << 16"),
                std::string::npos) << "tilec_pack_pair: low half = first argument";
      auto a_list = e.search(R"(\{%(\d+), %(\d+), %(\d+), %(\d+)\}, %\d+, p, [^;]*;\\n\}\\n"\s*: [^;]*: "r"\(a0\), "r"\(a1\), "r"\(a2\), "r"\(a3\))");
      ASSERT_TRUE(a_list) << "the register-A wrapper's operand list";
      for (int r = 1; r < 4; ++r) EXPECT_EQ(std::stoi((*a_list)[r + 1]), std::stoi((*a_list)[1]) + r) << "a" << r;
      // The calls: wrapper(d, pairs[4s], .., pairs[4s+3], b descriptor), one line per step s.
      std::regex call("_register_a\\(\\w+, " + pairs + R"(\[(\d+)\], )" + pairs + R"(\[(\d+)\], )" + pairs + R"(\[(\d+)\], )" + pairs + R"(\[(\d+)\], )");
      int64_t step = 0;
      FragmentLayout layout(target::MmaFamily::wgmma, static_cast<int64_t>(e.compute_threads() / 128));
      for (auto c = std::sregex_iterator(e.text.begin(), e.text.end(), call); c != std::sregex_iterator(); ++c, ++step)
        for (uint64_t thread = 0; thread < e.compute_threads(); ++thread)
          for (int r = 0; r < 4; ++r)
            for (int half = 0; half < 2; ++half, ++compared) {
              uint64_t pair = std::stoull((*c)[r + 1]);
              uint64_t reg = evaluate(half == 0 ? low : high, {{index, pair}});
              Position p = fragment_position(layout, thread, reg, columns);
              Position expected{64 * (thread / 128) + a_layout["row"][thread % 128][r][half].get<uint64_t>(),
                                16 * step + a_layout["col"][thread % 128][r][half].get<uint64_t>()};
              ASSERT_EQ(p, expected) << "thread " << thread << ", step " << step << ", a" << r << " half " << half
                                     << " (" << source << "[" << reg << "])";
            }
      EXPECT_EQ(step, columns / 16) << "one register-A WGMMA per 16 columns of " << source;
    }
  }
  std::printf("register A: %ld sites, %ld (thread, register, half) entries\n", sites, compared);
  EXPECT_GT(sites, 0) << "attention.sm_90a packs P as a register A operand";
}

// A program that runs the prelude's tilec_wgmma_a_bytes (and tilec_pack_bytes) from `cuda` for the
// 128 threads of a warpgroup: each line of the file it is given holds the 128 threads' packed words
// (hex), each output line what each thread's call returns. CUDA's primitives as the PTX ISA defines them: shfl.sync
// reads lane `source` mod 32 of the caller's warp; prmt picks byte (s >> 4n) & 7 of y:x.
std::string byte_moving_program(const std::string& cuda) {
  auto definition = [&](const std::string& head) {
    std::string text = testing::definition_text(cuda, head);
    if (text.empty()) throw std::runtime_error("the prelude has no " + head);
    return text;
  };
  return "#include <cstdint>\n#include <cstdio>\n"
         "struct { unsigned x; } threadIdx;\n"
         "static uint32_t lanes[128];\n"
         "static uint32_t __shfl_sync(unsigned, uint32_t, unsigned source) { return lanes[(threadIdx.x & ~31u) | (source & 31u)]; }\n"
         "static uint32_t __shfl_xor_sync(unsigned, uint32_t, unsigned mask) { return lanes[threadIdx.x ^ (mask & 31u)]; }\n"
         "static unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {\n"
         "  const uint64_t bytes = uint64_t{y} << 32 | x;\n"
         "  unsigned r = 0;\n"
         "  for (int n = 0; n < 4; ++n) r |= unsigned(bytes >> (8 * ((s >> (4 * n)) & 7)) & 0xff) << (8 * n);\n"
         "  return r;\n"
         "}\n"
         "#define __device__\n#define __forceinline__ inline\n" +
         definition("template <typename T>\n__device__ __forceinline__ uint32_t tilec_pack_bytes(") +
         definition("__device__ __forceinline__ uint32_t tilec_wgmma_a_bytes(") + R"(
int main(int argc, char** argv) {
  std::FILE* in = argc > 1 ? std::fopen(argv[1], "r") : nullptr;
  if (!in) return 2;
  for (;;) {
    for (unsigned& word : lanes) if (std::fscanf(in, "%x", &word) != 1) return 0;
    for (unsigned t = 0; t < 128; ++t) {
      threadIdx.x = t;
      std::printf("%x ", tilec_wgmma_a_bytes(lanes[t]));
    }
    std::printf("\n");
  }
}
)";
}

TEST(BackendLayoutTables, EightBitRegisterAWordsAreWgmmaALayout) {
  const std::string cxx = testing::host_cxx();
  if (cxx.empty()) GTEST_SKIP() << "no host C++ compiler ($TILEC_HOST_CXX or c++)";
  LOAD_TABLE(a_table, "wgmma_register_a.json");
  LOAD_TABLE(accumulators, "wgmma_accumulator.json");
  const json& a_layout = find_entry(a_table["cases"], "b8_64x32");
  static const std::regex words(R"(uint32_t (\w+)\[(\d+)\];\n\s*#pragma unroll\n\s*for \(int i = 0; i < \2; \+\+i\) \{\n.*\n)"
                                R"(\s*const int first = (.+);\n\s*\1\[i\] = tilec_wgmma_a_bytes\(tilec_pack_bytes\((\w+)\[(.+?)\], \4\[(.+?)\], \4\[(.+?)\], \4\[(.+?)\]\)\);)");
  const std::filesystem::path directory = std::filesystem::temp_directory_path() / ("tilec_a_bytes_" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  long compared = 0, sites = 0;
  for (const Emitted& e : emitted_samples()) {
    if (e.blackwell()) continue;
    SCOPED_TRACE(e.label);
    for (auto it = std::sregex_iterator(e.text.begin(), e.text.end(), words); it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      const std::string name = m[1], first = m[3], source = m[4];
      const uint64_t count = std::stoull(m[2]), columns = 2 * declared_count(e, source);
      ASSERT_EQ(count * 8, columns) << "four bytes of 64 rows per word and thread";
      const json* accumulator = nullptr;
      for (const json& c : accumulators["cases"])
        if (c["accumulator"] == "f32" && c["n"].get<uint64_t>() == columns) accumulator = &c;
      ASSERT_NE(accumulator, nullptr) << columns << " columns";
      // Two runs: the accumulator's bytes carry their row, then their column (both < 256).
      std::string input;
      for (int property = 0; property < 2; ++property)
        for (uint64_t i = 0; i < count; ++i) {
          const uint64_t base = evaluate(first, {{"i", i}});
          for (uint64_t thread = 0; thread < 128; ++thread) {
            uint32_t word = 0;
            for (int byte = 0; byte < 4; ++byte) {
              const uint64_t reg = evaluate(m[5 + byte].str(), {{"first", base}});
              word |= (*accumulator)[property == 0 ? "row" : "col"][thread][reg].get<uint32_t>() << (8 * byte);
            }
            char hex[16];
            std::snprintf(hex, sizeof hex, thread == 127 ? "%x\n" : "%x ", word);
            input += hex;
          }
        }
      const std::string label = "site" + std::to_string(sites++);
      testing::write_file(directory / (label + ".in"), input);
      testing::CommandResult built = testing::build_host_program(cxx, directory, label, byte_moving_program(e.text));
      ASSERT_EQ(built.status, 0) << built.err;
      testing::CommandResult ran = testing::run_command("'" + (directory / label).string() + "' '" + (directory / (label + ".in")).string() + "'");
      ASSERT_EQ(ran.status, 0) << ran.err;
      std::istringstream out(ran.out);
      std::vector<uint32_t> results;
      for (std::string hex; out >> hex;) results.push_back(static_cast<uint32_t>(std::stoul(hex, nullptr, 16)));
      ASSERT_EQ(results.size(), 2 * count * 128);
      for (uint64_t i = 0; i < count; ++i)
        for (uint64_t thread = 0; thread < 128; ++thread)
          for (int byte = 0; byte < 4; ++byte, ++compared) {
            const uint64_t r = i % 4, step = i / 4;
            const auto at = [&](int property) { return results[(property * count + i) * 128 + thread] >> (8 * byte) & 0xff; };
            Position expected{a_layout["row"][thread][r][byte].get<uint64_t>(), 32 * step + a_layout["col"][thread][r][byte].get<uint64_t>()};
            ASSERT_EQ((Position{at(0), at(1)}), expected) << "thread " << thread << ", word " << i << " (" << name << "), byte " << byte;
          }
      // The calls: wrapper(d, W[4s], .., W[4s+3], b descriptor) in order of s.
      std::regex call("_register_a\\w*\\(\\w+, " + name + R"(\[(\d+)\], )" + name + R"(\[(\d+)\], )" + name + R"(\[(\d+)\], )" + name + R"(\[(\d+)\], )");
      uint64_t step = 0;
      for (auto c = std::sregex_iterator(e.text.begin(), e.text.end(), call); c != std::sregex_iterator(); ++c, ++step)
        for (int r = 0; r < 4; ++r) EXPECT_EQ(std::stoull((*c)[r + 1]), 4 * step + r) << "a" << r << " of step " << step;
      EXPECT_EQ(step, count / 4) << "one register-A WGMMA per 32 columns of " << source;
    }
  }
  std::printf("8-bit register A: %ld (thread, word, byte) entries at %ld sites\n", compared, sites);
  EXPECT_GT(sites, 0) << "fp8_attention feeds P to WGMMA as 8-bit registers";
  if (!HasFailure()) std::filesystem::remove_all(directory);
}

// ============================================================================== 3. descriptors
TEST(BackendLayoutTables, MatrixDescriptorsAreCanonicalTiles) {
  LOAD_TABLE(table, "smem_canonical.json");
  long compared = 0, lbo_exceptions = 0, tf32_operands = 0, integer_operands = 0;
  std::set<std::string> tiles;
  for (const Emitted& e : emitted_samples()) {
    SCOPED_TRACE(e.label);
    const std::string body = returned_expression(e, "tilec_matrix_descriptor(uint32_t address");
    const std::vector<MmaLine> lines = mma_lines(e);
    for (size_t index = 0; index < lines.size(); ++index) {
      const MmaLine& mma = lines[index];
      SCOPED_TRACE("line " + std::to_string(mma.line + 1) + ": " + trim(e.lines[mma.line]));
      const size_t steps = steps_of(lines, index);
      std::string a_major = "K", b_major;  // a register A is K-major
      for (size_t d = 0; d < mma.descriptors.size(); ++d) {
        const bool is_a = mma.descriptors.size() == 2 && d == 0;  // register A: the one descriptor is B's
        const std::vector<std::string>& call = mma.descriptors[d];
        ASSERT_TRUE(call.size() == 3u || call.size() == 4u) << "address, leading and stride bytes[, swizzle bytes]";
        auto [base, start] = split_base(call[0]);
        OperandTile operand = operand_tile(e, base, is_a, steps, descriptor_swizzle(call));
        // A tile of several K panels: each K step is one of a panel's, that many panels further.
        const KPanels panels = k_panels(operand.id);
        const size_t panel_steps = steps / panels.count, panel = mma.step / panel_steps;
        const json& tile = canonical_tile(table["cases"], panels.id);
        // A sub-block of one MN atom has no second atom for LBO to reach (README 1.1: unused).
        const bool one_atom = tile["id"] != operand.id && operand.major == "MN" &&
                              operand_mn(operand.id) <= tile["atom_mn"].get<uint64_t>();
        tiles.insert(operand.id);
        tf32_operands += operand.element == "tf32";
        EXPECT_EQ(tile["major"], operand.major);
        (is_a ? a_major : b_major) = operand.major;
        EXPECT_EQ(operand.offset % 1024, 0u) << "tile base";
        EXPECT_EQ(operand.slot_bytes % 1024, 0u) << "slot size";
        if (tile["id"] == panels.id) {
          ASSERT_EQ(tile["k_steps"].size(), panel_steps) << operand.id << ": one MMA per k-step";
        } else {
          ASSERT_GE(tile["k_steps"].size(), panel_steps) << operand.id << " in " << tile["id"] << ": one MMA per k-step";
        }
        const json& step = tile["k_steps"][mma.step % panel_steps];
        const uint64_t warpgroups = start.find("compute_warpgroup") != std::string::npos ? e.compute_threads() / 128 : 1;
        for (uint64_t warpgroup = 0; warpgroup < warpgroups; ++warpgroup) {
          Variables v{{"compute_warpgroup", warpgroup}};
          uint64_t address = evaluate(start, v), leading = evaluate(call[1], v), stride = evaluate(call[2], v);
          uint64_t swizzle = descriptor_swizzle(call);
          // The table: element (64·warpgroup, k0)'s offset (README 1.5: a 64-row WGMMA slab of A).
          uint64_t expected_start = table_offset(tile, 64 * warpgroup, step["k0"].get<uint64_t>());
          if (warpgroup == 0) {
            EXPECT_EQ(expected_start, step["start"].get<uint64_t>());
          }
          expected_start += panel * panels.bytes;
          uint64_t expected = parse_hex(step[e.blackwell() ? "desc_sm100" : "desc_sm90"]);
          expected = (expected & ~uint64_t{0x3fff}) | ((expected_start & 0x3ffff) >> 4);
          uint64_t actual = evaluate(body, {{"address", address}, {"leading_bytes", leading}, {"stride_bytes", stride},
                                            {"swizzle_bytes", swizzle}});
          if (!tile["lbo_used"].get<bool>() || one_atom) {
            const uint64_t lbo_field = uint64_t{0x3fff} << 16;
            if ((actual & lbo_field) != (expected & lbo_field)) {
              ++lbo_exceptions;
              EXPECT_TRUE(operand.id == "b16_MN_128B_64x64" || one_atom) << "the only documented LBO differences";
            }
            actual &= ~lbo_field, expected &= ~lbo_field;  // README: never read for this tile
          }
          ++compared;
          EXPECT_EQ(actual, expected) << std::hex << operand.id << " k-step " << mma.step << ", warpgroup " << warpgroup
                                      << ": 0x" << actual << " vs the table's 0x" << expected;
        }
      }
      if (!e.blackwell()) {  // WGMMA's immediates: ..., p, scale-a, scale-b[, trans-a], trans-b
        std::string name = code_of(e.lines[mma.line]);
        name = name.substr(0, name.find('('));
        size_t at = e.text.find("wgmma.mma_async", e.text.find("void " + name + "("));
        std::string list = e.text.substr(at, e.text.find(';', at) - at);
        if (list.find(".s32.") != std::string::npos) {
          // 8-bit integers into s32: no immediates at all, both operands K-major
          EXPECT_TRUE(list.ends_with(", p")) << list;
          EXPECT_EQ(b_major, "K") << "an integer WGMMA reads B K-major";
          EXPECT_EQ(a_major, "K") << "and A K-major";
          ++integer_operands;
          continue;
        }
        std::vector<std::string> immediates = call_arguments("(" + list.substr(list.rfind(" p, ") + 4) + ")", 0);
        if (name.find("k32_") != std::string::npos || name.find("k8_") != std::string::npos) {
          // 8-bit and tf32: no transpose immediates, both operands K-major
          EXPECT_EQ(immediates.size(), 2u) << list;
          EXPECT_EQ(b_major, "K") << "an 8-bit or tf32 WGMMA reads B K-major";
          EXPECT_EQ(a_major, "K") << "and A K-major";
          continue;
        }
        ASSERT_EQ(immediates.size(), mma.descriptors.size() == 2 ? 4u : 3u) << list;
        if (mma.descriptors.size() == 2) {
          EXPECT_EQ(immediates[2], a_major == "K" ? "0" : "1") << "trans-a: 0 for a K-major A, 1 for an MN-major one";
        }
        EXPECT_EQ(immediates.back(), b_major == "K" ? "0" : "1") << "trans-b: 1 for an MN-major B, 0 for a K-major one";
      }
    }
  }
  std::printf("descriptors: %ld compared (%ld with the documented LBO difference) over tiles:", compared, lbo_exceptions);
  for (const std::string& id : tiles) std::printf(" %s", id.c_str());
  std::printf("\n");
  // weight_grad's transposed A is b16_MN_128B_128x64 too (as sm_90a: two 64-row slabs).
  for (const char* id : {"b16_K_128B_128x64", "b16_MN_128B_256x64", "b16_MN_128B_128x64", "b16_MN_128B_64x64",
                         "b16_K_128B_256x64", "b8_K_128B_128x128", "b8_K_128B_256x128", "b16_K_64B_64x32", "b16_K_32B_64x16",
                         // N = 32 and 16: one MN atom of the 64- and 32-byte swizzles; sm_100a's
                         // staged P of attention with BKV = 32
                         "b16_MN_64B_32x64", "b16_MN_32B_16x64", "b16_K_64B_128x32"})
    EXPECT_TRUE(tiles.count(id)) << id << " is not among the emitted operands";
  EXPECT_GT(tf32_operands, 0) << "tf32_linear's operands";
  EXPECT_GT(integer_operands, 0) << "int8_linear's WGMMAs";
}

// ============================================================================== 4. tcgen05 idesc
TEST(BackendLayoutTables, Tcgen05InstructionDescriptors) {
  LOAD_TABLE(table, "tcgen05_instr_desc.json");
  long compared = 0, tf32_calls = 0, integer_calls = 0, narrow_calls = 0;
  std::set<std::string> seen;
  for (const Emitted& e : emitted_samples()) {
    if (!e.blackwell()) continue;
    SCOPED_TRACE(e.label);
    const std::vector<MmaLine> lines = mma_lines(e);
    for (size_t index = 0; index < lines.size(); ++index) {
      const MmaLine& mma = lines[index];
      SCOPED_TRACE("line " + std::to_string(mma.line + 1));
      // The kind is the one in the asm of the wrapper this line calls.
      std::string name = code_of(e.lines[mma.line]);
      name = name.substr(0, name.find('('));
      size_t wrapper = e.text.find("void " + name + "(");
      ASSERT_NE(wrapper, std::string::npos) << name;
      std::smatch kind_match;
      std::string wrapper_text = e.text.substr(wrapper, e.text.find("\n}", wrapper) - wrapper);
      ASSERT_TRUE(std::regex_search(wrapper_text, kind_match, std::regex(R"(tcgen05\.mma\.cta_group::1\.kind::(\w+) )")));
      const std::optional<std::smatch> kind = kind_match;
      ASSERT_EQ(mma.arguments.size(), 5u);
      const size_t steps = steps_of(lines, index);
      OperandTile a = operand_tile(e, split_base(mma.descriptors[0][0]).first, true, steps,
                                   descriptor_swizzle(mma.descriptors[0]));
      OperandTile b = operand_tile(e, split_base(mma.descriptors[1][0]).first, false, steps,
                                   descriptor_swizzle(mma.descriptors[1]));
      // D: the TMEM accumulator (`NAME_started`) or the register tile the load after it fills.
      std::string d_name;  // from the first step's call
      const MmaLine& first = lines[index - mma.step];
      if (first.arguments[4].ends_with("_started")) {
        d_name = first.arguments[4].substr(0, first.arguments[4].size() - 8);
      } else {
        for (size_t i = mma.line; i < e.lines.size() && d_name.empty(); ++i) {
          std::smatch m;
          std::string code = code_of(e.lines[i]);
          if (std::regex_search(code, m, std::regex(R"((\w+)\[chunk \* \d+ \+ i\] = (?:add_f32|static_cast<int32_t>)\()")))
            d_name = m[1];
        }
      }
      auto d = e.search("//   (?:accumulator|register tile) " + d_name + R"(: (\d+)x(\d+) (\w+) in )");
      ASSERT_TRUE(d) << "the summary of " << d_name;
      // kind::tf32: the kind::f16 bf16 entry, formats set to 2 below (the header says why).
      // kind::i8: the kind::f8f6f4 e4m3 entry (formats 0, D f32) with the PTX ISA's kind::i8
      // fields set below: D format 2 (S32, bits 4-5), A and B formats 1 for s8 and 0 for u8.
      const bool tf32 = (*kind)[1] == "tf32", integer = (*kind)[1] == "i8";
      const std::string table_kind = tf32 ? "f16" : integer ? "f8f6f4" : (*kind)[1].str();
      const std::string a_element = tf32 ? "bf16" : integer ? "e4m3" : a.element;
      const std::string b_element = tf32 ? "bf16" : integer ? "e4m3" : b.element;
      const std::string d_element = integer ? "f32" : (*d)[3].str();
      if (integer) {
        EXPECT_EQ((*d)[3], "i32") << "an integer MMA accumulates in i32";
        ++integer_calls;
      }
      if (tf32) {
        EXPECT_EQ(a.element, "tf32");
        EXPECT_EQ(b.element, "tf32");
        ++tf32_calls;
      }
      // N = 32 or 16, which the table has no entries of: its N = 64 entry with the n_dim field
      // (bits 17-22, N >> 3, as its decoded `fields` say) set to N >> 3.
      const int n = std::stoi((*d)[2]), table_n = n < 64 ? 64 : n;
      const json* entry = nullptr;
      for (const json& candidate : table["descriptors"])
        if (candidate["kind"] == table_kind && candidate["a"] == a_element && candidate["b"] == b_element &&
            candidate["d"] == d_element && candidate["m"] == std::stoi((*d)[1]) && candidate["n"] == table_n &&
            candidate["a_major"] == a.major && candidate["b_major"] == b.major)
          entry = &candidate;
      ASSERT_TRUE(entry) << "no table entry for kind::" << (*kind)[1] << " " << a.element << " x " << b.element << " -> "
                         << (*d)[3] << ", " << (*d)[1] << "x" << (*d)[2];
      ++compared;
      seen.insert((*entry)["idesc"].get<std::string>());
      uint64_t expected = parse_hex((*entry)["idesc"]);
      if (tf32) expected = (expected & ~uint64_t{0x3f << 7}) | 2u << 7 | 2u << 10;
      if (integer) {
        ASSERT_EQ((expected >> 4) & 3, 1u) << "the f8f6f4 entry's D is F32";
        ASSERT_EQ((expected >> 7) & 0x3f, 0u) << "the f8f6f4 entry's formats are e4m3 (0)";
        expected = (expected & ~uint64_t{3 << 4}) | 2u << 4 | uint64_t{a.element == "s8"} << 7 |
                   uint64_t{b.element == "s8"} << 10;
      }
      ASSERT_EQ((*entry)["fields"]["n_dim"].get<int>(), table_n >> 3);
      ASSERT_EQ((expected >> 17) & 0x3f, static_cast<uint64_t>(table_n >> 3)) << "n_dim in bits 17-22";
      if (n != table_n) {
        expected = (expected & ~(uint64_t{0x3f} << 17)) | static_cast<uint64_t>(n >> 3) << 17;
        ++narrow_calls;
      }
      EXPECT_EQ(evaluate(mma.arguments[3], {}), expected)
          << mma.arguments[3] << " vs the table's " << (*entry)["idesc"].get<std::string>() << (tf32 ? " as kind::tf32" : "");
    }
  }
  std::printf("instruction descriptors: %ld calls, distinct table values:", compared);
  for (const std::string& value : seen) std::printf(" %s", value.c_str());
  std::printf("\n");
  EXPECT_GE(seen.size(), 3u) << "bf16 N=256, f16 N=256, bf16 N=64 (and N=128)";
  EXPECT_GT(tf32_calls, 0) << "tf32_linear's kind::tf32 calls";
  EXPECT_GT(integer_calls, 0) << "int8_linear's kind::i8 calls";
  EXPECT_GT(narrow_calls, 0) << "gemm with BN = 32 and 16";
}

// ============================================================================== 5. tcgen05.ld
// The TMEM column of the MMA result a load reads: `tilec_tcgen05_mma(tmem_base + X, ...)` (or its
// f8f6f4 or tf32 form) of the accumulator `NAME_started` when `accumulator` names it, else the last MMA
// before `line`.
uint64_t result_tmem_column(const Emitted& e, size_t line, const std::string& accumulator) {
  static std::map<std::string, uint64_t> cache;
  const bool named = !accumulator.empty();
  std::string key = e.label + " " + std::to_string(line) + " " + accumulator;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::optional<uint64_t> column;
  for (size_t i = 0; i < e.lines.size(); ++i) {
    std::string code = code_of(e.lines[i]);
    if (!starts_tcgen05_mma(code)) continue;
    std::vector<std::string> arguments = call_arguments(code, code.find('('));
    if (named) {
      if (arguments[4] == accumulator + "_started") return cache[key] = evaluate(arguments[0], {{"tmem_base", 0}});
    }
    if (!named && i < line) {
      column = evaluate(arguments[0], {{"tmem_base", 0}});
    }
  }
  if (!column) throw std::runtime_error("no MMA for the TMEM load at line " + std::to_string(line));
  return cache[key] = *column;
}

// The M of the last MMA before `line` (an mma into a register tile, which the load reads back): the
// instruction descriptor's bits 24-28, << 4.
uint64_t last_mma_rows(const Emitted& e, size_t line) {
  static std::map<std::string, uint64_t> cache;
  const std::string key = e.label + " " + std::to_string(line);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::optional<uint64_t> rows;
  for (size_t i = 0; i < line && i < e.lines.size(); ++i) {
    std::string code = code_of(e.lines[i]);
    if (!starts_tcgen05_mma(code)) continue;
    const uint64_t descriptor = std::stoull(call_arguments(code, code.find('('))[3], nullptr, 16);
    rows = ((descriptor >> 24) & 0x1f) << 4;
  }
  if (!rows) throw std::runtime_error("no MMA before the TMEM load at line " + std::to_string(line));
  return cache[key] = *rows;
}

// The rows of TMEM accumulator `name` (its summary line), remembered per file.
uint64_t accumulator_rows(const Emitted& e, const std::string& name) {
  static std::map<std::string, uint64_t> cache;
  auto [known, fresh] = cache.try_emplace(e.label + " " + name, 0);
  if (fresh) {
    auto summary = e.search("//   accumulator " + name + R"(: (\d+)x\d+ f32 in TMEM)");
    if (!summary) throw std::runtime_error("no summary of accumulator " + name);
    known->second = std::stoull((*summary)[1]);
  }
  return known->second;
}

TEST(BackendLayoutTables, TmemLoadsReadWhatTheCodeAssumes) {
  LOAD_TABLE(table, "tcgen05_ld.json");
  long compared = 0;
  size_t scopes = 0;
  std::set<int> widths_called;
  for (const Emitted& e : emitted_samples()) {
    if (!e.blackwell()) continue;
    SCOPED_TRACE(e.label);
    // The prelude: each tilec_tmem_load_W is the 32x32b.xW shape, registers {%0..%W-1} =
    // values[0..W-1] in order.
    std::map<int, const json*> map_of;  // W -> its table
    static const std::regex wrapper(R"(void tilec_tmem_load_(\d+)\()");
    for (auto it = std::sregex_iterator(e.text.begin(), e.text.end(), wrapper); it != std::sregex_iterator(); ++it) {
      const int width = std::stoi((*it)[1]);
      const json& map = *(map_of[width] = &find_entry(table["tables"], "32x32b.x" + std::to_string(width)));
      std::string load = e.text.substr(it->position(), e.text.find("\n}", it->position()) - it->position());
      ASSERT_NE(load.find("\"tcgen05.ld.sync.aligned." + map["id"].get<std::string>() + ".b32 {%0,"), std::string::npos);
      std::regex output(R"("=r"\(values\[(\d+)\]\))");
      int next = 0;
      for (auto out = std::sregex_iterator(load.begin(), load.end(), output); out != std::sregex_iterator(); ++out, ++next)
        ASSERT_EQ(std::stoi((*out)[1]), next);
      ASSERT_EQ(next, map["registers_per_thread"].get<int>());
    }
    ASSERT_TRUE(map_of.count(32)) << "tilec_tmem_load_32";
    FragmentLayout layout(target::MmaFamily::tcgen05, static_cast<int64_t>(e.compute_threads() / 128));
    // Per scope and array (values, values_1, ...: a store reading several accumulators): the last
    // load's address and width, per thread.
    std::map<std::pair<size_t, std::string>, std::pair<uint64_t, int>> address_of;
    scopes += run_scopes_with(e, "tilec_tmem_load_", "", [&](size_t scope, const std::string& code, const Variables& v, uint64_t thread) {
      if (code.starts_with("tilec_tmem_load_")) {
        const int width = std::stoi(code.substr(16, code.find('(') - 16));
        ASSERT_TRUE(map_of.count(width)) << "a call of tilec_tmem_load_" << width << ", which the prelude lacks";
        widths_called.insert(width);
        std::vector<std::string> arguments = call_arguments(code, code.find('('));
        uint64_t address = evaluate(arguments[0], v);
        address_of[{scope, arguments[1]}] = {address, width};
        uint64_t warp = v.at("threadIdx_x") / 32;
        EXPECT_EQ(address >> 16, 32 * (warp % 4)) << "thread " << thread << ": a warp reads its TMEM lane quarter";
        return;
      }
      if (code.starts_with("uint32_t values")) return;
      static const std::regex reads(R"((values(?:_\d+)?)\[(\w+)\])"), into(R"(^(\w+)\[(.+?)\] = add_f32\()");
      for (auto it = std::sregex_iterator(code.begin(), code.end(), reads); it != std::sregex_iterator(); ++it) {
        const std::string array = (*it)[1];
        const auto [address, width] = address_of.at({scope, array});
        const json& map = *map_of.at(width);
        uint64_t reg = v.at((*it)[2]), lane_id = thread % 32;
        ASSERT_LT(reg, static_cast<uint64_t>(width)) << "thread " << thread << " reads past " << array;
        // The accumulator this array holds: `(NAME_started ? __uint_as_float(ARRAY[i])`.
        static std::map<std::string, std::string> owners;  // code + array -> accumulator (or "")
        auto [known, fresh] = owners.try_emplace(code + "\n" + array);
        if (fresh) {
          std::smatch owner;
          if (std::regex_search(code, owner, std::regex(R"(\((\w+)_started \? __uint_as_float\()" + array + R"(\[)")))
            known->second = owner[1];
        }
        const std::string& accumulator = known->second;
        uint64_t tmem_column = result_tmem_column(e, scope, accumulator);
        // D's row in TMEM lane L (PTX ISA, tcgen05 data-path layouts, cta_group::1): M = 128 is
        // row L (layout D); M = 64 is row 16·(L / 32) + L mod 32 for L mod 32 < 16, and lanes
        // 16..31 of each quarter hold no row (layout F), so their threads must store nothing.
        uint64_t lane = (address >> 16) + map["lane"][lane_id][reg].get<uint64_t>();
        const std::vector<std::string>* dest = matched(into, code, false);  // into a register tile
        const uint64_t rows =
            accumulator.empty() ? (dest ? last_mma_rows(e, scope) : 128) : accumulator_rows(e, accumulator);
        if (rows == 64) {
          if (lane % 32 >= 16) {
            // A stand-in (FragmentLayout::owner): what it read is no row; it may keep it in a
            // register tile, which it never writes out, but must not store it.
            // The store's guard is the owner condition, and it excludes this thread.
            ASSERT_TRUE(dest || (code.find("if (lane < 16 && ") != std::string::npos && v.at("lane") >= 16))
                << "thread " << thread << " holds no row of a 64-row D but stores: " << code;
            continue;
          }
          lane = 16 * (lane / 32) + lane % 32;
        }
        Position read{lane, (address & 0xffff) + map["column"][lane_id][reg].get<uint64_t>() - tmem_column};
        ++compared;
        if (dest) {
          uint64_t i = evaluate((*dest)[2], v);
          uint64_t columns = declared_count(e, (*dest)[1]) * (e.compute_threads() / 128);
          ASSERT_EQ(fragment_position(layout, thread, i, static_cast<int64_t>(columns), static_cast<int64_t>(rows)),
                    read)
              << "thread " << thread << ": " << (*dest)[1] << "[" << i << "] holds what " << array << "[" << reg
              << "] read";
        } else {  // an epilogue: the row and column it stores the value at
          ASSERT_EQ((Position{v.at("row"), v.at("column")}), read) << "thread " << thread << ", " << array << "[" << reg << "]: " << code;
        }
      }
    });
  }
  std::printf("tcgen05.ld: %zu blocks, %ld (thread, register) reads\n", scopes, compared);
  EXPECT_GE(scopes, 2u);
  EXPECT_EQ(widths_called, (std::set<int>{8, 16, 32})) << "x16 and x8: gemm with BN = 32 and 16, attention with BKV = 32";
}

// ============================================================================== 6. staging
// What a staging block writes into: the TMA store's box (map, origin, encoded box) or, for an A
// from registers (sm_100a) or a computed B (`// B computed:` opens its block), the operand tile
// of the MMA after the block.
struct StagingTarget {
  std::vector<std::string> store;  // tilec_tma_store_2d's (_3d's, tilec_tma_reduce_add_2d's) arguments (empty: an operand)
  uint64_t box_rows = 0, box_columns = 0;
  bool computed_b = false;
  OperandTile tile;
};
StagingTarget staging_target(const Emitted& e, size_t scope) {
  StagingTarget target;
  target.computed_b = scope > 0 && e.lines[scope - 1].find("// B computed:") != std::string::npos;
  for (size_t i = scope; i < e.lines.size(); ++i) {
    std::string code = code_of(e.lines[i]);
    // An adding store's tilec_tma_reduce_add_2d takes the same arguments as tilec_tma_store_2d.
    if (size_t add = code.find("tilec_tma_reduce_add_2d("); add != std::string::npos) {
      code.replace(add, 24, "tilec_tma_store_2d(");
    }
    size_t at = code.find("tilec_tma_store_");
    if (at != std::string::npos && (code.compare(at, 19, "tilec_tma_store_2d(") == 0 || code.compare(at, 19, "tilec_tma_store_3d(") == 0 ||
                                    code.compare(at, 19, "tilec_tma_store_4d(") == 0)) {
      target.store = call_arguments(code, at + 18);  // a 3-D store's batch coordinate comes last: the box is the same
      if (code.compare(at, 19, "tilec_tma_store_4d(") == 0)  // column, middle, row, batch: the box is one middle's
        target.store.erase(target.store.begin() + 3);
      auto encode = e.search("tilec_tensor_map(?:_4d)?\\(" + target.store[0] + R"(, \w+, [\w.]+, [^;]*, (\d+), (\d+)\); status)");
      if (!encode) throw std::runtime_error("no tensor map " + target.store[0]);
      target.box_rows = std::stoull((*encode)[1]), target.box_columns = std::stoull((*encode)[2]);
      return target;
    }
    if (starts_mma(code)) {
      std::vector<MmaLine> lines = mma_lines(e);
      size_t index = 0;
      while (lines[index].line != i) ++index;
      const std::vector<std::string>& operand =
          target.computed_b ? lines[index].descriptors.back() : lines[index].descriptors[0];
      target.tile = operand_tile(e, split_base(operand[0]).first, !target.computed_b, steps_of(lines, index),
                                 descriptor_swizzle(operand));
      return target;
    }
  }
  throw std::runtime_error("a staging block without a TMA store or an MMA after it");
}

// A computed B's reads of the weight TMA copied (TensorCoreKernel::shared_element):
// `*reinterpret_cast<const T*>(shared_aligned + (slot - shared_base) + offset)`, with the stage
// tile's rows, its panels and swizzle (from the kernel's summary, checked against the swizzle
// its tensor map encodes), and the TMA box of that swizzle in the table (bf16 boxes: the swizzle
// is of bytes, so an 8-bit tile's 64-byte rows are a bf16 tile's 32 columns). Per statement.
struct WeightRead {
  std::string offset, column;  // the byte offset in the slot; the tile column it reads
  uint64_t swizzle_bytes = 0, panel_columns = 0, rows = 0, columns = 0, bytes = 0;
  const json* box = nullptr;
};
const std::vector<WeightRead>& weight_reads_of(const Emitted& e, const std::string& statement, const json& swizzle) {
  static std::map<std::string, std::vector<WeightRead>> cache;
  if (auto it = cache.find(e.label + "\n" + statement); it != cache.end()) return it->second;
  std::vector<WeightRead> reads;
  static const std::regex weight(R"(tilec_shared_read<\w+>\(shared_aligned \+ \((\w+) - shared_base\) \+ )");
  for (auto it = std::sregex_iterator(statement.begin(), statement.end(), weight); it != std::sregex_iterator(); ++it) {
    const size_t call = statement.find('(', static_cast<size_t>(it->position(0)));
    const std::string inside = call_arguments(statement, call).front();  // shared_aligned + (slot - ..) + offset
    WeightRead read;
    read.offset = inside.substr(inside.find(") + ") + 4);
    read.column = read.offset.substr(0, read.offset.find(" / "));  // `column / 64 * 8192 + ...`
    const std::string slot = (*it)[1];
    auto declared = e.search("const uint32_t " + slot + R"( = (\w+) \+ static_cast<uint32_t>\(\w+\) \* \d+;)");
    if (!declared) throw std::runtime_error("no slot " + slot);
    const std::string buffer = (*declared)[1];
    auto tile = e.search("const uint32_t " + buffer + R"( = shared_base \+ \d+;  // \d+ slots of tile<(\d+)x(\d+)x(\w+), smem>)");
    auto summary = e.search("//   pipe " + buffer + R"(: .*read element by element into a computed B from (\w+) \(as stored, \d+ panel\(s\) of (\d+) columns, (\d+)B swizzle\))");
    if (!tile || !summary) throw std::runtime_error("no stage buffer or summary of " + buffer);
    read.swizzle_bytes = std::stoull((*summary)[3]), read.panel_columns = std::stoull((*summary)[2]);
    read.rows = std::stoull((*tile)[1]), read.columns = std::stoull((*tile)[2]);
    read.bytes = read.swizzle_bytes / read.panel_columns;
    // The tensor map TMA fills it through has that swizzle (128 bytes: the helper's default).
    auto encoded = e.search(R"(tilec_tensor_map\(&)" + (*summary)[1].str() +
                            R"(_map, [^;]*?(?:, (CU_TENSOR_MAP_SWIZZLE_\w+))?\); status)");
    if (!encoded) throw std::runtime_error("no tensor map of " + (*summary)[1].str());
    EXPECT_EQ((*encoded)[1].matched ? (*encoded)[1].str() : std::string("CU_TENSOR_MAP_SWIZZLE_128B"),
              "CU_TENSOR_MAP_SWIZZLE_" + std::to_string(read.swizzle_bytes) + "B");
    read.box = &find_entry(swizzle["boxes"], "bf16_" + std::to_string(read.swizzle_bytes) + "B_128x" +
                                                 std::to_string(read.swizzle_bytes / 2));
    reads.push_back(read);
  }
  return cache[e.label + "\n" + statement] = reads;
}

TEST(BackendLayoutTables, StagingOffsetsAreTmaAndCanonicalLayouts) {
  LOAD_TABLE(swizzle, "tma_swizzle.json");
  LOAD_TABLE(canonical, "smem_canonical.json");
  LOAD_TABLE(accumulator, "wgmma_accumulator.json");
  static const std::regex sink(R"(^\*reinterpret_cast<(\w+)\*>\((staging_bytes|staging) \+ (.*)\) = (.*);$)");
  static const std::regex array(R"((\w+)\[(\w+)\])");
  long stores = 0, a_writes = 0, b_writes = 0, weight_reads = 0;
  std::set<std::string> boxes, a_tiles, b_tiles;
  for (const Emitted& e : emitted_samples()) {
    SCOPED_TRACE(e.label);
    // The store maps below pass no swizzle (their calls end with the box): the helper's default.
    ASSERT_TRUE(e.search(R"(CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B\) \{)") &&
                e.search(R"(encode\(map, [^;]*CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,)"))
        << "tilec_tensor_map's swizzle";
    const uint64_t warpgroups = e.compute_threads() / 128;
    const FragmentLayout blackwell_layout(target::MmaFamily::tcgen05, static_cast<int64_t>(warpgroups));
    std::map<size_t, StagingTarget> targets;
    std::map<std::tuple<size_t, uint64_t, uint64_t>, std::set<uint64_t>> written;  // (scope, warpgroup, chunk) → addresses
    run_scopes_with(e, "*reinterpret_cast<", "(staging", [&](size_t scope, const std::string& code, const Variables& v, uint64_t thread) {
      const std::vector<std::string>* sunk = matched(sink, code, true);
      if (!sunk) return;
      const std::vector<std::string>& m = *sunk;
      if (!targets.count(scope)) targets[scope] = staging_target(e, scope);
      const StagingTarget& target = targets[scope];
      const std::string type = m[1], value = m[4];
      const uint64_t element_bytes = type == "float" || type == "int32_t" ? 4
                                   : type == "__nv_fp8_e4m3" || type == "__nv_fp8_e5m2" || type == "int8_t" ? 1
                                                                                                          : 2;
      const uint64_t address = evaluate(m[2] + " + " + m[3], v);
      const uint64_t chunk = v.count("chunk") ? v.at("chunk") : 0;
      EXPECT_TRUE(written[std::make_tuple(scope, thread / 128, chunk)].insert(address).second) << "two writes at " << address;
      // The element written: a register of WGMMA's layout (the table), of FragmentLayout on
      // sm_100a (test 5 ties it to tcgen05.ld), or a TMEM value (test 5 checks row/column).
      Position element{v.count("row") ? v.at("row") : 0, v.count("column") ? v.at("column") : 0};
      const std::vector<std::string>* held = value.find("values[") == std::string::npos ? matched(array, value, false) : nullptr;
      if (held) {
        uint64_t i = v.at((*held)[2]), count = declared_count(e, (*held)[1]);
        if (e.blackwell()) {
          // A staged A has the operand tile's rows (64: TMEM layout F, written by lanes 0..15);
          // a TMA store's tile 128 (64-row tiles are stored directly).
          const int64_t rows = target.store.empty() ? static_cast<int64_t>(operand_mn(target.tile.id)) : 128;
          element = fragment_position(blackwell_layout, thread, i, static_cast<int64_t>(count * warpgroups), rows);
        } else {
          const json& c = find_entry(accumulator["cases"], "f32_64x" + std::to_string(2 * count));
          element = {64 * (thread / 128) + c["row"][thread % 128][i].get<uint64_t>(), c["col"][thread % 128][i].get<uint64_t>()};
        }
        ASSERT_TRUE(v.count("row") && v.count("column"));
        ASSERT_EQ((Position{v.at("row"), v.at("column")}), element) << "thread " << thread << ": " << code;
      }
      if (target.computed_b) {  // element (row, column) of B [K, N] (MN-major) or of x [N, K] (K-major)
        // The weight it is computed from, read from the slot TMA filled in its row, at the column
        // the read names: the element's own, or shifted where a concat puts the weight's columns
        // further along (the two halves of a packed byte). Of the reads a concat chooses between,
        // the element's is the one whose column lies in the weight tile.
        const std::vector<WeightRead>& reads = weight_reads_of(e, value, swizzle);
        size_t inside = 0;
        for (const WeightRead& read : reads) {
          const uint64_t column = evaluate(read.column, v);
          if (column >= read.columns) continue;
          ++inside;
          const uint64_t r = element.row, b = column % read.panel_columns * read.bytes;
          const uint64_t expected = column / read.panel_columns * read.rows * read.swizzle_bytes +
                                    r / 128 * 128 * read.swizzle_bytes +
                                    (*read.box)["chunk_offsets"][r % 128][b / 16].get<uint64_t>() + b % 16;
          ++weight_reads;
          ASSERT_EQ(evaluate(read.offset, v), expected) << (*read.box)["id"].get<std::string>() << ", thread " << thread
                                                         << ", weight element (" << r << ", " << column
                                                         << "): " << read.offset;
        }
        ASSERT_TRUE(reads.empty() || inside > 0) << "thread " << thread << ", element " << element
                                                 << ": no weight read inside the tile";
        ++b_writes;
        b_tiles.insert(target.tile.id + (e.blackwell() ? " sm_100a" : " sm_90a"));
        const bool k_major = target.tile.major == "K";
        ASSERT_EQ(address - target.tile.offset,
                  panelled_offset(canonical["cases"], target.tile.id, k_major ? element.row : element.column,
                                  k_major ? element.column : element.row))
            << target.tile.id << ", thread " << thread << ", element " << element;
        return;
      }
      if (target.store.empty()) {  // A from registers into the operand tile
        ++a_writes;
        a_tiles.insert(target.tile.id + (e.blackwell() ? " sm_100a" : " sm_90a"));
        // A staged f32 (tf32) element c is 16-bit element 2c of its b16 tile.
        const uint64_t column = target.tile.element == "tf32" ? 2 * element.column : element.column;
        ASSERT_EQ(address - target.tile.offset, panelled_offset(canonical["cases"], target.tile.id, element.row, column))
            << target.tile.id << ", thread " << thread << ", element " << element;
        return;
      }
      // A TMA store epilogue: the box this chunk stores and its origin (tile indices read as 0).
      const uint64_t box = evaluate(target.store[1], v);
      const Position origin{evaluate(target.store[3], v, true), evaluate(target.store[2], v, true)};
      const json& layout = find_entry(swizzle["boxes"], std::string(type == "float" ? "f32" : "bf16") + "_128B_128x" +
                                                            std::to_string(128 / element_bytes));
      boxes.insert(layout["id"].get<std::string>() + " (" + std::to_string(target.box_rows) + " rows)");
      EXPECT_EQ(layout["cu_tensor_map_swizzle_name"], "CU_TENSOR_MAP_SWIZZLE_128B");
      ASSERT_EQ(target.box_columns, layout["box_cols"].get<uint64_t>());
      ASSERT_LE(target.box_rows, layout["box_rows"].get<uint64_t>());
      ASSERT_EQ(box % 1024, 0u) << "box base";
      const uint64_t r = element.row - origin.row, c = element.column - origin.column, b = c * element_bytes;
      ASSERT_TRUE(r < target.box_rows && c < target.box_columns) << "element " << element << " outside the box at " << origin;
      ++stores;
      ASSERT_EQ(address - box, layout["chunk_offsets"][r][b / 16].get<uint64_t>() + b % 16)
          << layout["id"].get<std::string>() << ", thread " << thread << ", box element (" << r << ", " << c << ")";
    });
  }
  std::printf("staging: %ld epilogue writes, %ld A writes, %ld computed-B writes (", stores, a_writes, b_writes);
  for (const std::string& id : b_tiles) std::printf(" %s;", id.c_str());
  std::printf(" ), %ld weight reads; boxes:", weight_reads);
  for (const std::string& id : boxes) std::printf(" %s;", id.c_str());
  std::printf("\n");
  EXPECT_TRUE(a_tiles.count("b16_K_128B_128x64 sm_100a") && a_tiles.count("b16_K_64B_128x32 sm_100a") &&
              a_tiles.count("b16_K_128B_64x64 sm_100a"))
      << "attention's staged P with BKV = 64 and 32, and BQ = 64 (lanes 0..15 write, TMEM layout F)";
  EXPECT_TRUE(a_tiles.count("b8_K_64B_128x64 sm_100a")) << "fp8_attention's staged e4m3 P";
  EXPECT_TRUE(b_tiles.count("b16_K_128B_128x64 sm_90a") && b_tiles.count("b16_K_128B_128x64 sm_100a") &&
              b_tiles.count("b16_K_64B_128x32 sm_90a"))
      << "w8a16_linear's dequantized [N, K] weight, with BK = 64 and 32";
  EXPECT_TRUE(b_tiles.count("b16_K_128B_128x128 sm_90a") && b_tiles.count("b16_K_128B_128x128 sm_100a"))
      << "w4a16_linear's [N, K] weight of two panels, its packed bytes' two halves side by side";
  EXPECT_TRUE(b_tiles.count("b8_K_128B_128x128 sm_90a") && b_tiles.count("b8_K_128B_128x128 sm_100a"))
      << "w4a8_linear's e4m3 [N, K] weight";
  EXPECT_GT(weight_reads, 0) << "w8a16_linear's weight, read from the slot TMA filled";
  EXPECT_FALSE(a_tiles.count("b8_K_64B_128x64 sm_90a")) << "sm_90a reads fp8_attention's P from registers";
  EXPECT_TRUE(boxes.count("f32_128B_128x32 (64 rows)") && boxes.count("f32_128B_128x32 (128 rows)") &&
              boxes.count("bf16_128B_128x64 (64 rows)") && boxes.count("bf16_128B_128x64 (128 rows)"));
}

}  // namespace
}  // namespace tilec::cuda
