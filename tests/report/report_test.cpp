// tests/report/report_test.cpp — `tilec compile --report`: the page's structure and its parts.
//
// End to end through the tilec binary: the page is well-formed (tests/report/html_checker.h),
// has one IR section per pass run, links nowhere outside itself, and draws the charts a
// scheduled loop and a reordered segment call for. Library level: the line diff, the
// reservation-table folding and the live-event replay against reorder::check_order.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>

#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "report/event_svg.h"
#include "report/line_diff.h"
#include "report/schedule_svg.h"
#include "tests/cli_runner.h"
#include "tests/report/html_checker.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() { return fs::temp_directory_path() / ("tilec_report_test_" + std::to_string(::getpid())); }

fs::path scratch(const std::string& name) {
  fs::create_directories(scratch_dir());
  return scratch_dir() / name;
}

// Removes the pages and screenshots at exit unless TILEC_REPORT_KEEP is set (to look at them).
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (std::getenv("TILEC_REPORT_KEEP")) {
      std::printf("report test files kept in %s\n", scratch_dir().c_str());
      return;
    }
    std::error_code ignored;
    fs::remove_all(scratch_dir(), ignored);
  }
};
const auto* const cleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

struct Compiled {
  CommandResult result;
  std::string page;
  size_t passes_printed = 0;  // "// ----- IR after" headers of --print-ir-after-all
};

Compiled compile_with_report(const fs::path& input, const std::string& extra = "") {
  fs::path page = scratch(input.stem().string() + ".html");
  Compiled compiled;
  compiled.result = run_command(tilec_binary() + " compile " + input.string() + " --emit ir --print-ir-after-all --report " +
                                page.string() + " " + extra);
  compiled.page = read_file(page);
  compiled.passes_printed = count(compiled.result.err, "// ----- IR after ");
  return compiled;
}

void expect_self_contained(const std::string& page) {
  HtmlCheck check = check_html(page);
  ASSERT_TRUE(check.ok) << check.problem;
  for (const std::string& url : check.urls) {
    EXPECT_EQ(url.find("http"), std::string::npos) << url;
    EXPECT_EQ(url.rfind("//", 0), std::string::npos) << url;
    EXPECT_EQ(url[0], '#') << "only links inside the page: " << url;
  }
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
}

TEST(Report, ReductionTreeIsWellFormedWithOneIrSectionPerPass) {
  Compiled compiled = compile_with_report(source_dir() / "samples" / "reduction_tree.tile");
  ASSERT_EQ(compiled.result.status, 0) << compiled.result.err;
  expect_self_contained(compiled.page);
  ASSERT_GE(compiled.passes_printed, 2u);
  EXPECT_EQ(count(compiled.page, "<details class=\"ir pass\""), compiled.passes_printed);
  EXPECT_EQ(count(compiled.page, "<details class=\"ir\""), 1u);  // the IR before the passes
  // The source, numbered, with its text escaped.
  EXPECT_NE(compiled.page.find("kernel"), std::string::npos);
  EXPECT_NE(compiled.page.find("<span class=\"number\">1</span>"), std::string::npos);
  // The reordered kernel body carries cross-pipe dependences: an events chart with the limit.
  EXPECT_GE(count(compiled.page, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"events\""), 1u);
  EXPECT_NE(compiled.page.find("--max-events 8"), std::string::npos);
  // Not scheduled yet, no sync passes yet: the sections say so.
  EXPECT_NE(compiled.page.find("None yet: no <code>for</code> carries"), std::string::npos);
  EXPECT_NE(compiled.page.find("None: no pipe, mutex or cross-pipe event"), std::string::npos);
}

TEST(Report, SyncTableListsPipesAndEventsAfterInsertSync) {
  Compiled compiled = compile_with_report(source_dir() / "tests" / "golden" / "insert-sync" / "gemm_sm90a.tir");
  ASSERT_EQ(compiled.result.status, 0) << compiled.result.err;
  // Two pipes (A and B stages of 16 KiB and 32 KiB) and the MMA->LSU event after the K loop.
  EXPECT_NE(compiled.page.find("depth 4, payload tile&lt;128x64xbf16, smem&gt;, 16384 B per stage, full + empty mbarriers"),
            std::string::npos);
  EXPECT_NE(compiled.page.find("depth 4, payload tile&lt;64x256xbf16, smem&gt;, 32768 B per stage"), std::string::npos);
  // Set after the k loop's last stage release (defer-mma-releases: `if held >= 0 { arrive }`).
  EXPECT_NE(compiled.page.find("<td>event</td><td>MMA-&gt;LSU#0</td><td>set after &#39;if&#39;"), std::string::npos);
  // Mutexes: the rows name their named barriers.
  Compiled mutexes = compile_with_report(source_dir() / "tests" / "golden" / "insert-sync" / "mutexes.tir");
  ASSERT_EQ(mutexes.result.status, 0) << mutexes.result.err;
  EXPECT_NE(mutexes.page.find("<td>mutex</td><td></td><td>named barrier 2 (128 threads)</td><td>line 19</td>"), std::string::npos);
  EXPECT_EQ(count(mutexes.page, "named barrier 1 (128 threads)"), 2u);
}

