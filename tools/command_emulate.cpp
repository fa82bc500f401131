// tools/command_emulate.cpp — `tilec emulate`: run the CUDA tilec emits on the CPU and compare
// every output with the interpreter's result for the same inputs.
//
//   1. Find the host C++ compiler (--host-cxx, $TILEC_HOST_CXX, c++/g++/clang++ on PATH) and,
//      with --cu, check the given file is a .cu tilec wrote.
//   2. Load the input and run the pipeline as `tilec compile` does (a copy of the IR as parsed
//      is kept for the reference); emit the .cu for --target unless --cu gives one.
//   3. Plan each kernel as the backend does and write one driver .cpp that #includes the .cu
//      and calls the launcher its KERNEL argument names (tools/emulate_driver.h gives the
//      protocol).
//   4. Build the driver with the runtime (tools/emulate_build.h; cached by content hash): one
//      program for the file's kernels, since each build compiles the whole .cu, and the same
//      program whichever kernels --kernel picks.
//   Then per kernel (every one, or --kernel NAME):
//   5. Make inputs from --seed, --dims and --scalar (as `tilec run`; --inputs DIR reads tensors
//      from DIR/X.bin as `tilec run` does), write them to files, and run the interpreter on the
//      parsed kernel for the expected outputs.
//   6. Run the program once per schedule (eager, lazy, then random with seeds S, S+1, ...),
//      forwarding its reports; map its exit status (tilec_emulate.h §6) to ours; compare each
//      output (tensor-core kernels with a wider tolerance: they sum in another order).
// Everything goes to a temporary directory, or to --keep DIR, which keeps the .cu, the
// driver, the program, the data files and a rerun script per kernel.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "backend/cuda/emit_kernel_body.h"
#include "backend/cuda/emit_harness.h"
#include "backend/cuda/kernel_plan.h"
#include "backend/cuda/register_layout.h"
#include "ir/clone.h"
#include "runtime/executor.h"
#include "runtime/interpreter/executor_tile_runner.h"
#include "runtime/interpreter/kernel_buffers.h"
#include "tools/commands.h"
#include "tools/emulate_build.h"
#include "tools/emulate_driver.h"
#include "tools/kernel_arguments.h"
#include "tools/load_input.h"
#include "tools/pipeline_driver.h"
#include "tools/subprocess.h"

