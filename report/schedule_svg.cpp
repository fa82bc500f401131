// report/schedule_svg.cpp — SVG views of a modulo schedule (the loop's published attributes).
//
// 1. collect_scheduled_loops walks each kernel for `for` ops with `ii` and copies the schedule
//    attributes of their body ops into plain structs (labels from result names).
// 2. The reservation table folds every resource use into cycle mod II: the cell (slot, c)
//    holds the ops that occupy `slot` at some cycle ≡ c. Ops with no published resources take
//    a row named after their pipe, one cycle long, so a partly scheduled loop still shows.
// 3. The Gantt chart draws one bar per op from its cycle for max(latency, 1) cycles; ops with no
//    cycle are placed at stage·II + order and drawn hatched-grey ("estimated").
// Both are plain SVG with inline attributes only; text is escaped. Deterministic.
#include "report/schedule_svg.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "ir/ir.h"
#include "report/html_text.h"

namespace tilec::report {

namespace {

std::string op_label(const Operation& op, size_t index) {
  std::string label;
  if (op.num_results() > 0 && !op.result(0)->name_hint().empty()) label = "%" + op.result(0)->name_hint() + " = ";
  label += std::string(op.name());
  if (op.location().known()) label += fmt::format(" (line {})", op.location().line);
  else label += fmt::format(" #{}", index);
  return label;
}

std::vector<ScheduledUse> read_uses(const Operation& op) {
  std::vector<ScheduledUse> uses;
  const Attribute* resources = op.get(attr::resources);
  if (!resources || !resources->is_array()) return uses;
  for (const Attribute& row : resources->as_array()) {
    if (!row.is_array() || row.as_array().empty() || !row.as_array()[0].is_string()) continue;
    const auto& fields = row.as_array();
    ScheduledUse use;
    use.slot = fields[0].as_string();
    if (fields.size() > 1 && fields[1].is_int()) use.start = fields[1].as_int();
    if (fields.size() > 2 && fields[2].is_int()) use.duration = std::max<int64_t>(1, fields[2].as_int());
    if (fields.size() > 3 && fields[3].is_int()) use.occupancy = fields[3].as_int();
    uses.push_back(use);
  }
  return uses;
}

void collect(const Region& region, const std::string& kernel, std::vector<ScheduledLoop>& loops) {
  for (const auto& op : region.operations()) {
    if (op->kind() == OpKind::for_ && op->has(attr::ii)) {
      ScheduledLoop loop;
      loop.title = fmt::format("kernel {}, loop at line {}", kernel, op->location().line);
      loop.ii = std::max<int64_t>(1, op->get(attr::ii, 1));
      loop.stages = op->get(attr::stages, 1);
      loop.generator = op->get(attr::generator);
      const auto& body = op->region(0).operations();
      for (size_t index = 0; index < body.size(); ++index) {
        const Operation& inner = *body[index];
        if (inner.info().has(kTerminator)) continue;
        ScheduledOp scheduled;
        scheduled.label = op_label(inner, index);
        scheduled.short_label = inner.num_results() > 0 && !inner.result(0)->name_hint().empty()
                                    ? "%" + inner.result(0)->name_hint() + " " + std::string(inner.name())
                                    : std::string(inner.name());
        scheduled.stage = inner.get(attr::stage);
        scheduled.order = inner.get(attr::order, static_cast<int64_t>(index));
        scheduled.cycle = inner.get(attr::cycle, -1);
        scheduled.latency = std::max<int64_t>(1, inner.get(attr::latency, 1));
        scheduled.uses = read_uses(inner);
        if (scheduled.uses.empty()) {
          std::string_view pipe = to_string(inner.info().pipe);
          scheduled.uses.push_back({"pipe " + std::string(pipe), 0, 1, 1});
        }
        loop.ops.push_back(std::move(scheduled));
      }
      // warp-specialize clones a scheduled loop into each agent: draw its schedule once.
      bool drawn = std::any_of(loops.begin(), loops.end(), [&](const ScheduledLoop& other) { return other.title == loop.title; });
      if (!drawn) loops.push_back(std::move(loop));
    }
    for (size_t index = 0; index < op->num_regions(); ++index) collect(op->region(index), kernel, loops);
  }
}

int64_t start_cycle(const ScheduledOp& op, int64_t ii) {
  return op.cycle >= 0 ? op.cycle : op.stage * ii + op.order;
}

constexpr int kLabelWidth = 200;

}  // namespace

std::string stage_colour(int64_t stage) {
  static const char* colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};
  return colours[static_cast<size_t>(std::max<int64_t>(0, stage)) % 8];
}

std::vector<ScheduledLoop> collect_scheduled_loops(const Module& module) {
  std::vector<ScheduledLoop> loops;
  for (const auto& kernel : module.kernels())
    for (size_t index = 0; index < kernel->num_regions(); ++index) collect(kernel->region(index), kernel_name(*kernel), loops);
  return loops;
}

