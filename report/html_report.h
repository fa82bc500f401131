// report/html_report.h — the one-page HTML report of a compilation (`tilec compile --report`).
//
// The driver records what the pipeline did (the IR before the first pass and after each pass,
// each pass's time) and hands it here with the final module; render_html_report returns one
// self-contained page: inline CSS, inline SVG, no scripts, fonts or links outside the file.
// Everything but the pass times is deterministic; the times sit in one table.
#pragma once

#include <string>
#include <vector>

namespace tilec {
class Module;
}

namespace tilec::report {

struct PassSnapshot {
  std::string pass;
  std::string ir;             // the module printed after the pass
  double milliseconds = 0;
};

struct ReportInput {
  std::string source_name;
  std::string source_text;    // the .tile or .tir file as read
  std::string initial_ir;     // after parsing/lowering, before the first pass run here
  std::vector<std::string> passes_before;  // passes the input already recorded (a .tir)
  std::vector<PassSnapshot> passes;
  std::string outcome;        // "ok", or what stopped the pipeline
  std::string diagnostics;    // rendered diagnostics (warnings included), may be empty
  int max_events = 8;
  const Module* final_module = nullptr;  // null when lowering failed
  // The module as the scheduler left it (before materialize-schedule rewrote its loops into
  // agents' copies without the published cycles): the schedule charts draw it; null: final_module.
  const Module* scheduled_module = nullptr;
};

std::string render_html_report(const ReportInput& input);

}  // namespace tilec::report
