// tests/samples/reference_test.cpp — the tensor-core samples compute what their header comments
// say. Each runs as its final IR (samples/expected/NAME.tir: persistent tiles, stage buffers,
// mbarriers, producer and compute agents) in the interpreter on random inputs whose extents leave
// partial tiles, against a plain loop written here from the header's formula:
//   gemm_f16        C = A·B (f16 in, f32 accumulate)
//   gemm_bias_relu  C = bf16(relu(A·B + bias row))
//   w4a16_linear    Y = bf16(X·dequant(W)ᵀ), two 4-bit weights a byte, a scale per group
//   w4a8_linear     Y = bf16(X·(W - 8)ᵀ·x_scale·w_scale[n]), X in e4m3, W as w4a16_linear's
//   batched_gemm    C_z = A_z·B_z, batches folded into rows (M = 512 rows of A and C per batch,
//                   cdiv(K, 64)·64 rows of B per batch: K need not be a multiple of 64)
//   attention       O = softmax(Q·K^T·SCALE)·V per head of 64 columns (T = 200 keys: the last
//                   block of 64 is cut short and masked; SCALE 1/8)
//   attention_backward  dV = Pᵀ·dO and dK = (P ∘ (dO·Vᵀ - Δ))ᵀ·Q·SCALE from Q, K, V, dO and the
//                   forward's LSE (base 2) and Δ, computed here in double (S = 200 queries,
//                   T = 136 keys: both ragged; SCALE 1/8); with dQ = (P ∘ (dO·Vᵀ - Δ))·K·SCALE
//                   too for tests/emulate/tensor_core/attention_backward_dq.tile
// The gemms' products are exact in f32 and the interpreter adds them in increasing k, so the
// loops give the same bits; attention rounds P to bf16 before the second mma, so it is compared
// with a tolerance (attention_backward rounds P and dS).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../cli_runner.h"
#include "runtime/interpreter/compare_buffers.h"
#include "runtime/interpreter/float_formats.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/random_fill.h"
#include "runtime/interpreter/tile_runner.h"
#include "tests/interpreter/test_support.h"

