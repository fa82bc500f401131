// tests/fuzz/fuzz_tile_source.cpp — libFuzzer target: check_tile_source (tests/fuzz/fuzz_entry.h) on every input;
// an internal error aborts, so libFuzzer records the input as a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto problem = tilec::fuzz::check_tile_source(input)) {
    std::fprintf(stderr, "tilec internal error: %s\n", problem->c_str());
    std::abort();
  }
  return 0;
}
