// passes/pipeline.h — the compiler's pass pipeline, in order (the table of contents).
#pragma once

#include <string>
#include <vector>

#include "passes/pass_manager.h"

namespace tilec {

PassManager build_pipeline();
// "parse" followed by every pass name, for --stop-after / --print-ir-after checks and help.
std::vector<std::string> pipeline_stage_names();

}  // namespace tilec
