// tests/emulate/layout_tables.h — the reference tables of ../shared/reference/layouts/ as the
// emulator's tests read them (layout_tables_test.cpp, integer_mma_test.cpp): loading a table, its
// hex strings, and the byte offset of an operand element of an smem_canonical tile. Operands are
// placed through these offsets, never through the emulator's own operand_address.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace tilec_emu::reference {

using nlohmann::json;

inline const std::filesystem::path kLayoutDirectory = std::filesystem::path(TILEC_REFERENCE_DIR) / "layouts";

// Loads a table; an absent directory skips the test (the tables live outside the repository).
#define LOAD_TABLE(variable, name)                                                                     \
  if (!std::filesystem::is_directory(::tilec_emu::reference::kLayoutDirectory))                        \
    GTEST_SKIP() << "reference tables not found at " << ::tilec_emu::reference::kLayoutDirectory      \
                 << " (../shared/reference)";                                                          \
  ::nlohmann::json variable = ::nlohmann::json::parse(std::ifstream(::tilec_emu::reference::kLayoutDirectory / (name)))

inline uint64_t parse_hex(const json& value) { return std::stoull(value.get<std::string>(), nullptr, 16); }

// The table's byte offset of element (mn, k) of an smem_canonical case, from its chunk offsets.
inline uint32_t table_offset(const json& tile, int mn, int k) {
  int per_chunk = tile["chunk_elems"].get<int>();
  int element_bytes = tile["element_bits"].get<int>() / 8;
  if (tile["major"] == "K") return tile["chunk_offsets"][mn][k / per_chunk].get<uint32_t>() + (k % per_chunk) * element_bytes;
  return tile["chunk_offsets"][k][mn / per_chunk].get<uint32_t>() + (mn % per_chunk) * element_bytes;
}

// The smem_canonical case named `id`.
inline const json& find_case(const json& table, const std::string& id) {
  for (const json& tile : table["cases"])
    if (tile["id"] == id) return tile;
  throw std::runtime_error("no case " + id);
}

}  // namespace tilec_emu::reference