namespace tilec::testing {
namespace {

using runtime::HostBuffer;
using runtime::KernelArgument;

std::unique_ptr<Module> final_ir(const std::string& name) {
  return parse_verified(read_file(source_dir() / "samples" / "expected" / (name + ".tir")));
}

// Runs the module's only kernel on three workers; fails the test when the launch fails.
void run(const Module& module, std::vector<KernelArgument> arguments) {
  runtime::ThreadTileRunner workers(3);
  runtime::LaunchOptions options;
  options.runner = &workers;
  runtime::LaunchResult result = run_kernel(*module.kernels().front(), arguments, {}, options);
  ASSERT_TRUE(result.ok) << result.describe();
}

// sum over k < K of A[row, k] · B[b_row0 + k, column], in f32 in increasing k.
float dot(const HostBuffer& A, int64_t row, const HostBuffer& B, int64_t b_row0, int64_t column, int64_t K) {
  int64_t a_columns = A.dims()[1], b_columns = B.dims()[1];
  float sum = 0;
  for (int64_t k = 0; k < K; ++k)
    sum += A.load_float(row * a_columns + k) * B.load_float((b_row0 + k) * b_columns + column);
  return sum;
}

void expect_equal(const HostBuffer& expected, const HostBuffer& actual, runtime::Tolerance tolerance) {
  runtime::BufferComparison comparison = runtime::compare_buffers(expected, actual, tolerance);
  EXPECT_TRUE(comparison.ok()) << comparison.summary();
}

TEST(SampleReference, GemmF16IsAPlainProduct) {
  auto module = final_ir("gemm_f16");
  ASSERT_TRUE(module);
  const int64_t M = 150, N = 300, K = 100;
  HostBuffer A(ScalarKind::f16, {M, K}), B(ScalarKind::f16, {K, N}), C(ScalarKind::f32, {M, N});
  runtime::fill_random(A, 1);
  runtime::fill_random(B, 2);
  run(*module, {&A, &B, &C});
  HostBuffer expected(ScalarKind::f32, {M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) expected.store_float(m * N + n, dot(A, m, B, 0, n, K));
  expect_equal(expected, C, {0, 0});
}

TEST(SampleReference, GemmBiasReluAddsTheBiasToEveryRowThenClamps) {
  auto module = final_ir("gemm_bias_relu");
  ASSERT_TRUE(module);
  const int64_t M = 150, N = 300, K = 100;
  HostBuffer A(ScalarKind::bf16, {M, K}), B(ScalarKind::bf16, {K, N}), bias(ScalarKind::f32, {1, N}),
      C(ScalarKind::bf16, {M, N});
  runtime::fill_random(A, 3);
  runtime::fill_random(B, 4);
  runtime::fill_random(bias, 5, {-4, 4});
  run(*module, {&A, &B, &bias, &C});
  HostBuffer expected(ScalarKind::bf16, {M, N});   // store_float rounds to bf16
  int64_t clamped = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float value = dot(A, m, B, 0, n, K) + bias.load_float(n);
      clamped += value < 0;
      expected.store_float(m * N + n, value > 0 ? value : 0.0f);
    }
  // The bias range makes both sides of relu common, so a missing relu or bias shows.
  EXPECT_GT(clamped, M * N / 10);
  EXPECT_LT(clamped, M * N * 9 / 10);
  expect_equal(expected, C, {0, 0});
}

TEST(SampleReference, BatchedGemmMultipliesEachBatchByItsOwnB) {
  auto module = final_ir("batched_gemm");
  ASSERT_TRUE(module);
  const int64_t rows_per_batch = 512, padded_K = 128;   // M; cdiv(K, BK)·BK
  const int64_t R = 2 * rows_per_batch + 100, N = 300, K = 100, batches = 3;  // the last cut short
  HostBuffer A(ScalarKind::bf16, {R, K}), B(ScalarKind::bf16, {batches * padded_K, N}), C(ScalarKind::f32, {R, N});
  runtime::fill_random(A, 6);
  runtime::fill_random(B, 7);   // the padding rows too: they must not matter
  run(*module, {&A, &B, &C});
  HostBuffer expected(ScalarKind::f32, {R, N});
  for (int64_t r = 0; r < R; ++r)
    for (int64_t n = 0; n < N; ++n)
      expected.store_float(r * N + n, dot(A, r, B, (r / rows_per_batch) * padded_K, n, K));
  expect_equal(expected, C, {0, 0});
}

// The 4-bit weight (0..15) at (n, k) of an [N, KP] u8 tensor packed as samples/w4a16_linear.tile
// says: byte j of row n's group of `group` weights holds the weight j in its low four bits and
// group / 2 + j in its high four.
int64_t packed_weight(const HostBuffer& W, int64_t group, int64_t n, int64_t k) {
  const int64_t j = k % group, half = group / 2;
  const int64_t byte = W.load_int(n * W.dims()[1] + k / group * half + j % half);
  return j < half ? byte & 15 : byte >> 4;
}

// Unpacks the weights from the bytes as the header says (a group's byte j: the weight at j in its
// low four bits, at GROUP / 2 + j in its high four), so a kernel that swapped the halves, read
// the wrong group's scale or dropped the zero point gives other numbers.
TEST(SampleReference, W4a16LinearUnpacksTwoWeightsPerByteAndScalesEachGroup) {
  auto module = final_ir("w4a16_linear");
  ASSERT_TRUE(module);
  const int64_t M = 150, N = 200, group = 128, G = 3, K = G * group, KP = K / 2;
  HostBuffer X(ScalarKind::bf16, {M, K}), W(ScalarKind::u8, {N, KP}), scale(ScalarKind::f32, {N, G}),
      Y(ScalarKind::bf16, {M, N});
  runtime::fill_random(X, 11);
  runtime::fill_random(W, 12);  // all 256 bytes: every pair of 4-bit weights
  runtime::fill_random(scale, 13, {0.01, 0.1});
  run(*module, {&X, &W, &scale, &Y});
  HostBuffer expected(ScalarKind::bf16, {M, N});
  for (int64_t n = 0; n < N; ++n) {
    std::vector<float> weight(K);  // row n of dequant(W), rounded to bf16 as the B is
    for (int64_t k = 0; k < K; ++k)
      weight[k] = runtime::round_to_format(
          ScalarKind::bf16, static_cast<float>(packed_weight(W, group, n, k) - 8) * scale.load_float(n * G + k / group));
    for (int64_t m = 0; m < M; ++m) {
      float sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += X.load_float(m * K + k) * weight[k];
      expected.store_float(m * N + n, sum);
    }
  }
  expect_equal(expected, Y, {0, 0});
}

// The same bytes with FP8 activations: the B is the integer weights (exact in e4m3), the scales
// multiply the accumulator.
TEST(SampleReference, W4a8LinearMultipliesFp8ActivationsByTheUnpackedWeights) {
  auto module = final_ir("w4a8_linear");
  ASSERT_TRUE(module);
  const int64_t M = 150, N = 200, group = 128, K = 3 * group, KP = K / 2;
  const float x_scale = 0.75f;
  HostBuffer X(ScalarKind::f8e4m3, {M, K}), W(ScalarKind::u8, {N, KP}), w_scale(ScalarKind::f32, {N}),
      Y(ScalarKind::bf16, {M, N});
  runtime::fill_random(X, 14);
  runtime::fill_random(W, 15);
  runtime::fill_random(w_scale, 16, {0.01, 0.1});
  run(*module, {&X, &W, &w_scale, static_cast<double>(x_scale), &Y});
  HostBuffer expected(ScalarKind::bf16, {M, N});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      float sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += X.load_float(m * K + k) * static_cast<float>(packed_weight(W, group, n, k) - 8);
      expected.store_float(m * N + n, sum * x_scale * w_scale.load_float(n));
    }
  expect_equal(expected, Y, {0, 0});
}

TEST(SampleReference, AttentionIsSoftmaxOfScaledScoresTimesValues) {
  auto module = final_ir("attention");
  ASSERT_TRUE(module);
  const int64_t S = 200, heads = 2, D = 64, T = 200, HD = heads * D;
  const double scale = 0.125;
  HostBuffer Q(ScalarKind::bf16, {S, HD}), Kt(ScalarKind::bf16, {HD, T}), V(ScalarKind::bf16, {T, HD}),
      O(ScalarKind::f32, {S, HD});
  // Scaled scores of several units: the softmax is far from uniform, so a wrong max, sum or
  // rescaling shows.
  runtime::fill_random(Q, 8, {-4, 4});
  runtime::fill_random(Kt, 9, {-2, 2});
  runtime::fill_random(V, 10);
  run(*module, {&Q, &Kt, &V, &O});
  HostBuffer expected(ScalarKind::f32, {S, HD});
  std::vector<double> p(T);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < S; ++s) {
      double largest = -INFINITY, total = 0;
      for (int64_t t = 0; t < T; ++t) {
        double score = 0;
        for (int64_t d = 0; d < D; ++d) score += double(Q.load_float(s * HD + h * D + d)) * Kt.load_float((h * D + d) * T + t);
        p[t] = score * scale;
        largest = std::max(largest, p[t]);
      }
      for (int64_t t = 0; t < T; ++t) total += p[t] = std::exp(p[t] - largest);
      for (int64_t d = 0; d < D; ++d) {
        double value = 0;
        for (int64_t t = 0; t < T; ++t) value += p[t] * V.load_float(t * HD + h * D + d);
        expected.store_float(s * HD + h * D + d, static_cast<float>(value / total));
      }
    }
  // P in bf16 (8 significant bits) bounds the error by about 2^-8 of max |V|.
  expect_equal(expected, O, {0, 0.01});
}

