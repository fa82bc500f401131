// tests/interpreter/buffers_test.cpp — host buffers, splitmix64 filling and the comparison used
// by `tilec run --check`.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/interpreter/compare_buffers.h"
#include "runtime/interpreter/float_formats.h"
#include "runtime/interpreter/random_fill.h"
#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

TEST(HostBuffers, StoreExactBitPatterns) {
  HostBuffer bf16(ScalarKind::bf16, {3});
  EXPECT_EQ(bf16.bytes().size(), 6u);
  bf16.store_float(1, 1.0f);
  EXPECT_EQ(bf16.load_bits(1), 0x3F80u);
  EXPECT_EQ(bf16.bytes()[2], 0x80);  // little-endian
  HostBuffer e4m3(ScalarKind::f8e4m3, {2});
  e4m3.store_float(0, 500.0f);  // saturates
  EXPECT_EQ(e4m3.load_float(0), 448.0f);
  HostBuffer i32(ScalarKind::i32, {2});
  i32.store_int(0, -5);
  EXPECT_EQ(i32.load_int(0), -5);
  EXPECT_EQ(i32.coordinates_of(1), std::vector<int64_t>{1});
  HostBuffer grid(ScalarKind::f32, {3, 4, 5});
  EXPECT_EQ(grid.coordinates_of(2 * 20 + 3 * 5 + 4), (std::vector<int64_t>{2, 3, 4}));
}

