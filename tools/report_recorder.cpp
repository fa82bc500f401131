// tools/report_recorder.cpp — glue between the pipeline driver and the HTML report.
#include "tools/report_recorder.h"

#include <algorithm>

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
  const bool materialized = std::find(report_.passes_before.begin(), report_.passes_before.end(),
                                      "materialize-schedule") != report_.passes_before.end();
  if (!materialized) scheduled_ir_ = report_.initial_ir;
  driver.after_pass = [this](const std::string& pass, const std::string& ir) {
    report_.passes.push_back({pass, ir, 0.0});
    if (pass == "materialize-schedule") materialized_now_ = true;
    if (!materialized_now_) scheduled_ir_ = ir;
  };
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
  // The schedule charts draw the loops as published, when this run materialized them.
  if (materialized_now_ && !scheduled_ir_.empty()) {
    DiagnosticEngine ignored;
    scheduled_module_ = parse_module(scheduled_ir_, ignored);
    report_.scheduled_module = scheduled_module_.get();
  }
  return write_output(path_, report::render_html_report(report_));
}

}  // namespace tilec::tools
