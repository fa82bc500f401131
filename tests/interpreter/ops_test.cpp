// tests/interpreter/ops_test.cpp — the meaning of each op (docs/ir.md) on small .tir kernels.
// Expected numbers are written out or computed here in plain C++, never by the interpreter.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "ir/parser.h"
#include "runtime/interpreter/float_formats.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/tile_runner.h"
#include "tests/edit_text.h"
#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

using testing::buffer_values;
using testing::make_buffer;
using testing::parse_verified;

LaunchResult launch(const Module& module, std::vector<KernelArgument> arguments,
                    SymbolBindings symbols = {}, TileRunner* runner = nullptr) {
  LaunchOptions options;
  options.runner = runner;
  return run_kernel(*module.kernels().front(), arguments, symbols, options);
}

// The classic bf16 rounding of an f32 (non-NaN), independent of float_formats.cpp.
float bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  bits = ((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16) << 16;
  return std::bit_cast<float>(bits);
}

constexpr const char* kAdd2d = R"(module
kernel @add(%X: tensor<R, C, f32>, %Y: tensor<R, C, f32>, %Z: tensor<R, C, f32>) {
  %R = dim %X {axis = 0} : index
  %C = dim %X {axis = 1} : index
  %b = constant {value = 4} : index
  %gr = cdiv %R, %b : index
  %gc = cdiv %C, %b : index
  %m, %n = grid_ids %gr, %gc : index, index
  %x = load %X, %m, %n : tile<4x4xf32, reg>
  %y = load %Y, %m, %n : tile<4x4xf32, reg>
  %z = add %x, %y : tile<4x4xf32, reg>
  store %Z, %m, %n, %z
  return
}
)";

TEST(InterpreterOps, AddMasksOddSizesInBothDimensions) {
  auto module = parse_verified(kAdd2d);
  ASSERT_TRUE(module);
  // 5x7 with 4x4 tiles: an unmasked column 7 would alias the next row's column 0.
  std::vector<double> x(35), y(35);
  for (int i = 0; i < 35; ++i) x[i] = i, y[i] = 1000 * (i + 1);
  HostBuffer X = make_buffer(ScalarKind::f32, {5, 7}, x), Y = make_buffer(ScalarKind::f32, {5, 7}, y);
  HostBuffer Z(ScalarKind::f32, {5, 7});
  LaunchResult result = launch(*module, {&X, &Y, &Z});
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(result.tile_count, 4);  // 2 x 2 tiles
  std::vector<double> z = buffer_values(Z);
  for (int i = 0; i < 35; ++i) EXPECT_EQ(z[i], x[i] + y[i]) << i;
}

// A tile of lower rank than its tensor is a slice: the leading coordinate picks head h, and the
// rows past R of each head read as zeros and are not written (not the next head's rows).
constexpr const char* kHeadSlices = R"(module
kernel @heads(%X: tensor<H, R, C, f32>, %S: tensor<H, C, f32>, %Y: tensor<H, R, C, f32>) {
  %H = dim %X {axis = 0} : index
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %h = grid_ids %H : index
  %x = load %X, %h, %zero, %zero : tile<4x8xf32, reg>
  %s = reduce_sum %x {axis = 0} : tile<1x8xf32, reg>
  store %S, %h, %zero, %s
  %y = add %x, %x : tile<4x8xf32, reg>
  store %Y, %h, %zero, %zero, %y
  return
}
)";

TEST(InterpreterOps, LowerRankTilesAreSlicesWithTheirOwnEdges) {
  auto module = parse_verified(kHeadSlices);
  ASSERT_TRUE(module);
  const int heads = 3, rows = 3, columns = 8;  // 3 rows of a 4-row tile: one row past each head
  std::vector<double> x(heads * rows * columns);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i + 1);
  HostBuffer X = make_buffer(ScalarKind::f32, {heads, rows, columns}, x);
  HostBuffer S(ScalarKind::f32, {heads, columns}), Y(ScalarKind::f32, {heads, rows, columns});
  LaunchResult result = launch(*module, {&X, &S, &Y});
  ASSERT_TRUE(result.ok) << result.describe();
  std::vector<double> s = buffer_values(S), y = buffer_values(Y);
  for (int h = 0; h < heads; ++h)
    for (int c = 0; c < columns; ++c) {
      double sum = 0;
      for (int r = 0; r < rows; ++r) sum += x[(h * rows + r) * columns + c];
      EXPECT_EQ(s[h * columns + c], sum) << "head " << h << " column " << c;
      for (int r = 0; r < rows; ++r)
        EXPECT_EQ(y[(h * rows + r) * columns + c], 2 * x[(h * rows + r) * columns + c]) << h << " " << r << " " << c;
    }
}

TEST(InterpreterOps, ResultsDoNotDependOnTileOrderOrWorkers) {
  auto module = parse_verified(kAdd2d);
  ASSERT_TRUE(module);
  std::vector<double> x(33 * 29), y(33 * 29);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(i), y[i] = std::cos(3 * i);
  HostBuffer X = make_buffer(ScalarKind::f32, {33, 29}, x), Y = make_buffer(ScalarKind::f32, {33, 29}, y);
  HostBuffer serial_out(ScalarKind::f32, {33, 29}), reverse_out = serial_out, threads_out = serial_out;
  ReverseTileRunner reverse;
  ThreadTileRunner threads(4);
  ASSERT_TRUE(launch(*module, {&X, &Y, &serial_out}).ok);
  ASSERT_TRUE(launch(*module, {&X, &Y, &reverse_out}, {}, &reverse).ok);
  ASSERT_TRUE(launch(*module, {&X, &Y, &threads_out}, {}, &threads).ok);
  EXPECT_EQ(serial_out.bytes(), reverse_out.bytes());
  EXPECT_EQ(serial_out.bytes(), threads_out.bytes());
}

TEST(InterpreterOps, ArgumentsAreCheckedAgainstTheirTypes) {
  auto module = parse_verified(kAdd2d);
  ASSERT_TRUE(module);
  HostBuffer X(ScalarKind::f32, {5, 7}), Y(ScalarKind::f32, {5, 8}), Z(ScalarKind::f32, {5, 7});
  LaunchResult result = launch(*module, {&X, &Y, &Z});
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("C = 7"), std::string::npos) << result.message;
  result = launch(*module, {&X, &X, &Z}, {{"R", 6}});
  EXPECT_FALSE(result.ok);
  HostBuffer wrong_type(ScalarKind::bf16, {5, 7});
  EXPECT_FALSE(launch(*module, {&X, &wrong_type, &Z}).ok);
  EXPECT_FALSE(launch(*module, {&X, &Y}).ok);
  EXPECT_FALSE(launch(*module, {&X, int64_t{3}, &Z}).ok);
}

TEST(InterpreterOps, Bf16RoundsAfterEveryOp) {
  auto module = parse_verified(R"(module
kernel @fma(%X: tensor<4, bf16>, %Y: tensor<4, bf16>, %W: tensor<4, bf16>, %Z: tensor<4, bf16>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xbf16, reg>
  %y = load %Y, %i : tile<4xbf16, reg>
  %w = load %W, %i : tile<4xbf16, reg>
  %s = add %x, %y : tile<4xbf16, reg>
  %z = mul %s, %w : tile<4xbf16, reg>
  store %Z, %i, %z
  return
}
)");
  ASSERT_TRUE(module);
  // 1 + 2^-8 ties back to 1 in bf16, so (1 + 2^-8) * 3 is 3, not 3.015625 (one rounding).
  std::vector<double> x = {1, 1, 1.5, -2}, y = {0x1p-8, 0x1p-7, 0.0078125, 0.3}, w = {3, 3, 1.1, 0.7};
  HostBuffer X = make_buffer(ScalarKind::bf16, {4}, x), Y = make_buffer(ScalarKind::bf16, {4}, y),
             W = make_buffer(ScalarKind::bf16, {4}, w), Z(ScalarKind::bf16, {4});
  ASSERT_TRUE(launch(*module, {&X, &Y, &W, &Z}).ok);
  std::vector<double> z = buffer_values(Z);
  EXPECT_EQ(z[0], 3.0);
  for (int i = 0; i < 4; ++i) {
    float xs = bf16(static_cast<float>(x[i])), ys = bf16(static_cast<float>(y[i])), ws = bf16(static_cast<float>(w[i]));
    EXPECT_EQ(z[i], bf16(bf16(xs + ys) * ws)) << i;
  }
}

