// tools/command_compile.cpp — `tilec compile`: .tile or .tir in, tokens, AST, IR or CUDA out.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "backend/cuda/emit_cuda.h"
#include "frontend/ast.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "tools/pipeline_driver.h"
#include "tools/commands.h"
#include "tools/dependency_file.h"
#include "tools/load_input.h"
#include "tools/report_recorder.h"

namespace tilec::tools {

namespace {

struct CompileOptions {
  std::string input;
  std::string output;
  std::vector<std::string> defines;
  std::string emit = "cu";
  DriverOptions driver;  // target, stop-after, printing, timing, max-events, generator
  bool emit_harness = false;
  std::string report;   // --report OUT.html
  std::string header;   // --header OUT.h: the launchers' declarations
  std::string kernel_prefix;  // --kernel-prefix P
  CudaEmitOptions::PlainTiles plain_tiles = CudaEmitOptions::PlainTiles::registers;
};

// --emit tokens | ast: the front end's own views of a .tile file.
int emit_front_end(const CompileOptions& options) {
  if (is_ir_file(options.input)) {
    fmt::print(stderr, "tilec: error: --emit {} needs a .tile source, not IR text\n", options.emit);
    return 1;
  }
  auto source = read_source_file(options.input);
  if (!source) return 1;
  DiagnosticEngine diagnostics(options.input, *source);
  auto tokens = frontend::lex(*source, diagnostics);
  std::string out;
  if (options.emit == "tokens") {
    for (const auto& token : tokens)
      out += fmt::format("{}:{} {} {}\n", token.location.line, token.location.column,
                         frontend::to_string(token.kind), token.text);
  } else {
    auto program = frontend::parse_program(tokens, diagnostics);
    out = frontend::print_ast(program);
  }
  if (diagnostics.has_errors()) {
    fmt::print(stderr, "{}", diagnostics.render_all());
    return 1;
  }
  return write_output(options.output, out) ? 0 : 1;
}

// Removes an output written before a later one (--header, the dependency file) failed, so that
// make and ninja do not take it for up to date. Only a regular file: -o /dev/null (a device) or a
// link stays as it is (a helper's hunt removed /dev/null itself).
void remove_stale_output(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ignored))) return;
  if (std::filesystem::remove(path, ignored))
    fmt::print(stderr, "tilec: note: removed '{}' so that the build reruns this compile\n", path);
}

