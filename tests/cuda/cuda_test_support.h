// tests/cuda/cuda_test_support.h — shared by the CUDA backend tests: read a .tir input, parse
// it with tilec's IR parser and emit CUDA; golden-file comparison with a bless switch.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "backend/cuda/emit_cuda.h"
#include "backend/target.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"

namespace tilec::cuda_test {

inline const std::filesystem::path kTestDir = TILEC_CUDA_TEST_DIR;

// The input files every test runs over (tests/cuda/inputs/NAME.tir).
inline const char* const kInputs[] = {"vector_add",    "scale_relu", "softmax",       "layernorm", "row_mean_loop",
                                      "casts",         "bias_clamp_2d", "matmul",    "matmul_bt",     "bmm_bt",
                                      "launch_checks"};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Emitted {
  std::optional<std::string> cuda;
  std::string diagnostics;  // rendered, for failure messages
};

// Parses `text` (named `file_name` in diagnostics) and emits it.
inline Emitted emit_text(const std::string& text, const std::string& file_name,
                         const CudaEmitOptions& options) {
  DiagnosticEngine diagnostics(file_name, text);
  std::unique_ptr<Module> module = parse_module(text, diagnostics);
  Emitted result;
  if (module) result.cuda = emit_cuda(*module, options, diagnostics);
  result.diagnostics = diagnostics.render_all();
  return result;
}

// Emits tests/cuda/inputs/NAME.tir for `target` (the header names it inputs/NAME.tir).
// `tiles` picks the plain kernels' form (the shared-memory form's own tests pass `shared`).
inline Emitted emit_input(const std::string& name, const std::string& target, bool harness = false,
                          CudaEmitOptions::PlainTiles tiles = CudaEmitOptions::PlainTiles::registers) {
  CudaEmitOptions options;
  options.target = target::find_target(target);
  if (!options.target) throw std::invalid_argument("emit_input: unknown target " + target);
  options.plain_tiles = tiles;
  options.source_name = "inputs/" + name + ".tir";
  options.harness = harness;
  return emit_text(read_file(kTestDir / "inputs" / (name + ".tir")), options.source_name, options);
}

// Compares `actual` with tests/cuda/golden/FILE byte for byte; with TILEC_BLESS=1 in the
// environment it rewrites the golden file instead.
inline void expect_golden(const std::string& actual, const std::string& file) {
  std::filesystem::path path = kTestDir / "golden" / file;
  const char* bless = std::getenv("TILEC_BLESS");
  if (bless && std::string(bless) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    std::printf("blessed %s\n", path.c_str());
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; run the test with TILEC_BLESS=1 to create it";
  std::string expected = read_file(path);
  EXPECT_TRUE(actual == expected)
      << "emitted CUDA differs from " << path << "; review the diff and rerun with TILEC_BLESS=1\n"
      << "---- emitted ----\n" << actual;
}

}  // namespace tilec::cuda_test