TEST(InterpreterOps, IntegerDivisionRemainderCeilingAndWrap) {
  // An 8-wide tile over 6 elements: the padding lanes divide 0 by 0, which must not fail.
  auto module = parse_verified(R"(module
kernel @ints(%A: tensor<6, i32>, %B: tensor<6, i32>, %Q: tensor<6, i32>, %R: tensor<6, i32>, %C: tensor<6, i32>, %P: tensor<6, i32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %a = load %A, %i : tile<8xi32, reg>
  %b = load %B, %i : tile<8xi32, reg>
  %q = div %a, %b : tile<8xi32, reg>
  %r = rem %a, %b : tile<8xi32, reg>
  %c = cdiv %a, %b : tile<8xi32, reg>
  %p = mul %a, %b : tile<8xi32, reg>
  store %Q, %i, %q
  store %R, %i, %r
  store %C, %i, %c
  store %P, %i, %p
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer A = make_buffer(ScalarKind::i32, {6}, {7, -7, 7, -7, 65536, 5});
  HostBuffer B = make_buffer(ScalarKind::i32, {6}, {2, 2, -2, -2, 65536, 0});
  HostBuffer Q(ScalarKind::i32, {6}), R = Q, C = Q, P = Q;
  LaunchResult result = launch(*module, {&A, &B, &Q, &R, &C, &P});
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(buffer_values(Q), (std::vector<double>{3, -3, -3, 3, 1, -1}));   // toward zero; x/0 = -1
  EXPECT_EQ(buffer_values(R), (std::vector<double>{1, -1, 1, -1, 0, 5}));    // C's %; x%0 = x
  EXPECT_EQ(buffer_values(C), (std::vector<double>{4, -3, -3, 4, 1, -1}));   // ceiling
  EXPECT_EQ(buffer_values(P), (std::vector<double>{14, -14, -14, 14, 0, 0}));  // 2^32 wraps in i32
}

TEST(InterpreterOps, CompareSelectMaxMinNegRelu) {
  auto module = parse_verified(R"(module
kernel @pick(%X: tensor<6, f32>, %Y: tensor<6, f32>, %S: tensor<6, f32>, %M: tensor<6, f32>, %N: tensor<6, f32>, %U: tensor<6, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<6xf32, reg>
  %y = load %Y, %i : tile<6xf32, reg>
  %lt = cmp %x, %y {predicate = "lt"} : tile<6xi1, reg>
  %s = select %lt, %x, %y : tile<6xf32, reg>
  %m = max %x, %y : tile<6xf32, reg>
  %nx = neg %x : tile<6xf32, reg>
  %n = min %nx, %y : tile<6xf32, reg>
  %u = relu %x : tile<6xf32, reg>
  store %S, %i, %s
  store %M, %i, %m
  store %N, %i, %n
  store %U, %i, %u
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::f32, {6}, {1, -2, 3, NAN, 0.5, -0.0});
  HostBuffer Y = make_buffer(ScalarKind::f32, {6}, {2, -3, 3, 4, NAN, 0.0});
  HostBuffer S(ScalarKind::f32, {6}), M = S, N = S, U = S;
  ASSERT_TRUE(launch(*module, {&X, &Y, &S, &M, &N, &U}).ok);
  std::vector<double> s = buffer_values(S), m = buffer_values(M), n = buffer_values(N), u = buffer_values(U);
  // select(x < y, x, y): a NaN comparison is false, so y is taken.
  EXPECT_EQ(s[0], 1); EXPECT_EQ(s[1], -3); EXPECT_EQ(s[2], 3); EXPECT_EQ(s[3], 4); EXPECT_TRUE(std::isnan(s[4]));
  // max ignores NaN operands and orders -0 below +0.
  EXPECT_EQ(m[0], 2); EXPECT_EQ(m[1], -2); EXPECT_EQ(m[3], 4); EXPECT_EQ(m[4], 0.5);
  EXPECT_FALSE(std::signbit(m[5]));
  EXPECT_EQ(n[0], -1); EXPECT_EQ(n[1], -3); EXPECT_EQ(n[2], -3); EXPECT_EQ(n[3], 4);
  EXPECT_EQ(u[0], 1); EXPECT_EQ(u[1], 0); EXPECT_EQ(u[3], 0); EXPECT_FALSE(std::signbit(u[5]));
}

// iota gives each element its index along `axis`; a 3x5 tile checks both axes (row-major).
TEST(InterpreterOps, IotaCountsAlongItsAxis) {
  auto module = parse_verified(R"(module
kernel @positions(%R: tensor<3, 5, i32>, %C: tensor<3, 5, i32>) {
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %rows = iota {axis = 0} : tile<3x5xi32, reg>
  %columns = iota {axis = 1} : tile<3x5xi32, reg>
  store %R, %zero, %zero, %rows
  store %C, %zero, %zero, %columns
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer R(ScalarKind::i32, {3, 5}), C(ScalarKind::i32, {3, 5});
  ASSERT_TRUE(launch(*module, {&R, &C}).ok);
  std::vector<double> rows = buffer_values(R), columns = buffer_values(C);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) {
      EXPECT_EQ(rows[r * 5 + c], r);
      EXPECT_EQ(columns[r * 5 + c], c);
    }
}

// A tile selector picks between two scalars: the result takes the selector's shape.
TEST(InterpreterOps, SelectBroadcastsAScalarPairToTheSelectorsShape) {
  auto module = parse_verified(R"(module
kernel @pick(%Y: tensor<6, f32>) {
  %zero = constant {value = 0} : index
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %position = iota {axis = 0} : tile<6xi32, reg>
  %three = constant {value = 3} : i32
  %low = cmp %position, %three {predicate = "lt"} : tile<6xi1, reg>
  %a = constant {value = 2.5} : f32
  %b = constant {value = -1.0} : f32
  %y = select %low, %a, %b : tile<6xf32, reg>
  store %Y, %zero, %y
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer Y(ScalarKind::f32, {6});
  ASSERT_TRUE(launch(*module, {&Y}).ok);
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{2.5, 2.5, 2.5, -1, -1, -1}));
}

TEST(InterpreterOps, TranscendentalsAreTheF32Functions) {
  auto module = parse_verified(R"(module
kernel @special(%X: tensor<4, f16>, %E: tensor<4, f16>, %S: tensor<4, f32>, %Q: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf16, reg>
  %e = exp %x : tile<4xf16, reg>
  %xf = cast %x : tile<4xf32, reg>
  %s = sqrt %xf : tile<4xf32, reg>
  %q = rsqrt %xf : tile<4xf32, reg>
  store %E, %i, %e
  store %S, %i, %s
  store %Q, %i, %q
  return
}
)");
  ASSERT_TRUE(module);
  std::vector<double> x = {0.5, 2, 3.25, 10};
  HostBuffer X = make_buffer(ScalarKind::f16, {4}, x), E(ScalarKind::f16, {4}), S(ScalarKind::f32, {4}), Q = S;
  ASSERT_TRUE(launch(*module, {&X, &E, &S, &Q}).ok);
  for (int i = 0; i < 4; ++i) {
    float xf = static_cast<float>(x[i]);
    EXPECT_EQ(E.load_float(i), static_cast<float>(static_cast<_Float16>(std::exp(xf)))) << i;
    EXPECT_EQ(S.load_float(i), std::sqrt(xf));
    EXPECT_EQ(Q.load_float(i), 1.0f / std::sqrt(xf));
  }
}

// bitcast reads the bits: an f32's as a u32 (1.0 is 0x3F800000, -0.0 the sign bit alone), a
// bf16's as an i16 (sign-extended), and i32 bits back as an f32 (-inf).
TEST(InterpreterOps, BitcastReadsTheBitsAsAnotherTypeOfTheSameWidth) {
  auto module = parse_verified(R"(module
kernel @bits(%X: tensor<4, f32>, %H: tensor<4, bf16>, %N: tensor<4, i32>, %U: tensor<4, u32>, %S: tensor<4, i16>,
             %F: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf32, reg>
  %u = bitcast %x : tile<4xu32, reg>
  %h = load %H, %i : tile<4xbf16, reg>
  %s = bitcast %h : tile<4xi16, reg>
  %n = load %N, %i : tile<4xi32, reg>
  %f = bitcast %n : tile<4xf32, reg>
  store %U, %i, %u
  store %S, %i, %s
  store %F, %i, %f
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::f32, {4}, {1.0, -0.0, 0.5, -2.0}),
             H = make_buffer(ScalarKind::bf16, {4}, {1.0, -1.0, 0.0, -0.0}),
             N = make_buffer(ScalarKind::i32, {4}, {0x3F800000, static_cast<double>(0xFF800000u - 0x100000000LL), 1, 0}),
             U(ScalarKind::u32, {4}), S(ScalarKind::i16, {4}), F(ScalarKind::f32, {4});
  ASSERT_TRUE(launch(*module, {&X, &H, &N, &U, &S, &F}).ok);
  EXPECT_EQ(buffer_values(U), (std::vector<double>{0x3F800000, 0x80000000u, 0x3F000000, 0xC0000000u}));
  EXPECT_EQ(buffer_values(S), (std::vector<double>{0x3F80, 0xBF80 - 0x10000, 0, -0x8000}));
  EXPECT_EQ(F.load_float(0), 1.0f);
  EXPECT_EQ(F.load_float(1), -INFINITY);
  EXPECT_EQ(F.load_float(2), 0x1p-149f);  // the smallest subnormal
  EXPECT_EQ(F.load_float(3), 0.0f);
}

// sin, cos (radians) and log2 at values whose results are known without <cmath>: exact powers of
// two for log2, the quarter turns, odd and even symmetry, and sin² + cos² = 1 (within f32
// rounding) at arguments up to a few hundred radians, as rotary embeddings reach.
TEST(InterpreterOps, SinCosAndLog2) {
  auto module = parse_verified(R"(module
kernel @trig(%X: tensor<8, f32>, %S: tensor<8, f32>, %C: tensor<8, f32>, %L: tensor<8, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<8xf32, reg>
  %s = sin %x : tile<8xf32, reg>
  %c = cos %x : tile<8xf32, reg>
  %a = abs %x : tile<8xf32, reg>
  %l = log2 %a : tile<8xf32, reg>
  store %S, %i, %s
  store %C, %i, %c
  store %L, %i, %l
  return
}
)");
  ASSERT_TRUE(module);
  constexpr double kPi = 3.14159265358979323846;
  std::vector<double> x = {0, 0.25, -0.25, kPi / 2, 8, -0.125, 300.5, 1024};
  HostBuffer X = make_buffer(ScalarKind::f32, {8}, x), S(ScalarKind::f32, {8}), C = S, L = S;
  ASSERT_TRUE(launch(*module, {&X, &S, &C, &L}).ok);
  EXPECT_EQ(S.load_float(0), 0.0f);
  EXPECT_EQ(C.load_float(0), 1.0f);
  EXPECT_EQ(S.load_float(2), -S.load_float(1));  // sin is odd, cos even
  EXPECT_EQ(C.load_float(2), C.load_float(1));
  EXPECT_NEAR(S.load_float(1), 0.247403959, 1e-7);
  EXPECT_NEAR(S.load_float(3), 1.0, 1e-7);
  EXPECT_NEAR(C.load_float(3), 0.0, 1e-7);
  EXPECT_EQ(L.load_float(1), -2.0f);
  EXPECT_EQ(L.load_float(4), 3.0f);
  EXPECT_EQ(L.load_float(5), -3.0f);
  EXPECT_EQ(L.load_float(7), 10.0f);
  EXPECT_EQ(L.load_float(0), -std::numeric_limits<float>::infinity());
  for (int i = 0; i < 8; ++i) {
    const double s = S.load_float(i), c = C.load_float(i);
    EXPECT_NEAR(s * s + c * c, 1.0, 1e-6) << x[i];
  }
  EXPECT_NEAR(S.load_float(6), std::sin(300.5), 1e-6);  // the argument is exact in f32
}

// The math functions of issue 18 against <cmath> in f32; sigmoid rounds per operation.
TEST(InterpreterOps, MathFunctionsAreTheF32Functions) {
  auto module = parse_verified(R"(module
kernel @math(%X: tensor<4, f32>, %T: tensor<4, f32>, %E: tensor<4, f32>, %L: tensor<4, f32>, %G: tensor<4, f32>, %A: tensor<4, f32>, %P: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf32, reg>
  %t = tanh %x : tile<4xf32, reg>
  %e = erf %x : tile<4xf32, reg>
  %a = abs %x : tile<4xf32, reg>
  %l = log %a : tile<4xf32, reg>
  %g = sigmoid %x : tile<4xf32, reg>
  %p = pow %a, %x : tile<4xf32, reg>
  store %T, %i, %t
  store %E, %i, %e
  store %L, %i, %l
  store %G, %i, %g
  store %A, %i, %a
  store %P, %i, %p
  return
}
)");
  ASSERT_TRUE(module);
  std::vector<double> x = {-2.5, -0.125, 0.75, 3};
  HostBuffer X = make_buffer(ScalarKind::f32, {4}, x), T(ScalarKind::f32, {4}), E = T, L = T, G = T, A = T, P = T;
  ASSERT_TRUE(launch(*module, {&X, &T, &E, &L, &G, &A, &P}).ok);
  for (int i = 0; i < 4; ++i) {
    float xf = static_cast<float>(x[i]);
    EXPECT_EQ(T.load_float(i), std::tanh(xf)) << i;
    EXPECT_EQ(E.load_float(i), std::erf(xf)) << i;
    EXPECT_EQ(A.load_float(i), std::fabs(xf)) << i;
    EXPECT_EQ(L.load_float(i), std::log(std::fabs(xf))) << i;
    EXPECT_EQ(G.load_float(i), 1.0f / (1.0f + std::exp(-xf))) << i;
    EXPECT_EQ(P.load_float(i), std::pow(std::fabs(xf), xf)) << i;
  }
}

// log1p, expm1, tan, atan and atan2 are <cmath>'s in f32: near 0, log1p and expm1 keep the digits that
// log(1 + x) and exp(x) - 1 lose (log1p(1e-7) is 1e-7 to the last bit; log(1 + 1e-7) is off by 19%).
TEST(InterpreterOps, Log1pExpm1TanAtanAndAtan2AreTheF32Functions) {
  auto module = parse_verified(R"(module
kernel @math(%X: tensor<4, f32>, %L: tensor<4, f32>, %E: tensor<4, f32>, %T: tensor<4, f32>, %A: tensor<4, f32>, %B: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf32, reg>
  %l = log1p %x : tile<4xf32, reg>
  %e = expm1 %x : tile<4xf32, reg>
  %t = tan %x : tile<4xf32, reg>
  %a = atan %x : tile<4xf32, reg>
  %m = neg %x : tile<4xf32, reg>
  %b = atan2 %x, %m : tile<4xf32, reg>
  store %B, %i, %b
  store %L, %i, %l
  store %E, %i, %e
  store %T, %i, %t
  store %A, %i, %a
  return
}
)");
  ASSERT_TRUE(module);
  std::vector<double> x = {-0.5, 1e-7, 0.75, 3};
  HostBuffer X = make_buffer(ScalarKind::f32, {4}, x), L(ScalarKind::f32, {4}), E = L, T = L, A = L, B = L;
  ASSERT_TRUE(launch(*module, {&X, &L, &E, &T, &A, &B}).ok);
  for (int i = 0; i < 4; ++i) {
    float xf = static_cast<float>(x[i]);
    EXPECT_EQ(L.load_float(i), std::log1p(xf)) << i;
    EXPECT_EQ(E.load_float(i), std::expm1(xf)) << i;
    EXPECT_EQ(T.load_float(i), std::tan(xf)) << i;
    EXPECT_EQ(A.load_float(i), std::atan(xf)) << i;
    EXPECT_EQ(B.load_float(i), std::atan2(xf, -xf)) << i;
  }
  EXPECT_NEAR(B.load_float(0), -0.7853981633974483, 1e-6);  // atan2(-0.5, 0.5) = -π/4
  EXPECT_NEAR(B.load_float(3), 2.356194490192345, 1e-6);     // atan2(3, -3) = 3π/4: the quadrant kept

  EXPECT_NEAR(L.load_float(1), 1e-7, 1e-7 * 1e-6);
  EXPECT_NEAR(E.load_float(1), 1e-7, 1e-7 * 1e-6);
  EXPECT_NEAR(A.load_float(3), 1.2490457723982544, 1e-6);  // atan(3), independently
  EXPECT_NEAR(T.load_float(2), 0.9315964599440725, 1e-6);  // tan(0.75)
}

// asin, acos, sinh and cosh are <cmath>'s in f32; asin and acos of |x| > 1 are NaN (no real angle).
TEST(InterpreterOps, AsinAcosSinhAndCoshAreTheF32Functions) {
  auto module = parse_verified(R"(module
kernel @math(%X: tensor<4, f32>, %S: tensor<4, f32>, %C: tensor<4, f32>, %H: tensor<4, f32>, %K: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf32, reg>
  %s = asin %x : tile<4xf32, reg>
  %c = acos %x : tile<4xf32, reg>
  %h = sinh %x : tile<4xf32, reg>
  %k = cosh %x : tile<4xf32, reg>
  store %S, %i, %s
  store %C, %i, %c
  store %H, %i, %h
  store %K, %i, %k
  return
}
)");
  ASSERT_TRUE(module);
  std::vector<double> x = {-0.5, 1e-7, 1, 2};
  HostBuffer X = make_buffer(ScalarKind::f32, {4}, x), S(ScalarKind::f32, {4}), C = S, H = S, K = S;
  ASSERT_TRUE(launch(*module, {&X, &S, &C, &H, &K}).ok);
  for (int i = 0; i < 3; ++i) {
    float xf = static_cast<float>(x[i]);
    EXPECT_EQ(S.load_float(i), std::asin(xf)) << i;
    EXPECT_EQ(C.load_float(i), std::acos(xf)) << i;
  }
  for (int i = 0; i < 4; ++i) {
    float xf = static_cast<float>(x[i]);
    EXPECT_EQ(H.load_float(i), std::sinh(xf)) << i;
    EXPECT_EQ(K.load_float(i), std::cosh(xf)) << i;
  }
  EXPECT_NEAR(S.load_float(0), -0.5235987755982989, 1e-6);  // asin(-1/2) = -π/6
  EXPECT_NEAR(C.load_float(0), 2.0943951023931957, 1e-6);   // acos(-1/2) = 2π/3
  EXPECT_NEAR(S.load_float(2), 1.5707963267948966, 1e-6);   // asin(1) = π/2
  EXPECT_EQ(C.load_float(2), 0.0f);                         // acos(1)
  EXPECT_TRUE(std::isnan(S.load_float(3)) && std::isnan(C.load_float(3))) << "asin(2), acos(2)";
  EXPECT_NEAR(S.load_float(1), 1e-7, 1e-7 * 1e-6);           // asin(x) ~ x near 0
  EXPECT_NEAR(H.load_float(1), 1e-7, 1e-7 * 1e-6);           // sinh(x) ~ x near 0
  EXPECT_NEAR(H.load_float(3), 3.626860407847019, 1e-5);    // sinh(2) = (e^2 - e^-2) / 2
  EXPECT_NEAR(K.load_float(3), 3.7621956910836314, 1e-5);   // cosh(2) = (e^2 + e^-2) / 2
  EXPECT_EQ(K.load_float(1), 1.0f);
}

// floor, ceil, round and trunc (issue 18): round takes halves to the even neighbour, as
// torch.round and CUDA's rintf do (not away from zero, as C's roundf does).
TEST(InterpreterOps, RoundingFunctionsRoundDownUpToEvenAndTowardZero) {
  auto module = parse_verified(R"(module
kernel @rounding(%X: tensor<8, f32>, %F: tensor<8, f32>, %C: tensor<8, f32>, %R: tensor<8, f32>, %T: tensor<8, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<8xf32, reg>
  %f = floor %x : tile<8xf32, reg>
  %c = ceil %x : tile<8xf32, reg>
  %r = round %x : tile<8xf32, reg>
  %t = trunc %x : tile<8xf32, reg>
  store %F, %i, %f
  store %C, %i, %c
  store %R, %i, %r
  store %T, %i, %t
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::f32, {8}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.25, 1.75});
  HostBuffer F(ScalarKind::f32, {8}), C = F, R = F, T = F;
  ASSERT_TRUE(launch(*module, {&X, &F, &C, &R, &T}).ok);
  EXPECT_EQ(buffer_values(F), (std::vector<double>{-3, -2, -1, 0, 1, 2, -2, 1}));
  EXPECT_EQ(buffer_values(C), (std::vector<double>{-2, -1, -0.0, 1, 2, 3, -1, 2}));
  EXPECT_EQ(buffer_values(R), (std::vector<double>{-2, -2, -0.0, 0, 2, 2, -1, 2}));
  EXPECT_EQ(buffer_values(T), (std::vector<double>{-2, -1, -0.0, 0, 1, 2, -1, 1}));
}

// scan_sum (cumsum, issue 18): inclusive prefix sums in index order along either axis; bf16 sums
// accumulate in f32 and each is rounded once; i32 sums wrap.
TEST(InterpreterOps, ScanSumsArePrefixSumsInIndexOrder) {
  auto module = parse_verified(R"(module
kernel @scan(%X: tensor<2, 3, f32>, %B: tensor<2, 3, bf16>, %I: tensor<2, 3, i32>, %R: tensor<2, 3, f32>, %C: tensor<2, 3, f32>, %H: tensor<2, 3, bf16>, %J: tensor<2, 3, i32>) {
  %one = constant {value = 1} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %i, %zero : tile<2x3xf32, reg>
  %r = scan_sum %x {axis = 1} : tile<2x3xf32, reg>
  %c = scan_sum %x {axis = 0} : tile<2x3xf32, reg>
  %b = load %B, %i, %zero : tile<2x3xbf16, reg>
  %h = scan_sum %b {axis = 1} : tile<2x3xbf16, reg>
  %n = load %I, %i, %zero : tile<2x3xi32, reg>
  %j = scan_sum %n {axis = 1} : tile<2x3xi32, reg>
  store %R, %i, %zero, %r
  store %C, %i, %zero, %c
  store %H, %i, %zero, %h
  store %J, %i, %zero, %j
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::f32, {2, 3}, {1, 2, 3, 10, 20, 30});
  HostBuffer B = make_buffer(ScalarKind::bf16, {2, 3}, {256, 1, 1, 1, 1, 1});
  HostBuffer I = make_buffer(ScalarKind::i32, {2, 3}, {2147483647, 1, 1, -1, -2, -3});
  HostBuffer R(ScalarKind::f32, {2, 3}), C = R, H(ScalarKind::bf16, {2, 3}), J(ScalarKind::i32, {2, 3});
  ASSERT_TRUE(launch(*module, {&X, &B, &I, &R, &C, &H, &J}).ok);
  EXPECT_EQ(buffer_values(R), (std::vector<double>{1, 3, 6, 10, 30, 60}));
  EXPECT_EQ(buffer_values(C), (std::vector<double>{1, 2, 3, 11, 22, 33}));
  // 256 + 1 rounds to 256 in bf16, but the f32 running sum keeps 257 and 258 rounds to 258.
  EXPECT_EQ(buffer_values(H), (std::vector<double>{256, 256, 258, 1, 2, 3}));
  EXPECT_EQ(buffer_values(J), (std::vector<double>{2147483647, -2147483648.0, -2147483647, -1, -3, -6}));
}

// sort: each line in ascending order along its axis (descending = 1: the reverse), floats with
// -0.0 before +0.0 and NaNs after every number (first, descending); integers by value, u8 as
// unsigned.
TEST(InterpreterOps, SortOrdersEachLineWithNansLastAndNegativeZeroFirst) {
  auto module = parse_verified(R"(module
kernel @sorts(%X: tensor<2, 4, f32>, %U: tensor<2, 4, u8>, %A: tensor<2, 4, f32>, %D: tensor<2, 4, f32>, %C: tensor<2, 4, f32>, %V: tensor<2, 4, u8>) {
  %one = constant {value = 1} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %i, %zero : tile<2x4xf32, reg>
  %a = sort %x {axis = 1, descending = 0} : tile<2x4xf32, reg>
  %d = sort %x {axis = 1, descending = 1} : tile<2x4xf32, reg>
  %c = sort %x {axis = 0, descending = 0} : tile<2x4xf32, reg>
  %u = load %U, %i, %zero : tile<2x4xu8, reg>
  %v = sort %u {axis = 1, descending = 1} : tile<2x4xu8, reg>
  store %A, %i, %zero, %a
  store %D, %i, %zero, %d
  store %C, %i, %zero, %c
  store %V, %i, %zero, %v
  return
}
)");
  ASSERT_TRUE(module);
  const double nan = std::nan("");
  HostBuffer X = make_buffer(ScalarKind::f32, {2, 4}, {nan, 0.0, -1, -0.0, 3, -INFINITY, 2, 3});
  HostBuffer U = make_buffer(ScalarKind::u8, {2, 4}, {200, 7, 255, 0, 1, 2, 3, 4});
  HostBuffer A(ScalarKind::f32, {2, 4}), D = A, C = A, V(ScalarKind::u8, {2, 4});
  ASSERT_TRUE(launch(*module, {&X, &U, &A, &D, &C, &V}).ok);
  const std::vector<double> up = buffer_values(A), down = buffer_values(D), columns = buffer_values(C);
  EXPECT_EQ(up[0], -1);
  EXPECT_TRUE(up[1] == 0 && std::signbit(up[1])) << "-0.0 before +0.0";
  EXPECT_TRUE(up[2] == 0 && !std::signbit(up[2]));
  EXPECT_TRUE(std::isnan(up[3])) << "NaN last";
  EXPECT_EQ((std::vector<double>(up.begin() + 4, up.end())), (std::vector<double>{-INFINITY, 2, 3, 3}));
  EXPECT_TRUE(std::isnan(down[0])) << "NaN first, descending";
  EXPECT_TRUE(down[1] == 0 && !std::signbit(down[1]) && down[2] == 0 && std::signbit(down[2]));
  EXPECT_EQ(down[3], -1);
  // Along axis 0 each column of two: (NaN, 3) -> (3, NaN), (0, -inf) -> (-inf, 0), ...
  EXPECT_EQ(columns[0], 3);
  EXPECT_TRUE(std::isnan(columns[4]));
  EXPECT_EQ(columns[1], -INFINITY);
  EXPECT_EQ(columns[2], -1);
  EXPECT_EQ(columns[6], 2);
  EXPECT_EQ(buffer_values(V), (std::vector<double>{255, 200, 7, 0, 4, 3, 2, 1}));
}

// scan_prod, scan_max and scan_min (cumprod, cummax, cummin): running products, maxima and
// minima in index order; a NaN is skipped by max and min as by `max`; i32 products wrap.
TEST(InterpreterOps, ScansOfProductsMaximaAndMinimaRunInIndexOrder) {
  auto module = parse_verified(R"(module
kernel @scans(%X: tensor<2, 4, f32>, %I: tensor<2, 4, i32>, %P: tensor<2, 4, f32>, %M: tensor<2, 4, f32>, %N: tensor<2, 4, f32>, %Q: tensor<2, 4, i32>, %A: tensor<2, 4, i32>) {
  %one = constant {value = 1} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %i, %zero : tile<2x4xf32, reg>
  %p = scan_prod %x {axis = 1} : tile<2x4xf32, reg>
  %m = scan_max %x {axis = 1} : tile<2x4xf32, reg>
  %n = scan_min %x {axis = 0} : tile<2x4xf32, reg>
  %k = load %I, %i, %zero : tile<2x4xi32, reg>
  %q = scan_prod %k {axis = 1} : tile<2x4xi32, reg>
  %a = scan_max %k {axis = 0} : tile<2x4xi32, reg>
  store %P, %i, %zero, %p
  store %M, %i, %zero, %m
  store %N, %i, %zero, %n
  store %Q, %i, %zero, %q
  store %A, %i, %zero, %a
  return
}
)");
  ASSERT_TRUE(module);
  const double nan = std::nan("");
  HostBuffer X = make_buffer(ScalarKind::f32, {2, 4}, {2, -3, 0.5, 4, 1, nan, 7, -8});
  HostBuffer I = make_buffer(ScalarKind::i32, {2, 4}, {65536, 65536, 3, -1, 1, 70000, -5, 2});
  HostBuffer P(ScalarKind::f32, {2, 4}), M = P, N = P, Q(ScalarKind::i32, {2, 4}), A = Q;
  ASSERT_TRUE(launch(*module, {&X, &I, &P, &M, &N, &Q, &A}).ok);
  std::vector<double> p = buffer_values(P);
  EXPECT_EQ((std::vector<double>{p[0], p[1], p[2], p[3], p[4]}), (std::vector<double>{2, -6, -3, -12, 1}));
  EXPECT_TRUE(std::isnan(p[5]) && std::isnan(p[6]) && std::isnan(p[7]));  // NaN times anything
  EXPECT_EQ(buffer_values(M), (std::vector<double>{2, 2, 2, 4, 1, 1, 7, 7}));
  EXPECT_EQ(buffer_values(N), (std::vector<double>{2, -3, 0.5, 4, 1, -3, 0.5, -8}));
  // 65536 · 65536 wraps to 0 in i32.
  EXPECT_EQ(buffer_values(Q), (std::vector<double>{65536, 0, 0, 0, 1, 70000, -350000, -700000}));
  EXPECT_EQ(buffer_values(A), (std::vector<double>{65536, 65536, 3, -1, 65536, 70000, 3, 2}));
}

// fma rounds once: (1 + 2^-12)² - (1 + 2^-11) is 2^-24 exactly, where the product rounded first
// (to 1 + 2^-11 in f32, a tie to even) gives 0.
TEST(InterpreterOps, FmaRoundsOnce) {
  auto module = parse_verified(R"(module
kernel @fused(%A: tensor<2, f32>, %B: tensor<2, f32>, %C: tensor<2, f32>, %F: tensor<2, f32>, %U: tensor<2, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %a = load %A, %i : tile<2xf32, reg>
  %b = load %B, %i : tile<2xf32, reg>
  %c = load %C, %i : tile<2xf32, reg>
  %f = fma %a, %b, %c : tile<2xf32, reg>
  %p = mul %a, %b : tile<2xf32, reg>
  %u = add %p, %c : tile<2xf32, reg>
  store %F, %i, %f
  store %U, %i, %u
  return
}
)");
  ASSERT_TRUE(module);
  const double e = std::ldexp(1.0, -12);
  HostBuffer A = make_buffer(ScalarKind::f32, {2}, {1 + e, 3}), B = make_buffer(ScalarKind::f32, {2}, {1 + e, 0.5});
  HostBuffer C = make_buffer(ScalarKind::f32, {2}, {-(1 + 2 * e), -1});
  HostBuffer F(ScalarKind::f32, {2}), U = F;
  ASSERT_TRUE(launch(*module, {&A, &B, &C, &F, &U}).ok);
  EXPECT_EQ(buffer_values(F), (std::vector<double>{std::ldexp(1.0, -24), 0.5}));
  EXPECT_EQ(buffer_values(U), (std::vector<double>{0, 0.5}));
}

// exp2 is 2^x, exact at integers (as C's exp2f is), and exp2(x·log2 e) is exp(x) to within a
// few ulp: the base-2 softmax of samples/attention.tile.
TEST(InterpreterOps, Exp2IsTwoToTheX) {
  auto module = parse_verified(R"(module
kernel @powers(%X: tensor<6, f32>, %P: tensor<6, f32>, %E: tensor<6, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<6xf32, reg>
  %p = exp2 %x : tile<6xf32, reg>
  %log2e = constant {value = 1.4426950408889634} : f32
  %y = mul %x, %log2e : tile<6xf32, reg>
  %e = exp2 %y : tile<6xf32, reg>
  store %P, %i, %p
  store %E, %i, %e
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::f32, {6}, {-126, -1, 0, 1, 10, 0.5});
  HostBuffer P(ScalarKind::f32, {6}), E = P;
  ASSERT_TRUE(launch(*module, {&X, &P, &E}).ok);
  EXPECT_EQ(buffer_values(P), (std::vector<double>{std::ldexp(1.0, -126), 0.5, 1, 2, 1024, std::exp2(0.5f)}));
  std::vector<double> e = buffer_values(E);
  for (size_t k = 0; k < e.size(); ++k) {
    double x = std::vector<double>{-126, -1, 0, 1, 10, 0.5}[k];
    if (x > -80) {
      EXPECT_NEAR(e[k], std::exp(x), std::exp(x) * 1e-6) << x;
    }
  }
}

// `elements`: the coordinates are the first element's, not the tile's; outside reads zero.
TEST(InterpreterOps, ALoadAtElementCoordinatesReadsItsHalo) {
  auto module = parse_verified(R"(module
kernel @halo(%X: tensor<6, i32>, %Y: tensor<4, i32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %m1 = constant {value = -1} : index
  %i = grid_ids %one : index
  %x = load %X, %m1 {elements} : tile<4xi32, reg>
  store %Y, %z, %x
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::i32, {6}, {10, 11, 12, 13, 14, 15}), Y(ScalarKind::i32, {4});
  ASSERT_TRUE(launch(*module, {&X, &Y}).ok);
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{0, 10, 11, 12}));
}

TEST(InterpreterOps, MasksAbsAndMinimaOfIntegers) {
  auto module = parse_verified(R"(module
kernel @masks(%X: tensor<2, 4, i32>, %A: tensor<2, 4, i32>, %M: tensor<2, 4, i32>, %R: tensor<2, 1, i32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %z, %z : tile<2x4xi32, reg>
  %a = abs %x : tile<2x4xi32, reg>
  %c0 = constant {value = 0} : i32
  %c2 = constant {value = 2} : i32
  %neg = cmp %x, %c0 {predicate = "lt"} : tile<2x4xi1, reg>
  %big = cmp %x, %c2 {predicate = "gt"} : tile<2x4xi1, reg>
  %small = not %big : tile<2x4xi1, reg>
  %both = and %neg, %small : tile<2x4xi1, reg>
  %either = or %both, %big : tile<2x4xi1, reg>
  %m = select %either, %x, %c0 : tile<2x4xi32, reg>
  %r = reduce_min %x {axis = 1} : tile<2x1xi32, reg>
  store %A, %z, %z, %a
  store %M, %z, %z, %m
  store %R, %z, %z, %r
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::i32, {2, 4}, {-3, 5, 0, 2, -2147483648.0, 7, -1, 3});
  HostBuffer A(ScalarKind::i32, {2, 4}), M = A, R(ScalarKind::i32, {2, 1});
  ASSERT_TRUE(launch(*module, {&X, &A, &M, &R}).ok);
  EXPECT_EQ(buffer_values(A), (std::vector<double>{3, 5, 0, 2, -2147483648.0, 7, 1, 3}));  // i32 abs wraps
  EXPECT_EQ(buffer_values(M), (std::vector<double>{-3, 5, 0, 0, -2147483648.0, 7, -1, 3}));  // x < 0 || x > 2
  EXPECT_EQ(buffer_values(R), (std::vector<double>{-3, -2147483648.0}));
}

TEST(InterpreterOps, ReductionsKeepTheAxisAndSumInIndexOrder) {
  auto module = parse_verified(R"(module
kernel @reduce(%X: tensor<2, 4, f32>, %S: tensor<2, 1, f32>, %M: tensor<1, 4, f32>, %D: tensor<2, 4, f32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %z, %z : tile<2x4xf32, reg>
  %s = reduce_sum %x {axis = 1} : tile<2x1xf32, reg>
  %m = reduce_max %x {axis = 0} : tile<1x4xf32, reg>
  %d = sub %x, %m : tile<2x4xf32, reg>
  store %S, %z, %z, %s
  store %M, %z, %z, %m
  store %D, %z, %z, %d
  return
}
)");
  ASSERT_TRUE(module);
  // Row 0: ((1e8 + 1) - 1e8) + 1 = 1 in f32 in index order (reverse order would give 0).
  std::vector<double> x = {1e8, 1, -1e8, 1, 5, -6, 7, 8};
  HostBuffer X = make_buffer(ScalarKind::f32, {2, 4}, x), S(ScalarKind::f32, {2, 1}),
             M(ScalarKind::f32, {1, 4}), D(ScalarKind::f32, {2, 4});
  ASSERT_TRUE(launch(*module, {&X, &S, &M, &D}).ok);
  EXPECT_EQ(buffer_values(S), (std::vector<double>{1, 14}));
  EXPECT_EQ(buffer_values(M), (std::vector<double>{1e8, 1, 7, 8}));
  std::vector<double> d = buffer_values(D);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(d[r * 4 + c], static_cast<float>(x[r * 4 + c]) - static_cast<float>(buffer_values(M)[c]));
}

TEST(InterpreterOps, Bf16SumAccumulatesInF32AndRoundsOnce) {
  auto module = parse_verified(R"(module
kernel @sum(%X: tensor<1, 3, bf16>, %S: tensor<1, 1, bf16>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %z, %z : tile<1x3xbf16, reg>
  %s = reduce_sum %x {axis = 1} : tile<1x1xbf16, reg>
  store %S, %z, %z, %s
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::bf16, {1, 3}, {1, 0x1p-8, 0x1p-8}), S(ScalarKind::bf16, {1, 1});
  ASSERT_TRUE(launch(*module, {&X, &S}).ok);
  EXPECT_EQ(S.load_float(0), 1.0f + 0x1p-7f);  // rounding each step would give 1
}

TEST(InterpreterOps, CastsRoundTruncateAndWrap) {
  auto module = parse_verified(R"(module
kernel @casts(%X: tensor<4, f32>, %B: tensor<4, bf16>, %I: tensor<4, i32>, %H: tensor<4, f16>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf32, reg>
  %b = cast %x : tile<4xbf16, reg>
  %n = cast %x : tile<4xi32, reg>
  %h = cast %n : tile<4xf16, reg>
  store %B, %i, %b
  store %I, %i, %n
  store %H, %i, %h
  return
}
)");
  ASSERT_TRUE(module);
  std::vector<double> x = {1.00390625, -2.75, 70000.5, 3.999};
  HostBuffer X = make_buffer(ScalarKind::f32, {4}, x), B(ScalarKind::bf16, {4}), I(ScalarKind::i32, {4}), H(ScalarKind::f16, {4});
  ASSERT_TRUE(launch(*module, {&X, &B, &I, &H}).ok);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(B.load_float(i), bf16(static_cast<float>(x[i])));
  EXPECT_EQ(buffer_values(I), (std::vector<double>{1, -2, 70000, 3}));
  EXPECT_EQ(H.load_float(0), 1.0f);
  EXPECT_TRUE(std::isinf(H.load_float(2)));  // 70000 is past f16's 65504
}

TEST(InterpreterOps, LoopCarriesValuesAndIfPicksARegion) {
  auto module = parse_verified(R"(module
kernel @loop(%X: tensor<8, f32>, %alpha: f32, %Y: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %zero = constant {value = 0} : index
  %two = constant {value = 2} : index
  %lb = constant {value = 0} : index
  %init = zeros : tile<4xf32, reg>
  %acc = for %lb, %two, %one, %init {pipeline = 2} : tile<4xf32, reg> {
  ^(%k: index, %a: tile<4xf32, reg>):
    %x = load %X, %k : tile<4xf32, reg>
    %scaled = mul %x, %alpha : tile<4xf32, reg>
    %first = cmp %k, %zero {predicate = "eq"} : i1
    %next = if %first : tile<4xf32, reg> {
      %f = full %alpha : tile<4xf32, reg>
      %b = add %a, %f : tile<4xf32, reg>
      yield %b
    } {
      %c = add %a, %scaled : tile<4xf32, reg>
      yield %c
    }
    yield %next
  }
  store %Y, %zero, %acc
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::f32, {8}, {1, 2, 3, 4, 5, 6, 7, 8}), Y(ScalarKind::f32, {4});
  LaunchResult result = launch(*module, {&X, 0.5, &Y});
  ASSERT_TRUE(result.ok) << result.describe();
  // k = 0: acc = alpha (the if's then-region); k = 1: acc += X[4..8] * alpha.
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{3.0, 3.5, 4.0, 4.5}));
}

// A grid of more tiles than a CUDA launch takes is refused as the launcher refuses it: the
// interpreter started on 10^10 tiles and ran for hours (found by a helper).
TEST(InterpreterOps, AGridPastWhatALaunchTakesIsRefused) {
  auto module = parse_verified(R"(module
kernel @wide(%Y: tensor<4, f32>) {
  %many = constant {value = 100000} : index
  %i, %j = grid_ids %many, %many : index, index loc(3:3)
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer Y(ScalarKind::f32, {4});
  LaunchResult result = launch(*module, {&Y});
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.message.find("the grid has 10000000000 tiles; a launch takes at most 2^31 - 1"), std::string::npos)
      << result.message;
  // An extent of 0 empties the grid whatever the others are, as the launcher's tile_count == 0.
  auto empty = parse_verified(R"(module
kernel @empty(%Y: tensor<4, f32>) {
  %many = constant {value = 100000} : index
  %none = constant {value = 0} : index
  %i, %j, %k = grid_ids %many, %many, %none : index, index, index loc(4:3)
  return
}
)");
  ASSERT_TRUE(empty);
  LaunchResult nothing = launch(*empty, {&Y});
  EXPECT_TRUE(nothing.ok) << nothing.describe();
  EXPECT_EQ(nothing.tile_count, 0);
}

TEST(InterpreterOps, TwoTilesStoringOneElementIsARace) {
  auto module = parse_verified(R"(module
kernel @clash(%Y: tensor<4, f32>) {
  %three = constant {value = 3} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %three : index
  %t = zeros : tile<4xf32, reg>
  store %Y, %zero, %t loc(6:3)
  return
}
)");
  ASSERT_TRUE(module);
  // The pair named is the lowest two in any tile order (a run on several workers named whichever
  // pair reached the element in the other order, e.g. "tiles 2 and 0" running in reverse).
  ReverseTileRunner reverse;
  ThreadTileRunner threads(3);
  for (TileRunner* runner : std::initializer_list<TileRunner*>{nullptr, &reverse, &threads}) {
    HostBuffer Y(ScalarKind::f32, {4});
    LaunchResult result = launch(*module, {&Y}, {}, runner);
    ASSERT_FALSE(result.ok);
    EXPECT_NE(result.message.find("race: tiles 0 and 1 both store element [0] of %Y"), std::string::npos) << result.message;
    EXPECT_EQ(result.location.line, 6u);
    EXPECT_EQ(result.tile, 1);
  }
}

// An in-place kernel: each tile loads Y's tile at `shift` elements past its own and stores its
// own. With shift 0 it reads only what it writes (no race, Y doubled); with shift 1 tile 0 reads
// element 4, which tile 1 stores: a race whichever runs first (the read after the write, or the
// write after the read), reported for the lowest pair in any tile order. An adding store races
// with a read the same way.
TEST(InterpreterOps, ATileReadingAnElementAnotherTileWritesIsARace) {
  const char* kText = R"(module
kernel @in_place(%Y: tensor<8, f32>) {
  %two = constant {value = 2} : index
  %four = constant {value = 4} : index
  %shift = constant {value = 0} : index
  %i = grid_ids %two : index
  %first = mul %i, %four : index
  %at = add %first, %shift : index
  %x = load %Y, %at {elements} : tile<4xf32, reg> loc(8:3)
  %y = add %x, %x : tile<4xf32, reg>
  store %Y, %i, %y loc(10:3)
  return
}
)";
  ReverseTileRunner reverse;
  ThreadTileRunner threads(2);
  auto own = parse_verified(kText);
  ASSERT_TRUE(own);
  for (TileRunner* runner : std::initializer_list<TileRunner*>{nullptr, &reverse, &threads}) {
    HostBuffer y = make_buffer(ScalarKind::f32, {8}, {0, 1, 2, 3, 4, 5, 6, 7});
    LaunchResult result = launch(*own, {&y}, {}, runner);
    ASSERT_TRUE(result.ok) << result.describe();
    EXPECT_EQ(buffer_values(y), (std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14}));
  }
  auto shifted = parse_verified(testing::replace_once(kText, "{value = 0} : index\n  %i", "{value = 1} : index\n  %i"));
  ASSERT_TRUE(shifted);
  for (TileRunner* runner : std::initializer_list<TileRunner*>{nullptr, &reverse, &threads}) {
    HostBuffer y(ScalarKind::f32, {8});
    LaunchResult result = launch(*shifted, {&y}, {}, runner);
    ASSERT_FALSE(result.ok);
    EXPECT_NE(result.message.find("race: tile 1 stores element [4] of %Y, which tile 0 reads; a tile may read only "
                                  "elements no other tile of the launch writes"),
              std::string::npos)
        << result.message;
    EXPECT_EQ(result.location.line, 10u);
  }
  // Tile 1 reads first in reverse order only: the serial rerun names the same pair.
  auto adding = parse_verified(testing::replace_once(
      testing::replace_once(kText, "{value = 0} : index\n  %i", "{value = 1} : index\n  %i"), "store %Y, %i, %y",
      "store %Y, %i, %y {accumulate}"));
  ASSERT_TRUE(adding);
  HostBuffer y(ScalarKind::f32, {8});
  LaunchResult result = launch(*adding, {&y}, {}, &reverse);
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.message.find("race: tile 1 adds to element [4] of %Y, which tile 0 reads"), std::string::npos)
      << result.message;
}

// An f32 `+=` flushes subnormal operands and sums to zero of their sign, as the GPU's atom.add.f32
// and TMA reducing adds do (a helper found the interpreter kept 4e-40 where a GPU keeps 0); an
// f32 `=` store and arithmetic keep subnormals.
TEST(InterpreterOps, AnF32AddingStoreFlushesSubnormals) {
  auto module = parse_verified(R"(module
kernel @tiny(%Y: tensor<4, f32>, %Z: tensor<4, f32>) {
  %four = constant {value = 4} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %four : index
  %small = constant {value = 1.0e-40} : f32
  %t = full %small : tile<4xf32, reg>
  store %Y, %zero, %t {accumulate}
  store %Z, %zero, %t {accumulate = "max"}
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer Y(ScalarKind::f32, {4}), Z(ScalarKind::f32, {4});
  ASSERT_TRUE(launch(*module, {&Y, &Z}).ok);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Y.load_float(i), 0.0f) << i;
    EXPECT_EQ(Z.load_float(i), 1.0e-40f) << i;  // max= keeps it
  }
}

// A masked store (`store Y[0] = t if iota == i`) writes only where its mask holds, and only those
// elements are the tile's: three tiles each writing one element of the same tile of Y is no race,
// and the element no tile writes keeps its value. Two tiles whose masks overlap race.
TEST(InterpreterOps, MaskedStoresWriteAndClaimOnlyTheirElements) {
  const char* kText = R"(module
kernel @masked(%Y: tensor<4, f32>) {
  %three = constant {value = 3} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %three : index
  %lane = iota {axis = 0} : tile<4xi32, reg>
  %mine = cast %i : i32
  %m = cmp %lane, %mine {predicate = "eq"} : tile<4xi1, reg>
  %value = cast %mine : f32
  %t = full %value : tile<4xf32, reg>
  store %Y, %zero, %m, %t {masked} loc(10:3)
  return
}
)";
  ReverseTileRunner reverse;
  ThreadTileRunner threads(3);
  auto disjoint = parse_verified(kText);  // tile i writes element i
  ASSERT_TRUE(disjoint);
  for (TileRunner* runner : std::initializer_list<TileRunner*>{nullptr, &reverse, &threads}) {
    HostBuffer y = make_buffer(ScalarKind::f32, {4}, {-1, -1, -1, -1});
    LaunchResult result = launch(*disjoint, {&y}, {}, runner);
    ASSERT_TRUE(result.ok) << result.describe();
    EXPECT_EQ(buffer_values(y), (std::vector<double>{0, 1, 2, -1}));
  }
  // lane <= i: tile 0 writes element 0, tile 1 elements 0 and 1, ...
  auto racing = parse_verified(testing::replace_once(kText, "{predicate = \"eq\"}", "{predicate = \"le\"}"));
  ASSERT_TRUE(racing);
  HostBuffer y(ScalarKind::f32, {4});
  LaunchResult result = launch(*racing, {&y});
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.message.find("race: tiles 0 and 1 both store element [0] of %Y"), std::string::npos) << result.message;
}

// Bitwise combining stores: three tiles or their bits into one element in any order (bit i from
// tile i), xor them into another, and and them into a third; a tile or-ing into an element another
// adds to is a race, whichever runs first.
TEST(InterpreterOps, TilesCombiningBitsIntoOneElementAgreeInAnyOrder) {
  const char* kText = R"(module
kernel @bits(%O: tensor<1, i32>, %X: tensor<1, u32>, %A: tensor<1, i64>) {
  %three = constant {value = 3} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %three : index
  %one = constant {value = 1} : i32
  %shift = cast %i : i32
  %bit = shl %one, %shift : i32
  %b = full %bit : tile<1xi32, reg>
  store %O, %zero, %b {accumulate = "or"}
  %u = cast %bit : u32
  %x = full %u : tile<1xu32, reg>
  store %X, %zero, %x {accumulate = "xor"}
  %w = cast %bit : i64
  %n = not %w : i64
  %a = full %n : tile<1xi64, reg>
  store %A, %zero, %a {accumulate = "and"} loc(17:3)
  return
}
)";
  auto module = parse_verified(kText);
  ASSERT_TRUE(module);
  ReverseTileRunner reverse;
  ThreadTileRunner threads(3);
  for (TileRunner* runner : std::initializer_list<TileRunner*>{nullptr, &reverse, &threads}) {
    HostBuffer o = make_buffer(ScalarKind::i32, {1}, {16}), x = make_buffer(ScalarKind::u32, {1}, {5});
    HostBuffer a = make_buffer(ScalarKind::i64, {1}, {-1});
    LaunchResult result = launch(*module, {&o, &x, &a}, {}, runner);
    ASSERT_TRUE(result.ok) << result.describe();
    EXPECT_EQ(buffer_values(o), (std::vector<double>{23}));  // 16 | 1 | 2 | 4
    EXPECT_EQ(buffer_values(x), (std::vector<double>{2}));   // 5 ^ 1 ^ 2 ^ 4
    EXPECT_EQ(buffer_values(a), (std::vector<double>{-8}));  // -1 & ~1 & ~2 & ~4
  }
  auto racing = parse_verified(testing::replace_once(kText, "store %A, %zero, %a {accumulate = \"and\"}",
                                                     "store %O, %zero, %b {accumulate}"));
  ASSERT_TRUE(racing);
  HostBuffer o(ScalarKind::i32, {1}), x(ScalarKind::u32, {1}), a(ScalarKind::i64, {1});
  LaunchResult result = launch(*racing, {&o, &x, &a});
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.message.find("every tile combining into an element must do it the same way"), std::string::npos)
      << result.message;
}

// `store T[i] += tile` (issue 18: split-K and dQ need tiles adding into one output): every tile
// adds its tile to what the tensor holds, in any tile order and on any number of workers; the
// integer sum wraps to the element type.
TEST(InterpreterOps, TilesAddingToOneElementSumInAnyOrder) {
  auto module = parse_verified(R"(module
kernel @add(%X: tensor<3, 4, f32>, %Y: tensor<4, f32>, %W: tensor<4, i32>) {
  %three = constant {value = 3} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %three : index
  %x = load %X, %i, %zero : tile<1x4xf32, reg>
  %row = reshape %x : tile<4xf32, reg>
  store %Y, %zero, %row {accumulate}
  %big = constant {value = 1073741824} : i32
  %w = full %big : tile<4xi32, reg>
  store %W, %zero, %w {accumulate}
  return
}
)");
  ASSERT_TRUE(module);
  const HostBuffer X = make_buffer(ScalarKind::f32, {3, 4}, {1, 2, 3, 4, 10, 20, 30, 40, 100, 200, 300, 400});
  const HostBuffer Y = make_buffer(ScalarKind::f32, {4}, {0.5, -1, 0, 1000});
  const HostBuffer W = make_buffer(ScalarKind::i32, {4}, {0, 1, -1, 5});
  ReverseTileRunner reverse;
  ThreadTileRunner threads(3);
  for (TileRunner* runner : std::initializer_list<TileRunner*>{nullptr, &reverse, &threads}) {
    HostBuffer x = X, y = Y, w = W;
    LaunchResult result = launch(*module, {&x, &y, &w}, {}, runner);
    ASSERT_TRUE(result.ok) << result.describe();
    EXPECT_EQ(buffer_values(y), (std::vector<double>{111.5, 221, 333, 1444}));
    // 3 · 2^30 wraps past 2^31 - 1: 3221225472 - 2^32 = -1073741824.
    EXPECT_EQ(buffer_values(w), (std::vector<double>{-1073741824, -1073741823, -1073741825, -1073741819}));
  }
}

// A tile storing an element that other tiles add to is a race, whichever runs first: the sum
// would depend on the order. One tile may both add to an element and store it, in either order,
// and a third tile adding to an element two others added to is no race either.
TEST(InterpreterOps, StoringAnElementOtherTilesAddToIsARace) {
  for (const char* storer : {"0", "1"}) {
    auto module = parse_verified(fmt::format(R"(module
kernel @clash(%Y: tensor<4, f32>) {{
  %two = constant {{value = 2}} : index
  %zero = constant {{value = 0}} : index
  %storer = constant {{value = {}}} : index
  %i = grid_ids %two : index
  %t = zeros : tile<4xf32, reg>
  %stores = cmp %i, %storer {{predicate = "eq"}} : i1
  if %stores {{
    store %Y, %zero, %t loc(10:5)
    yield
  }} {{
    store %Y, %zero, %t {{accumulate}} loc(13:5)
    yield
  }}
  return
}}
)", storer));
    ASSERT_TRUE(module);
    HostBuffer Y(ScalarKind::f32, {4});
    LaunchResult result = launch(*module, {&Y});
    ASSERT_FALSE(result.ok);
    // Tiles run in index order: the second one finds the first one's write.
    if (std::string(storer) == "0")
      EXPECT_EQ(result.message, "'store': race: tile 1 adds to element [0] of %Y, which tile 0 stores (=); every tile writing "
                                "it must add (+=)");
    else
      EXPECT_EQ(result.message, "'store': race: tile 1 stores element [0] of %Y, which tile 0 adds to (+=); add to it too, "
                                "or store it from one tile");
    EXPECT_EQ(result.tile, 1);
  }
  auto own = parse_verified(R"(module
kernel @own(%Y: tensor<8, f32>) {
  %three = constant {value = 3} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %three : index
  %v = cast %i : f32
  %t = full %v : tile<4xf32, reg>
  %t0 = cmp %i, %zero {predicate = "eq"} : i1
  if %t0 {
    store %Y, %zero, %t {accumulate}
    store %Y, %zero, %t
    store %Y, %zero, %t {accumulate}
    yield
  } {
    yield
  }
  %one = constant {value = 1} : index
  %late = cmp %i, %zero {predicate = "ne"} : i1
  if %late {
    store %Y, %one, %t {accumulate}
    yield
  } {
    yield
  }
  return
}
)");
  ASSERT_TRUE(own);
  HostBuffer Y = make_buffer(ScalarKind::f32, {8}, {1, 1, 1, 1, 1, 1, 1, 1});
  LaunchResult result = launch(*own, {&Y});
  ASSERT_TRUE(result.ok) << result.describe();
  // Tile 0: 1 + 0, then 0, then + 0; tiles 1 and 2 add 1 and 2 to the second tile.
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{0, 0, 0, 0, 4, 4, 4, 4}));
}

