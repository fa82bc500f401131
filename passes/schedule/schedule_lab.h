// passes/schedule/schedule_lab.h — the modulo-scheduling lab's JSON format (DESIGN.md §4.1):
// loop dependence graph in, schedule out. Used by `tilec sched`, the tests and the benches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "passes/schedule/loop_graph.h"
#include "passes/schedule/schedule_result.h"

namespace tilec::schedule {

struct LabInput {
  LoopGraph graph;
  std::vector<std::string> errors;  // JSON syntax, shape and loop-graph errors, one each
  std::string position;             // "line:col" when the JSON itself is malformed
};

// Reads the lab format. Besides DESIGN.md §4.1: an op may carry "gid", "leader_gid" and
// "max_depth" (the constraint attributes' names) and "async"; an op with "kind" takes its
// latency and uses from the target's machine model unless it spells them out itself; the
// model's slots become resources unless "resources" declares the same name.
LabInput parse_schedule_lab(std::string_view json_text);

// The schedule as the lab's output JSON (keys in a fixed order, ops in input order), ending
// with a newline.
std::string format_schedule_lab(const LoopGraph& graph, const ScheduleResult& result);

}  // namespace tilec::schedule
