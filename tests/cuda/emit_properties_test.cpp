// tests/cuda/emit_properties_test.cpp — properties of the emitted CUDA and the errors the
// backend reports: shared-memory layout, synchronization, names, literals, determinism,
// unsupported ops at their source location, the shared-memory budget, bad targets.
#include <algorithm>
#include <cstring>
#include <regex>
#include <stdexcept>

#include "backend/cuda/cuda_prelude.h"
#include "backend/cuda/cuda_syntax.h"
#include "backend/cuda/element_spellings.h"
#include "backend/cuda/kernel_plan.h"
#include "tests/cuda/cuda_test_support.h"
#include "tests/edit_text.h"

namespace tilec::cuda_test {
namespace {

using tilec::testing::occurrences;

// Most tests here check the shared-memory form of plain kernels (tests/cuda/register_tiles_test.cpp
// checks the register form).
constexpr CudaEmitOptions::PlainTiles kShared = CudaEmitOptions::PlainTiles::shared;

// The text of the function whose signature contains `signature`, up to its closing "\n}\n".
std::string function_text(const std::string& cuda, const std::string& signature) {
  size_t start = cuda.find(signature);
  if (start == std::string::npos) return {};
  size_t end = cuda.find("\n}\n", start);
  return cuda.substr(start, end - start);
}

std::unique_ptr<Module> parse_input(const std::string& name, DiagnosticEngine& diagnostics) {
  return parse_module(read_file(kTestDir / "inputs" / (name + ".tir")), diagnostics);
}

// Buffers live at the same time never share bytes; the reported size covers every buffer.
void expect_sound_layout(const cuda::KernelPlan& plan, const std::string& name) {
  int64_t end = 0;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const cuda::BufferPlan& buffer = plan.buffers[i];
    EXPECT_EQ(buffer.offset % 16, 0) << name << " " << buffer.name;
    EXPECT_EQ(buffer.bytes, buffer.value->type().element_count() * byte_size(buffer.value->type().element()));
    EXPECT_LE(buffer.first_use, buffer.last_use) << name << " " << buffer.name;
    end = std::max(end, buffer.offset + buffer.bytes);
    for (size_t j = 0; j < i; ++j) {
      const cuda::BufferPlan& other = plan.buffers[j];
      bool live_together = buffer.first_use <= other.last_use && other.first_use <= buffer.last_use;
      bool share_bytes = buffer.offset < other.offset + other.bytes && other.offset < buffer.offset + buffer.bytes;
      EXPECT_FALSE(live_together && share_bytes) << name << ": " << buffer.name << " and " << other.name;
    }
  }
  EXPECT_GE(plan.shared_bytes, end) << name;
  EXPECT_LT(plan.shared_bytes, end + 16) << name;
  EXPECT_LE(plan.shared_bytes, target::default_target().shared_memory_bytes) << name;
}

TEST(CudaPlan, LiveBuffersAreDisjointAndDeadOnesAreReused) {
  for (const char* name : kInputs) {
    DiagnosticEngine diagnostics;
    auto module = parse_input(name, diagnostics);
    ASSERT_TRUE(module) << name;
    auto plan = cuda::compute_kernel_plan(*module->kernels()[0], diagnostics, kernel_name(*module->kernels()[0]));
    ASSERT_TRUE(plan) << name << diagnostics.render_all();
    expect_sound_layout(*plan, name);
    int64_t total = 0;
    for (const cuda::BufferPlan& buffer : plan->buffers) total += (buffer.bytes + 15) / 16 * 16;
    if (std::string(name) != "vector_add" && std::string(name) != "launch_checks") {  // tiles that all live at once
      EXPECT_LT(plan->shared_bytes, total) << name << ": no reuse";
    }
  }
}

// %w is defined before the loop and read inside it: it must outlive the whole loop, so no
// tile defined later in the body may take its bytes; %dead is never read after the loop starts.
TEST(CudaPlan, ValuesReadInsideALoopLiveThroughTheWholeLoop) {
  const char* text = R"(module

kernel @loop(%X: tensor<N, f32>, %Y: tensor<N, f32>) {
  %0 = constant {value = 0} : index
  %1 = constant {value = 1} : index
  %4 = constant {value = 4} : index
  %w = load %X, %0 : tile<256xf32, reg>
  %dead = load %X, %1 : tile<256xf32, reg>
  %init = add %dead, %dead : tile<256xf32, reg>
  %out = for %0, %4, %1, %init : tile<256xf32, reg> {
    ^(%k: index, %carried: tile<256xf32, reg>):
    %scaled = mul %carried, %w : tile<256xf32, reg>
    %later = add %scaled, %scaled : tile<256xf32, reg>
    %last = add %later, %carried : tile<256xf32, reg>
    yield %last
  }
  store %Y, %0, %out
  return
}
)";
  DiagnosticEngine diagnostics("loop.tir", text);
  auto module = parse_module(text, diagnostics);
  ASSERT_TRUE(module) << diagnostics.render_all();
  auto plan = cuda::compute_kernel_plan(*module->kernels()[0], diagnostics, kernel_name(*module->kernels()[0]));
  ASSERT_TRUE(plan) << diagnostics.render_all();
  expect_sound_layout(*plan, "loop");
  auto buffer = [&](const std::string& name) -> const cuda::BufferPlan& {
    for (const cuda::BufferPlan& b : plan->buffers)
      if (b.name == name) return b;
    throw std::runtime_error("no buffer " + name);
  };
  // Ops in pre-order: 0..2 constants, 3 w, 4 dead, 5 init, 6 for, 7 scaled, 8 later, 9 last,
  // 10 yield, 11 store.
  EXPECT_EQ(buffer("w").last_use, 10);
  EXPECT_EQ(buffer("carried").first_use, 6);
  EXPECT_EQ(buffer("carried").last_use, 11);  // the loop's result is stored after it
  EXPECT_EQ(buffer("dead").last_use, 5);
  EXPECT_EQ(buffer("init").last_use, 6);
  // The dead tile's bytes are reused by the loop.
  bool reused = false;
  for (const char* name : {"carried", "scaled", "later", "last"})
    reused |= buffer(name).offset == buffer("dead").offset;
  EXPECT_TRUE(reused);
}

