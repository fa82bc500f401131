// backend/cuda/emit_harness.cpp — the `--emit-harness` part of a generated .cu.
//
// For each kernel it writes:
//   1. `NAME_reference`, a naive kernel: one thread runs a whole tile, op after op, with the
//      tile buffers in a global scratch slot instead of shared memory (emit_kernel_body.cpp in
//      `reference` mode, so the arithmetic is the same expression and the bits must agree).
//      A tensor-core kernel's final IR (warp_specialize, mbarriers, stage buffers) has no such
//      reading: its reference is made from the same kernel in the module as it was before the
//      scheduling passes (`reference`, kept by tilec compile right after fold-constants), while
//      the check still calls the final module's launcher — the parameters are the same;
//   2. `check_NAME`, which fills every tensor with deterministic pseudo-random values (a
//      splitmix64 stream seeded by the parameter's position), runs the launcher and the
//      reference on copies of the written tensors, compares them within a tolerance per element
//      type, prints the largest absolute and relative errors and PASS/FAIL, then times the
//      launcher with CUDA events;
// and a main() running every check. `./a.out NAME=VALUE ...` sets a dimension symbol or a
// scalar parameter (defaults: 1000 for dimensions, 0.5 for float scalars, 3 for integers).
//
// Kernels with `mma` (tensor-core or not) also get: a __device__ counter NAME_reference_flops
// the reference adds 2·M·N·K to per mma of a whole tile, so check_NAME prints TFLOP/s next to
// the time; a `check=0` argument that runs the reference in count-only mode (no arithmetic,
// no comparison: time only); and a tolerance of 1e-2·(|want| + 1) on the written tensors,
// since the tensor cores sum the K products in another order than the reference.
#include "backend/cuda/emit_harness.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "backend/cuda/cuda_syntax.h"
#include "backend/cuda/emit_kernel_body.h"
#include "backend/cuda/register_layout.h"
#include "ir/diagnostic.h"

namespace tilec::cuda {

namespace {

// A scalar parameter's NAME as the source spells it, which the harness's NAME=VALUE sets (the C++
// name may differ).
const std::string& source_name(const ParamPlan& param) {
  return param.value->name_hint().empty() ? param.name : param.value->name_hint();
}

constexpr int64_t kDefaultDimension = 1000;
constexpr int64_t kReferenceSlots = 1024;  // tiles the reference runs at once (scratch slots)

struct Tolerance {
  double absolute, relative;
};

Tolerance tolerance(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f32: return {1e-5, 1e-5};
    case ScalarKind::f16: return {1e-3, 1e-3};
    case ScalarKind::bf16: return {1e-2, 1e-2};
    case ScalarKind::f8e4m3: return {0.125, 0.125};
    case ScalarKind::f8e5m2: return {0.25, 0.25};
    default: return {0.0, 0.0};
  }
}

// Outputs of a kernel with `mma`: the launcher may sum the K products in any order (the tensor
// cores do), so the error grows like sqrt(K)·2^-24·|sum|; with inputs in [-1, 1) that stays far
// below 1e-2·(|want| + 1) for K up to 65536, while a lost or doubled K block moves an element by
// about sqrt(64)/3 ≈ 2.7.
constexpr Tolerance kMmaTolerance = {1e-2, 1e-2};

// The most the order of CTAs adding to a float tensor may move an element, as a share of max|want|.
constexpr double kAddedInAnyOrderCap = 0.1;

// Unit roundoff of a float element type: half the distance from 1 to the next value.
double unit_roundoff(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f16: return 0x1p-11;
    case ScalarKind::bf16: return 0x1p-8;
    case ScalarKind::f8e4m3: return 0x1p-4;
    case ScalarKind::f8e5m2: return 0x1p-3;
    default: return 0x1p-24;
  }
}

