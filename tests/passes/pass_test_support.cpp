// tests/passes/pass_test_support.cpp — see pass_test_support.h.
#include "pass_test_support.h"

#include <fmt/core.h>

#include <map>

#include "backend/target.h"
#include "frontend/lexer.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "runtime/interpreter/interpreter.h"

namespace tilec::testing {

namespace fs = std::filesystem;

namespace {
LoadedModule load_text(const std::string& name, std::string text, bool is_ir) {
  LoadedModule input;
  input.source = std::move(text);
  input.diagnostics = std::make_unique<DiagnosticEngine>(name, input.source);
  DiagnosticEngine& diagnostics = *input.diagnostics;
  if (is_ir) {
    input.module = parse_module(input.source, diagnostics);
  } else {
    auto tokens = frontend::lex(input.source, diagnostics);
    auto program = frontend::parse_program(tokens, diagnostics);
    if (!diagnostics.has_errors()) input.module = frontend::lower_program(program, {name, {}}, diagnostics);
  }
  if (input.module && !verify_module(*input.module, diagnostics)) input.module.reset();
  return input;
}
}  // namespace

LoadedModule load_module(const fs::path& path) {
  return load_text(path.string(), read_file(path), path.extension() == ".tir");
}

LoadedModule parse_ir_text(const std::string& text) { return load_text("<test>.tir", text, true); }

std::string run_pipeline_until(LoadedModule& input, const std::string& stop_after, int max_events) {
  PassManager pipeline = build_pipeline();
  // IR text resumes for the target it records (the default for a .tile or a module with none).
  const target::Target* target = &target::default_target();
  if (auto it = input.module->attributes().find("target"); it != input.module->attributes().end() && it->second.is_string())
    if (const target::Target* recorded = target::find_target(it->second.as_string())) target = recorded;
  PassContext ctx{*input.diagnostics, *target};
  ctx.max_events = max_events;
  PipelineOptions options;
  options.stop_after = stop_after;
  PipelineStatus status = pipeline.run(*input.module, ctx, options);
  if (status != PipelineStatus::ok || input.diagnostics->has_errors()) return input.diagnostics->render_all();
  return {};
}

std::vector<Operation*> body_ops(const Operation& kernel) {
  std::vector<Operation*> ops;
  for (const auto& op : kernel.region(0).operations()) ops.push_back(op.get());
  return ops;
}

std::string compare_runs(const Operation& before, const Operation& after, uint64_t seed) {
  // Every symbolic extent gets 70: not a multiple of the usual tile sizes, so masking runs too;
  // batch and head counts get 2, as the samples test gives them (samples/gqa_attention at 70
  // batches of 70 heads would run 4900 tiles); samples/batched_gemm's B, Q rows, is one batch of
  // K = 70 rows padded to its BK = 64, as the kernel's assert asks: 128.
  runtime::SymbolBindings symbols;
  const Region& body = before.region(0);
  for (size_t index = 0; index < body.num_arguments(); ++index)
    for (const Dim& dim : body.argument(index)->type().dims())
      if (!dim.symbol.empty())
        symbols[dim.symbol] = dim.symbol == "BATCH" || dim.symbol == "H" ? 2 : dim.symbol == "Q" ? 128 : 70;
  runtime::KernelBuffers expected;
  std::string message;
  if (!runtime::make_kernel_buffers(before, symbols, seed, expected, message)) return "buffers: " + message;
  runtime::KernelBuffers actual = expected;
  auto expected_arguments = expected.arguments();
  auto actual_arguments = actual.arguments();
  runtime::LaunchResult first = runtime::run_kernel(before, expected_arguments, symbols);
  if (!first.ok) return "before: " + first.describe();
  runtime::LaunchResult second = runtime::run_kernel(after, actual_arguments, symbols);
  if (!second.ok) return "after: " + second.describe();
  std::string differences;
  for (const auto& output : runtime::compare_outputs(expected, actual))
    // A pass that only reorders or annotates must not change a single bit: no tolerance.
    if (!output.comparison.ok() || output.comparison.max_absolute_error != 0)
      differences += output.name + ": " + output.comparison.summary() + "\n";
  if (expected.outputs.empty()) differences += "the kernel has no output to compare\n";
  return differences;
}

}  // namespace tilec::testing