TEST(CudaPlan, LoopResultsShareTheCarriedBuffers) {
  DiagnosticEngine diagnostics;
  auto module = parse_input("row_mean_loop", diagnostics);
  ASSERT_TRUE(module);
  auto plan = cuda::compute_kernel_plan(*module->kernels()[0], diagnostics, kernel_name(*module->kernels()[0]));
  ASSERT_TRUE(plan);
  const Operation* loop = nullptr;
  for (const auto& op : module->kernels()[0]->region().operations())
    if (op->kind() == OpKind::for_) loop = op.get();
  ASSERT_TRUE(loop);
  EXPECT_EQ(plan->expression(loop->result(0)), plan->expression(loop->region().argument(1)));
  EXPECT_EQ(plan->expression(loop->result(1)), plan->expression(loop->region().argument(2)));
  // Symbols become launch parameters named after themselves.
  EXPECT_EQ(plan->dim_params, (std::vector<std::string>{"M", "K"}));
}

// In the CTA kernel every tile op is a block-strided loop followed by __syncthreads(); the
// reference kernel has neither.
// The prelude's helpers sit in an unnamed namespace after the includes and before the first
// kernel, so nothing of them is an external name (a helper's hunt: with -rdc=true -G two files
// shared one weak tilec_sm_count, and a user's cdiv_i64 replaced the launcher's). Kernels and
// launchers stay outside it.
TEST(CudaEmit, HelpersHaveInternalLinkageAndKernelsDoNot) {
  for (const char* input : {"matmul", "vector_add"}) {
    Emitted emitted = emit_input(input, "sm_90a");
    ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
    const std::string& cuda = *emitted.cuda;
    const size_t open = cuda.find("\nnamespace {"), close = cuda.find("\n}  // namespace\n");
    ASSERT_NE(open, std::string::npos) << input;
    ASSERT_NE(close, std::string::npos) << input;
    EXPECT_LT(cuda.rfind("#include <", open), open);
    EXPECT_EQ(cuda.find("#include <", open), std::string::npos) << input << ": an include inside the namespace";
    EXPECT_GT(cuda.find("inline float to_f32(float x)"), open);
    EXPECT_LT(cuda.find("inline float to_f32(float x)"), close);
    EXPECT_GT(cuda.find("__global__"), close) << input;
    EXPECT_GT(cuda.find("extern \"C\""), close) << input;
  }
}