// Whether the tile `value` is computed from a float the launcher may sum in another order than the
// reference: a float mma's result (the tensor cores' order of the K products) or, with
// `register_sums`, a float reduce_sum (the register form's). Follows operands through ops, and
// into a loop's or an if's regions (any such op there counts); stops at anything not a tile. A
// worklist, not recursion: a chain of thousands of ops must not exhaust the stack.
bool from_reordered_float(const Value* value, bool register_sums) {
  auto reorders = [&](const Operation& candidate) {
    return (candidate.kind() == OpKind::mma && is_float(candidate.result(0)->type().element())) ||
           (register_sums && candidate.kind() == OpKind::reduce_sum &&
            is_float(candidate.operand(0)->type().element()));
  };
  std::vector<const Value*> pending = {value};
  std::unordered_set<const Value*> seen;
  while (!pending.empty()) {
    const Value* next = pending.back();
    pending.pop_back();
    if (!next->type().is_tile() || !seen.insert(next).second) continue;
    const Operation* op = next->is_argument() ? next->owner_region()->parent_op() : next->defining_op();
    if (!op || (next->is_argument() && op->kind() != OpKind::for_ && op->kind() != OpKind::if_)) continue;
    bool found = reorders(*op);
    for (size_t i = 0; i < op->num_regions() && !found; ++i)
      walk(op->region(i), [&](const Operation& inner) { found = found || reorders(inner); });
    if (found) return true;
    pending.insert(pending.end(), op->operands().begin(), op->operands().end());
  }
  return false;
}

// The elements of `tensor` each run of the kernel's body adds to (`+=`): every adding store's tile,
// counted once (a store in a loop adds more).
int64_t elements_added_per_tile(const Operation& kernel, const Value* tensor) {
  int64_t elements = 0;
  walk(kernel.region(), [&](const Operation& op) {
    std::optional<TensorAccess> access = tensor_access(op);
    if (access && access->writes && access->tensor == tensor && store_combine(op) == StoreCombine::add)
      elements += moved_tile(op)->type().element_count();
  });
  return elements;
}

// Whether an integer tile `value` is such a float (from_reordered_float) made whole: a cast of it
// (of its floor, its rounding), then integer elementwise ops and maxima and minima (which move at
// most as far as their operands). Not an integer chosen by a comparison of floats (an argmax, a
// count) or summed: its flip is no one step.
bool rounds_reordered_float(const Value* value, bool register_sums) {
  std::vector<const Value*> pending = {value};
  std::unordered_set<const Value*> seen;
  while (!pending.empty()) {
    const Value* next = pending.back();
    pending.pop_back();
    if (!next->type().is_tile() || next->type().element() == ScalarKind::i1 || !seen.insert(next).second) continue;
    const Operation* op = next->defining_op();
    if (!op) continue;
    if (op->kind() == OpKind::cast) {
      const Value* source = op->operand(0);
      if (!is_float(source->type().element())) pending.push_back(source);
      else if (from_reordered_float(source, register_sums)) return true;
    } else if (op->info().has(kElementwise) || op->kind() == OpKind::reduce_max || op->kind() == OpKind::reduce_min) {
      for (const Value* operand : op->operands())
        if (!is_float(operand->type().element())) pending.push_back(operand);
    }
  }
  return false;
}


// One kernel of the harness: the plan whose launcher it times (the final module's) and the plan
// its reference runs (the same one, or the kernel before scheduling for a tensor-core kernel).
struct HarnessKernel {
  const KernelPlan* launched = nullptr;
  const KernelPlan* reference = nullptr;
  bool counts_work = false;  // the reference has `mma`: it counts flops and honors check=0
};

constexpr const char* kHarnessHelpers = R"(// ---------------------------------------------------------------------------------------------
// Harness (--emit-harness): checks each kernel against its naive reference and times it.
//   nvcc -std=c++17 -gencode arch=compute_XX,code=sm_XX -o check THIS_FILE.cu && ./check [NAME=VALUE]...
// NAME=VALUE sets a dimension or a scalar; integers=1 fills float tensors with -1, 0 and 1.
// ---------------------------------------------------------------------------------------------
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#define HARNESS_CHECK(call)                                                                  \
  do {                                                                                       \
    const cudaError_t harness_status = (call);                                               \
    if (harness_status != cudaSuccess) {                                                     \
      std::printf("CUDA error: %s at %s:%d\n", cudaGetErrorString(harness_status), __FILE__, \
                  __LINE__);                                                                 \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

// The VALUE of `NAME=VALUE` on the command line, or nullptr.
static const char* harness_value(int argc, char** argv, const char* name) {
  const size_t length = std::strlen(name);
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], name, length) == 0 && argv[i][length] == '=') return argv[i] + length + 1;
  return nullptr;
}

