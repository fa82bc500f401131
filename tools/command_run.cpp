// tools/command_run.cpp — `tilec run`: execute a kernel on the CPU, optionally checking that the
// pipeline did not change its results.
//
//   1. Load the input (.tile or .tir) and keep a copy of the IR as parsed.
//   2. Run the pipeline on the other copy up to --stop-after (default: all of it).
//   3. For each kernel (or --kernel NAME): bind the symbolic dims (--dims; 256 for any not
//      given) and the scalar parameters (--scalar; floats not given are random, and every
//      scalar's value is printed), make inputs from --seed, run the pipelined kernel on the interpreter with
//      --workers executor workers, and print each output's checksum.
//   4. With --check, also run the parsed kernel on the same inputs and compare every output
//      with the element type's tolerance; exit 1 with the first mismatching index.
// With --timeout S, a run not done in S seconds stops with exit 1. With --inputs DIR a tensor
// parameter X whose DIR/X.bin exists takes those bytes (row-major, as on the device) instead of
// random ones; with --outputs DIR each output is written to DIR/Y.bin after the run, so a kernel
// can be checked against a reference of the user's own (NumPy's tofile/fromfile).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "backend/cuda/emit_cuda.h"
#include "ir/clone.h"
#include "passes/pipeline.h"
#include "runtime/executor.h"
#include "runtime/interpreter/executor_tile_runner.h"
#include "runtime/interpreter/kernel_buffers.h"
#include "tools/commands.h"
#include "tools/kernel_arguments.h"
#include "tools/load_input.h"
#include "tools/pipeline_driver.h"
#include "tools/report_recorder.h"