int run_compile(const CompileOptions& options) {
  const bool front_end = options.emit == "tokens" || options.emit == "ast";
  // An option the chosen output never reaches is an error, not ignored: --report and
  // --emit-harness wrote nothing beside --emit tokens (found by a helper). `does` says what an
  // option of --emit cu alone adds to the .cu, for the error under --emit ir.
  struct PipelineOption {
    bool given;
    const char *name, *applies_to, *does = nullptr;
  };
  for (const PipelineOption& option : {PipelineOption{!options.defines.empty(), "-D", "--emit ir and cu (the tokens "
                                                      "and the syntax tree are the source's, before constants are "
                                                      "computed)"},
                                       PipelineOption{!options.driver.stop_after.empty(), "--stop-after", "--emit ir"},
                                       PipelineOption{options.driver.print_ir_after_all, "--print-ir-after-all",
                                                      "--emit ir and cu"},
                                       PipelineOption{!options.driver.print_ir_after.empty(), "--print-ir-after",
                                                      "--emit ir and cu"},
                                       PipelineOption{!options.report.empty(), "--report", "--emit ir and cu"},
                                       PipelineOption{options.emit_harness, "--emit-harness", "--emit cu",
                                                      "adds a checking main() to the .cu"},
                                       PipelineOption{!options.header.empty(), "--header", "--emit cu",
                                                      "declares the launchers of the .cu"},
                                       // Accepted and ignored before (an options hunt).
                                       PipelineOption{!options.kernel_prefix.empty(), "--kernel-prefix", "--emit cu",
                                                      "names the .cu's kernels and launchers"},
                                       PipelineOption{options.plain_tiles == CudaEmitOptions::PlainTiles::shared,
                                                      "--plain-tiles shared", "--emit cu",
                                                      "picks the form of the .cu's plain kernels"}}) {
    if (!option.given) continue;
    if (front_end) {
      fmt::print(stderr, "tilec: error: --emit {} writes what the front end reads, before any pass; {} applies to {}\n",
                 options.emit, option.name, option.applies_to);
      return 1;
    }
    if (options.emit == "ir" && option.does) {
      fmt::print(stderr, "tilec: error: {} {}; it applies to --emit cu, not --emit ir\n", option.name, option.does);
      return 1;
    }
  }
  if (front_end) return emit_front_end(options);
  // A pass to print after the one the pipeline stops at never runs: say so rather than print nothing.
  if (!options.driver.stop_after.empty()) {
    const std::vector<std::string> stages = pipeline_stage_names();
    const auto position = [&](const std::string& name) { return std::find(stages.begin(), stages.end(), name); };
    for (const std::string& pass : options.driver.print_ir_after)
      if (position(pass) > position(options.driver.stop_after))
        fmt::print(stderr, "tilec: warning: --print-ir-after {}: the pipeline stops after {}, before {} runs\n", pass,
                   options.driver.stop_after, pass);
  }
  std::map<std::string, std::string> defines;
  if (!parse_defines(options.defines, defines)) return 1;
  LoadedInput input = load_input(options.input, defines);
  if (!input.module) return input.internal_error ? 2 : 1;
  Module& module = *input.module;
  DriverOptions driver = options.driver;
  adopt_recorded_target(module, driver);
  // --emit-harness: tensor-core kernels' references come from the module before scheduling.
  std::unique_ptr<Module> before_scheduling;
  if (options.emit_harness) {
    // A .tir that stops right after fold-constants is its own module before scheduling; one that
    // went further has none to keep (and asking the pipeline for it warned about a
    // --print-ir-after fold-constants the user never gave).
    std::vector<std::string> ran = passes_run(module);
    if (!ran.empty() && ran.back() == "fold-constants") {
      before_scheduling = clone_module(module);
    } else if (std::find(ran.begin(), ran.end(), "fold-constants") == ran.end()) {
      driver.keep_after = "fold-constants";
      driver.kept = &before_scheduling;
    }
  }
  ReportRecorder recorder(options.report, options.input, input.source, module, driver.max_events, driver);
  int pipeline_status = run_pipeline(module, *input.diagnostics, driver);
  // Stopping after the last pass is the whole pipeline: the .cu is written as without it.
  const bool stops_early = !driver.stop_after.empty() && driver.stop_after != pipeline_stage_names().back();
  const bool generates = pipeline_status == 0 && options.emit != "ir" && !stops_early;
  // The page says how the compile ended: after the backend, when it runs (its errors are the
  // compile's: a report said "ok" of a kernel the backend refused).
  if (!generates && !recorder.finish(pipeline_status, *input.diagnostics, module)) return 1;
  if (pipeline_status != 0) return pipeline_status;

  if (options.emit == "ir") return write_output(options.output, print_module(module)) ? 0 : 1;
  if (stops_early) {
    fmt::print(stderr, "tilec: error: --stop-after {} stops before code generation; use --emit ir\n", driver.stop_after);
    return 1;
  }
  CudaEmitOptions emit_options;
  emit_options.target = driver.target;
  emit_options.source_name = options.input;
  emit_options.passes = passes_run(module);
  emit_options.harness = options.emit_harness;
  emit_options.plain_tiles = options.plain_tiles;
  emit_options.reference = before_scheduling.get();
  emit_options.kernel_prefix = options.kernel_prefix;
  std::string header;
  if (!options.header.empty()) emit_options.launcher_header = &header;
  auto cuda = emit_cuda_reporting(module, emit_options, *input.diagnostics);
  if (!recorder.finish(cuda ? 0 : 1, *input.diagnostics, module)) return 1;
  if (!cuda) return 1;
  if (!write_output(options.output, *cuda)) return 1;
  if (options.header.empty() || write_output(options.header, header)) return 0;
  // A .cu without its header would look up to date to make and ninja: remove it.
  if (!options.output.empty() && options.output != "-") remove_stale_output(options.output);
  return 1;
}

// --depfile FILE / -M: after a successful compile, record what the output was made from.
struct DependencyFileOptions {
  std::string path;             // --depfile FILE
  bool next_to_output = false;  // -M: write OUTPUT.d
};

// Whether two paths name one file that writing one would destroy the other with: a regular file
// (or one not there yet) reached both ways, through links or `..`. Devices (/dev/null) may be named
// twice.

// Every file compile reads or writes is a different file: `-o k.tile` on k.tile replaced the
// source with CUDA, `--depfile` onto -o's file replaced the .cu with one rule (a helper's hunt).
bool files_are_distinct(const CompileOptions& options, const std::string& dependency_file) {
  struct Named {
    const char* role;
    std::string path;
  };
  // Standard output takes one of them (-o's by default): two would run together in one stream,
  // and a dependency file named '-' would be a file of that name.
  const auto to_stdout = [](const std::string& path) { return path.empty() || path == "-"; };
  if (dependency_file == "-") {
    fmt::print(stderr, "tilec: error: --depfile -: make and ninja read a dependency file from a path; give one\n");
    return false;
  }
  for (const auto& [role, path] : {std::pair<const char*, const std::string&>{"--report", options.report},
                                   std::pair<const char*, const std::string&>{"--header", options.header}})
    if (path == "-" && to_stdout(options.output)) {
      fmt::print(stderr, "tilec: error: {} - and the {} both write to standard output; give -o FILE or a path for "
                         "{}\n", role, options.emit == "ir" ? "IR" : ".cu", role);
      return false;
    }
  if (options.report == "-" && options.header == "-") {
    fmt::print(stderr, "tilec: error: --report - and --header - both write to standard output; give one a path\n");
    return false;
  }
  std::vector<Named> files;
  if (options.input != "-") files.push_back({"the input", options.input});
  if (!options.output.empty() && options.output != "-") files.push_back({"-o", options.output});
  if (!dependency_file.empty()) files.push_back({"the dependency file", dependency_file});
  if (!to_stdout(options.report)) files.push_back({"--report", options.report});
  if (!to_stdout(options.header)) files.push_back({"--header", options.header});
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j)
      if (same_file(files[i].path, files[j].path)) {
        fmt::print(stderr, "tilec: error: {} and {} are the same file '{}'; {}\n", files[i].role, files[j].role,
                   files[j].path, i == 0 ? "writing it would destroy the input: give the output another name"
                                         : "give each its own file");
        return false;
      }
  return true;
}