// Ends the program: `NAME=VALUE` is not what `expected` says.
static void harness_refuse(const char* name, const char* value, const char* expected) {
  std::fprintf(stderr, "%s=%s: expected %s\n", name, value, expected);
  std::exit(2);
}

// A number `NAME=X`, or `fallback`.
static double harness_argument(int argc, char** argv, const char* name, double fallback) {
  const char* text = harness_value(argc, argv, name);
  if (!text) return fallback;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(value)) harness_refuse(name, text, "a number");
  return value;
}

// An integer scalar `NAME=N`, any 64-bit integer read exactly (a seed past 2^53 was rounded
// through a double), or `fallback`.
static long long harness_integer(int argc, char** argv, const char* name, long long fallback) {
  const char* text = harness_value(argc, argv, name);
  if (!text) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0) harness_refuse(name, text, "an integer");
  return value;
}

// An extent `NAME=N`, an integer from 0 to 2^62, or `fallback`.
static int64_t harness_extent(int argc, char** argv, const char* name, int64_t fallback) {
  const long long value = harness_integer(argc, argv, name, fallback);
  if (value < 0 || value > (1ll << 62)) harness_refuse(name, harness_value(argc, argv, name), "an extent, 0 to 2^62");
  return value;
}

// Deterministic pseudo-random values (splitmix64): floats in [-1, 1), integers in [-8, 8). With
// `integers` (the `integers=1` argument), floats too are whole: -1, 0 or 1.
template <typename T>
static void harness_fill(std::vector<T>& data, uint64_t seed, bool integers) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (T& x : data) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    if constexpr (std::is_same_v<T, bool>) x = u < 0.5;
    else if constexpr (std::is_integral_v<T>) x = static_cast<T>(static_cast<int64_t>(u * 16) - 8);
    else x = from_f32<T>(static_cast<float>(integers ? std::floor(3 * u) - 1 : 2 * u - 1));
  }
}

template <typename T>
static double harness_double(T x) {
  if constexpr (std::is_integral_v<T>) return static_cast<double>(x);
  else return static_cast<double>(to_f32(x));
}

// Prints the largest errors of `got` against `want`; true when every element is within
// absolute + normwise * max|want| (over the finite elements) + relative * |want|; NaN matches
// only NaN, and an infinity only the same infinity. A failure names its first element.
template <typename T>
static bool harness_compare(const char* name, const std::vector<T>& got, const std::vector<T>& want,
                            double absolute, double relative, double normwise = 0) {
  double max_absolute = 0, max_relative = 0, largest = 0;
  size_t outside = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::isfinite(harness_double(want[i]))) largest = std::max(largest, std::fabs(harness_double(want[i])));
  absolute += normwise * largest;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = harness_double(got[i]), w = harness_double(want[i]);
    bool within;
    if (std::isnan(g) || std::isnan(w)) {
      within = std::isnan(g) && std::isnan(w);
    } else if (std::isinf(g) || std::isinf(w)) {
      within = g == w;
    } else {
      const double error = std::fabs(g - w);
      max_absolute = std::max(max_absolute, error);
      if (w != 0) max_relative = std::max(max_relative, error / std::fabs(w));
      within = error <= absolute + relative * std::fabs(w);
    }
    if (!within && outside++ == 0) first = i;
  }
  std::printf("  %s: max abs error %.3g, max rel error %.3g, %zu of %zu elements outside tolerance: %s\n",
              name, max_absolute, max_relative, outside, got.size(), outside == 0 ? "PASS" : "FAIL");
  if (outside > 0)
    std::printf("    first at element %zu (row-major): want %.9g, got %.9g\n", first, harness_double(want[first]),
                harness_double(got[first]));
  return outside == 0;
}

)";

std::string element_count(const KernelPlan& plan, const Value* tensor) {
  std::string text;
  for (const std::string& extent : plan.tensor_dims.at(tensor))
    text += (text.empty() ? "" : " * ") + fmt::format("static_cast<size_t>({})", extent);
  return text.empty() ? "1" : text;
}

