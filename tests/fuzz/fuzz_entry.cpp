// tests/fuzz/fuzz_entry.cpp — the fuzzed entry points (see fuzz_entry.h).
//
// Each check mirrors what a tilec subcommand does with the same bytes, minus file handling,
// and turns every "this is tilec's fault" outcome into a returned description. Inputs larger
// than the engines are meant to search quickly (many ops or statements) are read but not
// scheduled, so a fuzzing run spends its time on the readers, not on long searches, and one
// input's time stays bounded well under the fuzzer's per-input timeout.
#include "tests/fuzz/fuzz_entry.h"

#include <fmt/core.h>

#include <vector>

#include "backend/cuda/emit_cuda.h"
#include "backend/target.h"
#include "frontend/lexer.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "passes/reorder/check_order.h"
#include "passes/reorder/compute_dependences.h"
#include "passes/reorder/reorder_lab.h"
#include "passes/schedule/generate_schedule.h"
#include "passes/schedule/schedule_lab.h"

namespace tilec::fuzz {

namespace {
constexpr int kMaxScheduledOps = 24;
constexpr size_t kMaxReorderedStatements = 24;
// A lowered .tile program with more ops than this is lowered and verified but not sent through
// the pass pipeline: the cost-based scheduler's search grows faster than the square of a loop's
// op count (under ASan a 77-op gemm-like kernel takes about 1.2 s of CPU per target, a 95-op one
// 1.9 s), and every sample and golden input (at most 47 ops) stays below it.
constexpr size_t kMaxPipelineOps = 64;

size_t count_ops(Module& module) {
  size_t count = 0;
  walk(module, [&count](Operation&) { ++count; });
  return count;
}

// Runs the whole pass pipeline (verifying after every pass) and the CUDA emitter for `target`
// on a freshly lowered module, as `tilec compile IN.tile --target TARGET` does. Input errors
// (a pass or the emitter refusing the program, with a diagnostic) are fine; an internal error,
// IR that stops verifying, or a refusal without a diagnostic is a bug.
std::optional<std::string> check_pipeline(Module& module, const std::string& target, std::string_view input) {
  DiagnosticEngine diagnostics("fuzz.tile", input);
  module.attributes()["target"] = Attribute(target);
  PassManager pipeline = build_pipeline();
  PassContext context{diagnostics, *target::find_target(target)};
  PipelineOptions options;
  options.verify_each = true;
  PipelineStatus status = pipeline.run(module, context, options);
  if (status == PipelineStatus::internal_error)
    return fmt::format("the pipeline for {} reported an internal error:\n{}", target, diagnostics.render_all());
  if (status == PipelineStatus::input_error) {
    if (!diagnostics.has_errors()) return fmt::format("the pipeline for {} refused the input without an error", target);
    return std::nullopt;
  }
  if (diagnostics.has_errors()) return fmt::format("the pipeline for {} succeeded after reporting an error", target);
  CudaEmitOptions emit_options;
  emit_options.target = target::find_target(target);
  auto cuda = emit_cuda(module, emit_options, diagnostics);
  if (!cuda && !diagnostics.has_errors()) return fmt::format("the CUDA emitter for {} refused the module without an error", target);
  if (cuda && cuda->empty()) return fmt::format("the CUDA emitter for {} wrote nothing", target);
  return std::nullopt;
}
}  // namespace

std::optional<std::string> check_tile_source(std::string_view input) {
  DiagnosticEngine diagnostics("fuzz.tile", input);
  auto tokens = frontend::lex(input, diagnostics);
  auto program = frontend::parse_program(tokens, diagnostics);
  if (diagnostics.has_errors()) return std::nullopt;
  auto module = frontend::lower_program(program, {"fuzz.tile", {}}, diagnostics);
  if (!module) {
    if (!diagnostics.has_errors()) return "lowering returned no module and reported no error";
    return std::nullopt;
  }
  if (diagnostics.has_errors()) return "lowering returned a module after reporting an error";
  DiagnosticEngine verifier_diagnostics("fuzz.tile", input);
  if (!verify_module(*module, verifier_diagnostics))
    return "lowering produced IR that does not verify:\n" + verifier_diagnostics.render_all();
  if (count_ops(*module) > kMaxPipelineOps) return std::nullopt;
  // Both targets: the machine models differ, so the schedules and the emitted code do.
  if (auto problem = check_pipeline(*module, "sm_90a", input)) return problem;
  auto second = frontend::lower_program(program, {"fuzz.tile", {}}, diagnostics);
  if (!second) return "lowering the same program twice failed the second time";
  return check_pipeline(*second, "sm_100a", input);
}

std::optional<std::string> check_ir_text(std::string_view input) {
  DiagnosticEngine diagnostics("fuzz.tir", input);
  auto module = parse_module(input, diagnostics);
  if (!module) {
    if (!diagnostics.has_errors()) return "the IR parser returned no module and reported no error";
    return std::nullopt;
  }
  if (!verify_module(*module, diagnostics)) return std::nullopt;
  std::string printed = print_module(*module);
  DiagnosticEngine reparse_diagnostics("printed.tir", printed);
  auto reparsed = parse_module(printed, reparse_diagnostics);
  if (!reparsed)
    return "a verified module's printed text does not parse:\n" + reparse_diagnostics.render_all() + "\n" + printed;
  std::string reprinted = print_module(*reparsed);
  if (reprinted != printed) return "print -> parse -> print changed the text:\n" + printed + "\n---\n" + reprinted;
  return std::nullopt;
}

std::optional<std::string> check_schedule_lab(std::string_view input) {
  schedule::LabInput lab = schedule::parse_schedule_lab(input);
  if (!lab.errors.empty() || lab.graph.op_count() > kMaxScheduledOps) return std::nullopt;
  for (auto generator : {schedule::Generator::automatic, schedule::Generator::serial}) {
    schedule::ScheduleOptions options;
    options.generator = generator;
    schedule::ScheduleResult result = schedule::generate_schedule(lab.graph, options);
    if (!result.ok()) continue;
    std::vector<std::string> problems = schedule::validate_schedule(lab.graph, result, false);
    if (!problems.empty())
      return fmt::format("the {} generator's schedule is invalid: {}", schedule::generator_name(generator), problems[0]);
    (void)schedule::format_schedule_lab(lab.graph, result);
  }
  return std::nullopt;
}

std::optional<std::string> check_reorder_lab(std::string_view input) {
  reorder::LabParse parse = reorder::parse_reorder_lab(input);
  if (!parse.input) {
    if (parse.error.empty()) return "the reorder lab refused an input without saying why";
    return std::nullopt;
  }
  const reorder::Segment& segment = parse.input->segment;
  if (segment.statements.size() > kMaxReorderedStatements) return std::nullopt;
  reorder::ReorderOptions options;
  options.max_events = parse.input->max_events;
  reorder::ReorderResult result = reorder::reorder_events(segment, options);
  reorder::DependenceGraph graph = reorder::compute_dependences(segment);
  reorder::OrderCheck check = reorder::check_order(segment, graph, result.order);
  if (!check.valid) return "the reorder engine's order is invalid: " + check.problem;
  if (check.max_peak != result.max_peak)
    return fmt::format("the engine reports max_peak {} but the order's peak is {}", result.max_peak, check.max_peak);
  (void)reorder::format_reorder_lab(segment, result);
  return std::nullopt;
}

}  // namespace tilec::fuzz
