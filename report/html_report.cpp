// report/html_report.cpp — assembles the report page from the recorded pipeline run.
//
// Sections, in order: summary (source, target, outcome, diagnostics); source with line
// numbers; pass timeline (the only non-deterministic figures); the IR after each pass in a
// <details>, lines changed since the previous snapshot highlighted (report/line_diff.h); the
// modulo reservation table and Gantt chart of each scheduled loop (report/schedule_svg.h);
// live cross-pipe events per reordered segment (report/event_svg.h); the synchronization
// objects (pipes, mutexes, barriers, event ids) found in the final IR, or "none yet".
#include "report/html_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>
#include <functional>
#include <set>

#include "ir/ir.h"
#include "report/event_svg.h"
#include "report/html_text.h"
#include "report/line_diff.h"
#include "report/schedule_svg.h"

namespace tilec::report {

namespace {

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
h3 { font-size: 1em; }
pre.code { background: #f7f7f7; border: 1px solid #ddd; padding: 0.4em; overflow-x: auto; font-size: 12px;
  line-height: 1.35; }
pre.code span.line { display: block; white-space: pre; }
pre.code span.number { color: #999; display: inline-block; width: 4em; user-select: none; }
pre.code span.changed { background: #fff3b0; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
td.number { text-align: right; font-family: monospace; }
details { margin: 0.4em 0; } summary { cursor: pointer; font-family: monospace; }
p.note { color: #555; font-size: 13px; } .legend span { display: inline-block; padding: 0 6px; color: #fff; margin-right: 4px; }
.figure { overflow-x: auto; margin-bottom: 1em; }
)";

std::string numbered_lines(const std::vector<std::string>& lines, const std::vector<bool>* changed) {
  std::string out = "<pre class=\"code\">";
  for (size_t index = 0; index < lines.size(); ++index) {
    bool mark = changed && (*changed)[index];
    out += fmt::format("<span class=\"line{}\"><span class=\"number\">{}</span>{}</span>", mark ? " changed" : "", index + 1,
                       escape_html(lines[index]));
  }
  out += "</pre>\n";
  return out;
}

std::string timeline(const ReportInput& input) {
  std::string out = "<h2 id=\"timeline\">Pass timeline</h2>\n";
  if (!input.passes_before.empty()) {
    std::string names;
    for (const auto& name : input.passes_before) names += (names.empty() ? "" : ", ") + name;
    out += fmt::format("<p class=\"note\">Already run when the input was written: {}.</p>\n", escape_html(names));
  }
  if (input.passes.empty()) return out + "<p>No pass ran.</p>\n";
  double total = 0;
  for (const auto& pass : input.passes) total += pass.milliseconds;
  out += "<p class=\"note\">Times vary from run to run; they are the only figures in this page that do.</p>\n";
  out += "<table class=\"timeline\"><tr><th>#</th><th>pass</th><th>time (ms)</th><th>share</th><th>IR lines</th></tr>\n";
  for (size_t index = 0; index < input.passes.size(); ++index) {
    const auto& pass = input.passes[index];
    double share = total > 0 ? 100.0 * pass.milliseconds / total : 0;
    out += fmt::format(
        "<tr><td class=\"number\">{}</td><td><a href=\"#ir-{}\">{}</a></td><td class=\"number\">{:.3f}</td>"
        "<td><svg width=\"120\" height=\"10\"><rect width=\"{}\" height=\"10\" fill=\"#4e79a7\"/></svg></td>"
        "<td class=\"number\">{}</td></tr>\n",
        index + 1, index + 1, escape_html(pass.pass), pass.milliseconds, static_cast<int>(1.2 * share),
        split_lines(pass.ir).size());
  }
  out += fmt::format("<tr><td></td><td>total</td><td class=\"number\">{:.3f}</td><td></td><td></td></tr></table>\n", total);
  return out;
}

std::string ir_sections(const ReportInput& input) {
  std::string out = "<h2 id=\"ir\">IR after each pass</h2>\n";
  out += "<p class=\"note\">Highlighted lines were added or changed by that pass (a line diff against the IR before it).</p>\n";
  std::vector<std::string> previous = split_lines(input.initial_ir);
  out += "<details class=\"ir\" id=\"ir-0\"><summary>before the passes (as parsed)</summary>\n" +
         numbered_lines(previous, nullptr) + "</details>\n";
  for (size_t index = 0; index < input.passes.size(); ++index) {
    std::vector<std::string> lines = split_lines(input.passes[index].ir);
    std::vector<bool> changed = changed_lines(previous, lines);
    size_t count = static_cast<size_t>(std::count(changed.begin(), changed.end(), true));
    out += fmt::format("<details class=\"ir pass\" id=\"ir-{}\"><summary>after {} — {} line{} changed</summary>\n", index + 1,
                       escape_html(input.passes[index].pass), count, count == 1 ? "" : "s");
    out += numbered_lines(lines, &changed) + "</details>\n";
    previous = std::move(lines);
  }
  return out;
}

std::string schedule_section(const Module* module) {
  std::string out = "<h2 id=\"schedules\">Scheduled loops</h2>\n";
  std::vector<ScheduledLoop> loops = module ? collect_scheduled_loops(*module) : std::vector<ScheduledLoop>{};
  if (loops.empty()) return out + "<p>None yet: no <code>for</code> carries an <code>ii</code> attribute.</p>\n";
  int64_t most_stages = 1;
  for (const auto& loop : loops) most_stages = std::max(most_stages, loop.stages);
  out += "<p class=\"legend\">Stages: ";
  for (int64_t stage = 0; stage < std::max<int64_t>(most_stages, 1); ++stage)
    out += fmt::format("<span style=\"background:{}\">stage {}</span>", stage_colour(stage), stage);
  out += "</p>\n";
  for (const auto& loop : loops) {
    out += fmt::format("<h3>{}: II {}, {} stage{}{}</h3>\n", escape_html(loop.title), loop.ii, loop.stages,
                       loop.stages == 1 ? "" : "s",
                       loop.generator.empty() ? "" : ", generator " + escape_html(loop.generator));
    if (loop.ii > kMaxTableColumns) {
      out += fmt::format("<p class=\"note\">No reservation table: II {} is longer than the {} columns drawn.</p>\n",
                         loop.ii, kMaxTableColumns);
    } else {
      out += "<p class=\"note\">Modulo reservation table: each cell lists the ops holding that slot at that cycle modulo II.</p>\n";
      out += "<div class=\"figure\">" + render_reservation_table(loop) + "</div>\n";
    }
    if (const int64_t cycles = iteration_cycles(loop); cycles > kMaxGanttCycles) {
      out += fmt::format("<p class=\"note\">No Gantt chart: one iteration spans {} cycles, more than the {} drawn.</p>\n",
                         cycles, kMaxGanttCycles);
    } else {
      out += "<p class=\"note\">One iteration over cycles; dashed lines every II cycles separate the stages.</p>\n";
      out += "<div class=\"figure\">" + render_gantt(loop) + "</div>\n";
    }
  }
  return out;
}

std::string event_section(const Module* module, int max_events) {
  std::string out = "<h2 id=\"events\">Live cross-pipe events</h2>\n";
  std::vector<EventSegment> segments = module ? collect_event_segments(*module) : std::vector<EventSegment>{};
  if (segments.empty()) return out + "<p>None: no segment carries a cross-pipe dependence.</p>\n";
  out += fmt::format("<p class=\"note\">Per pipe pair, the events live after each op of the segment in its final order "
                     "(broadcast model of passes/reorder/check_order.h); the red line is --max-events {}.</p>\n",
                     max_events);
  for (const auto& segment : segments) {
    out += fmt::format("<h3>{} ({} ops)</h3>\n<div class=\"figure\">{}</div>\n", escape_html(segment.title),
                       segment.statements.size(), render_event_chart(segment, max_events));
  }
  return out;
}

// The sync table (insert-sync's output): one row per pipe (its stage buffer), per mutex (its
// named barrier) and per event (pair, id, the statements after which it is set and before which
// it is waited). Before insert-sync, the materialized pipes and mutexes are listed as such.
std::string sync_section(const Module* module) {
  std::vector<std::array<std::string, 4>> rows;  // kind, name, what, where
  auto at = [](const Operation& op) {
    return op.location().known() ? fmt::format("line {}", op.location().line) : std::string("-");
  };
  if (module) {
    std::map<std::string, const Operation*> open_events;  // "from->to#id" → the op after its set
    std::function<void(const Region&)> visit_region = [&](const Region& region) {
      const Operation* previous = nullptr;
      for (const auto& op : region.operations()) {
        switch (op->kind()) {
          case OpKind::stage_buffer:
          case OpKind::pipe_create: {
            const Type& type = op->result()->type();
            const Type payload = type.payload();
            int64_t bytes = payload.element_count() * byte_size(payload.element());
            rows.push_back({"pipe", op->result()->name_hint(),
                            fmt::format("depth {}, payload {}, {} B per stage{}", type.depth(), payload.to_string(), bytes,
                                        op->kind() == OpKind::stage_buffer ? ", full + empty mbarriers" : " (not lowered yet)"),
                            at(*op)});
            break;
          }
          case OpKind::mutex_create: rows.push_back({"mutex", op->result()->name_hint(), "not lowered yet", at(*op)}); break;
          case OpKind::named_barrier_sync:
            rows.push_back({"mutex", "", fmt::format("named barrier {} ({} threads)", op->int_attr("id"), op->int_attr("threads")),
                            at(*op)});
            break;
          case OpKind::event_set:
            if (previous)
              open_events[fmt::format("{}->{}#{}", op->string_attr("from"), op->string_attr("to"), op->int_attr("event"))] = previous;
            break;
          case OpKind::event_wait: {
            std::string key = fmt::format("{}->{}#{}", op->string_attr("from"), op->string_attr("to"), op->int_attr("event"));
            const Operation* next = nullptr;
            for (size_t index = region.position_of(op.get()) + 1; index < region.operations().size() && !next; ++index)
              if (region.operations()[index]->kind() != OpKind::event_wait) next = region.operations()[index].get();
            auto it = open_events.find(key);
            rows.push_back({"event", key,
                            fmt::format("set after '{}' ({}), waited before '{}'",
                                        it == open_events.end() ? "?" : std::string(it->second->name()),
                                        it == open_events.end() ? "-" : at(*it->second), next ? std::string(next->name()) : "?"),
                            next ? at(*next) : at(*op)});
            if (it != open_events.end()) open_events.erase(it);
            break;
          }
          default: break;
        }
        if (op->kind() != OpKind::event_set && op->kind() != OpKind::event_wait) previous = op.get();
        for (size_t index = 0; index < op->num_regions(); ++index) visit_region(op->region(index));
      }
    };
    for (const auto& kernel : module->kernels())
      for (size_t index = 0; index < kernel->num_regions(); ++index) visit_region(kernel->region(index));
  }
  std::string out = "<h2 id=\"sync\">Pipes, mutexes, barriers and event ids</h2>\n";
  if (rows.empty()) return out + "<p>None: no pipe, mutex or cross-pipe event (none yet before insert-sync).</p>\n";
  out += "<table class=\"sync\"><tr><th>kind</th><th>name</th><th>what</th><th>where</th></tr>\n";
  for (const auto& row : rows)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", row[0], escape_html(row[1]),
                       escape_html(row[2]), row[3]);
  return out + "</table>\n";
}

}  // namespace

std::string render_html_report(const ReportInput& input) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += fmt::format("<title>tilec report: {}</title>\n<style>{}</style>\n</head>\n<body>\n", escape_html(input.source_name), kStyle);
  out += fmt::format("<h1>tilec report: {}</h1>\n", escape_html(input.source_name));
  std::string target = "-";
  if (input.final_module) {
    auto it = input.final_module->attributes().find("target");
    if (it != input.final_module->attributes().end() && it->second.is_string()) target = it->second.as_string();
  }
  out += fmt::format("<p>Target <b>{}</b>; outcome: <b>{}</b>; {} pass{} run; --max-events {}.</p>\n", escape_html(target),
                     escape_html(input.outcome), input.passes.size(), input.passes.size() == 1 ? "" : "es", input.max_events);
  out += "<p class=\"note\">Sections: <a href=\"#source\">source</a> · <a href=\"#timeline\">pass timeline</a> · "
         "<a href=\"#ir\">IR after each pass</a> · <a href=\"#schedules\">scheduled loops</a> · "
         "<a href=\"#events\">live events</a> · <a href=\"#sync\">synchronization</a></p>\n";
  if (!input.diagnostics.empty())
    out += "<h2 id=\"diagnostics\">Diagnostics</h2>\n<pre class=\"code\">" + escape_html(input.diagnostics) + "</pre>\n";
  out += "<h2 id=\"source\">Source</h2>\n" + numbered_lines(split_lines(input.source_text), nullptr);
  out += timeline(input);
  out += ir_sections(input);
  out += schedule_section(input.scheduled_module ? input.scheduled_module : input.final_module);
  out += event_section(input.final_module, input.max_events);
  out += sync_section(input.final_module);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace tilec::report