// The check calls the kernel's launcher with the reference's names, by position: the two plans must
// agree in every parameter's type and constness (their names may differ: the tensor-core kernel
// renames parameters that meet its own locals, `row` to `row_1`, and the plain reference does not)
// and in their dimensions, which are named as the source names them in both.
bool same_parameter_types(const KernelPlan& a, const KernelPlan& b) {
  if (a.params.size() != b.params.size() || a.dim_names != b.dim_names) return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].value->type() != b.params[i].value->type() || a.params[i].written != b.params[i].written)
      return false;
  return true;
}

void emit_reference_kernel(const HarnessKernel& kernel, std::string& out) {
  const KernelPlan& plan = *kernel.reference;
  CodeWriter writer(out);
  std::string counting;  // the count-only switch, before the scratch parameters
  if (kernel.counts_work) {
    writer.line("// Work the reference did: 2·M·N·K per mma of a whole tile (padding included).");
    writer.line(fmt::format("__device__ unsigned long long {}_reference_flops = 0;", plan.name));
    writer.line("");
    counting = "bool count_only, ";
  }
  writer.line(fmt::format("// The naive reference for {}_kernel: one thread runs each tile, its tile buffers in a",
                          plan.name));
  writer.line(fmt::format("// {}-byte slot of `scratch` instead of shared memory.", plan.shared_bytes));
  {
    CodeWriter::Block function = writer.block(fmt::format(
        "__global__ void {}_reference({}{}{}unsigned char* scratch, int64_t slots) {{", plan.name,
        parameter_list(plan), plan.params.empty() && plan.dim_params.empty() ? "" : ", ", counting));
    writer.line("const int64_t slot = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;");
    writer.line("if (slot >= slots) return;");
    if (plan.shared_bytes > 0) {
      writer.line(fmt::format("unsigned char* const shared_memory = scratch + slot * {};", plan.shared_bytes));
      emit_buffer_declarations(plan, writer);
    }
    BodyEmitter body(plan, BodyMode::reference, writer);
    const auto& ops = plan.kernel->region().operations();
    size_t first = 0;
    for (; first < ops.size() && ops[first].get() != plan.grid && plan.grid; ++first) body.emit_op(*ops[first]);
    emit_tile_count(plan, /*with_scalar_ops=*/false, writer);
    CodeWriter::Block tiles =
        writer.block("for (int64_t tile_number = slot; tile_number < tile_count; tile_number += slots) {");
    for (size_t i = first; i < ops.size(); ++i) body.emit_op(*ops[i]);
  }
  writer.line("");
}

// harness_compare's tolerance arguments for the written tensor `param` (its element count in the
// variable `count`): "absolute, relative[, normwise]".
std::string comparison_tolerance(const HarnessKernel& kernel, const ParamPlan& param, const std::string& count) {
  const KernelPlan& plan = *kernel.reference;
  const ScalarKind element = param.value->type().element();
  // Float sums the launcher reassociates: the register form's (the bound of register_layout.h), or
  // the tensor cores' order of the K products.
  const bool reassociated = plan.register_tiles && has_float_sum(*plan.kernel);
  if (!is_float(element)) {
    // Exact, except that an integer rounded elementwise from such a float (floor, a cast) may
    // land one step off where the other order moves the float across an integer.
    return stores_rounded_floats(*plan.kernel, param.value, reassociated) ? "1, 0" : "0, 0";
  }
  Tolerance within = tolerance(element);
  if (kernel.counts_work)
    within = {std::max(within.absolute, kMmaTolerance.absolute), std::max(within.relative, kMmaTolerance.relative)};
  if (reassociated) within.relative = std::max(within.relative, kReassociatedSumTolerance);
  double normwise = reassociated ? kReassociatedSumTolerance : 0.0;
  std::string text = fmt::format("{}, {}", within.absolute, within.relative);
  if (!param.added) return normwise > 0 ? fmt::format("{}, {}", text, normwise) : text;
  // CTAs adding to a float tensor (+=) do so in any order, each sum rounded to the element type: up
  // to one unit roundoff of the running sum per tile adding to an element, about tiles x elements
  // added per tile / the tensor's elements (bf16 rows summed over 21 CTAs in another order than
  // the reference's differed by 0.5 in 37 on an H200). At most kAddedInAnyOrderCap of max|want|,
  // so that a sum over thousands of tiles still catches a lost or doubled one.
  normwise = std::max({normwise, within.relative, kReassociatedSumTolerance});
  return fmt::format("{}, std::max({}, std::min({}, std::ceil(static_cast<double>(tile_count) * {} / "
                     "std::max<double>({}, 1)) * {}))",
                     text, normwise, kAddedInAnyOrderCap, elements_added_per_tile(*plan.kernel, param.value), count,
                     unit_roundoff(element));
}