namespace tilec::tools {

namespace {

namespace fs = std::filesystem;

struct EmulateOptions {
  std::string input;
  std::string kernel;
  std::string dims;
  std::vector<std::string> scalar_items;  // --scalar NAME=VALUE,...
  runtime::ScalarBindings scalars;
  std::vector<std::string> defines;
  DriverOptions driver;  // target, max-events, generator
  uint64_t seed = 1;
  int schedules = 2;
  int64_t sms = 4;
  unsigned workers = 1;
  std::string cu;          // --cu FILE.cu
  std::string host_cxx;    // --host-cxx PATH
  std::string keep;        // --keep DIR
  std::string inputs_dir;  // --inputs DIR
  double timeout = 300;
  bool no_hazards = false;
  bool verbose = false;
  CudaEmitOptions::PlainTiles plain_tiles = CudaEmitOptions::PlainTiles::registers;
  std::string kernel_prefix;  // --kernel-prefix P: the names the emitted (or --cu) file gives the kernels
};

// Outputs of kernels with `mma` may differ in the last bits: tensor cores sum the K products in
// another order than the interpreter (the same bound as the harness, backend/cuda/emit_harness.cpp).
constexpr runtime::Tolerance kMmaTolerance = {1e-2, 1e-2};

// The work directory: --keep DIR (kept), or a temporary one removed at the end.
struct WorkDirectory {
  fs::path path;
  bool keep = false;
  std::optional<RemovedOnSignal> on_signal;  // a temporary one is removed when a signal stops tilec too
  ~WorkDirectory() {
    std::error_code ignored;
    if (!keep && !path.empty()) fs::remove_all(path, ignored);
  }
};

bool make_work_directory(const EmulateOptions& options, WorkDirectory& work) {
  std::error_code error;
  if (!options.keep.empty()) {
    work.keep = true;
    fs::create_directories(options.keep, error);
    work.path = fs::absolute(options.keep, error);
    if (error || !fs::is_directory(work.path)) {
      fmt::print(stderr, "tilec: error: --keep {}: cannot create that directory\n", options.keep);
      return false;
    }
    return true;
  }
  std::string pattern = (fs::temp_directory_path() / "tilec-emulate.XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    fmt::print(stderr, "tilec: error: cannot create a temporary directory: {}\n", std::strerror(errno));
    return false;
  }
  work.path = pattern;
  work.on_signal.emplace(work.path);
  // The compilers' temporary files (gcc's cc*.s) go inside it too, so a signal that stops tilec
  // mid-compile leaves none behind in $TMPDIR: the handler removes this directory once the
  // compilers are gone.
  const fs::path temporaries = work.path / "tmp";
  if (fs::create_directory(temporaries, error)) set_children_temporary_directory(temporaries);
  return true;
}

// Phase 1: a --cu file must exist and carry tilec's header line.
// --cu's file: written by tilec, and for the target its header names ("//   target:   sm_100a"),
// which a run without --target takes (with another --target, the architecture guard would trap).
bool check_given_cu(const std::string& path, DriverOptions& driver) {
  std::ifstream in(path);
  if (!in || fs::is_directory(path)) {
    fmt::print(stderr, "tilec: error: --cu {}: cannot open that file\n", path);
    return false;
  }
  std::string line;
  std::getline(in, line);
  if (line.find("Generated by tilec") == std::string::npos) {
    fmt::print(stderr, "tilec: error: {} was not written by tilec (its first line lacks \"Generated by tilec\"); "
               "--cu runs a .cu from `tilec compile`, edited or not\n", path);
    return false;
  }
  const std::string marker = "//   target:";
  for (int i = 0; i < 8 && std::getline(in, line); ++i) {
    if (line.rfind(marker, 0) != 0) continue;
    std::istringstream words(line.substr(marker.size()));
    std::string name;
    words >> name;
    const target::Target* recorded = target::find_target(name);
    if (!recorded) break;
    if (driver.target_given && driver.target != recorded) {
      fmt::print(stderr, "tilec: error: --cu {} was compiled for {}, and --target is {}: give --target {} (or "
                 "compile it for {})\n", path, recorded->name, driver.target->name, recorded->name,
                 driver.target->name);
      return false;
    }
    driver.target = recorded;
    driver.target_given = true;
    break;
  }
  // A harness's main() and its cudaMalloc calls are for a GPU: the host compiler stopped at them
  // with its own error (a hunt).
  while (std::getline(in, line))
    if (line.rfind("// Harness (--emit-harness)", 0) == 0) {
      fmt::print(stderr, "tilec: error: --cu {} was compiled with --emit-harness, whose check program runs on a GPU; "
                 "compile it without --emit-harness for tilec emulate\n", path);
      return false;
    }
  return true;
}

// A run: when asynchronous operations take effect, and which end of each allocation a guard page
// borders (`end` in the even-numbered runs, `start` in the odd ones: the default two runs check
// both ends of every tensor).
struct Schedule {
  std::string policy;
  uint64_t seed = 1;
  std::string bounds = "end";
  std::string describe() const { return policy == "random" ? fmt::format("random (seed {})", seed) : policy; }
};

std::vector<Schedule> schedules(const EmulateOptions& options) {
  std::vector<Schedule> result;
  for (int i = 0; i < options.schedules; ++i) {
    if (i == 0) result.push_back({"eager", options.seed});
    else if (i == 1) result.push_back({"lazy", options.seed});
    else result.push_back({"random", options.seed + static_cast<uint64_t>(i - 2)});
    result.back().bounds = i % 2 == 0 ? "end" : "start";
  }
  return result;
}

// Phase 6: what the program's exit says; 0 when the outputs are there to compare.
int explain_exit(const ProcessOutcome& outcome, const EmulateOptions& options, const std::string& where,
                 const WorkDirectory& work) {
  if (!outcome.started) {
    fmt::print(stderr, "tilec: error: {}: {}\n", where, outcome.output);
    return 1;
  }
  if (outcome.timed_out) {
    fmt::print(stderr, "tilec: error: {}: emulation did not finish in {} s (raise --timeout, or look for a loop that "
               "never ends)\n", where, options.timeout);
    return 1;
  }
  if (outcome.signal) {
    const char* name = strsignal(outcome.signal);
    fmt::print(stderr, "tilec: error: {}: the emulated program crashed (signal {}: {})\n", where, outcome.signal,
               name ? name : "unknown");
    return 1;
  }
  const char* what = nullptr;
  switch (outcome.exit_status) {
    case 0: return 0;
    // 1 is also how a sanitizer the host compiler was given (TILEC_HOST_CXX) stops the program.
    case 1: what = "the emulated program rejected its arguments, or a sanitizer stopped it (see above)"; break;
    case 2: what = "the emulation runtime failed (an emulator bug; see above)"; break;
    case 3: what = "the emulator reported a hazard (see above)"; break;
    case 4: what = "the emulator stopped the kernel: a deadlock, or a misuse it cannot run past (see above)"; break;
    case 5: what = "the launcher returned an error (see above)"; break;
    case 6: what = "the kernel accessed memory it may not (see above)"; break;
    default: break;
  }
  if (what) fmt::print(stderr, "tilec: error: {}: {}\n", where, what);
  else fmt::print(stderr, "tilec: error: {}: the emulated program exited with status {}\n", where, outcome.exit_status);
  if (!work.keep && options.cu.empty() && (outcome.exit_status == 3 || outcome.exit_status == 4))
    fmt::print(stderr, "tilec: note: rerun with --keep DIR to keep the .cu the report names\n");
  return 1;
}

// An assert of the kernel's, or a negative grid extent, refused the launch in the interpreter:
// the emulated launcher must refuse it too (a check it lacks would be a tilec bug). Returns 1
// either way.
int expect_refused_launch(const runtime::LaunchResult& reference, std::vector<std::string> command,
                          const EmulateOptions& options, const std::string& name, const WorkDirectory& work) {
  const std::string where =
      reference.location.known()
          ? fmt::format("{}:{}:{}", options.input, reference.location.line, reference.location.column)
          : options.input;
  command.insert(command.end(), {"--policy", "eager", "--sms", std::to_string(options.sms)});
  ProcessOutcome outcome = run_capturing(command, work.path);
  // Exit 5 is any launcher error: a refused launch is cudaErrorInvalidValue with no detail.
  if (outcome.started && !outcome.timed_out && outcome.signal == 0 && outcome.exit_status == 5 &&
      outcome.output.find("the launcher returned cudaErrorInvalidValue\n") != std::string::npos) {
    fmt::print(stderr, "{}: error: kernel {}: {}; the emulated launcher refuses it too (cudaErrorInvalidValue)\n",
               where, name, reference.message);
    return 1;
  }
  fmt::print(stderr, "{}{}: error: kernel {}: {}, but the emulated launcher did not refuse the launch (exit status "
             "{}): a tilec bug, the launcher lacks the check\n", outcome.output, where, name, reference.message,
             outcome.exit_status);
  return 1;
}

// The name the work files take from the input: its stem, or `stdin` for `-` (not `-.cu`).
std::string input_stem(const std::string& input) {
  return input == "-" ? std::string("stdin") : fs::path(input).stem().string();
}

struct KernelJob {
  const Operation* lowered = nullptr;
  const Operation* parsed = nullptr;
  const DiagnosticEngine* diagnostics = nullptr;  // the input's: a failure is reported at its op
  cuda::KernelPlan plan;
};

// Phases 5–6 for one kernel, run by `program` (the file's emulated kernels).
int emulate_kernel(const KernelJob& job, const EmulateOptions& options, const fs::path& program, const fs::path& cu,
                   const runtime::SymbolBindings& given, runtime::Executor& executor, const WorkDirectory& work) {
  const std::string& name = job.plan.name;  // the emitted kernel's: its files and its launcher
  const std::string shown = kernel_name(*job.lowered);  // the source's, which --kernel takes

  // Phase 5.
  std::string dims;
  runtime::SymbolBindings symbols = bind_kernel_symbols(*job.lowered, given, dims);
  runtime::KernelBuffers inputs;
  std::string message;
  if (!runtime::make_kernel_buffers(*job.lowered, symbols, options.seed, inputs, message, options.scalars)) {
    fmt::print(stderr, "tilec: error: kernel {}: {}\n", shown, message);
    return 1;
  }
  if (!options.inputs_dir.empty() && !read_given_inputs(options.inputs_dir, *job.lowered, inputs, shown)) return 1;
  if (std::string scalars = inputs.describe_scalars(); !scalars.empty())
    fmt::print("kernel {}: scalars {}\n", shown, scalars);
  fs::path data = work.path / name;
  std::error_code error;
  fs::create_directories(data, error);
  for (size_t i = 0; i < inputs.names.size(); ++i) {
    const std::vector<uint8_t>& bytes = inputs.tensors[i].bytes();
    if (inputs.is_tensor[i] && !write_binary_file(data / driver_input_file(i), bytes.data(), bytes.size())) return 1;
  }
  runtime::ExecutorTileRunner runner(executor);
  runtime::SerialTileRunner in_order;  // tiles adding to a float tensor: one order (KernelBuffers::adds_floats)
  runtime::LaunchOptions launch;
  launch.runner = inputs.adds_floats() ? static_cast<runtime::TileRunner*>(&in_order) : &runner;
  launch.sm_count = options.sms;
  // --timeout bounds the interpreter's reference run too (it ran nested loops without end).
  launch.deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(options.timeout));
  launch.deadline_seconds = options.timeout;
  runtime::KernelBuffers expected = inputs;
  auto reference_arguments = expected.arguments();
  runtime::LaunchResult reference = runtime::run_kernel(*job.parsed, reference_arguments, symbols, launch);
  bool tensor_cores = contains(job.parsed->region(), OpKind::mma);
  // Register tiles add a float sum's terms in another order (backend/cuda/register_layout.h).
  // Whether the kernel has them is the emitter's choice on the kernel it emits: the parsed one may
  // still hold a reshape a pass turns into a plain column load (found by a helper running random
  // kernels: the strict f32 tolerance was taken, and a correct row sum was reported as differing).
  bool reassociated_sums = options.plain_tiles == CudaEmitOptions::PlainTiles::registers &&
                           cuda::has_float_sum(*job.parsed) && cuda::choose_register_layout(*job.lowered).layout;

