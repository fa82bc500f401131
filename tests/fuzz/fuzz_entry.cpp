// tests/fuzz/fuzz_entry.cpp — the fuzzed entry points (see fuzz_entry.h).
//
// Each check mirrors what a tilec subcommand does with the same bytes, minus file handling,
// and turns every "this is tilec's fault" outcome into a returned description. Inputs larger
// than the engines are meant to search quickly (many ops or statements) are read but not
// scheduled, so a fuzzing run spends its time on the readers, not on long searches.
#include "tests/fuzz/fuzz_entry.h"

#include <fmt/core.h>

#include <vector>

#include "frontend/lexer.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/reorder/check_order.h"
#include "passes/reorder/compute_dependences.h"
#include "passes/reorder/reorder_lab.h"
#include "passes/schedule/generate_schedule.h"
#include "passes/schedule/schedule_lab.h"

namespace tilec::fuzz {

namespace {
constexpr int kMaxScheduledOps = 24;
constexpr size_t kMaxReorderedStatements = 24;
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
  return std::nullopt;
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