namespace tilec::tools {

namespace {

struct RunOptions {
  std::string input;
  std::string kernel;
  std::string dims;
  std::vector<std::string> scalar_items;  // --scalar NAME=VALUE,...
  runtime::ScalarBindings scalars;
  std::vector<std::string> defines;
  DriverOptions driver;  // target, stop-after, max-events, generator
  unsigned workers = 0;
  uint64_t seed = 1;
  int64_t sms = 4;  // what `sm_count` gives (persistent kernels' worker count)
  bool check = false;
  std::string report;  // --report OUT.html
  double timeout = 0;  // --timeout SECONDS; 0: none
  std::string inputs_dir;   // --inputs DIR
  std::string outputs_dir;  // --outputs DIR
};

namespace fs = std::filesystem;

// Before the run: --inputs names a directory; --outputs another, which exists or can be made (in
// one directory a tensor both read and written would overwrite its input file).
bool check_data_directories(const RunOptions& options) {
  std::error_code error;
  if (!check_inputs_directory(options.inputs_dir)) return false;
  if (options.outputs_dir.empty()) return true;
  if (!fs::create_directories(options.outputs_dir, error) && error) {
    fmt::print(stderr, "tilec: error: --outputs {}: {}\n", options.outputs_dir, error.message());
    return false;
  }
  if (!options.inputs_dir.empty() && fs::equivalent(options.inputs_dir, options.outputs_dir, error)) {
    fmt::print(stderr, "tilec: error: --inputs and --outputs name the same directory, where an output would "
               "overwrite the input of the same name: give --outputs another\n");
    return false;
  }
  return true;
}

// --outputs DIR: each output tensor to DIR/Y.bin.
bool write_outputs(const std::string& dir, const runtime::KernelBuffers& buffers) {
  for (size_t position : buffers.outputs) {
    const fs::path path = fs::path(dir) / tensor_file_name(buffers.names[position]);
    const std::vector<uint8_t>& bytes = buffers.tensors[position].bytes();
    if (!write_binary_file(path, bytes.data(), bytes.size())) return false;
    fmt::print("  output {}: written to {}\n", buffers.names[position], path.string());
  }
  return true;
}

// --timeout: a thread that ends the process with exit 1 if the run is not done in time (a
// kernel whose loop runs 2^63 times would run until killed). The executor's processes are
// coroutines of this one, so nothing outlives it.
class RunDeadline {
 public:
  explicit RunDeadline(double seconds) {
    if (seconds <= 0) return;
    watcher_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_condition_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
      fmt::print(stderr, "tilec: error: the run did not finish in {} s (--timeout)\n", seconds);
      std::fflush(stderr);
      std::_Exit(1);
    });
  }
  ~RunDeadline() {
    if (!watcher_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_condition_.notify_all();
    watcher_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_condition_;
  bool done_ = false;
  std::thread watcher_;
};

// The sum of the elements: exact for integer tensors (wrapping at 64 bits), to 9 digits for
// float ones.
std::string checksum(const runtime::HostBuffer& buffer) {
  if (!is_float(buffer.element())) {
    uint64_t sum = 0;
    for (int64_t i = 0; i < buffer.element_count(); ++i) sum += static_cast<uint64_t>(buffer.load_int(i));
    return fmt::format("{}", static_cast<int64_t>(sum));
  }
  double sum = 0;
  for (int64_t i = 0; i < buffer.element_count(); ++i) sum += buffer.load_as_double(i);
  return fmt::format("{:.9g}", sum);
}

int run_one(const Operation& parsed, const Operation& lowered, const RunOptions& options,
            runtime::SymbolBindings symbols, runtime::Executor& executor, const DiagnosticEngine& diagnostics) {
  std::string name = kernel_name(lowered);
  std::string dims;
  symbols = bind_kernel_symbols(lowered, symbols, dims);
  runtime::KernelBuffers inputs;
  std::string message;
  if (!runtime::make_kernel_buffers(lowered, symbols, options.seed, inputs, message, options.scalars)) {
    fmt::print(stderr, "tilec: error: kernel {}: {}\n", name, message);
    return 1;
  }
  if (!options.inputs_dir.empty() && !read_given_inputs(options.inputs_dir, lowered, inputs, name)) return 1;
  runtime::ExecutorTileRunner runner(executor);
  runtime::SerialTileRunner in_order;  // tiles adding to a float tensor: one order (KernelBuffers::adds_floats)
  runtime::LaunchOptions launch;
  launch.runner = inputs.adds_floats() ? static_cast<runtime::TileRunner*>(&in_order) : &runner;
  launch.sm_count = options.sms;

  runtime::KernelBuffers actual = inputs;
  auto arguments = actual.arguments();
  runtime::LaunchResult result = runtime::run_kernel(lowered, arguments, symbols, launch);
  if (!result.ok) {
    report_launch_failure(diagnostics, result, name);
    return 1;
  }
  // One program per CTA: per tile of a `grid tiles` kernel, per SM (--sms) of a persistent one.
  // Which IR ran, when not the whole pipeline's (a learner comparing the stages could not tell).
  const std::string stage =
      options.driver.stop_after.empty() ? std::string() : fmt::format(", the IR after {}", options.driver.stop_after);
  fmt::print("kernel {} [{}]{}: {} CTA{} on {}\n", name, dims, stage, result.tile_count, result.tile_count == 1 ? "" : "s",
             inputs.adds_floats() ? std::string("1 worker, in order (they add to a float tensor)")
                                  : fmt::format("{} worker{}", executor.worker_count(),
                                                executor.worker_count() == 1 ? "" : "s"));
  if (std::string scalars = actual.describe_scalars(); !scalars.empty()) fmt::print("  scalars: {}\n", scalars);
  for (size_t position : actual.outputs)
    fmt::print("  output {} {}: checksum {}\n", actual.names[position],
               actual.tensors[position].describe(), checksum(actual.tensors[position]));
  if (!options.outputs_dir.empty() && !write_outputs(options.outputs_dir, actual)) return 1;
  if (!options.check) return 0;

  runtime::KernelBuffers expected = inputs;
  auto reference_arguments = expected.arguments();
  runtime::LaunchResult reference = runtime::run_kernel(parsed, reference_arguments, symbols, launch);
  if (!reference.ok) {
    report_launch_failure(diagnostics, reference, name + " as parsed");
    return 1;
  }
  int status = 0;
  for (const auto& [output, comparison] : runtime::compare_outputs(expected, actual)) {
    fmt::print("  check {}: {}\n", output, comparison.summary());
    if (!comparison.ok()) status = 1;
  }
  if (status != 0)
    fmt::print(stderr, "{}: error: kernel {} gives different results after the pipeline\n", options.input, name);
  return status;
}

// The interpreter runs kernels the CUDA backend refuses (a tensor-core epilogue it cannot map, a
// grid it does not take): after a full pipeline, each refusal `tilec compile` would report is
// printed as a warning, so that a --check that passes is not read as "this compiles". The
// backend's own warnings (register budgets) are compile's to print.
void warn_if_the_backend_refuses(const Module& module, const DriverOptions& driver, const DiagnosticEngine& input) {
  DiagnosticEngine scratch = input;
  const size_t before = scratch.diagnostics().size();
  CudaEmitOptions options;
  options.target = driver.target;
  if (emit_cuda(module, options, scratch)) return;
  for (size_t i = before; i < scratch.diagnostics().size(); ++i) {
    Diagnostic refusal = scratch.diagnostics()[i];
    if (refusal.severity != Severity::error) continue;
    refusal.severity = Severity::warning;
    refusal.message = fmt::format("tilec compile --target {} refuses this: {}", driver.target->name, refusal.message);
    fmt::print(stderr, "{}", scratch.render(refusal));
  }
}

int run_run(RunOptions options) {
  RunDeadline deadline(options.timeout);
  std::map<std::string, std::string> defines;
  if (!parse_defines(options.defines, defines)) return 1;
  runtime::SymbolBindings symbols;
  if (!parse_dims(options.dims, symbols)) return 1;
  if (!parse_scalars(options.scalar_items, options.scalars)) return 1;
  // The run's results go to standard output: a report there would run into them (a docs audit).
  if (options.report == "-") {
    fmt::print(stderr, "tilec: error: --report -: the run's results go to standard output; give the report a "
                       "path\n");
    return 1;
  }
  // The report onto the input replaced the kernel's source with HTML (a hunt), as compile refuses.
  if (!options.report.empty() && options.input != "-" && same_file(options.input, options.report)) {
    fmt::print(stderr, "tilec: error: the input and --report are the same file '{}'; writing it would destroy the "
                       "input: give the report another name\n", options.report);
    return 1;
  }
  LoadedInput input = load_input(options.input, defines);
  if (!input.module) return input.internal_error ? 2 : 1;
  std::unique_ptr<Module> parsed = clone_module(*input.module);
  DriverOptions driver = options.driver;
  adopt_recorded_target(*input.module, driver);
  ReportRecorder recorder(options.report, options.input, input.source, *input.module, driver.max_events, driver);
  int pipeline_status = run_pipeline(*input.module, *input.diagnostics, driver);
  if (!recorder.finish(pipeline_status, *input.diagnostics, *input.module)) return 1;
  if (pipeline_status != 0) return pipeline_status;

  std::vector<size_t> selected;
  for (size_t i = 0; i < input.module->kernels().size(); ++i)
    if (options.kernel.empty() || kernel_name(*input.module->kernels()[i]) == options.kernel) selected.push_back(i);
  if (selected.empty()) {
    report_unknown_kernel(options.input, options.kernel, *input.module);
    return 1;
  }
  if (!check_data_directories(options)) return 1;
  if (selected.size() > 1 && (!options.inputs_dir.empty() || !options.outputs_dir.empty())) {
    fmt::print(stderr, "tilec: error: {} has {} kernels, and --inputs/--outputs name files after parameters: choose "
               "one with --kernel NAME\n", options.input, selected.size());
    return 1;
  }
  std::vector<const Operation*> kernels;
  for (size_t i : selected) kernels.push_back(input.module->kernels()[i].get());
  if (driver.stop_after.empty()) warn_if_the_backend_refuses(*input.module, driver, *input.diagnostics);
  warn_unused_dims(symbols, kernels);
  warn_unused_scalars(options.scalars, kernels);
  runtime::ExecutorOptions executor_options;
  executor_options.worker_count = options.workers;
  runtime::Executor executor(executor_options);
  int status = 0;
  for (size_t i : selected) {
    const Operation& lowered = *input.module->kernels()[i];
    const Operation* original = parsed->find_kernel(kernel_name(lowered));
    if (!original) {
      fmt::print(stderr, "tilec: internal error: kernel {} disappeared in the pipeline\n", kernel_name(lowered));
      return 2;
    }
    status = std::max(status, run_one(*original, lowered, options, symbols, executor, *input.diagnostics));
  }
  return status;
}

}  // namespace

void add_run_command(CLI::App& app, CommandRunner& run) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a kernel on the CPU interpreter with random inputs (or your own: --inputs, --outputs); --check\n"
      "also runs the IR as parsed and compares every output (tolerance per element type), exiting 1 at\n"
      "the first mismatch. The interpreter runs kernels the CUDA backend refuses: each refusal `tilec\n"
      "compile` would report is printed as a warning, so a passing --check is not \"this compiles\".");
  cmd->add_option("input", options->input, "the .tile source or .tir IR text ('-' reads stdin)")->required();
  add_kernel_option(*cmd, options->kernel, "run");
  add_extent_options(*cmd, options->dims, options->scalar_items, "M=256,N=128,K=64");
  add_pipeline_options(*cmd, options->driver, options->defines);
  cmd->add_option("--workers", options->workers, "executor worker threads (default, or 0: one per hardware thread)")
      ->check(CLI::Range(0u, 64u));
  add_seed_option(*cmd, options->seed, "seed of the random inputs (default 1)");
  cmd->add_option("--sms", options->sms, "the SM count persistent kernels see (default 4)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--check", options->check, "also run the IR as parsed and compare the outputs");
  add_timeout_option(*cmd, options->timeout,
                     "seconds the whole run may take before it stops with exit 1 (default: no limit)");
  std::vector<std::string> stages = pipeline_stage_names();
  cmd->add_option("--stop-after", options->driver.stop_after, "run the IR as it is after this stage")
      ->check(CLI::IsMember(stages));
  cmd->add_option("--report", options->report, "also write the pipeline's HTML report (as tilec compile --report)");
  cmd->add_option("--inputs", options->inputs_dir,
                  "read tensor parameter X from DIR/X.bin where that file exists (raw row-major elements, as "
                  "NumPy's tofile writes them; the others stay random)")
      ->type_name("DIR");
  cmd->add_option("--outputs", options->outputs_dir,
                  "write each output tensor Y to DIR/Y.bin after the run (raw row-major elements; NumPy: "
                  "fromfile(..., dtype).reshape(shape); bf16 as its 16 bits), creating DIR if it is not there")
      ->type_name("DIR");
  cmd->callback([options, &run] { run = [options] { return run_run(*options); }; });
}

}  // namespace tilec::tools