// `static int check_NAME(argc, argv)`: the inputs, the kernel and then its reference on copies of
// the written tensors, the comparison of each written tensor, the timing.
void emit_check(const HarnessKernel& kernel, std::string& out) {
  const KernelPlan& plan = *kernel.reference;
  const KernelPlan& launched = *kernel.launched;
  NameTable names = plan.names;
  CodeWriter writer(out);
  std::optional<CodeWriter::Block> function;
  function.emplace(writer.block(fmt::format("static int check_{}(int argc, char** argv) {{", plan.name)));
  std::string report_format, report_values;
  for (size_t i = 0; i < plan.dim_params.size(); ++i) {  // NAME= as the source spells it (the C++ name may differ)
    const std::string& dim = plan.dim_params[i];
    writer.line(fmt::format("const int64_t {} = harness_extent(argc, argv, \"{}\", {});", dim, plan.dim_names[i],
                            kDefaultDimension));
    report_format += fmt::format(" {}=%lld", plan.dim_names[i]);
    report_values += fmt::format(", static_cast<long long>({})", dim);
  }
  for (const ParamPlan& param : plan.params) {
    const Type& type = param.value->type();
    if (type.is_tensor()) continue;
    ScalarKind kind = type.element();
    std::string_view element = element_type(kind);
    std::string value = fmt::format("{}(argc, argv, \"{}\", {})",
                                    is_float(kind) ? "harness_argument" : "harness_integer", source_name(param),
                                    is_float(kind) ? "0.5" : "3");
    if (is_float(kind)) value = fmt::format("from_f32<{}>(static_cast<float>({}))", element, value);
    else if (kind == ScalarKind::i1) value = fmt::format("({} != 0)", value);
    else value = fmt::format("static_cast<{}>({})", element, value);
    writer.line(fmt::format("const {} {} = {};", element, param.name, value));
    report_format += fmt::format(" {}={}", source_name(param), is_float(kind) ? "%g" : "%lld");
    report_values += is_float(kind) ? fmt::format(", harness_double({})", param.name)
                                    : fmt::format(", static_cast<long long>({})", param.name);
  }
  std::string check = kernel.counts_work ? names.unique("check_reference") : "";
  if (kernel.counts_work) {
    writer.line("// check=0: time only (the reference then only counts its work).");
    writer.line(fmt::format("const bool {} = harness_argument(argc, argv, \"check\", 1) != 0;", check));
  }
  std::string integers = names.unique("integers");
  writer.line("// integers=1: float tensors hold -1, 0 and 1, so sums of products stay whole (exact in any order");
  writer.line("// while they fit the type's mantissa: an mma result cast to 8 bits then matches the reference's).");
  writer.line(fmt::format("const bool {} = harness_argument(argc, argv, \"integers\", 0) != 0;", integers));
  writer.line(fmt::format("std::printf(\"{}:{}\\n\"{});", plan.name, report_format, report_values));

  // Tensors: host data, device copies; written tensors get a second copy for the reference.
  std::vector<std::string> cleanup;
  std::string bytes_moved;
  std::vector<std::string> reference_arguments;
  std::unordered_map<const Value*, std::string> counts;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamPlan& param = plan.params[i];
    const Type& type = param.value->type();
    if (!type.is_tensor()) {
      reference_arguments.push_back(param.name);
      continue;
    }
    std::string_view element = element_type(type.element());
    std::string host = names.unique(param.name + "_host");
    std::string count = names.unique(param.name + "_count");
    counts[param.value] = count;
    writer.line(fmt::format("// {}: {}", param.name, type.to_string()));
    writer.line(fmt::format("const size_t {} = {};", count, element_count(plan, param.value)));
    writer.line(fmt::format("std::vector<{}> {}({});", element, host, count));
    writer.line(fmt::format("harness_fill({}, {}, {});", host, i + 1, integers));
    std::vector<std::string> copies = {param.name};
    if (param.written) copies.push_back(names.unique(param.name + "_reference"));
    for (const std::string& copy : copies) {
      writer.line(fmt::format("{}* {} = nullptr;", element, copy));
      writer.line(fmt::format("HARNESS_CHECK(cudaMalloc(&{}, std::max<size_t>({}, 1) * sizeof({})));", copy, count,
                              element));
      writer.line(fmt::format("HARNESS_CHECK(cudaMemcpy({}, {}.data(), {} * sizeof({}), cudaMemcpyHostToDevice));",
                              copy, host, count, element));
      cleanup.push_back(copy);
    }
    reference_arguments.push_back(copies.back());
    bytes_moved += (bytes_moved.empty() ? "" : " + ") + fmt::format("{} * sizeof({})", count, element);
  }
  for (const std::string& dim : plan.dim_params) reference_arguments.push_back(dim);
  if (kernel.counts_work) reference_arguments.push_back("!" + check);
  std::string arguments = argument_list(plan);  // the reference's names: same_parameter_types
  std::string separator = arguments.empty() ? "" : ", ";

  writer.line("// The kernel under test, then the reference on its own copies of the written tensors.");
  std::vector<std::string> asserts;  // a refused launch names them: the dims given may break one
  for (const Operation* op : plan.pre_grid)
    if (op->kind() == OpKind::assert_)
      asserts.push_back(fmt::format("`{}` (line {})", op->string_attr("text"), op->location().line));
  if (asserts.empty()) {
    writer.line(fmt::format("HARNESS_CHECK(launch_{}({}{}nullptr));", launched.name, arguments, separator));
  } else {
    writer.line(fmt::format("const cudaError_t launched = launch_{}({}{}nullptr);", launched.name, arguments,
                            separator));
    std::string text = fmt::format("the launcher refused the launch; the kernel's asserts must hold at these dims "
                                   "and scalars: {}", fmt::join(asserts, ", "));
    std::string literal;  // as a C++ string literal (a .tir's text may hold anything)
    for (char c : text) literal += c == '"' || c == '\\' ? std::string{'\\', c} : c == '\n' ? "\\n" : std::string{c};
    writer.line(fmt::format("if (launched == cudaErrorInvalidValue) std::printf(\"%s\\n\", \"{}\");", literal));
    writer.line("HARNESS_CHECK(launched);");
  }
  writer.line("HARNESS_CHECK(cudaDeviceSynchronize());");
  emit_tile_count(plan, /*with_scalar_ops=*/true, writer);
  writer.line(fmt::format("const int64_t slots = std::min<int64_t>(tile_count, {});", kReferenceSlots));
  writer.line("unsigned char* scratch = nullptr;");
  writer.line(fmt::format("HARNESS_CHECK(cudaMalloc(&scratch, std::max<size_t>(static_cast<size_t>(slots) * {}, 1)));",
                          plan.shared_bytes));
  cleanup.push_back("scratch");
  std::string flops = kernel.counts_work ? names.unique("reference_flops") : "";
  if (kernel.counts_work) {
    writer.line(fmt::format("unsigned long long {} = 0;", flops));
    writer.line(fmt::format("HARNESS_CHECK(cudaMemcpyToSymbol({}_reference_flops, &{}, sizeof({})));", plan.name,
                            flops, flops));
  }
  {
    CodeWriter::Block some = writer.block("if (slots > 0) {");
    std::string reference_list;
    for (const std::string& argument : reference_arguments) reference_list += argument + ", ";
    // An mma reference thread runs M·N·K multiply-adds per tile: 32 threads per block spread the
    // few tiles over more SMs.
    int reference_block = kernel.counts_work ? 32 : 128;
    writer.line(fmt::format(
        "TILEC_LAUNCH({0}_reference, static_cast<unsigned>((slots + {1}) / {2}), {2}, 0, nullptr, {3}scratch, slots);",
        plan.name, reference_block - 1, reference_block, reference_list));
    writer.line("HARNESS_CHECK(cudaGetLastError());");
    writer.line("HARNESS_CHECK(cudaDeviceSynchronize());");
  }
  if (kernel.counts_work)
    writer.line(fmt::format("HARNESS_CHECK(cudaMemcpyFromSymbol(&{}, {}_reference_flops, sizeof({})));", flops,
                            plan.name, flops));

  writer.line("bool pass = true;");
  {
    // Kernels that count work compare only with check=1.
    std::optional<CodeWriter::Block> checked;
    if (kernel.counts_work) checked.emplace(writer.block(fmt::format("if ({}) {{", check)));
    for (const ParamPlan& param : plan.params) {
      if (!param.written) continue;
      const Type& type = param.value->type();
      std::string_view element = element_type(type.element());
      const std::string& count = counts.at(param.value);
      std::string got = names.unique(param.name + "_got"), want = names.unique(param.name + "_want");
      writer.line(fmt::format("std::vector<{0}> {1}({2}), {3}({2});", element, got, count, want));
      writer.line(fmt::format("HARNESS_CHECK(cudaMemcpy({}.data(), {}, {} * sizeof({}), cudaMemcpyDeviceToHost));", got,
                              param.name, count, element));
      writer.line(
          fmt::format("HARNESS_CHECK(cudaMemcpy({}.data(), {}_reference, {} * sizeof({}), cudaMemcpyDeviceToHost));",
                      want, param.name, count, element));
      writer.line(fmt::format("pass = harness_compare(\"{}\", {}, {}, {}) && pass;", param.name, got, want,
                              comparison_tolerance(kernel, param, count)));
    }
    if (checked) {
      checked->next("} else {");
      writer.line("std::printf(\"  no comparison (check=0): the reference only counted the work\\n\");");
    }
  }

  writer.lines("// Timing: 3 warm-up launches, then the mean of 20.\n"
               "cudaEvent_t start, stop;\n"
               "HARNESS_CHECK(cudaEventCreate(&start));\n"
               "HARNESS_CHECK(cudaEventCreate(&stop));\n");
  writer.line(fmt::format("for (int repeat = 0; repeat < 3; ++repeat) HARNESS_CHECK(launch_{}({}{}nullptr));",
                          launched.name, arguments, separator));
  writer.line("HARNESS_CHECK(cudaEventRecord(start));");
  writer.line(fmt::format("for (int repeat = 0; repeat < 20; ++repeat) HARNESS_CHECK(launch_{}({}{}nullptr));",
                          launched.name, arguments, separator));
  writer.lines("HARNESS_CHECK(cudaEventRecord(stop));\n"
               "HARNESS_CHECK(cudaEventSynchronize(stop));\n"
               "float milliseconds = 0;\n"
               "HARNESS_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));\n"
               "const double seconds = milliseconds / 1000.0 / 20;\n");
  writer.line(fmt::format("const double bytes = static_cast<double>({});", bytes_moved.empty() ? "0" : bytes_moved));
  writer.lines("std::printf(\"  time: %.3f us per launch, %.1f GB/s (each tensor read or written once)\\n\",\n"
               "            seconds * 1e6, seconds > 0 ? bytes / seconds / 1e9 : 0.0);\n");
  if (kernel.counts_work)
    writer.lines(fmt::format(
        "std::printf(\"  %.2f TFLOP/s (%.4g flop per launch: 2*M*N*K of every mma on a whole tile, \"\n"
        "            \"edge tiles' padding included)\\n\",\n"
        "            seconds > 0 ? static_cast<double>({0}) / seconds / 1e12 : 0.0, static_cast<double>({0}));\n",
        flops));
  writer.lines("HARNESS_CHECK(cudaEventDestroy(start));\n"
               "HARNESS_CHECK(cudaEventDestroy(stop));\n");
  for (const std::string& pointer : cleanup) writer.line(fmt::format("HARNESS_CHECK(cudaFree({}));", pointer));
  writer.line(fmt::format("std::printf(\"{}: %s\\n\", pass ? \"PASS\" : \"FAIL\");", plan.name));
  writer.line("return pass ? 0 : 1;");
  function.reset();
  writer.line("");
}

}  // namespace