TEST(CudaEmit, EveryTileLoopIsFollowedByABarrier) {
  for (const char* name : kInputs) {
    Emitted emitted = emit_input(name, "sm_90a", /*harness=*/true, kShared);
    ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
    std::string kernel = function_text(*emitted.cuda, "_kernel(");
    std::string reference = function_text(*emitted.cuda, "_reference(");
    ASSERT_FALSE(kernel.empty()) << name;
    ASSERT_FALSE(reference.empty()) << name;
    size_t loops = occurrences(kernel, "for (int elem = threadIdx.x;");
    EXPECT_GT(loops, 0u) << name;
    EXPECT_EQ(occurrences(kernel, "__syncthreads();"), loops) << name;
    std::regex loop_then_barrier(R"(elem \+= kBlockThreads\) \{\n(?:[^\n]*\n)*?\s*\}\n\s*__syncthreads\(\);)");
    EXPECT_EQ(static_cast<size_t>(std::distance(
                  std::sregex_iterator(kernel.begin(), kernel.end(), loop_then_barrier),
                  std::sregex_iterator())),
              loops)
        << name;
    EXPECT_EQ(occurrences(reference, "__syncthreads"), 0u) << name;
    EXPECT_EQ(occurrences(reference, "for (int elem = 0;"), loops) << name;
  }
}

TEST(CudaEmit, NamesComeFromHintsAndParametersFromSymbols) {
  Emitted emitted = emit_input("softmax", "sm_90a", false, kShared);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  const std::string& cuda = *emitted.cuda;
  EXPECT_NE(cuda.find("float* const shifted = reinterpret_cast<float*>"), std::string::npos);
  EXPECT_NE(cuda.find("extern \"C\" cudaError_t launch_softmax(const float* X, float* Y, int64_t R, "
                      "cudaStream_t stream)"),
            std::string::npos);
  // At most two 32x256 f32 tiles and a 32x1 one are live at once: 65664 bytes, above 48 KiB,
  // so the launcher opts in to more dynamic shared memory.
  EXPECT_NE(cuda.find("const size_t shared_bytes = 65664;"), std::string::npos);
  EXPECT_NE(cuda.find("cudaFuncAttributeMaxDynamicSharedMemorySize"), std::string::npos);
  EXPECT_NE(cuda.find("//     softmax: grid cdiv(R, 32), 256 threads per CTA, 65664 bytes"),
            std::string::npos);
  // Sums walk the row in increasing order, accumulating in f32.
  EXPECT_NE(cuda.find("for (int pos = 0; pos < 256; ++pos) acc = add_f32(acc, e[elem * 256 + pos]);"),
            std::string::npos);
}

TEST(CudaEmit, SameInputSameBytesAndTargetOnlyChangesTheHeader) {
  Emitted first = emit_input("layernorm", "sm_90a", true);
  Emitted second = emit_input("layernorm", "sm_90a", true);
  ASSERT_TRUE(first.cuda && second.cuda);
  EXPECT_EQ(*first.cuda, *second.cuda);
  Emitted blackwell = emit_input("layernorm", "sm_100a", true);
  ASSERT_TRUE(blackwell.cuda);
  auto body = [](const std::string& text) { return text.substr(text.find("#include <cstdint>")); };
  EXPECT_EQ(body(*first.cuda), body(*blackwell.cuda));
  EXPECT_NE(first.cuda->find("arch=compute_90a,code=sm_90a"), std::string::npos);
  EXPECT_NE(blackwell.cuda->find("arch=compute_100a,code=sm_100a"), std::string::npos);
}

