// tests/passes/pass_test_support.h — loading inputs, running the pipeline up to a pass, and
// running kernels in the interpreter, for the pass tests (source_dir, read_file and the tilec
// binary come from tests/cli_runner.h).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../cli_runner.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "runtime/interpreter/kernel_buffers.h"

namespace tilec::testing {

// An input with its diagnostics (which keep the source text for rendering).
struct LoadedModule {
  std::string source;
  std::unique_ptr<DiagnosticEngine> diagnostics;
  std::unique_ptr<Module> module;  // null after an error (in diagnostics)
};

// Reads a .tile (lexed, parsed, lowered) or .tir file into a verified module.
LoadedModule load_module(const std::filesystem::path& path);
LoadedModule parse_ir_text(const std::string& text);

// Runs the pipeline on `module` up to and including `stop_after`; empty string when it went
// well, else the rendered diagnostics. IR text resumes for the target its module records.
std::string run_pipeline_until(LoadedModule& input, const std::string& stop_after, int max_events = 8);

// The ops of `kernel`'s body, in program order.
std::vector<Operation*> body_ops(const Operation& kernel);

// Runs `before` and `after` (the same kernel before and after a transformation) on the same
// random inputs (every symbolic extent 70, but for batch and head counts and batched_gemm's Q);
// empty when every output is bit-identical, else a
// description of the difference.
std::string compare_runs(const Operation& before, const Operation& after, uint64_t seed);

}  // namespace tilec::testing