TEST(Report, MaxEventsLimitIsDrawnAsGiven) {
  Compiled compiled = compile_with_report(source_dir() / "samples" / "reduction_tree.tile", "--max-events 3");
  ASSERT_EQ(compiled.result.status, 0) << compiled.result.err;
  EXPECT_NE(compiled.page.find("--max-events 3</text>"), std::string::npos);
}

TEST(Report, ScheduledLoopGetsReservationTableAndGantt) {
  Compiled compiled = compile_with_report(source_dir() / "tests" / "report" / "scheduled_gemm.tir");
  ASSERT_EQ(compiled.result.status, 0) << compiled.result.err;
  expect_self_contained(compiled.page);
  EXPECT_EQ(count(compiled.page, "class=\"mrt\""), 1u);
  EXPECT_EQ(count(compiled.page, "class=\"gantt\""), 1u);
  EXPECT_NE(compiled.page.find("II 8, 2 stages, generator cost-based"), std::string::npos);
  EXPECT_NE(compiled.page.find(">7 mod 8<"), std::string::npos);
  EXPECT_EQ(compiled.page.find(">8 mod 8<"), std::string::npos);
  // The .tir records the passes through generate-schedule (its schedule is hand-written): the page
  // says so and shows only the rest.
  EXPECT_NE(compiled.page.find("Already run when the input was written: parse, promote-mma-operands, fold-constants, persistent-tiles, parse-constraints, build-resources, generate-schedule."), std::string::npos);
  EXPECT_EQ(count(compiled.page, "<details class=\"ir pass\""), compiled.passes_printed);
  // The charts draw the loop as scheduled, not the producer agent's copy materialize-schedule and
  // warp-specialize make of it (a learner's hunt: no mma, and every op "cycle not published").
  EXPECT_NE(compiled.page.find("<title>%acc_3 = mma (line 14) (stage 1)</title>"), std::string::npos);
  EXPECT_EQ(compiled.page.find("not published"), std::string::npos);
}

// A compile the backend refuses is not "ok" on its page (it was: the page was written before the
// backend ran).
TEST(Report, ABackendErrorIsTheOutcome) {
  fs::path page = scratch("refused.html");
  CommandResult r = run_command(tilec_binary() + " compile " + (source_dir() / "samples" / "gemm.tile").string() +
                                " -D BM=96 -o /dev/null --report " + page.string());
  EXPECT_EQ(r.status, 1);
  const std::string text = read_file(page);
  EXPECT_NE(text.find("outcome: <b>input error</b>"), std::string::npos);
  EXPECT_NE(text.find("does not support a register tile"), std::string::npos);
}

// A hand-edited II past what a chart can draw gets a note instead of the charts: `ii = 10000000`
// was a bad_alloc (exit 2), and 2000000000 ran for minutes (found by a helper).
TEST(Report, AnIiTooLongToDrawIsNamedNotDrawn) {
  const std::string text = read_file(source_dir() / "tests" / "report" / "scheduled_gemm.tir");
  const size_t at = text.find("ii = 8,");
  ASSERT_NE(at, std::string::npos);
  const fs::path input = scratch("huge_ii.tir");
  write_file(input, text.substr(0, at) + "ii = 2000000000," + text.substr(at + std::strlen("ii = 8,")));
  Compiled compiled = compile_with_report(input);
  ASSERT_EQ(compiled.result.status, 0) << compiled.result.err;
  EXPECT_EQ(count(compiled.page, "class=\"mrt\""), 0u);
  EXPECT_EQ(count(compiled.page, "class=\"gantt\""), 0u);
  EXPECT_NE(compiled.page.find("No reservation table: II 2000000000 is longer than the 512 columns drawn."),
            std::string::npos);
  EXPECT_NE(compiled.page.find("No Gantt chart: one iteration spans 2000000000 cycles"), std::string::npos);
  EXPECT_LT(compiled.page.size(), 1u << 20);
}

