// report/event_svg.cpp — recounts live cross-pipe events of each segment and draws them.
//
// 1. Segment: one reorder::Statement per op, as reorder-events builds it: pipe from the op
//    table (none → SIMT); reads operands, writes results; load/tma_load read their tensor's
//    memory, store writes it; for/if are control statements that also read every outside value
//    their regions use and the tensors accessed inside; grid_ids and impure ops are barriers.
// 2. Graph: reorder::compute_dependences (the engine's own rules).
// 3. Replay (broadcast model): before statement s runs, the live event (p, pipe(s)) of each
//    cross-pipe predecessor p is freed; after it runs, one event per destination pipe of its
//    cross-pipe consumers becomes live. Record each pair's count after every statement.
// 4. Cross-check: reorder::check_order's peak per pair is stored beside ours (tests compare).
// The duplication of phase 1 is deliberate until the pass exposes its segment builder: the
// report must not change what a pass does. Deterministic; O(ops + edges) per segment.
#include "report/event_svg.h"

#include <fmt/core.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "ir/ir.h"
#include "passes/compute_reorder_segment.h"
#include "passes/reorder/check_order.h"
#include "passes/reorder/compute_dependences.h"
#include "report/html_text.h"

namespace tilec::report {

namespace {

void replay(const reorder::Segment& segment, EventSegment& out) {
  reorder::DependenceGraph graph = reorder::compute_dependences(segment);
  const int count = static_cast<int>(segment.statements.size());
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  reorder::OrderCheck check = reorder::check_order(segment, graph, order);
  std::array<int, reorder::kPairCount> live{};
  std::vector<std::array<int, reorder::kPairCount>> history;
  std::set<std::pair<int, int>> events;  // (producer statement, destination pipe)
  auto pipe_of = [&](int s) { return static_cast<int>(segment.statements[s].pipe); };
  for (int s = 0; s < count; ++s) {
    for (int p : graph.predecessors[s])
      if (pipe_of(p) != pipe_of(s) && events.erase({p, pipe_of(s)})) --live[reorder::pair_index(pipe_of(p), pipe_of(s))];
    for (int d = 0; d < reorder::kPipeCount; ++d)
      if (graph.consumer_pipes[s] & (1u << d)) {
        events.insert({s, d});
        ++live[reorder::pair_index(pipe_of(s), d)];
      }
    history.push_back(live);
  }
  for (int pair = 0; pair < reorder::kPairCount; ++pair) {
    if (!check.used[pair]) continue;
    EventPairCurve curve;
    curve.pair = reorder::pair_name(pair);
    for (const auto& row : history) curve.live.push_back(row[pair]);
    curve.peak = curve.live.empty() ? 0 : *std::max_element(curve.live.begin(), curve.live.end());
    curve.checked_peak = check.peak[pair];
    out.pairs.push_back(std::move(curve));
  }
}

void collect(const Region& region, const std::string& title, const std::string& kernel,
             std::vector<EventSegment>& segments) {
  for (const auto& op : region.operations())
    for (size_t index = 0; index < op->num_regions(); ++index)
      collect(op->region(index), fmt::format("kernel {}, body of {} at line {}", kernel, op->name(), op->location().line),
              kernel, segments);
  const Operation* owner = region.parent_op();
  if (owner && owner->kind() == OpKind::for_ && owner->has(attr::ii)) return;
  const auto& ops = region.operations();
  if (ops.size() < 3) return;  // fewer than two statements besides the terminator
  reorder::Segment segment = compute_reorder_segment(region);
  EventSegment out;
  out.title = title;
  for (size_t index = 0; index < segment.statements.size(); ++index) {
    const Operation& op = *ops[index];
    bool named = op.num_results() > 0 && !op.result(0)->name_hint().empty();
    out.statements.push_back(named ? fmt::format("%{} = {}", op.result(0)->name_hint(), op.name())
                                   : segment.statements[index].name);
  }
  replay(segment, out);
  if (!out.pairs.empty()) segments.push_back(std::move(out));
}

}  // namespace

std::vector<EventSegment> collect_event_segments(const Module& module) {
  std::vector<EventSegment> segments;
  for (const auto& kernel : module.kernels()) {
    std::string name = kernel_name(*kernel);
    for (size_t index = 0; index < kernel->num_regions(); ++index)
      collect(kernel->region(index), fmt::format("kernel {}, body", name), name, segments);
  }
  return segments;
}

std::string render_event_chart(const EventSegment& segment, int max_events) {
  static const char* colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#9c755f"};
  const int steps = static_cast<int>(segment.statements.size());
  int top = max_events;
  for (const auto& pair : segment.pairs) top = std::max(top, pair.peak);
  top += 1;
  const int left = 40, plot_height = 180, step = std::clamp(900 / std::max(steps, 1), 8, 40);
  const int width = left + step * steps + 170, height = plot_height + 40;
  auto y_of = [&](int value) { return 10 + plot_height - plot_height * value / top; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"events\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"monospace\" font-size=\"11\">\n",
      width, height, width, height);
  svg += "<title>live cross-pipe events per pipe pair along the order</title>\n";
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", left, y_of(0), left + step * steps, y_of(0));
  svg += fmt::format("<line x1=\"{}\" y1=\"10\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", left, left, y_of(0));
  for (int value = 0; value <= top; value += std::max(1, top / 5))
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 4, y_of(value) + 4, value);
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#d00\" stroke-width=\"2\" stroke-dasharray=\"6,3\"/>\n",
                     left, y_of(max_events), left + step * steps, y_of(max_events));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#d00\">--max-events {}</text>\n", left + 4, y_of(max_events) - 4,
                     max_events);
  for (int s = 0; s < steps; ++s)
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"#eee\" stroke=\"#ccc\"><title>{}: {}</title></rect>\n",
                       left + step * s, y_of(0) + 4, step, s, escape_html(segment.statements[s]));
  for (size_t index = 0; index < segment.pairs.size(); ++index) {
    const auto& pair = segment.pairs[index];
    std::string points;
    int previous = 0;
    for (int s = 0; s < steps; ++s) {
      int x = left + step * s;
      points += fmt::format("{},{} {},{} ", x, y_of(previous), x, y_of(pair.live[s]));
      previous = pair.live[s];
    }
    points += fmt::format("{},{}", left + step * steps, y_of(previous));
    const char* colour = colours[index % 7];
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" transform=\"translate(0,{})\"/>\n",
                       points, colour, -static_cast<int>(index));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{} peak {}</text>\n", left + step * steps + 6,
                       24 + 14 * static_cast<int>(index), colour, escape_html(pair.pair), pair.peak);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace tilec::report
