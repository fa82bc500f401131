// tests/interpreter/transpose_test.cpp — evaluate_transpose by a permutation of any rank: each
// result element is the operand element the permutation names, checked element by element
// against the definition (out[i0, i1, ...] = a at i_k along dimension dims[k]).
#include <gtest/gtest.h>

#include <vector>

#include "runtime/interpreter/tile_arithmetic.h"

namespace tilec::runtime {
namespace {

// A [2, 3, 4] i32 tile whose element (i, j, k) is 100·i + 10·j + k.
TileValue numbered() {
  TileValue a = TileValue::zeros(ScalarKind::i32, {2, 3, 4});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) a.ints[static_cast<size_t>((i * 3 + j) * 4 + k)] = 100 * i + 10 * j + k;
  return a;
}

TEST(InterpreterTranspose, APermutationOfRankThreeMovesEachElementToItsPlace) {
  TileValue out;
  ASSERT_EQ(evaluate_transpose(numbered(), {2, 0, 1}, out), "");
  ASSERT_EQ(out.shape, (std::vector<int64_t>{4, 2, 3}));
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(out.ints[static_cast<size_t>((k * 2 + i) * 3 + j)], 100 * i + 10 * j + k) << k << i << j;
  ASSERT_EQ(evaluate_transpose(numbered(), {1, 0, 2}, out), "");
  ASSERT_EQ(out.shape, (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(out.ints[static_cast<size_t>((2 * 2 + 1) * 4 + 3)], 123);  // out[2, 1, 3] = a[1, 2, 3]
}

TEST(InterpreterTranspose, TheTwoDimensionalSwapAndBadPermutations) {
  TileValue a = TileValue::zeros(ScalarKind::f32, {2, 3}), out;
  for (size_t i = 0; i < 6; ++i) a.floats[i] = static_cast<float>(i);
  ASSERT_EQ(evaluate_transpose(a, {1, 0}, out), "");
  EXPECT_EQ(out.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out.floats, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_NE(evaluate_transpose(numbered(), {0, 0, 1}, out), "");
  EXPECT_NE(evaluate_transpose(numbered(), {2, 1}, out), "");
  EXPECT_NE(evaluate_transpose(numbered(), {0, 1, 3}, out), "");
}

}  // namespace
}  // namespace tilec::runtime