// `store T[i] max= tile` and `min=` (store {accumulate = "max"} / "min"): tiles keep the larger
// (smaller) of each pair in any order, exactly; a NaN operand is ignored (maxNum), a u32 compares
// unsigned and an i64 signed.
TEST(InterpreterOps, TilesTakingMaximaAndMinimaAgreeInAnyOrder) {
  auto module = parse_verified(R"(module
kernel @extrema(%X: tensor<3, 4, f32>, %Y: tensor<4, f32>, %Z: tensor<4, bf16>, %U: tensor<3, u32>, %L: tensor<3, i64>) {
  %three = constant {value = 3} : index
  %zero = constant {value = 0} : index
  %i = grid_ids %three : index
  %x = load %X, %i, %zero : tile<1x4xf32, reg>
  %row = reshape %x : tile<4xf32, reg>
  store %Y, %zero, %row {accumulate = "max"}
  %half = cast %row : tile<4xbf16, reg>
  store %Z, %zero, %half {accumulate = "min"}
  %k = cast %i : u32
  %scale = constant {value = 1610612736} : u32
  %u = mul %k, %scale : u32
  %ut = full %u : tile<1xu32, reg>
  store %U, %zero, %ut {accumulate = "max"}
  %s = cast %i : i64
  %m = constant {value = -5000000000} : i64
  %l = mul %s, %m : i64
  %lt = full %l : tile<1xi64, reg>
  store %L, %zero, %lt {accumulate = "min"}
  return
}
)");
  ASSERT_TRUE(module);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const HostBuffer X = make_buffer(ScalarKind::f32, {3, 4}, {1, -2, nan, 4, -10, 20, 30, nan, 100, -200, 3, -4});
  const HostBuffer Y = make_buffer(ScalarKind::f32, {4}, {0.5, -1, 0, 1000});
  const HostBuffer Z = make_buffer(ScalarKind::bf16, {4}, {0.5, -1, 0, 1000});
  const HostBuffer U = make_buffer(ScalarKind::u32, {3}, {7, 7, 7});
  const HostBuffer L = make_buffer(ScalarKind::i64, {3}, {7, 7, 7});
  ReverseTileRunner reverse;
  ThreadTileRunner threads(3);
  for (TileRunner* runner : std::initializer_list<TileRunner*>{nullptr, &reverse, &threads}) {
    HostBuffer x = X, y = Y, z = Z, u = U, l = L;
    LaunchResult result = launch(*module, {&x, &y, &z, &u, &l}, {}, runner);
    ASSERT_TRUE(result.ok) << result.describe();
    EXPECT_EQ(buffer_values(y), (std::vector<double>{100, 20, 30, 1000}));
    EXPECT_EQ(buffer_values(z), (std::vector<double>{-10, -200, 0, -4}));
    // Tile 2's 2 · 1610612736 = 3221225472 (above 2^31: negative if compared signed) is the largest.
    EXPECT_EQ(buffer_values(u), (std::vector<double>{3221225472, 7, 7}));
    EXPECT_EQ(buffer_values(l), (std::vector<double>{-10000000000, 7, 7}));
  }
}

