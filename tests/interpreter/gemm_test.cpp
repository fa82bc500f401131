// tests/interpreter/gemm_test.cpp — a gemm-shaped kernel (for over K, tma_load into shared
// memory, mma into a carried accumulator) against a naive triple loop, on odd sizes so every
// edge tile is partial in M, N and K.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/interpreter/compare_buffers.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/random_fill.h"
#include "runtime/interpreter/tile_runner.h"
#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

// Block sizes 16 x 8 x 8; `IN` is the input element type, `ACC` the accumulator's.
std::string gemm_kernel(const std::string& in, const std::string& acc) {
  std::string text = R"(module
kernel @gemm(%A: tensor<M, K, IN>, %B: tensor<K, N, IN>, %C: tensor<M, N, ACC>) {
  %M = dim %A {axis = 0} : index
  %K = dim %A {axis = 1} : index
  %N = dim %B {axis = 1} : index
  %bm = constant {value = 16} : index
  %bn = constant {value = 8} : index
  %gm = cdiv %M, %bm : index
  %gn = cdiv %N, %bn : index
  %m, %n = grid_ids %gm, %gn {schedule = "tiles"} : index, index
  %kt = cdiv %K, %bn : index
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %init = zeros : tile<16x8xACC, reg>
  %acc = for %zero, %kt, %one, %init {pipeline = 2} : tile<16x8xACC, reg> {
  ^(%k: index, %c: tile<16x8xACC, reg>):
    %a = tma_load %A, %m, %k : tile<16x8xIN, smem>
    %b = tma_load %B, %k, %n : tile<8x8xIN, smem>
    %next = mma %a, %b, %c : tile<16x8xACC, reg>
    yield %next
  }
  store %C, %m, %n, %acc
  return
}
)";
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace_all("IN>", in + ">");
  replace_all("xIN,", "x" + in + ",");
  replace_all("ACC>", acc + ">");
  replace_all("xACC,", "x" + acc + ",");
  return text;
}

TEST(InterpreterGemm, Bf16InputsF32AccumulatorMatchNaiveLoopExactly) {
  auto module = testing::parse_verified(gemm_kernel("bf16", "f32"));
  ASSERT_TRUE(module);
  const int64_t M = 37, N = 19, K = 29;
  HostBuffer A(ScalarKind::bf16, {M, K}), B(ScalarKind::bf16, {K, N}), C(ScalarKind::f32, {M, N});
  fill_random(A, derive_seed(7, 0));
  fill_random(B, derive_seed(7, 1));
  LaunchResult result = run_kernel(*module->kernels().front(), std::vector<KernelArgument>{&A, &B, &C});
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(result.tile_count, 3 * 3);
  // Products of bf16 values are exact in f32 and the sums run in increasing k, so the naive
  // f32 loop gives the same bits.
  HostBuffer expected(ScalarKind::f32, {M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += A.load_float(m * K + k) * B.load_float(k * N + n);
      expected.store_float(m * N + n, sum);
    }
  BufferComparison comparison = compare_buffers(expected, C, Tolerance{0, 0});
  EXPECT_TRUE(comparison.ok()) << comparison.summary();

  HostBuffer parallel(ScalarKind::f32, {M, N});
  ThreadTileRunner threads(3);
  LaunchOptions options;
  options.runner = &threads;
  ASSERT_TRUE(run_kernel(*module->kernels().front(), std::vector<KernelArgument>{&A, &B, &parallel}, {}, options).ok);
  EXPECT_EQ(parallel.bytes(), C.bytes());
}

TEST(InterpreterGemm, F16AccumulatorRoundsAtTheEndOfEachMma) {
  auto module = testing::parse_verified(gemm_kernel("f16", "f16"));
  ASSERT_TRUE(module);
  const int64_t M = 21, N = 11, K = 20;
  HostBuffer A(ScalarKind::f16, {M, K}), B(ScalarKind::f16, {K, N}), C(ScalarKind::f16, {M, N});
  fill_random(A, 11, {-2, 2});
  fill_random(B, 12, {-2, 2});
  ASSERT_TRUE(run_kernel(*module->kernels().front(), std::vector<KernelArgument>{&A, &B, &C}).ok);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      _Float16 acc = 0;
      for (int64_t k0 = 0; k0 < K; k0 += 8) {  // one mma per 8-wide K block
        float sum = acc;
        for (int64_t k = k0; k < std::min(k0 + 8, K); ++k)
          sum += A.load_float(m * K + k) * B.load_float(k * N + n);
        acc = static_cast<_Float16>(sum);
      }
      ASSERT_EQ(C.load_float(m * N + n), static_cast<float>(acc)) << m << "," << n;
    }
}

// f32 operands are read as the tensor cores read them (tf32): each keeps its sign, exponent and
// top 10 mantissa bits (truncated), products and sums stay f32.
TEST(InterpreterGemm, F32InputsAreReadAsTf32) {
  auto module = testing::parse_verified(gemm_kernel("f32", "f32"));
  ASSERT_TRUE(module);
  const int64_t M = 19, N = 13, K = 21;
  HostBuffer A(ScalarKind::f32, {M, K}), B(ScalarKind::f32, {K, N}), C(ScalarKind::f32, {M, N});
  fill_random(A, derive_seed(9, 0));
  fill_random(B, derive_seed(9, 1));
  ASSERT_TRUE(run_kernel(*module->kernels().front(), std::vector<KernelArgument>{&A, &B, &C}).ok);
  auto tf32 = [](float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    bits &= ~0x1fffu;
    std::memcpy(&value, &bits, 4);
    return value;
  };
  int64_t differ_from_f32 = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float sum = 0, exact = 0;
      for (int64_t k = 0; k < K; ++k) {
        const float a = A.load_float(m * K + k), b = B.load_float(k * N + n);
        sum += tf32(a) * tf32(b);
        exact += a * b;
      }
      ASSERT_EQ(C.load_float(m * N + n), sum) << m << "," << n;
      differ_from_f32 += sum != exact;
    }
  EXPECT_GT(differ_from_f32, M * N / 2) << "random f32 inputs have low mantissa bits tf32 drops";
}

}  // namespace
}  // namespace tilec::runtime