TEST(CudaSyntax, NamesAreValidUniqueAndClearOfReservedWords) {
  cuda::NameTable names;
  EXPECT_EQ(names.unique("x"), "x");
  EXPECT_EQ(names.unique("x"), "x_1");
  EXPECT_EQ(names.unique("float"), "float_1");
  EXPECT_EQ(names.unique("elem"), "elem_1");
  EXPECT_EQ(names.unique("a.b"), "a_b");
  EXPECT_EQ(names.unique("9lives"), "v9lives");
  EXPECT_EQ(names.unique("__x"), "v_x");
  EXPECT_EQ(names.unique(""), "v");
}

TEST(CudaSyntax, LiteralsRoundTrip) {
  EXPECT_EQ(cuda::float_literal(0.1f), "0.1f");
  EXPECT_EQ(cuda::float_literal(1.0f), "1.0f");
  EXPECT_EQ(cuda::float_literal(1e20f), "1e+20f");
  EXPECT_EQ(cuda::float_literal(-0.0f), "-0.0f");
  EXPECT_EQ(cuda::float_literal(3.14159274f), "3.1415927f");
  EXPECT_EQ(cuda::float_literal(1.0f / 0.0f), "INFINITY");
  EXPECT_EQ(cuda::integer_literal(42), "42");
  EXPECT_EQ(cuda::integer_literal(int64_t{1} << 40), "1099511627776LL");
  EXPECT_EQ(cuda::literal(Attribute(1.5), ScalarKind::bf16), "from_f32<__nv_bfloat16>(1.5f)");
  EXPECT_EQ(cuda::literal(Attribute(int64_t{1}), ScalarKind::i1), "true");
  // Float constants far from the integer range (attention's -1e30 running max) convert without
  // undefined behaviour; beyond the f32 range they are infinities (found by UBSan).
  EXPECT_EQ(cuda::literal(Attribute(-1.0e30), ScalarKind::f32), "-1e+30f");
  EXPECT_EQ(cuda::literal(Attribute(1.0e300), ScalarKind::f32), "INFINITY");
  EXPECT_EQ(cuda::literal(Attribute(-1.0e300), ScalarKind::f32), "-INFINITY");
  // Up to half an ulp past FLT_MAX rounds to FLT_MAX, as the interpreter has it: NumPy's
  // -3.4028235e38, a masked softmax's sentinel, was -INFINITY (NaN rows on the GPU only).
  EXPECT_EQ(cuda::literal(Attribute(-3.4028235e38), ScalarKind::f32), "-3.4028235e+38f");
  EXPECT_EQ(cuda::literal(Attribute(3.4028235677973366e38), ScalarKind::f32), "INFINITY");  // the tie: to even
  EXPECT_EQ(cuda::literal(Attribute(3.4028235677973362e38), ScalarKind::f32), "3.4028235e+38f");
  EXPECT_EQ(cuda::literal(Attribute(1.0e30), ScalarKind::i64), "9223372036854775807LL");
}

TEST(CudaEmit, AKernelWithoutGridIdsRunsAsOneCta) {
  const char* text = R"(module

kernel @single(%X: tensor<8, f32>, %Y: tensor<8, f32>) {
  %0 = constant {value = 0} : index
  %x = load %X, %0 : tile<8xf32, reg>
  %y = exp %x : tile<8xf32, reg>
  store %Y, %0, %y
  return
}
)";
  Emitted emitted = emit_text(text, "single.tir", CudaEmitOptions{});
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  EXPECT_NE(emitted.cuda->find("const int64_t tile_count = 1;  // no grid_ids: a single CTA"),
            std::string::npos);
  EXPECT_EQ(emitted.cuda->find("tile_number"), std::string::npos);
  EXPECT_NE(emitted.cuda->find("extern \"C\" cudaError_t launch_single(const float* X, float* Y, "
                               "cudaStream_t stream)"),
            std::string::npos);
}

TEST(CudaEmit, TwoDimensionalGridIsSplitRowMajorAndUnknownDimsBecomeParameters) {
  Emitted emitted = emit_input("bias_clamp_2d", "sm_90a", false, kShared);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  const std::string& cuda = *emitted.cuda;
  EXPECT_NE(cuda.find("const int64_t m = tile_number / col_tiles;"), std::string::npos);
  EXPECT_NE(cuda.find("const int64_t n = tile_number % col_tiles;"), std::string::npos);
  EXPECT_NE(cuda.find("int64_t M, int64_t X_dim1, int64_t bias_dim1, int64_t Y_dim1, cudaStream_t stream)"),
            std::string::npos);
  EXPECT_NE(cuda.find("grid cdiv(M, 32) x cdiv(X_dim1, 64)"), std::string::npos);
  // The [1, 64] bias broadcasts along the rows.
  EXPECT_NE(cuda.find("to_f32(b[elem % 64])"), std::string::npos);
}

