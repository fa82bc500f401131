// tools/pipeline_driver.h — runs the pass pipeline for a subcommand and reports the outcome.
//
// Shared by `tilec compile`, `tilec run` and `tilec emulate`: builds the pipeline, runs it up to
// --stop-after, prints --print-ir-after(-all) output and --time-passes timings to stderr, prints
// diagnostics (warnings too) and maps the outcome to an exit status: 0 ok, 1 input error, 2
// internal error. emit_cuda_reporting writes the .cu for compile and emulate.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/emit_cuda.h"
#include "backend/target.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"

namespace CLI {
class App;
}

namespace tilec::tools {

struct DriverOptions {
  const target::Target* target = &target::default_target();  // --target, resolved once
  bool target_given = false;  // --target was on the command line
  std::string stop_after;
  int max_events = 8;
  bool print_ir_after_all = false;
  std::vector<std::string> print_ir_after;
  bool time_passes = false;
  std::string generator = "auto";  // generate-schedule: auto | serial | cost-based
  // The --report recorder: called after each pass with the printed IR (empty: not called),
  // and given every pass's time when the pipeline returns.
  std::function<void(const std::string& pass, const std::string& ir)> after_pass;
  std::vector<PassTiming>* timings = nullptr;
  // --emit-harness: a deep copy of the module right after the pass `keep_after` goes to `*kept`.
  std::string keep_after;
  std::unique_ptr<Module>* kept = nullptr;
};

int run_pipeline(Module& module, DiagnosticEngine& diagnostics, const DriverOptions& options);

// Without --target, IR text that records the target it was compiled for (`target = "sm_100a"`)
// goes on for that target, as `tilec compile X.tir` of a .tir written with --target sm_100a
// should; a .tile (which records none) keeps the default.
void adopt_recorded_target(const Module& module, DriverOptions& driver);

// Emits the .cu for the module the pipeline produced; prints the diagnostics the emitter
// reported (its warnings; on failure what the backend does not support, where, and then
// returns std::nullopt).
// `tilec compile` and `tilec emulate` both write their CUDA through this.
std::optional<std::string> emit_cuda_reporting(const Module& module, const CudaEmitOptions& options,
                                               DiagnosticEngine& diagnostics);

// Adds the options every subcommand that runs the pipeline shares: --target, -D NAME=VALUE
// (collected into `defines`), --max-events and --generator.
void add_pipeline_options(CLI::App& cmd, DriverOptions& driver, std::vector<std::string>& defines);

// --plain-tiles registers|shared: how kernels without tensor cores keep their tiles.
void add_plain_tiles_option(CLI::App& cmd, CudaEmitOptions::PlainTiles& tiles);

// --kernel-prefix P: P in front of every kernel's function names (checked as it is parsed).
void add_kernel_prefix_option(CLI::App& cmd, std::string& prefix);

}  // namespace tilec::tools
