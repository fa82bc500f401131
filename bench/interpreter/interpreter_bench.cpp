// bench/interpreter/interpreter_bench.cpp — how fast the interpreter runs a bf16 gemm (serial and
// with a thread runner) and converts f32 to bf16/f8. Prints figures; asserts nothing.
//
//   build/bench/interpreter/interpreter_bench [SIZE] [WORKERS]     (default 256, 2)
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "runtime/interpreter/float_formats.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/random_fill.h"
#include "runtime/interpreter/tile_runner.h"

namespace {

constexpr const char* kGemm = R"(module
kernel @gemm(%A: tensor<M, K, bf16>, %B: tensor<K, N, bf16>, %C: tensor<M, N, f32>) {
  %M = dim %A {axis = 0} : index
  %K = dim %A {axis = 1} : index
  %N = dim %B {axis = 1} : index
  %b = constant {value = 64} : index
  %bk = constant {value = 32} : index
  %gm = cdiv %M, %b : index
  %gn = cdiv %N, %b : index
  %m, %n = grid_ids %gm, %gn : index, index
  %kt = cdiv %K, %bk : index
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %init = zeros : tile<64x64xf32, reg>
  %acc = for %zero, %kt, %one, %init : tile<64x64xf32, reg> {
  ^(%k: index, %c: tile<64x64xf32, reg>):
    %a = tma_load %A, %m, %k : tile<64x32xbf16, smem>
    %bt = tma_load %B, %k, %n : tile<32x64xbf16, smem>
    %next = mma %a, %bt, %c : tile<64x64xf32, reg>
    yield %next
  }
  store %C, %m, %n, %acc
  return
}
)";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilec;
  using namespace tilec::runtime;
  const int64_t size = argc > 1 ? std::atoll(argv[1]) : 256;
  const int workers = argc > 2 ? std::atoi(argv[2]) : 2;
  DiagnosticEngine diagnostics;
  auto module = parse_module(kGemm, diagnostics);
  if (!module) {
    fmt::print(stderr, "{}", diagnostics.render_all());
    return 2;
  }
  HostBuffer A(ScalarKind::bf16, {size, size}), B = A, C(ScalarKind::f32, {size, size});
  fill_random(A, 1);
  fill_random(B, 2);
  std::vector<KernelArgument> arguments = {&A, &B, &C};
  const double macs = static_cast<double>(size) * size * size;

  SerialTileRunner serial;
  ThreadTileRunner threads(workers);
  for (auto [name, runner] : {std::pair<std::string, TileRunner*>{"serial", &serial},
                              std::pair<std::string, TileRunner*>{fmt::format("{} threads", workers), &threads}}) {
    LaunchOptions options;
    options.runner = runner;
    auto start = std::chrono::steady_clock::now();
    LaunchResult result = run_kernel(*module->kernels().front(), arguments, {}, options);
    double elapsed = seconds_since(start);
    if (!result.ok) {
      fmt::print(stderr, "{}\n", result.describe());
      return 2;
    }
    fmt::print("gemm {0}x{0}x{0} bf16->f32, 64x64x32 tiles, {1:>10}: {2:8.1f} ms, {3:6.3f} GMAC/s, "
               "{4:8.0f} tiles/s\n",
               size, name, elapsed * 1e3, macs / elapsed / 1e9, result.tile_count / elapsed);
  }

  const int64_t conversions = 1 << 22;
  for (ScalarKind kind : {ScalarKind::bf16, ScalarKind::f16, ScalarKind::f8e4m3}) {
    auto start = std::chrono::steady_clock::now();
    uint64_t checksum = 0;
    for (int64_t i = 0; i < conversions; ++i)
      checksum += encode_float(kind, static_cast<float>(i) * 0.001f - 100.0f);
    double elapsed = seconds_since(start);
    fmt::print("f32 -> {:<7} {:7.1f} M conversions/s (checksum {})\n", to_string(kind),
               conversions / elapsed / 1e6, checksum);
  }
  return 0;
}
