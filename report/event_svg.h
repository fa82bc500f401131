// report/event_svg.h — live cross-pipe events along each reordered segment, as SVG.
//
// A segment is one region's ops (terminator excepted) in their current order, modelled as the
// reorder-events pass models them (passes/reorder_events_pass.cpp, phase 1); the curve of live
// events per pipe pair is replayed under the broadcast model of passes/reorder/check_order.h,
// whose peak it must equal.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace tilec {
class Module;
}

namespace tilec::report {

struct EventPairCurve {
  std::string pair;          // "TMA->MMA"
  std::vector<int> live;     // live events after each statement (size = statements)
  int peak = 0;
  int checked_peak = 0;      // the same figure from reorder::check_order
};

struct EventSegment {
  std::string title;                    // "kernel K, body of for at line L"
  std::vector<std::string> statements;  // labels in order
  std::vector<EventPairCurve> pairs;    // pairs carrying at least one dependence
};

// Segments of at least two statements that reorder-events would treat (bodies of `for` ops
// with `ii` are skipped, as the pass skips them) and that carry some cross-pipe dependence.
std::vector<EventSegment> collect_event_segments(const Module& module);

// A step chart per pair over the statement positions, with the limit drawn as a red line.
std::string render_event_chart(const EventSegment& segment, int max_events);

}  // namespace tilec::report
