// tools/report_recorder.h — `--report OUT.html` for compile and run: records the pipeline run
// through the driver's hooks and writes the page (report/html_report.h) when it ends.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "report/html_report.h"
#include "tools/pipeline_driver.h"

namespace tilec::tools {

class ReportRecorder {
 public:
  // Does nothing when `path` is empty. Otherwise snapshots the module as loaded and installs
  // the recording hooks in `driver` (which must outlive the pipeline run).
  ReportRecorder(std::string path, const std::string& input_name, const std::string& source, const Module& module,
                 int max_events, DriverOptions& driver);
  ReportRecorder(const ReportRecorder&) = delete;  // the driver's hook points at this object
  ReportRecorder& operator=(const ReportRecorder&) = delete;

  // Writes the page after the pipeline returned `pipeline_status`; false after printing why
  // the file could not be written.
  bool finish(int pipeline_status, const DiagnosticEngine& diagnostics, const Module& module);

 private:
  std::string path_;
  report::ReportInput report_;
  std::vector<PassTiming> timings_;
  // The module before materialize-schedule, parsed for the schedule charts.
  std::unique_ptr<Module> scheduled_module_;
};

}  // namespace tilec::tools
