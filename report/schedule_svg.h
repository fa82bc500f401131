// report/schedule_svg.h — the modulo reservation table and Gantt chart of a scheduled loop.
//
// Reads the attributes the scheduling passes publish, generically (a missing one is left out,
// never an error): on the `for`: `ii`, `stages`, `generator`; on each op of its body: `stage`,
// `order`, `cycle`, `latency` and `resources` (rows [slot, start, duration, occupancy]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilec {
class Module;
}

namespace tilec::report {

struct ScheduledUse {
  std::string slot;
  int64_t start = 0;     // cycles after the op's cycle
  int64_t duration = 1;  // cycles
  int64_t occupancy = 1;
};

struct ScheduledOp {
  std::string label;        // "%a = tma_load (line 12)", or the op name and its position
  std::string short_label;  // "%a tma_load", for the reservation table's cells
  int64_t stage = 0;
  int64_t order = 0;
  int64_t cycle = -1;    // -1: not published
  int64_t latency = 1;
  std::vector<ScheduledUse> uses;
};

struct ScheduledLoop {
  std::string title;  // kernel name and source line of the loop
  int64_t ii = 1;
  int64_t stages = 1;
  std::string generator;
  std::vector<ScheduledOp> ops;  // body ops in program order, terminator excluded
};

// Every `for` carrying an `ii` attribute, kernels in module order, loops in program order.
std::vector<ScheduledLoop> collect_scheduled_loops(const Module& module);

// The longest charts drawn: a reservation table of II columns, a Gantt chart of one iteration's
// cycles. Past them (a hand-edited `ii = 10000000`) the report says so instead of drawing
// gigabytes of SVG.
inline constexpr int64_t kMaxTableColumns = 512;
inline constexpr int64_t kMaxGanttCycles = 8192;

// Rows: slots (or the op's pipe when it publishes no resources); columns: cycle mod II; each
// cell lists the ops holding the slot then. Returns one <svg> element; II <= kMaxTableColumns.
std::string render_reservation_table(const ScheduledLoop& loop);

// The cycles one iteration spans: II, or past it to the end of the last op.
int64_t iteration_cycles(const ScheduledLoop& loop);

// One row per op, a bar from its cycle for its latency, coloured by stage. One <svg> element;
// iteration_cycles <= kMaxGanttCycles.
std::string render_gantt(const ScheduledLoop& loop);

// The colour of a stage (shared by both charts and the legend).
std::string stage_colour(int64_t stage);

}  // namespace tilec::report