TEST(Report, SameInputGivesSamePageButForTimes) {
  auto strip_times = [](const std::string& page) {
    return std::regex_replace(page, std::regex("<table class=\"timeline\">[\\s\\S]*?</table>"), "");
  };
  fs::path input = source_dir() / "samples" / "reduction_tree.tile";
  std::string first = strip_times(compile_with_report(input).page);
  std::string second = strip_times(compile_with_report(input).page);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, second);
}

TEST(Report, UnwritablePathIsAnInputError) {
  CommandResult result = run_command(tilec_binary() + " compile " + (source_dir() / "samples" / "vector_add.tile").string() +
                                     " --emit ir --report /nonexistent/dir/out.html");
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.err.find("/nonexistent/dir/out.html"), std::string::npos) << result.err;
}

TEST(Report, ScreenshotInHeadlessChromium) {
  const char* chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) GTEST_SKIP() << "no " << chromium << " (Debian package chromium): screenshot skipped";
  Compiled compiled = compile_with_report(source_dir() / "tests" / "report" / "scheduled_gemm.tir");
  ASSERT_EQ(compiled.result.status, 0);
  fs::path page = scratch("scheduled_gemm.html");
  fs::path png = scratch("scheduled_gemm.png");
  fs::path profile = scratch("chromium-profile");
  std::string command = std::string(chromium) +
                        " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
                        "--no-first-run --user-data-dir=" + profile.string() + " --screenshot=" + png.string() +
                        " --window-size=1200,2000 file://" + page.string();
  CommandResult shot = run_command(command);
  ASSERT_TRUE(fs::exists(png)) << shot.err;
  EXPECT_GT(fs::file_size(png), 20000u) << "a blank page compresses far below this";
  std::string bytes = read_file(png);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
}

// ----- library level -----

TEST(LineDiff, MarksInsertedAndChangedLinesOnly) {
  std::vector<std::string> before{"a", "b", "c", "d"};
  std::vector<std::string> after{"a", "x", "b", "d", "e"};
  std::vector<bool> expected{false, true, false, false, true};
  EXPECT_EQ(report::changed_lines(before, after), expected);
  EXPECT_EQ(report::changed_lines(after, after), std::vector<bool>(after.size(), false));
  EXPECT_EQ(report::changed_lines({}, {"x"}), std::vector<bool>{true});
  EXPECT_EQ(report::split_lines("one\ntwo\n"), (std::vector<std::string>{"one", "two"}));
}

TEST(ScheduleSvg, FoldsUsesModuloIi) {
  std::string text = read_file(source_dir() / "tests" / "report" / "scheduled_gemm.tir");
  DiagnosticEngine diagnostics("scheduled_gemm.tir", text);
  auto module = parse_module(text, diagnostics);
  ASSERT_TRUE(module) << diagnostics.render_all();
  auto loops = report::collect_scheduled_loops(*module);
  ASSERT_EQ(loops.size(), 1u);
  const auto& loop = loops[0];
  EXPECT_EQ(loop.ii, 8);
  ASSERT_EQ(loop.ops.size(), 3u);  // yield excluded
  EXPECT_EQ(loop.ops[2].cycle, 10);
  EXPECT_EQ(loop.ops[2].stage, 1);
  std::string svg = report::render_reservation_table(loop);
  // mma holds tensor_core from cycle 10 for 6 cycles: columns 2..7, i.e. six mma boxes.
  EXPECT_EQ(count(svg, "%acc_3 = mma (line 14)"), 6u);  // each box's <title>
  EXPECT_EQ(count(svg, ">%acc_3 mma<"), 6u);            // and its text
  EXPECT_EQ(count(svg, ">tensor_core<"), 1u);
}

TEST(EventSvg, ReplayedPeaksMatchCheckOrder) {
  std::string text = read_file(source_dir() / "samples" / "expected" / "reduction_tree.tir");
  DiagnosticEngine diagnostics("reduction_tree.tir", text);
  auto module = parse_module(text, diagnostics);
  ASSERT_TRUE(module) << diagnostics.render_all();
  auto segments = report::collect_event_segments(*module);
  ASSERT_FALSE(segments.empty());
  for (const auto& segment : segments) {
    ASSERT_FALSE(segment.pairs.empty());
    for (const auto& pair : segment.pairs) {
      EXPECT_EQ(pair.live.size(), segment.statements.size());
      EXPECT_EQ(pair.peak, pair.checked_peak) << segment.title << " " << pair.pair;
      EXPECT_GE(pair.peak, 1);
    }
    HtmlCheck check = check_html("<!DOCTYPE html>" + report::render_event_chart(segment, 8));
    EXPECT_TRUE(check.ok) << check.problem;
    EXPECT_EQ(check.svg_count, 1);
  }
}

}  // namespace
}  // namespace tilec::testing
