// tools/report_recorder.cpp — glue between the pipeline driver and the HTML report.
#include "tools/report_recorder.h"

#include <algorithm>
#include <iterator>

#include "ir/parser.h"
#include "ir/printer.h"
#include "tools/load_input.h"

namespace tilec::tools {

ReportRecorder::ReportRecorder(std::string path, const std::string& input_name, const std::string& source,
                               const Module& module, int max_events, DriverOptions& driver)
    : path_(std::move(path)) {
  if (path_.empty()) return;
  report_.source_name = input_name;
  report_.source_text = source;
  report_.initial_ir = print_module(module);
  report_.passes_before = passes_run(module);
  report_.max_events = max_events;
  driver.after_pass = [this](const std::string& pass, const std::string& ir) { report_.passes.push_back({pass, ir, 0.0}); };
  driver.timings = &timings_;
}

bool ReportRecorder::finish(int pipeline_status, const DiagnosticEngine& diagnostics, const Module& module) {
  if (path_.empty()) return true;
  // Snapshots exist for the passes that succeeded, in order: the first timings are theirs.
  for (size_t index = 0; index < report_.passes.size() && index < timings_.size(); ++index)
    report_.passes[index].milliseconds = timings_[index].milliseconds;
  report_.outcome = pipeline_status == 0 ? "ok" : pipeline_status == 1 ? "input error" : "internal error";
  report_.diagnostics = diagnostics.render_all();
  report_.final_module = &module;
  // The schedule charts draw the loops as published when this run materialized them: the IR
  // just before materialize-schedule (the snapshot before its own, or the input's).
  const auto materialized = std::find_if(report_.passes.begin(), report_.passes.end(), [](const auto& snapshot) {
    return snapshot.pass == "materialize-schedule";
  });
  if (materialized != report_.passes.end()) {
    DiagnosticEngine ignored;
    scheduled_module_ = parse_module(
        materialized == report_.passes.begin() ? report_.initial_ir : std::prev(materialized)->ir, ignored);
    report_.scheduled_module = scheduled_module_.get();
  }
  return write_output(path_, report::render_html_report(report_));
}

}  // namespace tilec::tools