  std::vector<std::string> base = {program.string(), cu.string(), data.string(), name};
  for (const std::string& value : driver_value_arguments(job.plan, inputs)) base.push_back(value);
  // The runs name a --cu file as the user gave it (`gemm.cu:842`, as the .tile's path), the rerun
  // script by its absolute path, which holds wherever it is run from.
  std::vector<std::string> run_base = base;
  if (!options.cu.empty()) run_base[1] = options.cu;
  if (work.keep) {
    const fs::path script_path = work.path / ("run_" + name + ".sh");
    {
      std::ofstream script(script_path);
      script << "#!/bin/sh\n# Reruns kernel " << name << " as tilec emulate did (schedule " << schedules(options)[0].policy
             << "); add --policy lazy|random --seed S to try others, --bounds start to guard the tensors' starts.\n"
             << shell_words(base) << " --policy " << schedules(options)[0].policy << " --sms " << options.sms
             << " --workers " << options.workers << (options.no_hazards ? " --no-hazards" : "") << " \"$@\"\n";
    }
    fs::permissions(script_path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add, error);
  }

  if (!reference.ok && reference.refused_launch) return expect_refused_launch(reference, base, options, shown, work);
  if (!reference.ok) {
    report_launch_failure(*job.diagnostics, reference, shown + " as parsed (the reference)");
    return 1;
  }