// (emit_harness.h) Through rounds_reordered_float.
bool stores_rounded_floats(const Operation& kernel, const Value* tensor, bool register_sums) {
  bool found = false;
  walk(kernel.region(), [&](const Operation& op) {
    std::optional<TensorAccess> access = tensor_access(op);
    if (!found && access && access->writes && access->tensor == tensor)
      found = rounds_reordered_float(moved_tile(op), register_sums);
  });
  return found;
}

bool emit_harness(const std::vector<KernelPlan>& plans, const Module* reference, DiagnosticEngine& diagnostics,
                  std::string& out) {
  // Pair each kernel with the plan its reference runs.
  std::deque<KernelPlan> reference_plans;
  std::vector<HarnessKernel> kernels;
  bool failed = false;
  for (const KernelPlan& plan : plans) {
    HarnessKernel kernel{&plan, &plan, false};
    // The harness's own NAME=VALUE flags: a dim or scalar of one of those names would set both.
    auto refuse_flag_name = [&](const std::string& name, const char* what) {
      if (name != "check" && name != "integers") return;
      diagnostics.error(plan.kernel->location(),
                        fmt::format("--emit-harness: kernel @{} has a {} named '{}', which the harness's own {}=1 "
                                    "flag also sets; rename it",
                                    kernel_name(*plan.kernel), what, name, name));
      failed = true;
    };
    for (const std::string& name : plan.dim_names) refuse_flag_name(name, "dimension");
    for (const ParamPlan& param : plan.params)
      if (!param.value->type().is_tensor())
        refuse_flag_name(source_name(param), "scalar parameter");
    if (plan.tensor_core) {
      const Operation* before = nullptr;
      if (reference)
        for (const auto& candidate : reference->kernels())
          if (kernel_name(*candidate) == kernel_name(*plan.kernel)) before = candidate.get();
      if (!before) {
        diagnostics.error(plan.kernel->location(),
                          fmt::format("--emit-harness: kernel @{} runs on the tensor cores, so its reference needs the "
                                      "kernel as it was before the scheduling passes (tilec compile keeps it from a "
                                      ".tile input or a .tir that stops at fold-constants)",
                                      kernel_name(*plan.kernel)));
        failed = true;
        continue;
      }
      std::optional<KernelPlan> planned = compute_kernel_plan(*before, diagnostics, plan.name);
      if (!planned) {
        failed = true;
        continue;
      }
      if (planned->tensor_core) {
        diagnostics.error(before->location(),
                          fmt::format("--emit-harness: the reference module's kernel @{} is already warp-specialized",
                                      kernel_name(*before)));
        failed = true;
        continue;
      }
      if (!same_parameter_types(*planned, plan)) {
        diagnostics.error(plan.kernel->location(),
                          fmt::format("internal error: --emit-harness: kernel @{} takes ({}) but its reference "
                                      "before scheduling takes ({})",
                                      kernel_name(*plan.kernel), parameter_list(plan), parameter_list(*planned)));
        failed = true;
        continue;
      }
      reference_plans.push_back(std::move(*planned));
      kernel.reference = &reference_plans.back();
    }
    kernel.counts_work = contains(kernel.reference->kernel->region(), OpKind::mma);
    kernels.push_back(kernel);
  }
  if (failed) return false;

  out += kHarnessHelpers;
  for (const HarnessKernel& kernel : kernels) {
    emit_reference_kernel(kernel, out);
    emit_check(kernel, out);
  }
  CodeWriter writer(out);
  CodeWriter::Block main_function = writer.block("int main(int argc, char** argv) {");
  writer.line("int failures = 0;");
  for (const KernelPlan& plan : plans) writer.line(fmt::format("failures += check_{}(argc, argv);", plan.name));
  writer.line("std::printf(\"%s\\n\", failures == 0 ? \"PASS\" : \"FAIL\");");
  writer.line("return failures == 0 ? 0 : 1;");
  return true;
}

}  // namespace tilec::cuda
