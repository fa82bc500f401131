// tests/interpreter/kernel_structure_test.cpp — how the interpreter runs a kernel as a whole
// (docs/ir.md): prologue scalars that size the grid, scalar arguments, a kernel without a grid
// and an empty grid, loop bounds and steps, and an op it cannot run. The ops themselves are in
// ops_test.cpp. Expected numbers are written out here, never computed by the interpreter.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/parser.h"
#include "runtime/interpreter/interpreter.h"
#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

using testing::buffer_values;
using testing::make_buffer;
using testing::parse_verified;

}  // namespace
}  // namespace tilec::runtime

namespace tilec::runtime {
namespace {

TEST(InterpreterOps, PrologueScalarsSizeTheGridAndScalarArgumentsBroadcast) {
  auto module = parse_verified(R"(module
kernel @scale(%X: tensor<N, f8e4m3>, %bias: i32, %Y: tensor<N, f8e4m3>) {
  %N = dim %X {axis = 0} : index
  %two = constant {value = 2} : index
  %half = div %N, %two : index
  %block = constant {value = 3} : index
  %g = cdiv %half, %block : index
  %i = grid_ids %g : index
  %x = load %X, %i : tile<3xf8e4m3, reg>
  %b = cast %bias : f8e4m3
  %y = mul %x, %b : tile<3xf8e4m3, reg>
  store %Y, %i, %y
  return
}
)");
  ASSERT_TRUE(module);
  // N = 14: the grid covers cdiv(7, 3) = 3 tiles, i.e. the first 9 elements only.
  std::vector<double> x = {1, 2, 3, 0.5, 100, 300, -7, 0.125, 1.75, 9, 9, 9, 9, 9};
  HostBuffer X = make_buffer(ScalarKind::f8e4m3, {14}, x), Y(ScalarKind::f8e4m3, {14});
  LaunchResult result = run_kernel(*module->kernels().front(), std::vector<KernelArgument>{&X, int64_t{3}, &Y});
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(result.tile_count, 3);
  std::vector<double> y = buffer_values(Y);
  // e4m3: 100 is stored as 96 (a tie, to even) and 96 * 3 = 288; 300 is stored as 288 and
  // 288 * 3 saturates at 448; 1.75 * 3 = 5.25 rounds to 5; 0.125 * 3 = 0.375 is exact;
  // -7 * 3 = -21 rounds to -20 (a tie, to even).
  EXPECT_EQ(y, (std::vector<double>{3, 6, 9, 1.5, 288, 448, -20, 0.375, 5, 0, 0, 0, 0, 0}));
}

TEST(InterpreterOps, KernelWithoutGridRunsOnceAndEmptyGridRunsNothing) {
  auto once = parse_verified(R"(module
kernel @fill(%Y: tensor<3, i64>, %v: i64) {
  %zero = constant {value = 0} : index
  %t = full %v : tile<4xi64, reg>
  store %Y, %zero, %t
  return
}
)");
  ASSERT_TRUE(once);
  HostBuffer Y(ScalarKind::i64, {3});
  LaunchResult result = run_kernel(*once->kernels().front(), std::vector<KernelArgument>{&Y, int64_t{-9}});
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(result.tile_count, 1);
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{-9, -9, -9}));

  auto empty = parse_verified(R"(module
kernel @none(%Y: tensor<N, f32>) {
  %N = dim %Y {axis = 0} : index
  %i = grid_ids %N : index
  %t = zeros : tile<1xf32, reg>
  store %Y, %i, %t
  return
}
)");
  ASSERT_TRUE(empty);
  HostBuffer nothing(ScalarKind::f32, {0});
  result = run_kernel(*empty->kernels().front(), std::vector<KernelArgument>{&nothing});
  ASSERT_TRUE(result.ok) << result.describe();
  EXPECT_EQ(result.tile_count, 0);
}

TEST(InterpreterOps, LoopsNeedAPositiveStepRunZeroTimesWhenEmptyAndAreBounded) {
  auto module = parse_verified(R"(module
kernel @loop(%Y: tensor<1, i32>, %lb: index, %step: index) {
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %zero = constant {value = 0} : index
  %ub = constant {value = 5} : index
  %init = zeros : tile<1xi32, reg>
  %inc = constant {value = 1} : i32
  %count = for %lb, %ub, %step, %init : tile<1xi32, reg> loc(8:3) {
  ^(%k: index, %c: tile<1xi32, reg>):
    %next = add %c, %inc : tile<1xi32, reg>
    yield %next
  }
  store %Y, %zero, %count
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer Y(ScalarKind::i32, {1});
  const Operation& kernel = *module->kernels().front();
  ASSERT_TRUE(run_kernel(kernel, std::vector<KernelArgument>{&Y, int64_t{0}, int64_t{2}}).ok);
  EXPECT_EQ(Y.load_int(0), 3);  // k = 0, 2, 4
  ASSERT_TRUE(run_kernel(kernel, std::vector<KernelArgument>{&Y, int64_t{7}, int64_t{1}}).ok);
  EXPECT_EQ(Y.load_int(0), 0);  // no iteration: the result is the init
  LaunchResult result = run_kernel(kernel, std::vector<KernelArgument>{&Y, int64_t{0}, int64_t{0}});
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.describe(), "8:3: 'for': the step must be positive, got 0 (tile 0)");
  LaunchOptions options;
  options.max_loop_iterations = 2;
  result = run_kernel(kernel, std::vector<KernelArgument>{&Y, int64_t{0}, int64_t{1}}, {}, options);
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.message.find("ran more than 2 iterations"), std::string::npos) << result.message;
  // A tile's loops together: loops nested in loops, each under the per-loop limit, ran for hours.
  LaunchOptions per_tile;
  per_tile.max_tile_iterations = 2;
  result = run_kernel(kernel, std::vector<KernelArgument>{&Y, int64_t{0}, int64_t{1}}, {}, per_tile);
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.message.find("the tile's loops ran more than 2 iterations together"), std::string::npos)
      << result.message;
  // A deadline (emulate's --timeout for its reference run) ends a launch still running.
  LaunchOptions late;
  late.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  late.deadline_seconds = 7;
  result = run_kernel(kernel, std::vector<KernelArgument>{&Y, int64_t{0}, int64_t{1}}, {}, late);
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.message.find("the run did not finish in 7 s (--timeout)"), std::string::npos) << result.message;
}

}  // namespace
}  // namespace tilec::runtime

namespace tilec::runtime {
namespace {

TEST(InterpreterOps, AnOpItCannotRunIsAnErrorWithItsLocation) {
  // Built directly (the parser and verifier would refuse it): a kernel nested in a kernel.
  Operation outer(OpKind::kernel, {});
  outer.set_attr("sym_name", "outer");
  Builder builder(&outer.add_region());
  builder.set_location({3, 4});
  builder.create(OpKind::kernel, {}, {});
  builder.create(OpKind::return_, {}, {});
  LaunchResult result = run_kernel(outer, {});
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.describe(), "3:4: 'kernel': the interpreter cannot run this op (tile 0)");
}

}  // namespace
}  // namespace tilec::runtime
