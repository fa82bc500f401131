// tools/pipeline_driver.cpp — the pipeline run shared by compile and run.
#include "tools/pipeline_driver.h"


#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>

#include "backend/cuda/cuda_syntax.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"

namespace tilec::tools {

int run_pipeline(Module& module, DiagnosticEngine& diagnostics, const DriverOptions& options) {
  PassManager pipeline = build_pipeline();
  PassContext ctx{diagnostics, *options.target};
  ctx.max_events = options.max_events;
  ctx.generator = options.generator;
  PipelineOptions pipeline_options;
  pipeline_options.stop_after = options.stop_after;
  pipeline_options.print_after = options.print_ir_after;
  pipeline_options.print_after_all = options.print_ir_after_all || options.after_pass != nullptr;
  if (options.kept) pipeline_options.print_after.push_back(options.keep_after);
  pipeline_options.print = [&options, &module](const std::string& pass, const std::string& ir) {
    if (options.kept && pass == options.keep_after) *options.kept = clone_module(module);
    if (options.print_ir_after_all ||
        std::find(options.print_ir_after.begin(), options.print_ir_after.end(), pass) != options.print_ir_after.end())
      fmt::print(stderr, "// ----- IR after {} -----\n{}", pass, ir);
    if (options.after_pass) options.after_pass(pass, ir);
  };
  // "parse" is the front end, before the first pass: its IR is the module as it comes in, unless
  // that is IR text recording later passes (the pass manager warns then).
  const std::vector<std::string> recorded = passes_run(module);
  const bool past_parse = !recorded.empty() && recorded.back() != "parse";
  if (!past_parse &&
      std::find(options.print_ir_after.begin(), options.print_ir_after.end(), "parse") != options.print_ir_after.end())
    fmt::print(stderr, "// ----- IR after parse -----\n{}", print_module(module));
  PipelineStatus status = pipeline.run(module, ctx, pipeline_options);
  if (options.timings) *options.timings = pipeline.timings();
  if (options.time_passes) {
    double total = 0;
    for (const auto& t : pipeline.timings()) total += t.milliseconds;
    fmt::print(stderr, "===-- pass timings ({:.3f} ms) --===\n", total);
    for (const auto& t : pipeline.timings())
      fmt::print(stderr, "  {:>9.3f} ms  {:>5.1f}%  {}\n", t.milliseconds,
                 total > 0 ? 100.0 * t.milliseconds / total : 0.0, t.name);
  }
  // Diagnostics are shown on success too: passes may have warned.
  // A warning that cannot be written (standard error closed or full) does not fail the compile.
  if (!diagnostics.diagnostics().empty()) std::fputs(diagnostics.render_all().c_str(), stderr);
  switch (status) {
    case PipelineStatus::ok: return 0;
    case PipelineStatus::input_error: return 1;
    case PipelineStatus::internal_error: return 2;
  }
  return 2;
}

std::optional<std::string> emit_cuda_reporting(const Module& module, const CudaEmitOptions& options,
                                               DiagnosticEngine& diagnostics) {
  size_t reported = diagnostics.diagnostics().size();
  auto cuda = emit_cuda(module, options, diagnostics);
  // The backend's errors, or its warnings (an accumulator budget nvcc will spill past).
  for (size_t i = reported; i < diagnostics.diagnostics().size(); ++i)
    std::fputs(diagnostics.render(diagnostics.diagnostics()[i]).c_str(), stderr);  // as run_pipeline's
  return cuda;
}

void add_plain_tiles_option(CLI::App& cmd, CudaEmitOptions::PlainTiles& tiles) {
  cmd.add_option_function<std::string>(
         "--plain-tiles",
         [&tiles](const std::string& form) {
           tiles = form == "shared" ? CudaEmitOptions::PlainTiles::shared : CudaEmitOptions::PlainTiles::registers;
         },
         "how kernels without tensor cores keep their tiles: registers (default: a thread layout, 16-byte vector "
         "loads and stores, shuffle reductions; kernels whose tiles fit no one layout keep shared) or shared (every "
         "tile op a loop through shared memory and a barrier: the first backend's form, for comparison)")
      ->check(CLI::IsMember({"registers", "shared"}));
}

void add_kernel_prefix_option(CLI::App& cmd, std::string& prefix) {
  cmd.add_option("--kernel-prefix", prefix,
                 "put PREFIX in front of every kernel's names: with sm90_, kernel gemm becomes sm90_gemm_kernel, "
                 "launched by launch_sm90_gemm (and so declared by --header), so that files compiled from one "
                 ".tile for two targets or two -D configurations link into one program")
      ->type_name("PREFIX")
      ->check([](const std::string& value) {
        std::string why = cuda::kernel_prefix_problem(value);
        return why.empty() ? why : fmt::format("'{}' {}", value, why);
      });
}

void adopt_recorded_target(const Module& module, DriverOptions& driver) {
  if (driver.target_given) return;
  auto it = module.attributes().find("target");
  if (it == module.attributes().end() || !it->second.is_string()) return;
  if (const target::Target* recorded = target::find_target(it->second.as_string())) driver.target = recorded;
}

void add_pipeline_options(CLI::App& cmd, DriverOptions& driver, std::vector<std::string>& defines) {
  std::vector<std::string> names;
  for (const target::Target& target : target::targets()) names.emplace_back(target.name);
  cmd.add_option_function<std::string>(
         "--target",
         [&driver](const std::string& name) {
           driver.target = target::find_target(name);
           driver.target_given = true;
         },
         "GPU target the pipeline compiles for (default sm_90a; an IR file's own target, which it records)")
      ->check(CLI::IsMember(names));
  cmd.add_option("-D", defines, "override a constant: -D NAME=VALUE (repeatable)")->allow_extra_args(false);
  cmd.add_option("--max-events", driver.max_events, "reorder-events: live cross-pipe events allowed per pipe pair (default 8)")
      ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--generator", driver.generator, "schedule generator: auto (default: cost-based modulo scheduling for loops with mma, as the engine picks; serial for the others), serial (one iteration after another) or cost-based")
      ->check(CLI::IsMember({"auto", "serial", "cost-based"}));
}

}  // namespace tilec::tools