int run_compile_with_dependency_file(const CompileOptions& options, const DependencyFileOptions& depfile) {
  bool wanted = !depfile.path.empty() || depfile.next_to_output;
  if (!depfile.path.empty() && depfile.next_to_output) {
    fmt::print(stderr, "tilec: error: -M and --depfile both name the dependency file: give one (-M puts it next to "
                       "-o's file, as OUT.d)\n");
    return 1;
  }
  if (wanted && (options.output.empty() || options.output == "-")) {
    fmt::print(stderr, "tilec: error: {} needs -o FILE: a dependency file names the output it describes\n",
               depfile.next_to_output ? "-M" : "--depfile");
    return 1;
  }
  const std::string dependency_file =
      !wanted ? std::string() : depfile.next_to_output ? dependency_file_next_to(options.output) : depfile.path;
  if (!files_are_distinct(options, dependency_file)) return 1;
  int status = run_compile(options);
  if (status != 0 || !wanted) return status;
  if (write_dependency_file(dependency_file, options.output, {options.input})) return 0;
  // An output without its dependency file would look up to date to make and ninja: remove it.
  remove_stale_output(options.output);
  return 1;
}

}  // namespace

void add_compile_command(CLI::App& app, CommandRunner& run) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "Compile a .tile program (or IR text, .tir) to one CUDA C++ file for sm_90a or sm_100a.\n"
      "Stages can be stopped and printed: --emit ir --stop-after PASS shows the IR after PASS.");
  cmd->add_option("input", options->input, "the .tile source or .tir IR text ('-' reads stdin; any input whose first word past comments is "
                  "'module', as --emit ir writes it, is IR text)")
      ->required();
  cmd->add_option("-o,--output", options->output, "output file (default: standard output)")
      ->check(CLI::Validator(
          [](std::string& path) {
            return path.empty() ? std::string("an empty path: give a file name, or - for standard output") : "";
          },
          "PATH"));
  auto depfile = std::make_shared<DependencyFileOptions>();
  // Not both: checked in run_compile_with_dependency_file (CLI11's excludes() printed "Excludes: -M"
  // into the option column of --help).
  cmd->add_option("--depfile", depfile->path,
                  "also write a make-style dependency file 'OUT: IN' to this path (needs -o; not with -M)")
      ->type_name("FILE");
  cmd->add_flag("-M", depfile->next_to_output,
                "like --depfile OUT.d: the dependency file next to -o's file (not with --depfile)");
  add_pipeline_options(*cmd, options->driver, options->defines);
  cmd->add_option("--emit", options->emit, "what to write: tokens, ast, ir or cu (default cu)")
      ->check(CLI::IsMember({"tokens", "ast", "ir", "cu"}));
  std::vector<std::string> stages = pipeline_stage_names();
  cmd->add_option("--stop-after", options->driver.stop_after,
                  fmt::format("stop after this stage, with --emit ir (prints the IR there): {}",
                              fmt::join(stages, ", ")))
      ->check(CLI::IsMember(stages));
  cmd->add_flag("--print-ir-after-all", options->driver.print_ir_after_all, "print the IR to stderr after every pass");
  cmd->add_option("--print-ir-after", options->driver.print_ir_after, "print the IR to stderr after this pass (repeatable)")
      ->check(CLI::IsMember(stages))
      ->allow_extra_args(false);
  cmd->add_flag("--time-passes", options->driver.time_passes, "print the time each pass took to stderr");
  cmd->add_option("--report", options->report,
                  "write one self-contained HTML page: source, pass timeline, IR after each pass, schedules, events");
  cmd->add_option("--header", options->header,
                  "also write a header declaring the launchers (extern \"C\" launch_NAME): include it where you "
                  "call them, and a kernel whose parameters change fails to compile there instead of getting "
                  "wrong arguments");
  add_plain_tiles_option(*cmd, options->plain_tiles);
  add_kernel_prefix_option(*cmd, options->kernel_prefix);
  cmd->add_flag("--emit-harness", options->emit_harness,
                "add a main() that runs the kernel against a naive reference and prints TFLOP/s");
  cmd->callback([options, depfile, &run] {
    run = [options, depfile] { return run_compile_with_dependency_file(*options, *depfile); };
  });
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status first = fs::status(a, ec), second = fs::status(b, ec);
  if ((fs::exists(first) && !fs::is_regular_file(first)) || (fs::exists(second) && !fs::is_regular_file(second)))
    return false;
  if (fs::exists(first) && fs::exists(second)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(fs::absolute(a, ec), ec) == fs::weakly_canonical(fs::absolute(b, ec), ec);
}

}  // namespace tilec::tools