  // Phase 6. Every schedule runs, even after one failed: a hazard should be reported in each.
  int overall = 0;
  for (const Schedule& schedule : schedules(options)) {
    std::vector<std::string> command = run_base;
    command.insert(command.end(), {"--policy", schedule.policy, "--seed", std::to_string(schedule.seed), "--bounds",
                                   schedule.bounds, "--sms", std::to_string(options.sms), "--workers",
                                   std::to_string(options.workers)});
    if (options.no_hazards) command.push_back("--no-hazards");
    for (size_t position : inputs.outputs) fs::remove(data / driver_output_file(position), error);
    if (options.verbose) fmt::print(stderr, "tilec: running {}\n", shell_words(command));
    std::string where = fmt::format("kernel {}, schedule {}", shown, schedule.describe());
    auto start = std::chrono::steady_clock::now();
    ProcessOutcome outcome = run_forwarding(command, options.timeout);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (int status = explain_exit(outcome, options, where, work); status != 0) {
      if (status != 1) return status;
      overall = 1;
      continue;
    }

    runtime::KernelBuffers actual = inputs;
    std::string results;
    int status = 0;
    for (size_t position : inputs.outputs) {
      runtime::HostBuffer& buffer = actual.tensors[position];
      // A missing file reads as no bytes: the size check below says what the program wrote.
      std::vector<uint8_t> bytes =
          read_binary_file(data / driver_output_file(position)).value_or(std::vector<uint8_t>());
      std::string output = inputs.names[position].substr(inputs.names[position].rfind('%') == 0 ? 1 : 0);
      if (bytes.size() != buffer.bytes().size()) {
        fmt::print(stderr, "tilec: error: {}: the emulated program wrote {} bytes of {}, expected {}\n", where,
                   bytes.size(), output, buffer.bytes().size());
        status = 1;
        continue;
      }
      buffer.bytes() = std::move(bytes);
      std::optional<runtime::Tolerance> tolerance;
      if (!is_float(buffer.element())) {
        // Integers exactly, as the harness compares them, but for one made whole from a float the
        // GPU sums in another order (one step off). They had the floats' tolerance: a bitcast hash
        // 200000 off, or an exponent field off by one, passed (an adversarial helper's edits).
        const bool rounded = cuda::stores_rounded_floats(*job.parsed, job.parsed->region().argument(position),
                                                         reassociated_sums);
        tolerance = runtime::Tolerance{0.0, rounded ? 1.0 : 0.0};
      } else if (tensor_cores) {
        runtime::Tolerance own = runtime::default_tolerance(buffer.element());
        tolerance = runtime::Tolerance{std::max(own.relative, kMmaTolerance.relative),
                                       std::max(own.absolute, kMmaTolerance.absolute)};
      } else if (reassociated_sums) {  // normwise: backend/cuda/register_layout.h
        runtime::Tolerance own = runtime::default_tolerance(buffer.element());
        tolerance = runtime::Tolerance{std::max(own.relative, cuda::kReassociatedSumTolerance), own.absolute,
                                       cuda::kReassociatedSumTolerance};
      }
      runtime::BufferComparison comparison = runtime::compare_buffers(
          expected.tensors[position], buffer, runtime::output_tolerance(inputs, position, tolerance));
      // A mismatch's details go to stderr once; the schedule's closing line only names it.
      results += fmt::format("{}{} {}", results.empty() ? "" : ", ", output,
                             comparison.ok() ? comparison.summary() : "differs (error above)");
      if (!comparison.ok()) {
        fmt::print(stderr, "tilec: error: {}: {} differs from the interpreter's result: {}\n", where, output,
                   comparison.summary());
        // Given inputs may cancel or overflow in one order and not the other (a helper's 1e30,
        // 62 ones and -1e30: 56 against 59), which the bound does not allow for.
        if (reassociated_sums && !tensor_cores && is_float(buffer.element()) && !options.inputs_dir.empty())
          fmt::print(stderr, "  note: this kernel's float sums add in another order in the register form than in the "
                             "interpreter, and the bound they are compared within takes the outputs' magnitude for the "
                             "terms': inputs whose terms cancel or overflow differ by more; rerun with --plain-tiles "
                             "shared, which adds in the interpreter's order\n");
        status = 1;
      }
    }
    fmt::print("kernel {} [{}] {}, schedule {}: {}, {:.2f} s\n", shown, dims, options.driver.target->name,
               schedule.describe(), results.empty() ? "no outputs" : results, seconds);
    std::fflush(stdout);
    if (status != 0) overall = 1;
  }
  return overall;
}

int run_emulate(EmulateOptions options) {
  // Phase 1.
  std::map<std::string, std::string> defines;
  if (!parse_defines(options.defines, defines)) return 1;
  runtime::SymbolBindings given;
  if (!parse_dims(options.dims, given)) return 1;
  if (!parse_scalars(options.scalar_items, options.scalars)) return 1;
  auto compiler = find_host_compiler(options.host_cxx);
  if (!compiler) return 1;
  if (!options.cu.empty() && !check_given_cu(options.cu, options.driver)) return 1;

  // Phase 2.
  LoadedInput input = load_input(options.input, defines);
  if (!input.module) return input.internal_error ? 2 : 1;
  std::unique_ptr<Module> parsed = clone_module(*input.module);
  adopt_recorded_target(*input.module, options.driver);
  if (int status = run_pipeline(*input.module, *input.diagnostics, options.driver); status != 0) return status;
  const Module& module = *input.module;
  std::optional<std::string> cuda;
  if (options.cu.empty()) {
    CudaEmitOptions emit_options;
    emit_options.target = options.driver.target;
    emit_options.source_name = options.input;
    emit_options.plain_tiles = options.plain_tiles;
    emit_options.kernel_prefix = options.kernel_prefix;
    emit_options.passes = passes_run(*input.module);
    cuda = emit_cuda_reporting(module, emit_options, *input.diagnostics);
    if (!cuda) return 1;
  }

  // Phase 3: every kernel is planned and in the driver (the program is the file's, whichever
  // kernels --kernel picks: one cache entry); `selected` are the ones emulated.
  std::vector<KernelJob> jobs;
  std::vector<size_t> selected;  // into jobs
  // As the emitter gives them.
  const std::vector<std::string> names = cuda::kernel_names(module, options.kernel_prefix);
  if (!options.kernel.empty() &&
      std::none_of(module.kernels().begin(), module.kernels().end(),
                   [&](const auto& kernel) { return kernel_name(*kernel) == options.kernel; })) {
    report_unknown_kernel(options.input, options.kernel, module);
    return 1;
  }
  for (size_t k = 0; k < module.kernels().size(); ++k) {
    const auto& kernel = module.kernels()[k];
    KernelJob job;
    job.lowered = kernel.get();
    job.diagnostics = input.diagnostics.get();
    job.parsed = parsed->find_kernel(kernel_name(*kernel));
    if (!job.parsed) {
      fmt::print(stderr, "tilec: internal error: kernel {} disappeared in the pipeline\n", kernel_name(*kernel));
      return 2;
    }
    size_t reported = input.diagnostics->diagnostics().size();
    auto plan = cuda::compute_kernel_plan(*kernel, *input.diagnostics, names[k]);
    if (!plan) {
      for (size_t i = reported; i < input.diagnostics->diagnostics().size(); ++i)
        fmt::print(stderr, "{}", input.diagnostics->render(input.diagnostics->diagnostics()[i]));
      return 1;
    }
    job.plan = std::move(*plan);
    jobs.push_back(std::move(job));
    if (options.kernel.empty() || kernel_name(*kernel) == options.kernel) selected.push_back(jobs.size() - 1);
  }
  if (!check_inputs_directory(options.inputs_dir)) return 1;
  if (selected.size() > 1 && !options.inputs_dir.empty()) {
    fmt::print(stderr, "tilec: error: {} has {} kernels, and --inputs names files after parameters: choose one "
               "with --kernel NAME\n", options.input, selected.size());
    return 1;
  }
  std::vector<const Operation*> kernels;
  for (size_t job : selected) kernels.push_back(jobs[job].lowered);
  warn_unused_dims(given, kernels);
  warn_unused_scalars(options.scalars, kernels);

  WorkDirectory work;
  if (!make_work_directory(options, work)) return 1;
  fs::path cu;
  std::error_code error;
  if (options.cu.empty()) {
    cu = work.path / (input_stem(options.input) + ".cu");
    if (!write_binary_file(cu, cuda->data(), cuda->size())) return 1;
  } else {
    cu = fs::absolute(options.cu, error).lexically_normal();  // `dir/./k.cu` as `dir/k.cu` in messages
  }
  // The driver #includes the .cu by this path, where a double quote or a line break cannot stand.
  if (cu.string().find_first_of("\"\n") != std::string::npos) {
    fmt::print(stderr, "tilec: error: the .cu's path {} holds a double quote or a line break, which the emulation "
                       "driver's #include cannot spell: move the file, or emulate without --cu\n", cu.string());
    return 1;
  }
  std::string given_cu;  // --cu: each kernel's launcher must be there, with the parameters the .tile gives it
  if (!options.cu.empty()) {  // check_given_cu opened it; a file gone since reads as empty, as before
    std::vector<uint8_t> bytes = read_binary_file(options.cu).value_or(std::vector<uint8_t>());
    given_cu.assign(bytes.begin(), bytes.end());
  }
  for (KernelJob& job : jobs) {
    if (!options.cu.empty()) {
      const std::string launcher =
          fmt::format("launch_{}({}, cudaStream_t", job.plan.name, cuda::parameter_list(job.plan));
      if (given_cu.find(launcher) == std::string::npos) {
        fmt::print(stderr, "tilec: error: --cu {} has no `{} stream)`: it was not compiled from {} as it is now "
                   "(recompile it with `tilec compile`: the emulated program calls every kernel's launcher, "
                   "whichever --kernel runs){}\n",
                   options.cu, launcher, options.input,
                   options.kernel_prefix.empty() ? "; a file compiled with --kernel-prefix P needs --kernel-prefix P "
                                                   "here too"
                                                 : "");
        return 1;
      }
    }
    // The driver calls the launcher with the backend's own parameter list; check they agree.
    std::vector<std::string> declared;
    for (const cuda::LaunchParameter& parameter : cuda::launch_parameters(job.plan))
      declared.push_back(parameter.type + " " + parameter.name);
    if (fmt::format("{}", fmt::join(declared, ", ")) != cuda::parameter_list(job.plan)) {
      fmt::print(stderr, "tilec: internal error: kernel {}: launch_parameters and parameter_list disagree\n",
                 job.plan.name);
      return 2;
    }
  }
  // One driver and one program for every kernel: each compile of a driver compiles the whole .cu.
  std::vector<const cuda::KernelPlan*> plans;
  for (const KernelJob& job : jobs) plans.push_back(&job.plan);
  const std::string stem = "emulate_" + input_stem(options.input);
  const fs::path driver = work.path / (stem + ".cpp");
  const std::string text = driver_source(plans, cu.string());
  if (!write_binary_file(driver, text.data(), text.size())) return 1;

  // Phase 4.
  EmulationBuild build{*compiler, options.driver.target, cu, driver, driver_source(plans, ""), options.verbose};
  std::optional<fs::path> program = build_emulated_program(build);
  if (!program) return 1;
  if (work.keep) {
    fs::path kept = work.path / stem;
    fs::copy_file(*program, kept, fs::copy_options::overwrite_existing, error);
    if (!error) program = kept;
  }

  // Phases 5–6.
  runtime::Executor executor(runtime::ExecutorOptions{});
  for (size_t job : selected)
    if (int status = emulate_kernel(jobs[job], options, *program, cu, given, executor, work); status != 0) return status;
  fmt::print("ok\n");
  return 0;
}

}  // namespace