// Runs an attention backward kernel (dK, dV, and dQ when `with_dq`: its parameters Q, K, V, dO,
// LSE, Δ, [dQ,] dK, dV) on random inputs and checks its gradients against the formulas in double.
void expect_attention_gradients(const Module& module, bool with_dq) {
  const int64_t S = 200, T = 136, D = 64;
  const double scale = 0.125;
  HostBuffer Q(ScalarKind::bf16, {S, D}), K(ScalarKind::bf16, {T, D}), V(ScalarKind::bf16, {T, D}),
      dO(ScalarKind::bf16, {S, D}), LSE(ScalarKind::f32, {S}), Delta(ScalarKind::f32, {S}),
      dQ(ScalarKind::f32, {S, D}), dK(ScalarKind::f32, {T, D}), dV(ScalarKind::f32, {T, D});
  runtime::fill_random(Q, 11, {-2, 2});
  runtime::fill_random(K, 12, {-2, 2});
  runtime::fill_random(V, 13);
  runtime::fill_random(dO, 14);
  // The forward pass, in double: P, the base-2 log-sum-exp and Δ = rowsum(dO ∘ O).
  std::vector<double> P(S * T);
  for (int64_t s = 0; s < S; ++s) {
    double largest = -INFINITY, total = 0;
    for (int64_t t = 0; t < T; ++t) {
      double score = 0;
      for (int64_t d = 0; d < D; ++d) score += double(Q.load_float(s * D + d)) * K.load_float(t * D + d);
      P[s * T + t] = score * scale;
      largest = std::max(largest, P[s * T + t]);
    }
    for (int64_t t = 0; t < T; ++t) total += P[s * T + t] = std::exp(P[s * T + t] - largest);
    for (int64_t t = 0; t < T; ++t) P[s * T + t] /= total;
    LSE.store_float(s, static_cast<float>((largest + std::log(total)) / std::log(2.0)));
    double delta = 0;
    for (int64_t d = 0; d < D; ++d) {
      double o = 0;
      for (int64_t t = 0; t < T; ++t) o += P[s * T + t] * V.load_float(t * D + d);
      delta += o * dO.load_float(s * D + d);
    }
    Delta.store_float(s, static_cast<float>(delta));
  }
  if (with_dq) run(module, {&Q, &K, &V, &dO, &LSE, &Delta, &dQ, &dK, &dV});
  else run(module, {&Q, &K, &V, &dO, &LSE, &Delta, &dK, &dV});
  // The gradients: dS = P ∘ (dP - Δ), dP = dO·Vᵀ.
  std::vector<double> dS(S * T);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t t = 0; t < T; ++t) {
      double dp = 0;
      for (int64_t d = 0; d < D; ++d) dp += double(dO.load_float(s * D + d)) * V.load_float(t * D + d);
      dS[s * T + t] = P[s * T + t] * (dp - Delta.load_float(s));
    }
  HostBuffer expected_dK(ScalarKind::f32, {T, D}), expected_dV(ScalarKind::f32, {T, D}),
      expected_dQ(ScalarKind::f32, {S, D});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = 0; d < D; ++d) {
      double dk = 0, dv = 0;
      for (int64_t s = 0; s < S; ++s) {
        dk += dS[s * T + t] * Q.load_float(s * D + d);
        dv += P[s * T + t] * dO.load_float(s * D + d);
      }
      expected_dK.store_float(t * D + d, static_cast<float>(dk * scale));
      expected_dV.store_float(t * D + d, static_cast<float>(dv));
    }
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < D; ++d) {
      double dq = 0;
      for (int64_t t = 0; t < T; ++t) dq += dS[s * T + t] * K.load_float(t * D + d);
      expected_dQ.store_float(s * D + d, static_cast<float>(dq * scale));
    }
  // P and dS in bf16 (8 significant bits) before the mmas bound the error by a few 2^-8 of the
  // largest gradient.
  runtime::Tolerance tolerance;
  tolerance.normwise = 0.02;
  expect_equal(expected_dV, dV, tolerance);
  expect_equal(expected_dK, dK, tolerance);
  if (with_dq) expect_equal(expected_dQ, dQ, tolerance);
}

TEST(SampleReference, AttentionBackwardGivesTheGradientsOfSoftmaxAttention) {
  auto module = final_ir("attention_backward");
  ASSERT_TRUE(module);
  expect_attention_gradients(*module, /*with_dq=*/false);
}

// The whole backward with dQ added over the key blocks (tests/emulate/tensor_core/
// attention_backward_dq.tile: transpose(dSᵀ) as an mma's A, `store DQ[i, 0] += ...`), through the
// pipeline for sm_90a; dQ starts at zero, so it is dQ itself.
TEST(SampleReference, AttentionBackwardWithDqGivesAllThreeGradients) {
  CommandResult compiled =
      run_command(tilec_binary() + " compile " +
                  (source_dir() / "tests/emulate/tensor_core/attention_backward_dq.tile").string() +
                  " --target sm_90a --emit ir");
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  auto module = parse_verified(compiled.out);
  ASSERT_TRUE(module);
  expect_attention_gradients(*module, /*with_dq=*/true);
}

}  // namespace
}  // namespace tilec::testing