TEST(CudaEmit, EveryKernelOfAModuleGetsAKernelALauncherAndAHarnessCheck) {
  std::string text = read_file(kTestDir / "inputs" / "vector_add.tir");
  std::string scale = read_file(kTestDir / "inputs" / "scale_relu.tir");
  text += scale.substr(scale.find("kernel @"));
  CudaEmitOptions options;
  options.harness = true;
  options.plain_tiles = kShared;
  Emitted emitted = emit_text(text, "two.tir", options);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  const std::string& cuda = *emitted.cuda;
  for (const char* name : {"vector_add", "scale_relu"}) {
    EXPECT_EQ(occurrences(cuda, std::string("__global__ void TILEC_LAUNCH_BOUNDS(kBlockThreads) ") + name + "_kernel("), 1u);
    EXPECT_EQ(occurrences(cuda, std::string("extern \"C\" cudaError_t launch_") + name + "("), 1u);
    EXPECT_EQ(occurrences(cuda, std::string("failures += check_") + name + "(argc, argv);"), 1u);
  }
  EXPECT_EQ(occurrences(cuda, "constexpr int kBlockThreads"), 1u);
  EXPECT_EQ(occurrences(cuda, "int main("), 1u);
}

// Kernel names are handed out over the whole file: a kernel `main` (reserved) was emitted as
// main_1_kernel / launch_main_1 in a file whose kernel `main_1` took the same names, and nvcc
// refused the file. Names that are their own keep them; the renamed one is warned about.
TEST(CudaEmit, ARenamedKernelTakesNoOtherKernelsFunctionNames) {
  const std::string vector_add = read_file(kTestDir / "inputs" / "vector_add.tir");
  const std::string kernel = vector_add.substr(vector_add.find("kernel @"));
  std::string text = vector_add.substr(0, vector_add.find("kernel @"));
  for (const char* name : {"main", "main_1", "launch_b", "b_kernel", "gemm_", "a.b"}) {
    std::string renamed = kernel;
    renamed.replace(renamed.find("@vector_add"), std::strlen("@vector_add"), std::string("@") + name);
    text += renamed;
  }
  CudaEmitOptions options;
  options.plain_tiles = kShared;
  Emitted emitted = emit_text(text, "names.tir", options);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  const std::string& cuda = *emitted.cuda;
  // launch_b's kernel function launch_b_kernel is b_kernel's launcher: b_kernel is renamed too.
  for (const char* name : {"main_2", "main_1", "launch_b", "b_kernel_1"}) {
    EXPECT_EQ(occurrences(cuda, std::string("__global__ void TILEC_LAUNCH_BOUNDS(kBlockThreads) ") + name + "_kernel("), 1u)
        << name;
    EXPECT_EQ(occurrences(cuda, std::string("extern \"C\" cudaError_t launch_") + name + "("), 1u) << name;
  }
  EXPECT_NE(emitted.diagnostics.find("warning: kernel 'main' is emitted as main_2_kernel, launched by launch_main_2"),
            std::string::npos) << emitted.diagnostics;
  EXPECT_NE(emitted.diagnostics.find("warning: kernel 'b_kernel' is emitted as b_kernel_1_kernel, launched by "
                                     "launch_b_kernel_1 (another kernel's functions take its names)"),
            std::string::npos)
      << emitted.diagnostics;
  // Each warning says why (a hunt's `gemm_` was "reserved in CUDA C++").
  EXPECT_NE(emitted.diagnostics.find("('main' is reserved in CUDA C++ or by tilec's own code)"), std::string::npos)
      << emitted.diagnostics;
  EXPECT_NE(emitted.diagnostics.find("kernel 'gemm_' is emitted as gemm_kernel, launched by launch_gemm "
                                     "(gemm__kernel would hold '__', which C++ reserves)"),
            std::string::npos)
      << emitted.diagnostics;
  EXPECT_NE(emitted.diagnostics.find("kernel 'a.b' is emitted as a_b_kernel, launched by launch_a_b ('a.b' holds "
                                     "characters a C++ identifier cannot)"),
            std::string::npos)
      << emitted.diagnostics;
}