void add_emulate_command(CLI::App& app, CommandRunner& run) {
  auto options = std::make_shared<EmulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "emulate",
      "Run the CUDA tilec emits on the CPU: build the .cu with a host C++ compiler against tilec's\n"
      "emulation runtime (cached), run it on random inputs under several schedules of its asynchronous\n"
      "operations, report hazards and deadlocks by .cu and .tile line, and compare every output with the\n"
      "interpreter's result. No GPU needed. Builds are cached in $TILEC_CACHE_DIR, else\n"
      "$XDG_CACHE_HOME/tilec, else ~/.cache/tilec; the first run compiles the runtime (a minute or\n"
      "more). See docs/emulation.md.");
  cmd->add_option("input", options->input, "the .tile source or .tir IR text (the reference, and the kernel's parameters; '-' reads stdin)")
      ->required();
  add_kernel_option(*cmd, options->kernel, "emulate");
  add_extent_options(*cmd, options->dims, options->scalar_items, "M=200,N=136,K=72");
  add_pipeline_options(*cmd, options->driver, options->defines);
  add_plain_tiles_option(*cmd, options->plain_tiles);
  add_kernel_prefix_option(*cmd, options->kernel_prefix);
  add_seed_option(*cmd, options->seed, "seed of the random inputs, and of the first random schedule (default 1)");
  cmd->add_option("--schedules", options->schedules,
                  "how many runs: eager, lazy, then random with seeds S, S+1, ... (default 2)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--sms", options->sms, "the SM count the launcher sees (default 4)")->check(CLI::Range(1, 4096));
  cmd->add_option("--workers", options->workers, "threads running CTAs in the emulator (default 1)")
      ->check(CLI::Range(1u, 64u));
  cmd->add_option("--cu", options->cu,
                  "run this .cu (one `tilec compile` wrote, edited by hand or not) instead of emitting one, for the "
                  "target its header names (--target may not name another)");
  cmd->add_option("--host-cxx", options->host_cxx,
                  "the host C++ compiler (default: $TILEC_HOST_CXX, else c++, g++ or clang++ on PATH)");
  cmd->add_option("--inputs", options->inputs_dir,
                  "read tensor parameter X from DIR/X.bin where that file exists (raw row-major elements, as "
                  "NumPy's tofile writes them; the others stay random), for the emulated CUDA and the interpreter")
      ->type_name("DIR");
  cmd->add_option("--keep", options->keep,
                  "keep the .cu, the driver and program, the data files and a rerun script per kernel in this "
                  "directory")
      ->type_name("DIR");
  add_timeout_option(*cmd, options->timeout,
                     "seconds one run (the emulated program, or the interpreter's reference run) may take before it "
                     "is stopped (default 300)");
  cmd->add_flag("--no-hazards", options->no_hazards,
                "skip the happens-before checker (faster; deadlocks are still reported)");
  cmd->add_flag("-v,--verbose", options->verbose, "say what is compiled or taken from the cache, and each command");
  cmd->callback([options, &run] { run = [options] { return run_emulate(*options); }; });
}

}  // namespace tilec::tools
