// tests/interpreter/kernel_buffers_test.cpp — buffers made from a kernel's IR, and the
// before/after comparison `tilec run --check` performs.
#include <gtest/gtest.h>

#include "runtime/interpreter/kernel_buffers.h"
#include "runtime/interpreter/tile_runner.h"
#include "tests/interpreter/test_support.h"

namespace tilec::runtime {
namespace {

constexpr const char* kScaledAdd = R"(module
kernel @axpy(%X: tensor<R, C, f32>, %Y: tensor<R, C, bf16>, %alpha: f32, %Z: tensor<R, C, f32>) {
  %R = dim %X {axis = 0} : index
  %C = dim %X {axis = 1} : index
  %b = constant {value = 4} : index
  %gr = cdiv %R, %b : index
  %gc = cdiv %C, %b : index
  %m, %n = grid_ids %gr, %gc : index, index
  %x = load %X, %m, %n : tile<4x4xf32, reg>
  %y = load %Y, %m, %n : tile<4x4xbf16, reg>
  %yf = cast %y : tile<4x4xf32, reg>
  %ax = mul %x, %alpha : tile<4x4xf32, reg>
  %z = OP %ax, %yf : tile<4x4xf32, reg>
  store %Z, %m, %n, %z
  return
}
)";

std::unique_ptr<Module> scaled(const std::string& op) {
  std::string text = kScaledAdd;
  text.replace(text.find("OP"), 2, op);
  return testing::parse_verified(text);
}

TEST(KernelBuffers, MadeFromTheKernelTypesAndSeed) {
  auto module = scaled("add");
  ASSERT_TRUE(module);
  const Operation& kernel = *module->kernels().front();
  KernelBuffers buffers, again;
  std::string message;
  ASSERT_TRUE(make_kernel_buffers(kernel, {{"R", 9}, {"C", 6}}, 5, buffers, message)) << message;
  ASSERT_TRUE(make_kernel_buffers(kernel, {{"R", 9}, {"C", 6}}, 5, again, message)) << message;
  EXPECT_EQ(buffers.names, (std::vector<std::string>{"%X", "%Y", "%alpha", "%Z"}));
  EXPECT_EQ(buffers.outputs, std::vector<size_t>{3});
  EXPECT_EQ(buffers.tensors[1].dims(), (std::vector<int64_t>{9, 6}));
  EXPECT_EQ(buffers.tensors[1].element(), ScalarKind::bf16);
  EXPECT_EQ(buffers.tensors[0].bytes(), again.tensors[0].bytes());
  EXPECT_NE(buffers.tensors[0].bytes(), std::vector<uint8_t>(buffers.tensors[0].bytes().size(), 0));
  EXPECT_EQ(buffers.tensors[3].bytes(), std::vector<uint8_t>(buffers.tensors[3].bytes().size(), 0));
  double alpha = std::get<double>(buffers.scalars[2]);
  EXPECT_GE(alpha, -1.0);
  EXPECT_LT(alpha, 1.0);

  EXPECT_FALSE(make_kernel_buffers(kernel, {{"R", 9}}, 5, buffers, message));
  EXPECT_EQ(message, "%X: the extent C is not bound");
}

TEST(KernelBuffers, CheckFindsNoDifferenceForAnEquivalentRunAndReportsAChangedOne) {
  auto before = scaled("add"), same = scaled("add"), broken = scaled("sub");
  ASSERT_TRUE(before && same && broken);
  KernelBuffers inputs;
  std::string message;
  ASSERT_TRUE(make_kernel_buffers(*before->kernels().front(), {{"R", 9}, {"C", 6}}, 1, inputs, message));
  KernelBuffers expected = inputs, parallel = inputs, wrong = inputs;
  ASSERT_TRUE(run_kernel(*before->kernels().front(), expected.arguments()).ok);
  ThreadTileRunner threads(2);
  LaunchOptions options;
  options.runner = &threads;
  ASSERT_TRUE(run_kernel(*same->kernels().front(), parallel.arguments(), {}, options).ok);
  ASSERT_TRUE(run_kernel(*broken->kernels().front(), wrong.arguments()).ok);

  std::vector<OutputComparison> ok = compare_outputs(expected, parallel);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].name, "%Z");
  EXPECT_TRUE(ok[0].comparison.ok()) << ok[0].comparison.summary();
  std::vector<OutputComparison> changed = compare_outputs(expected, wrong);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_FALSE(changed[0].comparison.ok());
  EXPECT_EQ(changed[0].comparison.first_mismatch, (std::vector<int64_t>{0, 0}));
  EXPECT_GT(changed[0].comparison.mismatches, 40);  // almost all of the 54 elements
}

}  // namespace
}  // namespace tilec::runtime