TEST(RandomFill, SplitMix64MatchesItsReferenceSequence) {
  SplitMix64 generator(0);
  EXPECT_EQ(generator.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(generator.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(generator.next(), 0x06C45D188009454Full);
}

TEST(RandomFill, SameSeedSameBytesValuesInRangeAndRepresentable) {
  HostBuffer a(ScalarKind::bf16, {64, 33}), b = a, c = a;
  fill_random(a, 42, {-3, 5});
  fill_random(b, 42, {-3, 5});
  fill_random(c, 43, {-3, 5});
  EXPECT_EQ(a.bytes(), b.bytes());
  EXPECT_NE(a.bytes(), c.bytes());
  for (int64_t i = 0; i < a.element_count(); ++i) {
    float v = a.load_float(i);
    EXPECT_GE(v, -3.0f);
    EXPECT_LE(v, 5.0f);
    EXPECT_EQ(round_to_format(ScalarKind::bf16, v), v);
  }
  HostBuffer ints(ScalarKind::i32, {1000});
  fill_random(ints, 1, {-2, 2});
  std::vector<int> seen(5, 0);
  for (int64_t i = 0; i < 1000; ++i) {
    int64_t v = ints.load_int(i);
    ASSERT_GE(v, -2);
    ASSERT_LE(v, 2);
    ++seen[static_cast<size_t>(v + 2)];
  }
  for (int count : seen) EXPECT_GT(count, 100);  // every value drawn
  EXPECT_NE(derive_seed(1, 0), derive_seed(1, 1));
}

TEST(CompareBuffers, ReportsErrorsAndTheFirstMismatch) {
  HostBuffer expected = testing::make_buffer(ScalarKind::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostBuffer actual = expected;
  BufferComparison same = compare_buffers(expected, actual);
  EXPECT_TRUE(same.ok());
  EXPECT_EQ(same.max_absolute_error, 0);

  actual.store_float(4, 5.00001f);  // within 1e-5 relative
  EXPECT_TRUE(compare_buffers(expected, actual).ok());
  actual.store_float(4, 5.1f);
  actual.store_float(5, 7.0f);
  BufferComparison off = compare_buffers(expected, actual);
  EXPECT_FALSE(off.ok());
  EXPECT_EQ(off.mismatches, 2);
  EXPECT_EQ(off.first_mismatch, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(off.expected_value, 5);
  EXPECT_NEAR(off.actual_value, 5.1, 1e-6);
  EXPECT_NEAR(off.max_absolute_error, 1.0, 1e-9);
  EXPECT_NEAR(off.max_relative_error, 1.0 / 6, 1e-9);
  EXPECT_NE(off.summary().find("first at [1, 1]"), std::string::npos) << off.summary();

  HostBuffer other_shape(ScalarKind::f32, {3, 2});
  EXPECT_FALSE(compare_buffers(expected, other_shape).shapes_match);
}

// NaN matches NaN, and the summary counts them: an output of 0/0 everywhere (a causal attention
// whose key loop never ran) matched the interpreter's and read as a plain "ok".
TEST(CompareBuffers, NansInBothMatchAndAreCounted) {
  HostBuffer expected = testing::make_buffer(ScalarKind::f32, {4}, {1, NAN, NAN, 2});
  BufferComparison both = compare_buffers(expected, expected);
  EXPECT_TRUE(both.ok());
  EXPECT_EQ(both.both_nan, 2);
  EXPECT_EQ(both.summary(), "ok (max abs error 0, max rel error 0; 2 of 4 elements are NaN in both)");
  HostBuffer finite = testing::make_buffer(ScalarKind::f32, {4}, {1, 0, 0, 2});
  EXPECT_FALSE(compare_buffers(expected, finite).ok());
  EXPECT_EQ(compare_buffers(finite, finite).summary(), "ok (max abs error 0, max rel error 0)");
}

// An element that matches only through the normwise term (a sum added in any order: split-K's
// bf16 += from two workers read "ok" beside a relative error of 1, a helper's hunt) is counted,
// and the summary says which bound let it through.
TEST(CompareBuffers, ElementsWithinTheNormwiseBoundOnlyAreCounted) {
  HostBuffer expected = testing::make_buffer(ScalarKind::f32, {3}, {100, 1, 2});
  HostBuffer actual = testing::make_buffer(ScalarKind::f32, {3}, {100, 1.5, 2});
  Tolerance tolerance;
  tolerance.normwise = 0.01;  // 1 of the largest |value|, 100
  BufferComparison within = compare_buffers(expected, actual, tolerance);
  EXPECT_TRUE(within.ok());
  EXPECT_EQ(within.normwise_only, 1);
  EXPECT_EQ(within.summary(), "ok (max abs error 0.5, max rel error 0.5; 1 of 3 within the bound of sums added in any "
                              "order only, which the largest |value| sets)");
  EXPECT_EQ(compare_buffers(expected, expected, tolerance).summary(), "ok (max abs error 0, max rel error 0)");
}

TEST(CompareBuffers, TolerancesFollowTheElementType) {
  HostBuffer expected = testing::make_buffer(ScalarKind::bf16, {2}, {1.0, NAN});
  HostBuffer actual = testing::make_buffer(ScalarKind::bf16, {2}, {1.0078125, NAN});  // one bf16 ulp
  EXPECT_TRUE(compare_buffers(expected, actual).ok());
  HostBuffer f32_expected = testing::make_buffer(ScalarKind::f32, {1}, {1.0});
  HostBuffer f32_actual = testing::make_buffer(ScalarKind::f32, {1}, {1.0078125});
  EXPECT_FALSE(compare_buffers(f32_expected, f32_actual).ok());
  HostBuffer nan = testing::make_buffer(ScalarKind::f32, {1}, {NAN});
  EXPECT_FALSE(compare_buffers(f32_expected, nan).ok());
  HostBuffer i_expected = testing::make_buffer(ScalarKind::i32, {1}, {3});
  HostBuffer i_actual = testing::make_buffer(ScalarKind::i32, {1}, {4});
  EXPECT_FALSE(compare_buffers(i_expected, i_actual).ok());
  std::vector<HostBuffer> left = {f32_expected, i_expected}, right = {f32_expected, i_actual};
  std::vector<BufferComparison> results = compare_buffer_sets(left, right);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_FALSE(results[1].ok());
}

}  // namespace
}  // namespace tilec::runtime
