// tests/unit/frontend_test.cpp — parsing and lowering: structure, types and each diagnostic.
#include <gmock/gmock.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/lowering.h"
#include "passes/pass_manager.h"
#include "passes/promote_mma_operands.h"
#include "test_support.h"

namespace tilec::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kSoftmax = R"(
const BR = 4;
const D = 64;
kernel softmax(X: tensor<R, D, f32>, Y: tensor<R, D, f32>) grid tiles(cdiv(R, BR)) as (r) {
  x = load X[r, 0] : <BR, D>;
  e = exp(x - max(x, axis = 1));
  store Y[r, 0] = e / sum(e, axis = 1);
}
)";

TEST(Lowering, SoftmaxHasTheExpectedOpsAndTypes) {
  Compiled c = compile_tile(kSoftmax);
  ASSERT_TRUE(c.module) << c.errors();
  DiagnosticEngine verify_diagnostics;
  EXPECT_TRUE(verify_module(*c.module, verify_diagnostics)) << verify_diagnostics.render_all();
  Operation* kernel = c.module->find_kernel("softmax");
  ASSERT_TRUE(kernel);
  // X has a static D (a const) and a symbolic R.
  const Type& x = kernel->region().argument(0)->type();
  ASSERT_TRUE(x.is_tensor());
  EXPECT_EQ(x.dims()[0].symbol, "R");
  EXPECT_EQ(x.dims()[1].extent, 64);
  std::vector<std::string> names;
  walk(*c.module, [&](Operation& op) { names.push_back(std::string(op.name())); });
  std::vector<std::string> expected = {"kernel", "dim", "constant", "cdiv", "grid_ids", "constant",
                                       "load", "reduce_max", "sub", "exp", "constant", "reduce_sum",
                                       "div", "store", "return"};  // store's coordinates, then its value
  EXPECT_EQ(names, expected);
}

TEST(Lowering, DefinesOverrideConstants) {
  Compiled c = compile_tile(kSoftmax, {{"D", "128"}});
  ASSERT_TRUE(c.module) << c.errors();
  EXPECT_EQ(c.module->kernels()[0]->region().argument(0)->type().dims()[1].extent, 128);
}