// mma (tests/cuda/inputs/matmul.tir): element (i, j) = acc(i, j) + Σk a(i, k)·b(k, j), products and
// sums in f32 in increasing k, in the CTA kernel (strided, then a barrier) and in the reference
// (one thread; skipped when it only counts; 2·32·64·16 flop per whole tile).
TEST(CudaEmit, MmaSumsInF32InIncreasingKInBothModesAndTheReferenceCountsIt) {
  Emitted emitted = emit_input("matmul", "sm_90a", /*harness=*/true);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  std::string kernel = function_text(*emitted.cuda, "matmul_kernel(");
  std::string reference = function_text(*emitted.cuda, "matmul_reference(");
  const std::string sum_line =
      "for (int step = 0; step < 16; ++step) sum = add_f32(sum, mul_f32(to_f32(a[(elem / 64) * 16 + step]), "
      "to_f32(b[step * 64 + elem % 64])));\n";
  EXPECT_NE(kernel.find("    for (int elem = threadIdx.x; elem < 2048; elem += kBlockThreads) {\n"
                        "      float sum = acc_2[elem];\n      " + sum_line +
                        "      acc_3[elem] = sum;\n    }\n    __syncthreads();\n"),
            std::string::npos)
      << kernel;
  EXPECT_EQ(occurrences(kernel, "count_only") + occurrences(kernel, "reference_flops"), 0u);
  EXPECT_NE(reference.find("      if (!count_only) {\n        for (int elem = 0; elem < 2048; ++elem) {\n"
                           "          float sum = acc_2[elem];\n          " + sum_line +
                           "          acc_3[elem] = sum;\n        }\n      }\n"
                           "      atomicAdd(&matmul_reference_flops, 65536ull);"),
            std::string::npos)
      << reference;
  // tma_load reads like load (zero outside the tensor).
  EXPECT_NE(kernel.find("a[elem] = in_bounds ? A[index0 * K + index1] : from_f32<__half>(0.0f);"), std::string::npos)
      << kernel;
  // A kernel without mma keeps the old harness: no counter, no check=0.
  Emitted softmax = emit_input("softmax", "sm_90a", /*harness=*/true);
  ASSERT_TRUE(softmax.cuda);
  EXPECT_EQ(occurrences(*softmax.cuda, "count_only") + occurrences(*softmax.cuda, "TFLOP/s") + occurrences(*softmax.cuda, "\"check\""), 0u);
}

// A `transposed` tma_load reads the [C, R] box at its tile coordinates and gives the transpose
// (docs/ir.md): B's tile<16x64> at (n, k) is rows n·64 … of B[N, K] and columns k·16 …, element
// (kk, nn) of the tile being B[n·64 + nn, k·16 + kk]. The kernel and the harness's reference
// read it alike; the reference once read it untransposed, which only a GPU run caught
// (bench/README.md, "Every sample on an H100"). What the kernel computes is emulated
// against the interpreter: tests/emulate/emulate_cli_test.cpp runs golden/matmul_bt.cu.
TEST(CudaEmit, TransposedTmaLoadReadsItsBoxAsTheTransposeInKernelAndReference) {
  Emitted emitted = emit_input("matmul_bt", "sm_90a", /*harness=*/true, kShared);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  const std::string read = "        const int64_t index0 = n * 64 + elem % 64;\n"
                           "        const int64_t index1 = k * 16 + elem / 64;\n"
                           "        const bool in_bounds = 0 <= index0 && index0 < N && 0 <= index1 && index1 < K;\n"
                           "        b[elem] = in_bounds ? B[index0 * K + index1] : from_f32<__half>(0.0f);\n";
  std::string reference = function_text(*emitted.cuda, "matmul_bt_reference(");
  EXPECT_NE(reference.find(read), std::string::npos) << reference;
  std::string kernel = function_text(*emitted.cuda, "matmul_bt_kernel(");
  EXPECT_NE(kernel.find("      const int64_t index0 = n * 64 + elem % 64;\n"
                        "      const int64_t index1 = k * 16 + elem / 64;\n"),
            std::string::npos)
      << kernel;
}

