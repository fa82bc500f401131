// tests/interpreter/shape_ops_test.cpp — the ops that move a tile's elements or take one out:
// transpose, slice, concat, reshape and item (docs/ir.md), on small .tir kernels. Expected numbers are written
// out here, never computed by the interpreter.
#include <gtest/gtest.h>

#include <vector>

#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

using testing::buffer_values;
using testing::launch_first;
using testing::make_buffer;
using testing::parse_verified;

TEST(InterpreterShapeOps, TransposeSwapsRowsAndColumns) {
  auto module = parse_verified(R"(module
kernel @tr(%X: tensor<2, 3, i32>, %Y: tensor<3, 2, i32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %z, %z : tile<2x3xi32, reg>
  %y = transpose %x : tile<3x2xi32, reg>
  store %Y, %z, %z, %y
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::i32, {2, 3}, {1, 2, 3, 4, 5, 6}), Y(ScalarKind::i32, {3, 2});
  ASSERT_TRUE(launch_first(*module, {&X, &Y}).ok);
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

// slice takes the elements at starts + i·steps: of the 2 x 4 tile [[1, 2, 3, 4], [5, 6, 7, 8]],
// starts [0, 1] and steps [1, 2] give columns 1 and 3 of both rows, and concat along axis 1 puts
// columns 2..3 before the whole tile; along axis 0 it stacks the rows of a 1 x 4 slice under it.
TEST(InterpreterShapeOps, SliceAndConcatMoveTheElementsTheySay) {
  auto module = parse_verified(R"(module
kernel @sc(%X: tensor<2, 4, i32>, %S: tensor<2, 2, i32>, %C: tensor<2, 6, i32>, %R: tensor<3, 4, i32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %z, %z : tile<2x4xi32, reg>
  %s = slice %x {starts = [0, 1], steps = [1, 2]} : tile<2x2xi32, reg>
  store %S, %z, %z, %s
  %right = slice %x {starts = [0, 2]} : tile<2x2xi32, reg>
  %c = concat %right, %x {axis = 1} : tile<2x6xi32, reg>
  store %C, %z, %z, %c
  %last = slice %x {starts = [1, 0]} : tile<1x4xi32, reg>
  %r = concat %x, %last {axis = 0} : tile<3x4xi32, reg>
  store %R, %z, %z, %r
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::i32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostBuffer S(ScalarKind::i32, {2, 2}), C(ScalarKind::i32, {2, 6}), R(ScalarKind::i32, {3, 4});
  ASSERT_TRUE(launch_first(*module, {&X, &S, &C, &R}).ok);
  EXPECT_EQ(buffer_values(S), (std::vector<double>{2, 4, 6, 8}));
  EXPECT_EQ(buffer_values(C), (std::vector<double>{3, 4, 1, 2, 3, 4, 7, 8, 5, 6, 7, 8}));
  EXPECT_EQ(buffer_values(R), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8}));
}

// interleave takes its tiles' elements in turn: along axis 1, [[1, 2], [3, 4]] and [[5, 6], [7, 8]]
// give [[1, 5, 2, 6], [3, 7, 4, 8]]; three tiles along axis 0 give their rows in turn.
TEST(InterpreterShapeOps, InterleaveTakesItsTilesElementsInTurn) {
  auto module = parse_verified(R"(module
kernel @il(%X: tensor<2, 4, i32>, %C: tensor<2, 4, i32>, %R: tensor<3, 4, i32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %z, %z : tile<2x4xi32, reg>
  %a = slice %x {starts = [0, 0]} : tile<2x2xi32, reg>
  %b = slice %x {starts = [0, 2]} : tile<2x2xi32, reg>
  %c = interleave %a, %b {axis = 1} : tile<2x4xi32, reg>
  store %C, %z, %z, %c
  %first = slice %x {starts = [0, 0]} : tile<1x4xi32, reg>
  %second = slice %x {starts = [1, 0]} : tile<1x4xi32, reg>
  %r = interleave %second, %first, %second {axis = 0} : tile<3x4xi32, reg>
  store %R, %z, %z, %r
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::i32, {2, 4}, {1, 2, 5, 6, 3, 4, 7, 8});
  HostBuffer C(ScalarKind::i32, {2, 4}), R(ScalarKind::i32, {3, 4});
  ASSERT_TRUE(launch_first(*module, {&X, &C, &R}).ok);
  EXPECT_EQ(buffer_values(C), (std::vector<double>{1, 5, 2, 6, 3, 7, 4, 8}));
  EXPECT_EQ(buffer_values(R), (std::vector<double>{3, 4, 7, 8, 1, 2, 5, 6, 3, 4, 7, 8}));
}

// reshape keeps the row-major order: [1, 2, 3, 4, 5, 6] as 2 x 3 is [3, 2] as 3 x 2 (not the
// transpose), and a <3> row made <1, 3> broadcasts over the rows of a 2 x 3 tile.
TEST(InterpreterShapeOps, ReshapeKeepsRowMajorOrder) {
  auto module = parse_verified(R"(module
kernel @re(%X: tensor<2, 3, i32>, %B: tensor<3, i32>, %Y: tensor<3, 2, i32>, %Z: tensor<2, 3, i32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %i = grid_ids %one : index
  %x = load %X, %z, %z : tile<2x3xi32, reg>
  %y = reshape %x : tile<3x2xi32, reg>
  store %Y, %z, %z, %y
  %b = load %B, %z : tile<3xi32, reg>
  %row = reshape %b : tile<1x3xi32, reg>
  %s = add %x, %row : tile<2x3xi32, reg>
  store %Z, %z, %z, %s
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer X = make_buffer(ScalarKind::i32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostBuffer B = make_buffer(ScalarKind::i32, {3}, {10, 20, 30});
  HostBuffer Y(ScalarKind::i32, {3, 2}), Z(ScalarKind::i32, {2, 3});
  ASSERT_TRUE(launch_first(*module, {&X, &B, &Y, &Z}).ok);
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(buffer_values(Z), (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

// item gives the scalar of a one-element tile; as a cast index it is a load's element coordinate.
TEST(InterpreterShapeOps, ItemGivesTheElementAndIndexesALoad) {
  auto module = parse_verified(R"(module
kernel @gather(%I: tensor<1, i32>, %X: tensor<4, 3, f32>, %Y: tensor<1, 3, f32>) {
  %one = constant {value = 1} : index
  %z = constant {value = 0} : index
  %g = grid_ids %one : index
  %id = load %I, %z : tile<1xi32, reg>
  %s = item %id : i32
  %row = cast %s : index
  %x = load %X, %row, %z {elements} : tile<1x3xf32, reg>
  store %Y, %z, %z, %x
  return
}
)");
  ASSERT_TRUE(module);
  HostBuffer I = make_buffer(ScalarKind::i32, {1}, {2});
  HostBuffer X = make_buffer(ScalarKind::f32, {4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  HostBuffer Y(ScalarKind::f32, {1, 3});
  ASSERT_TRUE(launch_first(*module, {&I, &X, &Y}).ok);
  EXPECT_EQ(buffer_values(Y), (std::vector<double>{20, 21, 22}));
}

}  // namespace
}  // namespace tilec::runtime
