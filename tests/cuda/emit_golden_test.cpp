// tests/cuda/emit_golden_test.cpp — golden tests of the CUDA emitter.
//
// Each input in tests/cuda/inputs/ is emitted for sm_90a and compared byte for byte with
// tests/cuda/golden/NAME.cu; one input also for sm_100a, two with the harness.
// TILEC_BLESS=1 rewrites the golden files (tests/README.md).
#include "tests/cuda/cuda_test_support.h"

namespace tilec::cuda_test {
namespace {

class GoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenTest, MatchesGoldenFile) {
  std::string name = GetParam();
  Emitted emitted = emit_input(name, "sm_90a");
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  expect_golden(*emitted.cuda, name + ".cu");
}

INSTANTIATE_TEST_SUITE_P(Inputs, GoldenTest, ::testing::ValuesIn(kInputs));

TEST(Golden, VectorAddForBlackwell) {
  Emitted emitted = emit_input("vector_add", "sm_100a");
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  expect_golden(*emitted.cuda, "vector_add.sm_100a.cu");
}

TEST(Golden, SoftmaxWithHarness) {
  Emitted emitted = emit_input("softmax", "sm_90a", /*harness=*/true);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  expect_golden(*emitted.cuda, "softmax.harness.cu");
}

// The harness of a kernel with mma: flop counter, count-only reference, check=0, TFLOP/s.
TEST(Golden, MatmulWithHarness) {
  Emitted emitted = emit_input("matmul", "sm_90a", /*harness=*/true);
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  expect_golden(*emitted.cuda, "matmul.harness.cu");
}

}  // namespace
}  // namespace tilec::cuda_test