// ---- errors ----

// Cross-pipe events only mean something once warp-specialize has split the kernel into agents:
// the plain backend reports them (mma and tma_load it runs as CTA loops: tests/cuda/harness_test.cpp).
constexpr const char* kEventKernel = R"(module

kernel @gemm(%A: tensor<M, K, bf16>, %C: tensor<M, K, bf16>) loc(3:1) {
  %0 = constant {value = 0} : index loc(4:3)
  %a = load %A, %0, %0 : tile<64x16xbf16, reg> loc(5:3)
  event_set {event = 0, from = "MMA", to = "LSU"} loc(6:3)
  event_wait {event = 0, from = "MMA", to = "LSU"} loc(7:3)
  event_set {event = 1, from = "MMA", to = "LSU"} loc(8:3)
  store %C, %0, %0, %a loc(9:3)
  return
}
)";

TEST(CudaErrors, TensorCoreOpsAreReportedOnceAtTheKernelWithTheirLocations) {
  CudaEmitOptions options;
  DiagnosticEngine diagnostics("gemm.tir", kEventKernel);
  auto module = parse_module(kEventKernel, diagnostics);
  ASSERT_TRUE(module) << diagnostics.render_all();
  EXPECT_FALSE(emit_cuda(*module, options, diagnostics));
  ASSERT_EQ(diagnostics.error_count(), 1) << diagnostics.render_all();
  const Diagnostic& error = diagnostics.diagnostics()[0];
  const Operation& kernel = *module->kernels().front();
  EXPECT_EQ(error.location, kernel.location());
  EXPECT_NE(error.message.find("which the plain CUDA backend cannot emit"), std::string::npos) << error.message;
  // Each kind once, at its first use.
  EXPECT_NE(error.message.find("'event_set' (6:3), 'event_wait' (7:3)"), std::string::npos) << error.message;
  EXPECT_EQ(error.message.find("(8:3)"), std::string::npos) << error.message;
  EXPECT_EQ(diagnostics.render(error).rfind("gemm.tir:3:1: error:", 0), 0u) << diagnostics.render(error);
}

TEST(CudaErrors, SharedMemoryAboveTheBudgetNamesKernelFigureAndBudget) {
  const char* text = R"(module

kernel @huge(%X: tensor<N, N, f32>) loc(3:1) {
  %0 = constant {value = 0} : index
  %x = load %X, %0, %0 : tile<256x512xf32, reg>
  store %X, %0, %0, %x
  return
}
)";
  // (256x256 fits the register form over 1024 threads now, with a spill warning.)
  Emitted emitted = emit_text(text, "huge.tir", CudaEmitOptions{});
  EXPECT_FALSE(emitted.cuda);
  // It says why the kernel keeps its tiles in shared memory, and what to do (found by a helper:
  // a register-form kernel refused with only the byte count).
  EXPECT_NE(emitted.diagnostics.find("huge.tir:3:1: error: kernel @huge needs 524288 bytes of shared "
                                     "memory for its 1 tile buffers (it keeps its tiles in shared memory: a 256x512 "
                                     "tile would take 128 registers per thread (more than 64)); the sm_90a budget is "
                                     "232448 bytes (227 KiB): use smaller tiles"),
            std::string::npos)
      << emitted.diagnostics;
}

TEST(CudaErrors, InvalidIrIsReportedNotEmitted) {
  const char* text = R"(module

kernel @bad(%X: tensor<N, f32>) {
  %0 = constant {value = 0} : index
  %x = load %X, %0 : tile<64xf32, reg>
  %y = add %x, %0 : tile<64xf32, reg>
  return
}
)";
  Emitted emitted = emit_text(text, "bad.tir", CudaEmitOptions{});
  EXPECT_FALSE(emitted.cuda);
  EXPECT_NE(emitted.diagnostics.find("error"), std::string::npos);
}