std::string render_reservation_table(const ScheduledLoop& loop) {
  // slot → column → op indices (deduplicated, in op order).
  std::map<std::string, std::map<int64_t, std::vector<size_t>>> cells;
  for (size_t index = 0; index < loop.ops.size(); ++index) {
    const ScheduledOp& op = loop.ops[index];
    int64_t begin = start_cycle(op, loop.ii);
    for (const ScheduledUse& use : op.uses)
      for (int64_t k = 0; k < std::min(use.duration, loop.ii); ++k) {
        auto& cell = cells[use.slot][(begin + use.start + k) % loop.ii];
        if (cell.empty() || cell.back() != index) cell.push_back(index);
      }
  }
  const int cell_width = loop.ii > 8 ? 90 : 100, row_height = 22, header = 24;
  size_t tallest = 1;
  for (const auto& [slot, columns] : cells)
    for (const auto& [column, ops] : columns) tallest = std::max(tallest, ops.size());
  const int cell_height = row_height * static_cast<int>(tallest) + 4;
  const int width = kLabelWidth + cell_width * static_cast<int>(loop.ii);
  const int height = header + cell_height * static_cast<int>(cells.size()) + 2;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"mrt\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"monospace\" font-size=\"11\">\n",
      width, height, width, height);
  svg += "<title>modulo reservation table</title>\n";
  for (int64_t column = 0; column < loop.ii; ++column)
    svg += fmt::format("<text x=\"{}\" y=\"16\" text-anchor=\"middle\">{} mod {}</text>\n",
                       kLabelWidth + cell_width * column + cell_width / 2, column, loop.ii);
  int row = 0;
  for (const auto& [slot, columns] : cells) {
    int y = header + row * cell_height;
    svg += fmt::format("<text x=\"4\" y=\"{}\">{}</text>\n", y + 15, escape_html(slot));
    for (int64_t column = 0; column < loop.ii; ++column) {
      int x = kLabelWidth + cell_width * static_cast<int>(column);
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#999\"/>\n", x, y,
                         cell_width, cell_height);
      auto it = columns.find(column);
      if (it == columns.end()) continue;
      for (size_t k = 0; k < it->second.size(); ++k) {
        const ScheduledOp& op = loop.ops[it->second[k]];
        int top = y + 2 + row_height * static_cast<int>(k);
        svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"{}\"/>\n", x + 2, top,
                           cell_width - 4, row_height - 2, stage_colour(op.stage));
        std::string text = op.short_label.substr(0, 16);
        svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#fff\"><title>{} (stage {})</title>{}</text>\n", x + 5,
                           top + 14, escape_html(op.label), op.stage, escape_html(text));
      }
    }
    ++row;
  }
  svg += "</svg>\n";
  return svg;
}

int64_t iteration_cycles(const ScheduledLoop& loop) {
  int64_t end = loop.ii;
  for (const ScheduledOp& op : loop.ops) end = std::max(end, start_cycle(op, loop.ii) + op.latency);
  return end;
}

std::string render_gantt(const ScheduledLoop& loop) {
  const int64_t end = iteration_cycles(loop);
  const int row_height = 20, header = 24;
  const int scale = static_cast<int>(std::clamp<int64_t>(800 / std::max<int64_t>(end, 1), 4, 40));
  const int width = kLabelWidth + scale * static_cast<int>(end) + 40;
  const int height = header + row_height * static_cast<int>(loop.ops.size()) + 4;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"gantt\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"monospace\" font-size=\"11\">\n",
      width, height, width, height);
  svg += "<title>Gantt chart of one iteration</title>\n";
  // Stage boundaries every II cycles.
  for (int64_t cycle = 0; cycle <= end; cycle += loop.ii) {
    int x = kLabelWidth + scale * static_cast<int>(cycle);
    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"3,3\"/>\n", x, header - 6,
                       x, height);
    svg += fmt::format("<text x=\"{}\" y=\"14\">{}</text>\n", x + 2, cycle);
  }
  for (size_t index = 0; index < loop.ops.size(); ++index) {
    const ScheduledOp& op = loop.ops[index];
    int y = header + row_height * static_cast<int>(index);
    int x = kLabelWidth + scale * static_cast<int>(start_cycle(op, loop.ii));
    bool estimated = op.cycle < 0;
    svg += fmt::format("<text x=\"4\" y=\"{}\">{}</text>\n", y + 14, escape_html(op.label.substr(0, 32)));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{}\"{}><title>{}: stage {}, "
                       "order {}, cycle {}, latency {}</title></rect>\n",
                       x, y + 2, scale * static_cast<int>(op.latency), row_height - 4,
                       estimated ? "#aaa" : stage_colour(op.stage), estimated ? " fill-opacity=\"0.6\"" : "",
                       escape_html(op.label), op.stage, op.order,
                       estimated ? std::string("not published") : std::to_string(op.cycle), op.latency);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace tilec::report