// Tiles combining into one element in different ways (an add and a max) give a result that
// depends on their order: a race, named with both; a store to an element others take the
// maximum into is one too.
TEST(InterpreterOps, CombiningIntoOneElementTwoWaysIsARace) {
  for (const char* other : {"{accumulate}", ""}) {
    auto module = parse_verified(fmt::format(R"(module
kernel @clash(%Y: tensor<4, f32>) {{
  %two = constant {{value = 2}} : index
  %zero = constant {{value = 0}} : index
  %i = grid_ids %two : index
  %t = zeros : tile<4xf32, reg>
  %first = cmp %i, %zero {{predicate = "eq"}} : i1
  if %first {{
    store %Y, %zero, %t {{accumulate = "max"}}
    yield
  }} {{
    store %Y, %zero, %t {}
    yield
  }}
  return
}}
)", other));
    ASSERT_TRUE(module);
    HostBuffer Y(ScalarKind::f32, {4});
    LaunchResult result = launch(*module, {&Y});
    ASSERT_FALSE(result.ok);
    if (std::string(other).empty())
      EXPECT_EQ(result.message, "'store': race: tile 1 stores element [0] of %Y, which tile 0 takes the maximum into "
                                "(max=); take the maximum into it too, or store it from one tile");
    else
      EXPECT_EQ(result.message, "'store': race: tile 1 adds to element [0] of %Y (+=), which tile 0 takes the maximum "
                                "into (max=); every tile combining into an element must do it the same way (the "
                                "result would depend on the order of the CTAs)");
  }
}

TEST(InterpreterOps, MalformedOpsGiveErrorsWithLocations) {
  // Unverified IR (the verifier would reject both): the interpreter must still not crash.
  DiagnosticEngine diagnostics;
  auto module = parse_module(R"(module
kernel @bad(%X: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf32, reg>
  %s = reduce_sum %x : tile<1xf32, reg> loc(5:9)
  return
}
kernel @bad_predicate(%X: tensor<4, f32>) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %i : tile<4xf32, reg>
  %c = cmp %x, %x {predicate = "almost"} : tile<4xi1, reg> loc(12:3)
  return
}
)", diagnostics);
  ASSERT_TRUE(module) << diagnostics.render_all();
  HostBuffer X(ScalarKind::f32, {4});
  std::vector<KernelArgument> arguments = {&X};
  LaunchResult result = run_kernel(*module->kernels()[0], arguments);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.describe(), "5:9: 'reduce_sum': needs an integer 'axis' (tile 0)");
  result = run_kernel(*module->kernels()[1], arguments);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.location.line, 12u);
  EXPECT_NE(result.message.find("almost"), std::string::npos);
}

}  // namespace
}  // namespace tilec::runtime