// Every elementwise op but cmp, select and cast (spelled by code) has a row with exactly the
// spellings its traits allow, and every helper a spelling calls is defined by the prelude.
TEST(CudaElementSpellings, EveryElementwiseOpHasItsSpellings) {
  for (const OpInfo& info : all_ops()) {
    const cuda::ElementSpelling* row = cuda::element_spelling(info.kind);
    const bool by_code = info.kind == OpKind::cmp || info.kind == OpKind::select || info.kind == OpKind::cast ||
                          info.kind == OpKind::bitcast;
    if (!info.has(kElementwise) || by_code) {
      EXPECT_EQ(row, nullptr) << info.name;
      continue;
    }
    ASSERT_NE(row, nullptr) << info.name << " has no row in backend/cuda/element_spellings.cpp";
    const bool bitwise = info.has(kBitwise);  // integers bitwise, masks logical
    EXPECT_EQ(row->f32.empty(), !info.takes_operands(true)) << info.name;
    EXPECT_EQ(row->integer.empty(), !info.takes_operands(false)) << info.name;
    EXPECT_EQ(row->mask.empty(), !bitwise) << info.name;
  }
  // randint's helper is in the prelude of the files that draw random numbers.
  const std::string prelude = std::string(cuda::cuda_prelude()) + std::string(cuda::random_prelude());
  const std::regex call(R"(([A-Za-z_][A-Za-z_0-9]*)\()");
  for (const cuda::ElementSpelling& row : cuda::element_spellings()) {
    for (std::string_view spelling : {row.f32, row.integer, row.safe_divisor, row.mask, row.wrapping}) {
      std::string text = std::regex_replace(std::string(spelling), std::regex("\\{int\\}"), "i64");
      for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it)
        EXPECT_TRUE(std::regex_search(prelude, std::regex("inline (float|int64_t|uint32_t) " + (*it)[1].str() + "\\(")))
            << op_info(row.kind).name << ": the prelude defines no " << (*it)[1];
    }
  }
}

// Every reduction and scan combines through combining_expression: the helper of its
// elementwise op (add_i64 and mul_i64 wrap, as the interpreter's integer sums and products do;
// `acc + x` on int64_t would be undefined on overflow), each defined by the prelude. The wrapping
// spellings of elementwise ops are prelude helpers too.
TEST(CudaElementSpellings, ReductionsAndScansCombineThroughOneSpelling) {
  const std::string prelude(cuda::cuda_prelude());
  auto defined = [&](const std::string& helper) {
    return std::regex_search(prelude, std::regex("inline (float|int64_t) " + helper + "\\("));
  };
  for (const OpInfo& info : all_ops()) {
    const bool combines = info.name.rfind("reduce_", 0) == 0 || info.name.rfind("scan_", 0) == 0;
    if (!combines) {
      EXPECT_THROW(cuda::combining_expression(info.kind, true, "acc", "x"), std::logic_error) << info.name;
      continue;
    }
    for (bool floating : {true, false}) {
      std::string step = cuda::combining_expression(info.kind, floating, "acc", "x");
      std::smatch helper;
      ASSERT_TRUE(std::regex_match(step, helper, std::regex(R"(([a-z0-9_]+)\(acc, x\))"))) << step;
      EXPECT_TRUE(defined(helper[1].str())) << info.name << ": the prelude defines no " << helper[1];
    }
  }
  EXPECT_EQ(cuda::combining_expression(OpKind::scan_prod, true, "acc", "x"), "mul_f32(acc, x)");
  EXPECT_EQ(cuda::combining_expression(OpKind::reduce_sum, false, "acc", "x"), "add_i64(acc, x)");
  for (const cuda::ElementSpelling& row : cuda::element_spellings())
    if (!row.wrapping.empty()) {
      EXPECT_TRUE(cuda::may_overflow_int64(row.kind, ScalarKind::i64)) << op_info(row.kind).name;
      EXPECT_FALSE(cuda::may_overflow_int64(row.kind, ScalarKind::i32)) << op_info(row.kind).name;
      EXPECT_FALSE(cuda::may_overflow_int64(row.kind, ScalarKind::index)) << op_info(row.kind).name;
    }
}

}  // namespace
}  // namespace tilec::cuda_test