// Lowering keeps the source's loads; promote-mma-operands (the first pass) makes the two that
// feed only mma TMA loads into shared memory, keeping their constraint attributes.
TEST(Lowering, GemmLoadsFeedingMmaBecomeTmaLoadsIntoSharedMemory) {
  Compiled c = compile_tile(R"(
const BM = 64; const BN = 64; const BK = 32;
kernel gemm(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, C: tensor<M, N, f32>)
    grid persistent(cdiv(M, BM), cdiv(N, BN), swizzle = 4, order = column) as (m, n) {
  acc = zeros<BM, BN, f32>();
  @serial
  for k in 0 .. cdiv(K, BK) pipeline(3) carry (acc) {
    a = load A[m, k] : <BM, BK>;
    @group(1, leader = 0) @max_depth(2)
    b = load B[k, n] : <BK, BN>;
    acc = mma(a, b, acc);
  }
  store C[m, n] = acc;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  int loads = 0;
  walk(*c.module, [&](Operation& op) { loads += op.kind() == OpKind::load ? 1 : 0; });
  EXPECT_EQ(loads, 2);
  DiagnosticEngine diagnostics;
  PassContext context{diagnostics};
  ASSERT_TRUE(promote_mma_operands(*c.module, context));
  int tma = 0;
  Operation* loop = nullptr;
  Operation* grid = nullptr;
  walk(*c.module, [&](Operation& op) {
    if (op.kind() == OpKind::tma_load) {
      ++tma;
      EXPECT_EQ(op.result()->type().space(), MemorySpace::smem);
      if (op.result()->name_hint() == "b") {
        EXPECT_EQ(op.int_attr("tileas.schedule.constraint.gid", -1), 1);
        EXPECT_EQ(op.int_attr("tileas.schedule.constraint.leader_gid", -1), 0);
        EXPECT_EQ(op.int_attr("tileas.schedule.constraint.max_depth", -1), 2);
      }
    }
    if (op.kind() == OpKind::for_) loop = &op;
    if (op.kind() == OpKind::grid_ids) grid = &op;
  });
  EXPECT_EQ(tma, 2);
  EXPECT_FALSE(contains(c.module->kernels().front()->region(), OpKind::load));
  ASSERT_TRUE(loop && grid);
  EXPECT_EQ(loop->int_attr("pipeline"), 3);
  EXPECT_TRUE(loop->has_attr("tileas.schedule.constraint.force_serial_execution"));
  EXPECT_EQ(grid->string_attr("schedule"), "persistent");
  EXPECT_EQ(grid->int_attr("swizzle"), 4);
  EXPECT_EQ(grid->string_attr("order"), "column");
}

TEST(Lowering, IfYieldsOuterNamesAssignedInABranch) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {
  x = load X[i] : <8>;
  if i < 3 { x = x * 2.0; }
  store X[i] = x;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  Operation* branch = nullptr;
  walk(*c.module, [&](Operation& op) { if (op.kind() == OpKind::if_) branch = &op; });
  ASSERT_TRUE(branch);
  ASSERT_EQ(branch->num_results(), 1u);
  EXPECT_EQ(branch->result()->type().to_string(), "tile<8xf32, reg>");
  DiagnosticEngine d;
  EXPECT_TRUE(verify_module(*c.module, d)) << d.render_all();
}

// An error that leaves names undefined (a grid with a name too many, an if whose branches give a
// name different types) is the only one: the names' uses after it are not "unknown" too.
TEST(Lowering, AnErrorBindingNamesReportsNoUnknownNamesAfterIt) {
  for (const char* source : {
           "kernel k(X: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i, j) {\n  store X[i] = load X[j] : <8>;\n}",
           "kernel k(X: tensor<N, f32>, c: i32) grid tiles(cdiv(N, 8)) as (i) {\n  if c > 0 {\n    y = load X[i] : <8>;\n"
           "  } else {\n    y = 1;\n  }\n  store X[i] = y;\n}",
           // an if on a tile, and a parameter of an unknown element type (a helper's kernels)
           "kernel k(X: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {\n  x = load X[i] : <8>;\n"
           "  if x > 0.0 { y = x; } else { y = -x; }\n  store X[i] = y;\n}",
           "kernel k(X: tensor<N, f33>) grid tiles(1) as (i) {\n  store X[i] = load X[i] : <8>;\n}"}) {
    Compiled c = compile_tile(source);
    EXPECT_FALSE(c.module);
    EXPECT_EQ(c.diagnostics->error_count(), 1) << c.errors();
    EXPECT_THAT(c.errors(), Not(HasSubstr("unknown name")));
  }
}

struct ErrorCase {
  const char* name;
  const char* source;
  const char* message;
  uint32_t line;
};

class LoweringErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(LoweringErrors, ReportsTheMessageAtTheLine) {
  const ErrorCase& e = GetParam();
  Compiled c = compile_tile(e.source);
  EXPECT_FALSE(c.module);
  ASSERT_TRUE(c.diagnostics->has_errors());
  bool found = false;
  for (const auto& d : c.diagnostics->diagnostics())
    found |= d.message.find(e.message) != std::string::npos && d.location.line == e.line;
  EXPECT_TRUE(found) << "expected '" << e.message << "' on line " << e.line << ", got:\n" << c.errors();
}

// A file that ends inside a block comment leaves its kernel's block open: the comment is the one
// error (a second, "expected '}' ... found the end of the file", had no line to show).
TEST(Lowering, AnUnterminatedCommentIsTheOnlyError) {
  Compiled c = compile_tile("kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = load X[i] : <8>;\n"
                            "  /* never closed\n");
  ASSERT_EQ(c.diagnostics->diagnostics().size(), 1u) << c.errors();
  EXPECT_EQ(c.diagnostics->diagnostics()[0].message, "unterminated block comment");
  EXPECT_EQ(c.diagnostics->diagnostics()[0].location.line, 3);
}

// The other side of float_literal_below_the_smallest: a zero mantissa is zero at any exponent, and
// a subnormal (1e-310) is a value.
TEST(Lowering, ZeroAtATinyExponentAndSubnormalsAreNumbers) {
  Compiled c = compile_tile("const Z = 0.0e-400;\nconst S = 1e-310;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n"
                            "  store X[i] = full<8, f32>(Z + S);\n}");
  EXPECT_TRUE(c.module) << c.errors();
}

INSTANTIATE_TEST_SUITE_P(
    Diagnostics, LoweringErrors,
    ::testing::Values(
        ErrorCase{"unknown_name", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = foo;\n}", "unknown name 'foo'", 2},
        ErrorCase{"element_mismatch", "kernel k(X: tensor<N, f32>, Y: tensor<N, bf16>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  y = load Y[i] : <8>;\n  z = x + y;\n}", "element types differ: x is f32 and y is bf16; convert one, e.g. cast(y, f32)", 4},
        ErrorCase{"mask_plus_number", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  z = x + (x > 0.0);\n}", "element types differ: the right operand is a mask (i1) and x is f32; convert the mask: cast(..., f32) is 1 where it holds", 3},
        ErrorCase{"where_of_a_mask", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  m = x > 0.0;\n  z = where(m, x, m);\n}", "element types differ: m is a mask (i1) and x is f32; convert the mask: cast(m, f32) is 1", 4},
        ErrorCase{"shape_mismatch", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = load X[i, 0] : <4, 8>;\n  z = x * y;\n}", "tile shapes do not broadcast", 4},
        ErrorCase{"bitwise_float", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  y = x & 1.0;\n}", "'&' works on integers (bitwise) and masks (logical), not f32", 3},
        ErrorCase{"shift_mask", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  y = (x > 0) << 1;\n}", "'<<' shifts integers, not i1", 3},
        ErrorCase{"const_shift", "const A = 1 << 64;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n}", "the shift 1 << 64 moves by 64 bits: a constant shift takes 0 to 63", 1},
        ErrorCase{"const_shift_overflow", "const A = 3 << 62;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n}", "integer overflow in the constant expression 3 << 62", 1},
        ErrorCase{"rank_mismatch", "kernel k(X: tensor<N, M, f32>, B: tensor<M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  b = load B[0] : <8>;\n  z = x + b;\n}", "tile shapes do not broadcast: tile<8, 4, f32> and tile<8, f32> (aligned at their last dimension, as in NumPy, each dimension must be equal or 1)", 4},
        ErrorCase{"store_element", "kernel k(X: tensor<N, f32>, Y: tensor<N, bf16>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store Y[i] = x;\n}", "storing an f32 tile into the bf16 tensor 'Y'", 3},
        ErrorCase{"const_div_zero", "const A = 4 / 0;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n}", "division by zero", 1},
        ErrorCase{"const_overflow", "const A = 9223372036854775807 + 1;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n}", "integer overflow", 1},
        ErrorCase{"tile_dim_not_const", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <N>;\n}", "a tile dimension must be an integer known at compile time", 2},
        ErrorCase{"tile_dim_zero", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <0>;\n}", "a tile dimension must be at least 1", 2},
        ErrorCase{"not_carried", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  s = zeros<8, f32>();\n  for j in 0 .. 4 {\n    s = s + 1.0;\n  }\n}", "list it in the loop's carry", 4},
        ErrorCase{"carry_undefined", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  for j in 0 .. 4 carry (s) {\n  }\n}", "carried variable 's' is not defined", 2},
        ErrorCase{"unknown_function", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = tanhh(1.0);\n}", "unknown function 'tanhh'; did you mean 'tanh'? (known: sum, max, min, mean", 2},
        ErrorCase{"unknown_function_far_from_any", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = softplus(1.0);\n}", "unknown function 'softplus' (known: sum, max, min, mean, argmax, argmin, cdiv, pow, exp", 2},
        ErrorCase{"constructor_without_shape", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = zeros();\n}", "zeros() is a tile constructor: write zeros<R, C, f32>()", 2},
        ErrorCase{"unknown_keyword", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = sum(x, dim = 0);\n}", "sum() takes no keyword 'dim'", 3},
        ErrorCase{"axis_on_elementwise", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = exp(x, axis = 0);\n}", "exp() takes no axis", 3},
        ErrorCase{"function_arity", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  s = where(1.0, 2.0);\n}", "where() takes 3 arguments, got 2", 2},
        ErrorCase{"reduce_of_scalar", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  s = sum(1.0);\n}", "sum() reduces a tile", 2},
        ErrorCase{"mean_of_integers", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = mean(x, axis = 0);\n}", "mean() of an i32 tile; convert it first: mean(cast(x, f32), axis = 0)", 3},
        ErrorCase{"transpose_of_a_row", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = transpose(x);\n}", "transpose() swaps the rows and columns of a 2-D tile, not tile<8, f32>", 3},
        ErrorCase{"argmax_needs_axis", "kernel k(X: tensor<N, N, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  s = argmax(x);\n}", "argmax() of tile<8, 8, f32> needs an axis: argmax(x, axis = 1) along the last axis (each row), axis = 0 along the first", 3},
        ErrorCase{"max_axis_two_operands", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = max(x, x, axis = 0);\n}", "max() along an axis takes one tile", 3},
        ErrorCase{"float_function_of_int", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = tanh(x);\n}", "tanh() needs a floating-point operand, not tile<8, i32>; convert it: tanh(cast(x, f32))", 3},
        ErrorCase{"sin_of_int", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = sin(x);\n}", "sin() needs a floating-point operand, not tile<8, i32>; convert it: sin(cast(x, f32))", 3},
        ErrorCase{"item_of_a_row", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = item(x);\n}", "item() takes a tile of one element (every extent 1), not tile<8, f32>; reduce it first, e.g. item(sum(x))", 3},
        ErrorCase{"float_coordinate", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <1>;\n  y = load X at [item(x)] : <8>;\n}", "an element coordinate must be an index, not f32", 3},
        ErrorCase{"reshape_count", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  y = reshape<3, 2>(x);\n}", "reshape<...>() keeps the number of elements: tile<8, f32> has 8, not 6", 3},
        ErrorCase{"reshape_without_shape", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  y = reshape(x);\n}", "reshape() takes the new shape first: write reshape<R, C>(x)", 3},
        ErrorCase{"negative_number_for_u8", "kernel k(X: tensor<N, u8>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = x + -1;\n}", "the number -1 does not fit u8 (0 to 255); convert x to a wider type first: cast(x, i32)", 3},
        ErrorCase{"permute_needs_every_dimension", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  y = permute(x, 1);\n}", "permute() of tile<8, 8, f32> takes its 2 dimensions in their new order, got 1", 3},
        ErrorCase{"permute_names_a_dimension_twice", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  y = permute(x, 1, 1);\n}", "permute() takes each dimension of tile<8, 8, f32> once (0 to 1); 1 is named twice", 3},
        ErrorCase{"number_past_u16", "kernel k(X: tensor<N, u16>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = x * 70000;\n}", "the number 70000 does not fit u16 (0 to 65535); convert x to a wider type first: cast(x, i32)", 3},
        ErrorCase{"float_number_meets_an_integer_tile", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  a = load X[i] : <8>;\n  s = a * 0.5;\n}", "the number 0.5 is not an integer, and a is i32; convert a to a float first: cast(a, f32)", 3},
        ErrorCase{"assigning_a_dimension", "kernel k(X: tensor<M, f32>) grid tiles(1) as (i) {\n  M = 2;\n}", "'M' is a dimension of the kernel and cannot be assigned; give the value another name", 2},
        ErrorCase{"assigning_a_grid_coordinate", "kernel k(X: tensor<M, f32>) grid tiles(1) as (i) {\n  i = i + 1;\n}", "'i' is a grid coordinate of the kernel and cannot be assigned", 2},
        ErrorCase{"loop_variable_hides_a_coordinate", "kernel k(X: tensor<M, f32>) grid tiles(1) as (i) {\n  for i in 0 .. 2 {\n    store X[i] = zeros<8, f32>();\n  }\n}", "'i' is a grid coordinate of the kernel; name the loop variable differently", 2},
        ErrorCase{"constant_calls_a_function", "const A = cast(1, i32);\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "cast() is not computed at compile time: a constant is numbers and earlier constants", 1},
        ErrorCase{"constant_makes_a_tile", "const A = zeros<4, f32>();\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "a tile is not computed at compile time", 1},
        ErrorCase{"negating_the_smallest_integer", "const A = -(-9223372036854775807 - 1);\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "integer overflow in the constant expression -(-9223372036854775808)", 1},
        ErrorCase{"float_constant_past_the_largest", "const A = 1e300 * 1e300;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "the constant expression 1e+300 * 1e+300 is inf, not a finite number", 1},
        // pow(-8, 0.5) printed as "-8 ** 0.5 is -nan", which reads as -(8 ** 0.5) (a helper's op sweep).
        ErrorCase{"float_power_is_nan", "const A = pow(-8, 0.5);\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "the constant expression pow(-8, 0.5) is NaN, not a finite number", 1},
        ErrorCase{"float_product_of_a_negative", "const A = -1e300 * 1e300;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "the constant expression (-1e+300) * 1e+300 is -inf, not a finite number", 1},
        // iota<300, u8> counted past 255: the interpreter kept 256.., the GPU wrapped them.
        ErrorCase{"iota_past_its_type", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  a = iota<300, u8>(0);\n  store X[i] = cast(a, f32);\n}", "this iota counts to 299 along axis 0, past u8's largest value 255: give it a wider element type (i32)", 2},
        ErrorCase{"keyword_given_twice", "kernel k(X: tensor<N, M, f32>, Y: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  store Y[i] = sum(x, axis = 1, axis = 0);\n}", "'axis' is given twice in this call; keep one", 3},
        // The advice keeps the axis: without it the "fixed" kernel summed the whole tile (a hunt).
        ErrorCase{"sum_of_a_mask_along_an_axis", "kernel k(X: tensor<R, N, f32>, Y: tensor<R, 1, i32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <4, 8>;\n  store Y[i, 0] = sum(x > 0.0, axis = 1);\n}", "sum() of an i1 tile; convert it first: sum(cast(mask, i32), axis = 1)", 3},
        ErrorCase{"sum_of_a_mask_expression", "kernel k(X: tensor<N, f32>, Y: tensor<1, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store Y[0] = reshape<1>(sum(x > 0.0));\n}", "sum() of an i1 tile; convert it first: sum(cast(mask, i32))", 3},
        // Other languages' spellings got a near name ("did you mean 'floor'?" for float(x); a CLI hunt).
        ErrorCase{"conversion_spelled_as_a_call", "kernel k(X: tensor<N, i32>, Y: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store Y[i] = float(x);\n}", "unknown function 'float': write cast(x, f32) (cast converts to any element type)", 3},
        ErrorCase{"matrix_product_spelled_dot", "kernel k(X: tensor<N, N, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <16, 16>;\n  store X[i, 0] = dot(x, x);\n}", "unknown function 'dot': write mma(a, b, acc)", 3},
        ErrorCase{"reduction_with_dim", "kernel k(X: tensor<N, M, f32>, Y: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  store Y[i] = sum(x, dim = 1);\n}", "sum() takes no keyword 'dim'; write axis = ...", 3},
        ErrorCase{"ones_constructor", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = ones<8, f32>();\n}", "unknown tile constructor 'ones': write full<shape, type>(1) (full fills a tile with one value)", 2},
        ErrorCase{"float_axis_shows_its_point", "kernel k(X: tensor<N, M, f32>, Y: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  store Y[i] = sum(x, axis = 1.0);\n}", "the axis must be an integer, not the number 1.0", 3},
        // A follow-on error called the parameter f32 (a helper's tensor-core hunt).
        ErrorCase{"index_scalar_parameter", "kernel k(X: tensor<N, f32>, off: index) grid tiles(1) as (i) {\n  store X at [i * 8 + off] = zeros<8, f32>();\n}", "unknown element type 'index' (expected f32, f16, bf16, f8e4m3, f8e5m2, i8, i16, i32, i64, u8, u16 or u32); for an index, give an i32 or i64 and convert it where it is used: cast(x, index)", 1},
        ErrorCase{"float_literal_past_the_largest", "const A = 1e999;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "the number 1e999 is too large", 1},
        // 1e-400 read as 0 without a word (a helper's edge-value hunt); 0e-400 is just zero.
        ErrorCase{"float_literal_below_the_smallest", "const A = 1e-400;\nconst Z = 0e-400;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "the number 1e-400 is too small to represent", 1},
        ErrorCase{"loop_variable_hides_a_constant", "const BLOCK = 8;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  for BLOCK in 0 .. 2 {\n    store X[i] = zeros<8, f32>();\n  }\n}", "'BLOCK' is a constant; name the loop variable differently", 3},
        ErrorCase{"carried_twice", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = zeros<8, f32>();\n  for j in 0 .. 2 carry (x, x) {\n    x = x + 1.0;\n  }\n}", "'x' is carried twice; name it once in carry(...)", 3},
        ErrorCase{"carrying_a_coordinate", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  for j in 0 .. 2 carry (i) {\n    store X[i] = zeros<8, f32>();\n  }\n}", "'i' is a grid coordinate of the kernel and cannot be carried", 2},
        ErrorCase{"reshape_of_a_number", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  y = reshape<1>(2.0);\n}", "reshape<...>() takes a tile, not a number; a tile of one value is full<1, f32>(x)", 2},
        ErrorCase{"hex_float", "const A = 0x1.5;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "malformed number '0x1.5'", 1},
        ErrorCase{"number_wider_than_i8", "kernel k(X: tensor<N, i8>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = x * 200;\n}", "the number 200 does not fit i8 (-128 to 127); convert x to a wider type first: cast(x, i32)", 3},
        ErrorCase{"integer_mma", "kernel k(A: tensor<M, K, i8>) grid tiles(1) as (i) {\n  a = load A[i, 0] : <64, 16>;\n  c = mma(a, load A[0, i] : <16, 64>, zeros<64, 64, f32>());\n}", "the accumulator of an mma of i8 operands must be i32, not f32 (e.g. zeros<64, 64, i32>())", 3},
        ErrorCase{"index_plus_i32", "kernel k(X: tensor<N, f32>, off: i32) grid tiles(1) as (n) {\n  store X at [n * 64 + off] = load X[n] : <64>;\n}", "the left operand is an index (tile coordinates, loop variables and dims are) and off is i32; convert the index: cast(..., i32) around the left operand", 2},
        ErrorCase{"i32_plus_index", "kernel k(X: tensor<N, f32>, off: i32) grid tiles(1) as (n) {\n  store X at [off + n] = load X[n] : <64>;\n}", "n is an index (tile coordinates, loop variables and dims are) and off is i32; convert the index: cast(n, i32), or off to an index: cast(off, index)", 2},
        ErrorCase{"float_remainder", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  y = x % 2.5;\n}", "'%' takes integers, not f32; for floats write x - trunc(x / y) * y", 3},
        ErrorCase{"fill_with_an_index", "kernel k(O: tensor<4, i32>) grid tiles(4) as (i) {\n  store O[i] = full<1, i32>(i);\n}", "the fill value must be an i32 scalar, and i is an index (tile coordinates, loop variables and dims are); convert it: cast(i, i32)", 2},
        ErrorCase{"index_cast_of_tile", "kernel k(L: tensor<4, i32>, X: tensor<N, f32>) grid tiles(1) as (n) {\n  store X[cast(load L[0] : <1>, index)] = load X[n] : <64>;\n}", "cast(x, index) takes an integer scalar (an item(), an i32 parameter), not tile<1, i32>", 2},
        ErrorCase{"number_past_the_tiles_type", "kernel k(B: tensor<N, u8>) grid tiles(1) as (i) {\n  store B[0] = full<8, u8>(300);\n}", "the number 300 does not fit u8 (0 to 255), the type expected here", 2},
        ErrorCase{"float_loop_bound", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  for j in 0.0 .. 3 {\n    store X[i] = zeros<8, f32>();\n  }\n}", "the number 0.0 is not an integer (index is expected here)", 2},
        ErrorCase{"shift_in_a_tile_shape", "const BM = 16;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <BM >> 1>;\n}", "a shift inside a tile shape <...>, where '>' ends the shape: put it in parentheses, e.g. <(BM >> 1)>", 3},
        ErrorCase{"chained_comparison", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store X[i] = where(0.0 < x < 1.0, x, 0.0);\n}", "comparisons do not chain: write a < b && b < c for a < b < c", 3},
        ErrorCase{"python_and", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store X[i] = where(x > 0.0 and x < 1.0, x, 0.0);\n}", "found 'and' (write 'and' as &&)", 3},
        ErrorCase{"assignment_as_a_test", "kernel k(X: tensor<N, f32>, s: f32) grid tiles(1) as (i) {\n  if s = 0.0 {\n    store X[i] = zeros<8, f32>();\n  }\n}", "found '=' (compare with ==)", 2},
        ErrorCase{"missing_closing_brace", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  for j in 0 .. 2 {\n    store X[i] = zeros<8, f32>();\n}\nkernel k2(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, f32>();\n}\n", "expected '}' to close the block opened at line 1, column 50, found 'kernel'", 5},
        ErrorCase{"negative_grid", "const B = 4;\nkernel k(X: tensor<N, f32>) grid tiles(2 - B) as (i) {\n  store X[i] = zeros<8, f32>();\n}", "a grid extent must not be negative; this one is -2", 2},
        ErrorCase{"non_ascii_name", "kernel k(X: tensor<N, f32>) grid tiles(1) as (n) {\n  x\xc2\xb5 = load X[n] : <64>;\n}", "unexpected non-ASCII character, bytes 0xc2 0xb5 (non-ASCII characters may appear only in comments)", 2},
        ErrorCase{"wide_integer_mma", "kernel k(A: tensor<M, K, i16>) grid tiles(1) as (i) {\n  a = load A[i, 0] : <64, 16>;\n  c = mma(a, load A[0, i] : <16, 64>, zeros<64, 64, i32>());\n}", "mma takes bf16, f16, f8e4m3, f8e5m2 or f32 operands (into an f32 accumulator) or i8 and u8 operands (into an i32 accumulator), not i16 and i16; convert them, e.g. cast(a, bf16)", 3},
        ErrorCase{"cumsum_without_axis", "kernel k(X: tensor<N, N, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  s = cumsum(x);\n}", "cumsum() of tile<8, 8, f32> needs an axis: cumsum(x, axis = 1) scans along each row", 3},
        ErrorCase{"sort_without_axis", "kernel k(X: tensor<N, N, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 8>;\n  s = sort(x);\n}", "sort() of tile<8, 8, f32> needs an axis: sort(x, axis = 1) sorts each row", 3},
        ErrorCase{"sort_descending_two", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = sort(x, descending = 2);\n}", "sort()'s descending is 0 (ascending, the default) or 1, got 2", 3},
        ErrorCase{"sort_of_mask", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = sort(x > 0.0);\n}", "sort() sorts a tile of numbers, not tile<8, i1>", 3},
        ErrorCase{"cummax_of_mask", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = cummax(x > 0.0);\n}", "cummax() scans a tile of numbers, not tile<8, i1>", 3},
        ErrorCase{"fma_of_int", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = fma(x, x, 1);\n}", "fma() needs floating-point operands, not tile<8, i32>; convert them: fma(cast(x, f32), ...)", 3},
        ErrorCase{"exp2_of_int", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = exp2(x);\n}", "exp2() needs a floating-point operand, not tile<8, i32>; convert it: exp2(cast(x, f32))", 3},
        ErrorCase{"rounding_of_int", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = round(x);\n}", "round() needs a floating-point operand, not tile<8, i32>; convert it: round(cast(x, f32))", 3},
        ErrorCase{"power_of_int", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  s = x ** 2;\n}", "'**' raises floats, and x is i32; convert the base: cast(x, f32) ** ...", 3},
        ErrorCase{"negative_const_power", "const A = 2 ** -1;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n}", "a negative integer exponent; write 2.0 ** -1", 1},
        ErrorCase{"const_power_overflow", "const A = 3 ** 40;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n}", "integer overflow in the constant expression 3 ** 40", 1},
        ErrorCase{"logic_of_numbers", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  m = x && x < 1.0;\n}", "'&&' combines masks", 3},
        ErrorCase{"not_of_number", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  m = !x;\n}", "'!' negates a mask", 3},
        ErrorCase{"mma_shapes", "kernel k(A: tensor<M, K, bf16>) grid tiles(1) as (i) {\n  a = load A[0, 0] : <64, 32>;\n  acc = zeros<64, 64, f32>();\n  acc = mma(a, a, acc);\n}", "K differs: a has 32 columns but a has 64 rows", 4},
        ErrorCase{"mma_element_mismatch", "kernel k(A: tensor<M, K, f16>, B: tensor<K, N, bf16>) grid tiles(1) as (i) {\n  acc = zeros<64, 64, f32>();\n  acc = mma(load A[0, 0] : <64, 64>, load B[0, 0] : <64, 64>, acc);\n}", "mma operands differ in element type: f16 and bf16 (they may differ only as two 8-bit floats, f8e4m3 and f8e5m2, or as two 8-bit integers, i8 and u8)", 3},
        ErrorCase{"mma_n_mismatch", "kernel k(A: tensor<M, K, bf16>) grid tiles(1) as (i) {\n  a = load A[0, 0] : <64, 32>;\n  b = load A[0, 0] : <32, 64>;\n  acc = zeros<64, 128, f32>();\n  acc = mma(a, b, acc);\n}", "N differs: b has 64 columns but the accumulator acc has 128", 5},
        ErrorCase{"defined_in_one_branch", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  if i < 1 { y = load X[i] : <8>; }\n  store X[i] = y;\n}", "unknown name 'y': it is defined only in the then-branch of the if at 2:3", 3},
        ErrorCase{"defined_in_loop", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  for j in 0 .. 4 { y = load X[i] : <8>; }\n  store X[i] = y;\n}", "unknown name 'y': it is defined inside the loop at 2:3; to use it after the loop", 3},
        ErrorCase{"assign_constant", "const B = 4;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  B = 5;\n}", "'B' is a constant and cannot be assigned", 3},
        ErrorCase{"unknown_element", "kernel k(X: tensor<N, f64>) grid tiles(1) as (i) {\n}", "unknown element type 'f64'", 1},
        ErrorCase{"bad_annotation", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  @fast\n  store X[i] = x;\n}", "unknown annotation '@fast'", 3},
        ErrorCase{"grid_arity", "kernel k(X: tensor<N, f32>) grid tiles(4, 4) as (i) {\n}", "the grid has 2 extents but names 1 coordinate; give one name per extent", 1},
        ErrorCase{"coordinate_count", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8, 8>;\n}", "1 tile coordinates given for a rank-2 tensor", 2},
        ErrorCase{"tile_above_tensor_rank", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8, 8>;\n}", "the tile shape has 2 dimensions, more than the rank-1 tensor 'X' (a tile may have fewer: the leading coordinates then pick a slice; or more of extent 1 in front)", 2},
        ErrorCase{"add_narrow_ints", "kernel k(X: tensor<N, i8>) grid tiles(1) as (i) {\n  store X[i] += load X[i] : <8>;\n}", "'store X[...] +=' adds atomically, which the GPU does for f32, f16, bf16, i32, u32 and i64 elements, not i8: combine into a tensor of one of those types, or write an i8 tensor with '='", 2},
        ErrorCase{"max_narrow_ints", "kernel k(X: tensor<N, u16>) grid tiles(1) as (i) {\n  store X at [i] max= load X[i] : <8>;\n}", "'store X at [...] max=' takes the maximum atomically, which the GPU does for f32, f16, bf16, i32, u32 and i64 elements, not u16", 2},
        ErrorCase{"mul_store", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] mul= load X[i] : <8>;\n}", "a store writes with '=', or combines atomically with '+=', 'max=', 'min=', '&=', '|=' or '^='; there is no 'mul=': compute the new value and store it with '='", 2},
        ErrorCase{"max_assign", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  x max= 1.0;\n}", "'max=' is not an assignment: a value is assigned with '=' (x = max(x, ...)); only a store combines in place (store T[i] max= tile)", 3},
        ErrorCase{"max_spaced", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] max = load X[i] : <8>;\n}", "write 'max=' without a space between 'max' and '='", 2},
        ErrorCase{"add_spaced", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] + = load X[i] : <8>;\n}", "write '+=' without a space between '+' and '='", 2},
        ErrorCase{"subtract_store", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] -= load X[i] : <8>;\n}", "a store writes with '=', or combines atomically with '+=', 'max=', 'min=', '&=', '|=' or '^='; there is no '-=': add the negated term, store T[...] += -(...)", 2},
        ErrorCase{"masked_store_else", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store X[i] = x if x > 0.0 else 0.0;\n}", "a masked store has no 'else': the elements where the mask is false keep what the tensor holds; to store one value or another, store where(mask, a, b)", 3},
        ErrorCase{"masked_store_by_numbers", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store X[i] = x if x;\n}", "a store's mask is an i1 mask (a comparison such as row < n), not tile<8, f32>; the elements where it holds are written", 3},
        ErrorCase{"masked_store_shape", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  store X[i, 0] = x if iota<4, 8, i32>(0) < 2;\n}", "the mask tile<4, 8, i1> does not broadcast to the stored tile<8, 4, f32>", 3},
        ErrorCase{"masked_store_constant", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = load X[i] : <8> if 1;\n}", "a store's mask is a comparison of tiles or scalars (store T[i] = x if row < n); for a store that always or never happens, drop the mask or the store", 2},
        ErrorCase{"subscript_index", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = x[:, -1];\n}", "a subscript keeps every dimension: write 3:4 for element 3 of dimension 1 (a tile of extent 1 there; reshape<...> drops it)", 3},
        ErrorCase{"subscript_past_the_end", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = x[4:10];\n}", "the range 4:10 of dimension 0 (extent 8) goes past its end", 3},
        ErrorCase{"subscript_empty", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = x[:, 3:1];\n}", "the range 3:1 of dimension 1 (extent 4) holds no element", 3},
        ErrorCase{"subscript_step", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = x[::0];\n}", "a slice's step must be at least 1, got 0", 3},
        ErrorCase{"subscript_rank", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = x[:, :, :];\n}", "3 ranges for the rank-2 tile<8, 4, f32>", 3},
        ErrorCase{"subscript_bound", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = x[i:];\n}", "a slice's start must be an integer known at compile time", 3},
        ErrorCase{"concat_shapes", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = concat(x, x[:, 1:], axis = 0);\n}", "concat() along axis 0 joins tiles equal in every other dimension: tile<8, 4, f32> and tile<8, 3, f32> differ in dimension 1", 3},
        ErrorCase{"interleave_shapes", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = interleave(x, x[:, 1:]);\n}", "interleave() takes tiles of one shape: tile<8, 4, f32> and tile<8, 3, f32> (slice or broadcast one to the other's)", 3},
        ErrorCase{"interleave_types", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  x = load X[i, 0] : <8, 4>;\n  y = interleave(x, cast(x, i32), axis = 0);\n}", "interleave() joins tiles of one element type: tile<8, 4, f32> and tile<8, 4, i32> (convert one with cast)", 3},
        ErrorCase{"cdiv_float_value", "kernel k(X: tensor<N, f32>, f: f32) grid tiles(cdiv(N, f)) as (i) {\n  store X[i] = load X[i] : <8>;\n}", "cdiv() takes integers (an index or an integer type), and f is f32: convert it first, e.g. cast(f, i32)", 1},
        ErrorCase{"broadcast_vector_per_row", "kernel k(X: tensor<N, M, f32>, S: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i, 0] = load X[i, 0] : <8, 4> * load S[i] : <8>;\n}", "each dimension must be equal or 1); for one value per row, make the right operand a column: reshape<8, 1>(...)", 2},
        ErrorCase{"where_third_argument", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  y = where(x > 0.0, x, cast(x, f16));\n}", "element types differ: x is f32 and the third operand is f16; convert one, e.g. cast(..., f32) around the third operand", 3},
        ErrorCase{"axis_out_of_range", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = sum(load X[i] : <8>, axis = 2);\n}", "axis 2 is out of range for the rank-1 tile<8, f32>: its axes are 0 (or, from the end, -1)", 2},
        ErrorCase{"concat_one", "kernel k(X: tensor<N, M, f32>) grid tiles(1) as (i) {\n  y = concat(load X[i, 0] : <8, 4>);\n}", "concat() joins two tiles or more: concat(a, b, axis = 1)", 2},
        ErrorCase{"or_floats", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] |= load X[i] : <8>;\n}", "'store X[...] |=' ors the bits atomically, which the GPU does for i32, u32 and i64 elements, not f32: combine into a tensor of one of those types, or write an f32 tensor with '='", 2},
        ErrorCase{"spaced_xor_store", "kernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  store X[i] ^ = load X[i] : <8>;\n}", "write '^=' without a space between '^' and '='", 2},
        ErrorCase{"add_assign", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  x += 1.0;\n}", "'+=' is not an assignment: a value is assigned with '=' (x = x + ...); only a store adds in place (store T[i] += tile)", 3},
        ErrorCase{"store_above_tensor_rank", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = zeros<8, 8, f32>();\n}", "storing a rank-2 tile into the rank-1 tensor 'X' (a tile may have fewer dimensions than its tensor, or more of extent 1 in front, not more)", 2},
        ErrorCase{"if_type_change", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  if i < 1 { x = cast(x, bf16); }\n}", "has type tile<8, bf16> after the then-branch", 3},
        ErrorCase{"syntax_missing_semicolon", "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>\n  store X[i] = x;\n}", "expected ';' after a statement", 2},
        ErrorCase{"syntax_bad_grid", "kernel k(X: tensor<N, f32>) grid blocks(1) as (i) {\n}", "unknown grid kind 'blocks'", 1}),
    [](const auto& info) { return std::string(info.param.name); });

// 0x literals are integers (bit masks); a malformed number is one error, not two (the parser
// once went on to "expected an expression" at the ';' after it).
TEST(Parser, HexLiteralsAreIntegersAndAMalformedNumberIsOneError) {
  Compiled c = compile_tile("const MASK = 0xFF;\nconst BIG = -0X7fffFFFF;\n"
                            "kernel k(X: tensor<N, u32>) grid tiles(1) as (i) {\n  store X[i] = load X[i] : <8> & 0x0F;\n}\n");
  ASSERT_TRUE(c.module) << c.errors();
  Compiled defined = compile_tile("const MASK = 1;\nkernel k(X: tensor<N, u32>) grid tiles(1) as (i) {\n"
                                  "  store X[i] = load X[i] : <8> & MASK;\n}\n", {{"MASK", "0x10"}});
  ASSERT_TRUE(defined.module) << defined.errors();
  std::string ir = print_module(*defined.module);
  EXPECT_NE(ir.find("value = 16"), std::string::npos) << ir;
  Compiled bad = compile_tile("const A = 0x1g;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n"
                              "  store X[i] = zeros<8, f32>();\n}\n");
  EXPECT_FALSE(bad.module);
  EXPECT_EQ(bad.diagnostics->error_count(), 1) << bad.errors();
  EXPECT_NE(bad.errors().find("malformed number '0x1g'"), std::string::npos) << bad.errors();
  Compiled wide = compile_tile("const A = 0x8000000000000000;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n"
                               "  store X[i] = zeros<8, f32>();\n}\n");
  EXPECT_NE(wide.errors().find("too large"), std::string::npos) << wide.errors();
}

// A keyword used as a name on the line it belongs to is one error, and parsing goes on with it as
// the name: `kernel const(` was two, the second "expected identifier after 'const'" at '('.
TEST(Parser, AKeywordUsedAsANameIsOneError) {
  for (const char* source : {"kernel const(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = load X[i] : <8>;\n}\n",
                             "kernel k(X: tensor<N, f32>, for: f32) grid tiles(1) as (i) {\n  store X[i] = load X[i] : <8>;\n}\n",
                             "const kernel = 4;\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  store X[i] = load X[i] : <8>;\n}\n"}) {
    Compiled c = compile_tile(source);
    EXPECT_FALSE(c.module) << source;
    EXPECT_EQ(c.diagnostics->error_count(), 1) << c.errors();
    EXPECT_NE(c.errors().find("(a keyword of the language, which cannot name a value"), std::string::npos) << c.errors();
  }
}

// A UTF-8 byte-order mark at the start of a file (editors on Windows write one) is skipped, and
// the first line's columns count from after it; it was "unexpected non-ASCII character" at 1:1.
TEST(Parser, AByteOrderMarkBeginningTheFileIsSkipped) {
  Compiled c = compile_tile("\xEF\xBB\xBF" "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n"
                            "  store X[i] = zeros<8, f32>();\n}\n");
  ASSERT_TRUE(c.module) << c.errors();
  Compiled bad = compile_tile("\xEF\xBB\xBF" "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) { store X[i] = foo; }\n");
  ASSERT_FALSE(bad.module);
  ASSERT_EQ(bad.diagnostics->diagnostics().size(), 1u) << bad.errors();
  EXPECT_EQ(bad.diagnostics->diagnostics()[0].location.column, 65u) << bad.errors();
}

// A loop variable may take a scalar parameter's name, as an assignment may rebind it; a number
// past an f16's range becomes inf, with a warning where it is written.
TEST(Lowering, ALoopMayRebindAScalarParameterAndAnF16OverflowWarns) {
  Compiled c = compile_tile("kernel k(X: tensor<N, f16>, n: i32) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n"
                            "  for n in 0 .. 4 carry (x) {\n    x = x + 1.0;\n  }\n  store X[i] = x + 70000.0;\n}\n");
  ASSERT_TRUE(c.module) << c.errors();
  std::string rendered = c.diagnostics->render_all();
  EXPECT_NE(rendered.find("6:18: warning: the number 70000 is past the largest finite f16 (65504): it becomes inf"),
            std::string::npos) << rendered;
}

// A number becomes its type's nearest value in one rounding from the double (a helper found f16's
// 1 + 2^-11 + 2^-40 became 1 through f32), and only a number that rounds past the largest finite
// value warns (65519 is f16's 65504, not inf; 464 is e4m3's 448 by ties to even).
TEST(Lowering, NumbersRoundOnceToTheirTypeAndWarnOnlyWhenTheyOverflow) {
  bool overflows = false;
  EXPECT_EQ(round_to_element(ScalarKind::f16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), overflows),
            1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(round_to_element(ScalarKind::bf16, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), overflows),
            1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(round_to_element(ScalarKind::f16, 65519.0, overflows), 65504.0);
  EXPECT_FALSE(overflows);
  EXPECT_TRUE(std::isinf(round_to_element(ScalarKind::f16, 65520.0, overflows)));
  EXPECT_TRUE(overflows);
  EXPECT_EQ(round_to_element(ScalarKind::f8e4m3, 464.0, overflows), 448.0);
  EXPECT_FALSE(overflows);
  EXPECT_EQ(round_to_element(ScalarKind::f8e4m3, -470.0, overflows), -448.0);
  EXPECT_TRUE(overflows);
  EXPECT_EQ(round_to_element(ScalarKind::f16, std::ldexp(3.0, -26), overflows), std::ldexp(1.0, -24));  // subnormal
  EXPECT_EQ(round_to_element(ScalarKind::f32, 3.40282356e38, overflows), 3.4028234663852886e38);
  EXPECT_FALSE(overflows);
  Compiled c = compile_tile("kernel k(X: tensor<N, f16>, B: tensor<N, bf16>) grid tiles(1) as (i) {\n"
                            "  store X[i] = load X[i] : <8> + 65519.0;\n  store B[i] = load B[i] : <8> * 3.39e38;\n}\n");
  ASSERT_TRUE(c.module) << c.errors();
  EXPECT_EQ(c.diagnostics->render_all().find("past the largest finite"), std::string::npos) << c.diagnostics->render_all();
}

// A kernel without a store has no effect when launched (found by a helper porting kernels: it
// compiled silently); one store anywhere, in a loop or a branch, is enough.
TEST(Lowering, AKernelThatStoresNothingWarns) {
  Compiled none = compile_tile("kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n}\n");
  ASSERT_TRUE(none.module) << none.errors();
  EXPECT_NE(none.diagnostics->render_all().find("1:1: warning: kernel k stores nothing: launching it has no effect"),
            std::string::npos)
      << none.diagnostics->render_all();
  Compiled nested = compile_tile("kernel k(X: tensor<N, f32>, n: i32) grid tiles(1) as (i) {\n"
                                 "  if n > 0 {\n    store X[i] = zeros<8, f32>();\n  }\n}\n");
  ASSERT_TRUE(nested.module) << nested.errors();
  EXPECT_EQ(nested.diagnostics->render_all().find("stores nothing"), std::string::npos);
}

TEST(Parser, ReportsSeveralSyntaxErrorsInOneRun) {
  Compiled c = compile_tile(
      "kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = = 1;\n  y = 2 +;\n  store X[i] = x;\n}\n");
  EXPECT_FALSE(c.module);
  EXPECT_EQ(c.diagnostics->error_count(), 2) << c.errors();
  EXPECT_EQ(c.diagnostics->diagnostics()[0].location.line, 2u);
  EXPECT_EQ(c.diagnostics->diagnostics()[1].location.line, 3u);
}

TEST(Parser, DeepNestingIsRefusedWithAnError) {
  std::string expr(1000, '(');
  expr += "1" + std::string(1000, ')');
  Compiled c = compile_tile("const A = " + expr + ";\nkernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n}\n");
  EXPECT_FALSE(c.module);
  EXPECT_THAT(c.errors(), HasSubstr("nesting deeper than"));
  EXPECT_THAT(c.errors(), HasSubstr("split the expression over several statements"));
  // Prefix operators nest too (each '-' is a level), and the message says so.
  Compiled minus = compile_tile("kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store X[i] = " +
                                std::string(250, '-') + "x;\n}\n");
  EXPECT_THAT(minus.errors(), HasSubstr("prefix operators such as '-' and chains of '**' together"));
  // Nested blocks get advice about blocks.
  std::string blocks;
  for (int i = 0; i < 250; ++i) blocks += "if i < 1 {\n";
  blocks += std::string(250, '}');
  Compiled nested = compile_tile("kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n" + blocks + "\n}\n");
  EXPECT_THAT(nested.errors(), HasSubstr("nest fewer blocks"));
  // Each `else if` of a chain is an `if` inside an `else`: a level, as lowering recurses through
  // it (20000 arms overflowed the stack: a hunt's SIGSEGV).
  std::string chain = "if i == 0 {\n}";
  for (int arm = 1; arm < 20000; ++arm) chain += fmt::format(" else if i == {} {{\n}}", arm);
  Compiled ladder = compile_tile("kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n" + chain + "\n}\n");
  EXPECT_FALSE(ladder.module);
  EXPECT_THAT(ladder.errors(), HasSubstr("each 'else if' of a chain"));
}

// A flat sum of many terms is a left-deep tree that lowering walks recursively (issue 18, defect
// 4: 9,000 terms crashed): up to the limit it lowers, beyond it the error names the operator.
std::string flat_sum_kernel(int terms) {
  std::string sum = "x";
  for (int i = 1; i < terms; ++i) sum += " + x";
  return "kernel k(X: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {\n  x = load X[i] : <8>;\n  store X[i] = " + sum +
         ";\n}\n";
}

TEST(Parser, AFlatSumUpToTheHeightLimitLowers) {
  Compiled c = compile_tile(flat_sum_kernel(2001));  // 2000 additions
  ASSERT_TRUE(c.module) << c.errors();
  int adds = 0;
  walk(*c.module, [&](Operation& op) { adds += op.kind() == OpKind::add; });
  EXPECT_EQ(adds, 2000);
}

TEST(Parser, AFlatSumOfNineThousandTermsIsALocatedError) {
  Compiled c = compile_tile(flat_sum_kernel(9000));
  EXPECT_FALSE(c.module);
  ASSERT_EQ(c.diagnostics->error_count(), 1) << c.errors();
  EXPECT_THAT(c.errors(), HasSubstr("expression nested more than 2000 operators deep; split it over several statements"));
  EXPECT_EQ(c.diagnostics->diagnostics()[0].location.line, 3u);
}

TEST(Parser, NestedCallsCountTowardTheHeight) {
  std::string nested = "x";
  for (int i = 0; i < 150; ++i) nested = "exp(" + nested + " + x + x + x + x + x + x + x + x + x + x + x + x + x + x)";
  Compiled c = compile_tile("kernel k(X: tensor<N, f32>) grid tiles(1) as (i) {\n  x = load X[i] : <8>;\n  store X[i] = " +
                            nested + ";\n}\n");
  EXPECT_FALSE(c.module);
  EXPECT_THAT(c.errors(), HasSubstr("operators deep"));
}

// Constant folding shows how the new operators associate.
int64_t folded_constant(const std::string& expression) {
  Compiled c = compile_tile("const A = " + expression +
                            ";\nkernel k(X: tensor<N, i32>) grid tiles(1) as (i) {\n  store X[i] = full<1, i32>(A);\n}\n");
  int64_t value = -12345;
  if (c.module)
    walk(*c.module, [&](Operation& op) {
      if (op.kind() == OpKind::full) value = op.operand(0)->defining_op()->int_attr("value");
    });
  return value;
}

TEST(Parser, PowerBindsTighterThanUnaryMinusAndIsRightAssociative) {
  EXPECT_EQ(folded_constant("-2 ** 2"), -4);       // -(2 ** 2), as in Python
  EXPECT_EQ(folded_constant("2 ** 3 ** 2"), 512);  // 2 ** (3 ** 2)
  EXPECT_EQ(folded_constant("2 * 3 ** 2"), 18);
  EXPECT_EQ(folded_constant("2 ** -1 * 0 + 7"), -12345);  // a negative integer exponent is an error
  EXPECT_EQ(folded_constant("(-1) ** 9223372036854775807"), -1);  // by squaring: no 2^63 steps
}

TEST(Lowering, MasksCombineWithAndOrNot) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {
  x = load X[i] : <8>;
  store X[i] = where(!(x > 0.0) && x > -1.0 || x > 2.0, x, 0.0);
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::string> names;
  walk(*c.module, [&](Operation& op) {
    if (op.info().has(kBitwise) || op.kind() == OpKind::cmp) names.push_back(std::string(op.name()));
  });
  // || binds loosest, then &&; ! applies to the parenthesized comparison.
  EXPECT_EQ(names, (std::vector<std::string>{"cmp", "not", "cmp", "and", "cmp", "or"}));
}

// C's precedence: << and >> above comparisons, then &, ^, | above &&; ~ and ! are unary.
// Constants fold with the same operators.
TEST(Lowering, BitwiseOperatorsTakeCsPrecedence) {
  Compiled c = compile_tile(R"(
const MASK = (1 << 10) - 1 ^ 3 & ~0;
kernel k(X: tensor<N, i32>) grid tiles(cdiv(N, 8)) as (i) {
  x = load X[i] : <8>;
  store X[i] = x << 2 >> 1 | x & MASK ^ ~x;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::string> names;
  std::vector<int64_t> constants;
  walk(*c.module, [&](Operation& op) {
    if (op.info().has(kBitwise) || op.kind() == OpKind::shl || op.kind() == OpKind::shr)
      names.push_back(std::string(op.name()));
    if (op.kind() == OpKind::constant && op.attr("value")->is_int()) constants.push_back(op.attr("value")->as_int());
  });
  // ((x << 2) >> 1) | ((x & MASK) ^ (~x)); MASK = ((1 << 10) - 1) ^ (3 & ~0) = 1023 ^ 3 = 1020.
  EXPECT_EQ(names, (std::vector<std::string>{"shl", "shr", "and", "not", "xor", "or"}));
  EXPECT_NE(std::find(constants.begin(), constants.end(), 1020), constants.end());
}

TEST(Lowering, WholeTileReductionsReduceEveryAxisAndMeanDivides) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, M, f32>, Y: tensor<N, M, f32>) grid tiles(1) as (i) {
  x = load X[0, 0] : <4, 8>;
  store Y[0, 0] = mean(x) + min(x, axis = 0);
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::string> reductions;
  const Operation* divide = nullptr;
  walk(*c.module, [&](Operation& op) {
    if (op.info().has(kReduction))
      reductions.push_back(fmt::format("{} axis {} -> {}", op.name(), op.int_attr("axis"), op.result()->type().to_string()));
    if (op.kind() == OpKind::div) divide = &op;
  });
  EXPECT_EQ(reductions, (std::vector<std::string>{"reduce_sum axis 1 -> tile<4x1xf32, reg>",
                                                  "reduce_sum axis 0 -> tile<1x1xf32, reg>",
                                                  "reduce_min axis 0 -> tile<1x8xf32, reg>"}));
  ASSERT_TRUE(divide);
  EXPECT_EQ(divide->operand(1)->defining_op()->attr("value")->as_float(), 32.0);
}

TEST(Lowering, ALoadAtElementCoordinatesCarriesTheElementsAttribute) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, f32>, Y: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {
  store Y[i] = load X at [i * 8 - 1] : <8> + load X[i] : <8>;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<bool> elements;
  walk(*c.module, [&](Operation& op) {
    if (op.kind() == OpKind::load) elements.push_back(op.has_attr("elements"));
  });
  EXPECT_EQ(elements, (std::vector<bool>{true, false}));
}

TEST(Lowering, AStoreAtElementCoordinatesCarriesTheElementsAttribute) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, f32>, Y: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {
  store Y at [i * 8 + 3] = load X[i] : <8>;
  store X[i] = load X[i] : <8>;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<bool> elements;
  walk(*c.module, [&](Operation& op) {
    if (op.kind() == OpKind::store) elements.push_back(op.has_attr("elements"));
  });
  EXPECT_EQ(elements, (std::vector<bool>{true, false}));
}

// `store T[i] += tile` (issue 18) lowers to a store with `accumulate`, at tile and at element
// coordinates; the tensor it adds to counts as read as well as written.
TEST(Lowering, AnAddingStoreCarriesTheAccumulateAttribute) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, f32>, Y: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {
  store Y[i] += load X[i] : <8>;
  store Y at [i * 8 + 3] += load X[i] : <8>;
  store X[i] = load X[i] : <8>;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::pair<bool, bool>> stores;  // (accumulate, read)
  walk(*c.module, [&](Operation& op) {
    if (op.kind() == OpKind::store) stores.emplace_back(op.has_attr("accumulate"), tensor_access(op)->reads);
  });
  EXPECT_EQ(stores, (std::vector<std::pair<bool, bool>>{{true, true}, {true, true}, {false, false}}));
}

// `store T[i] max= tile` and `min=` lower to a store with `accumulate = "max"` / "min", and the
// bitwise `&=`, `|=`, `^=` to "and", "or", "xor"; each reads the tensor too.
TEST(Lowering, MaxAndMinStoresCarryTheirCombine) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, f32>, Y: tensor<N, f32>, Q: tensor<N, i64>, Z: tensor<N, i64>) grid tiles(cdiv(N, 8)) as (i) {
  store Y[i] max= load X[i] : <8>;
  store Y at [i * 8 + 3] min= load X[i] : <8>;
  store Y[i] += load X[i] : <8>;
  store Z[i] &= load Q[i] : <8>;
  store Z[i] |= load Q[i] : <8>;
  store Z[i] ^= load Q[i] : <8>;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::pair<StoreCombine, bool>> stores;  // (combine, read)
  walk(*c.module, [&](Operation& op) {
    if (op.kind() == OpKind::store) stores.emplace_back(store_combine(op), tensor_access(op)->reads);
  });
  EXPECT_EQ(stores, (std::vector<std::pair<StoreCombine, bool>>{
                        {StoreCombine::max, true}, {StoreCombine::min, true}, {StoreCombine::add, true},
                        {StoreCombine::and_, true}, {StoreCombine::or_, true}, {StoreCombine::xor_, true}}));
}

// `store T[i] = x if m` lowers to a store marked `masked` whose operand before the tile is the
// mask, brought to the tile's rank (a <8> row of a <4, 8> tile becomes <1, 8>; a scalar stays);
// an unmasked store has no mask, and its coordinates are counted the same way.
TEST(Lowering, AMaskedStoreTakesItsMaskBeforeTheTile) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, M, f32>, Y: tensor<N, M, f32>, n: i32) grid tiles(cdiv(N, 4)) as (i) {
  x = load X[i, 0] : <4, 8>;
  store Y[i, 0] = x if iota<8, i32>(0) < n;
  store Y[i, 0] += x if n > 0;
  store Y[i, 0] = x;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::string> masks;
  walk(*c.module, [&](Operation& op) {
    if (op.kind() != OpKind::store) return;
    EXPECT_EQ(coordinate_count(op), 2u);
    const Value* mask = store_mask(op);
    masks.push_back(mask ? mask->type().to_string() : "none");
    if (mask) {
      EXPECT_EQ(op.operand(op.num_operands() - 2), mask);
    }
  });
  EXPECT_EQ(masks, (std::vector<std::string>{"tile<1x8xi1, reg>", "i1", "none"}));
}

// A statement whose value fails is reported once: later uses of its name (and of names computed
// from it) fail quietly instead of adding "unknown name" for each.
TEST(Lowering, AFailedAssignmentIsReportedOnceNotAtEachUse) {
  Compiled c = compile_tile(
      "kernel k(X: tensor<N, M, f32>, B: tensor<M, f32>, Y: tensor<N, M, f32>) grid tiles(1) as (i) {\n"
      "  x = load X[i, 0] : <8, 4>;\n"
      "  h = x + load B[0] : <8>;\n"
      "  g = 0.5 * h * (1.0 + tanh(h * h));\n"
      "  store Y[i, 0] = g;\n"
      "  store Y[i, 0] = undefined_name;\n"
      "}");
  EXPECT_FALSE(c.module);
  ASSERT_EQ(c.diagnostics->diagnostics().size(), 2u) << c.errors();
  EXPECT_NE(c.diagnostics->diagnostics()[0].message.find("do not broadcast"), std::string::npos) << c.errors();
  EXPECT_EQ(c.diagnostics->diagnostics()[0].location.line, 3u);
  EXPECT_NE(c.diagnostics->diagnostics()[1].message.find("unknown name 'undefined_name'"), std::string::npos)
      << c.errors();
}

// "operand type -> result type" of each reshape the front end made, in program order.
std::vector<std::string> reshapes_in(Module& module) {
  std::vector<std::string> reshapes;
  walk(module, [&](Operation& op) {
    if (op.kind() == OpKind::reshape)
      reshapes.push_back(op.operand(0)->type().to_string() + " -> " + op.result()->type().to_string());
  });
  return reshapes;
}

// NumPy's rule (issue 18): the shorter shape gains leading 1s through a reshape, on either side.
TEST(Lowering, TilesOfDifferentRankBroadcastThroughAReshape) {
  Compiled c = compile_tile(
      "kernel k(X: tensor<N, M, f32>, B: tensor<M, f32>, Y: tensor<2, N, M, f32>) grid tiles(1) as (i) {\n"
      "  x = load X[i, 0] : <8, 4>;\n"
      "  h = load B[0] : <4> * x;\n"
      "  store Y[0, i, 0] = zeros<2, 8, 4, f32>() + h;\n"
      "}");
  ASSERT_TRUE(c.module) << c.errors();
  EXPECT_EQ(reshapes_in(*c.module), (std::vector<std::string>{"tile<4xf32, reg> -> tile<1x4xf32, reg>",
                                                              "tile<8x4xf32, reg> -> tile<1x8x4xf32, reg>"}));
}

// The other side of NumPy's rule: a load may ask for dims of extent 1 in front of its tensor's
// rank, and a store drops them; a carried vector that broadcasting turns into a row says how to
// start it.
TEST(Lowering, LeadingDimsOfExtentOneComeAndGoAtLoadsAndStores) {
  Compiled c = compile_tile(
      "kernel k(X: tensor<N, M, f32>, B: tensor<M, f32>, Y: tensor<M, f32>) grid tiles(1) as (i) {\n"
      "  store Y[0] = load X[i, 0] : <2, 4>;\n"
      "}");
  EXPECT_FALSE(c.module) << "only dims of extent 1 go";
  EXPECT_NE(c.errors().find("storing a rank-2 tile into the rank-1 tensor 'Y' (a tile may have fewer dimensions than "
                            "its tensor, or more of extent 1 in front, not more)"),
            std::string::npos)
      << c.errors();
  Compiled d = compile_tile(
      "kernel k(X: tensor<N, M, f32>, B: tensor<M, f32>, Y: tensor<M, f32>) grid tiles(1) as (i) {\n"
      "  b = load B[0] : <1, 4>;\n"
      "  store Y[0] = sum(load X[i, 0] : <8, 4> + b, axis = 0);\n"
      "}");
  ASSERT_TRUE(d.module) << d.errors();
  EXPECT_EQ(reshapes_in(*d.module), (std::vector<std::string>{"tile<4xf32, reg> -> tile<1x4xf32, reg>",
                                                              "tile<1x4xf32, reg> -> tile<4xf32, reg>"}));
  Compiled e = compile_tile(
      "kernel k(X: tensor<N, M, f32>, Y: tensor<M, f32>) grid tiles(1) as (i) {\n"
      "  acc = zeros<4, f32>();\n"
      "  for k in 0 .. 3 carry (acc) { acc = acc + sum(load X[k, 0] : <8, 4>, axis = 0); }\n"
      "  store Y[0] = acc;\n"
      "}");
  EXPECT_FALSE(e.module);
  EXPECT_NE(e.errors().find("tile<4, f32> before, tile<1, 4, f32> at the end of the body (start it with the "
                            "shape it ends with, e.g. zeros<1, 4, f32>())"),
            std::string::npos)
      << e.errors();
}

TEST(Lowering, ANameDefinedInBothBranchesIsDefinedAfterTheIf) {
  Compiled c = compile_tile(R"(
kernel k(X: tensor<N, f32>) grid tiles(cdiv(N, 8)) as (i) {
  x = load X[i] : <8>;
  if i < 3 { y = x * 2.0; } else { y = x + 1.0; }
  store X[i] = y;
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  const Operation* branch = nullptr;
  walk(*c.module, [&](Operation& op) {
    if (op.kind() == OpKind::if_) branch = &op;
  });
  ASSERT_TRUE(branch);
  ASSERT_EQ(branch->num_results(), 1u);
  EXPECT_EQ(branch->result()->name_hint(), "y");
}

TEST(Parser, EmptyProgramHasNoKernel) {
  Compiled c = compile_tile("const A = 1;\n");
  EXPECT_FALSE(c.module);
  EXPECT_THAT(c.errors(), HasSubstr("the program defines no kernel"));
}

}  // namespace
}  // namespace tilec::testing
