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

// An integer tensor whose loaded tile is shifted or masked holds packed words (GPTQ's eight
// nibbles in an i32): it is filled over the whole type, so every nibble varies; one read as
// numbers keeps the small range (indices, counts), -1, 0 and 1. Also through a stage buffer, as
// the pipeline leaves a load the schedule moved a stage ahead, through an interleave and an
// integer cast, and read as a float's bits (bitcast).
TEST(KernelBuffers, PackedWordsSpanTheirWholeType) {
  auto module = testing::parse_verified(R"(module
kernel @unpack(%Q: tensor<N, i32>, %P: tensor<N, i32>, %I: tensor<N, i32>, %R: tensor<N, u16>, %Y: tensor<N, i32>,
               %B: tensor<N, i32>, %F: tensor<N, f32>) {
  %N = dim %Q {axis = 0} : index
  %z = constant {value = 0} : index
  %four = constant {value = 4} : i32
  %i = grid_ids %z : index
  %q = load %Q, %z : tile<64xi32, reg>
  %low = shr %q, %four : tile<64xi32, reg>
  %full = mbarrier_create {count = 1, arrivals = 1} : mbarrier
  %empty = mbarrier_create {count = 1, arrivals = 1} : mbarrier
  %buffer = stage_buffer %full, %empty : pipe<tile<64xi32, reg>, 1>
  %p = load %P, %z : tile<64xi32, reg>
  stage_write %buffer, %z, %p
  %read = stage_read %buffer, %z : tile<64xi32, reg>
  %masked = and %read, %four : tile<64xi32, reg>
  %n = load %I, %z : tile<64xi32, reg>
  %sum = add %low, %masked : tile<64xi32, reg>
  %y = add %sum, %n : tile<64xi32, reg>
  store %Y, %z, %y
  %b = load %B, %z : tile<64xi32, reg>
  %f = bitcast %b : tile<64xf32, reg>
  store %F, %z, %f
  %r = load %R, %z : tile<64xu16, reg>
  %twice = interleave %r, %r {axis = 0} : tile<128xu16, reg>
  %wide = cast %twice : tile<128xi32, reg>
  %bits = shr %wide, %four : tile<128xi32, reg>
  %half = slice %bits {starts = [0]} : tile<64xi32, reg>
  store %Y, %z, %half
  return
}
)");
  ASSERT_TRUE(module);
  KernelBuffers buffers;
  std::string message;
  ASSERT_TRUE(make_kernel_buffers(*module->kernels().front(), {{"N", 64}}, 3, buffers, message)) << message;
  auto widest = [&](size_t i) {
    int64_t most = 0;
    for (int64_t k = 0; k < 64; ++k) most = std::max(most, std::abs(buffers.tensors[i].load_int(k)));
    return most;
  };
  EXPECT_GT(widest(0), int64_t{1} << 24);  // Q: shifted
  EXPECT_GT(widest(1), int64_t{1} << 24);  // P: masked after a stage buffer
  EXPECT_LE(widest(2), 1);                 // I: added, a number
  EXPECT_GT(widest(3), 1 << 12);           // R: interleaved (Triton's AWQ unpack), widened, shifted
  EXPECT_GT(widest(5), int64_t{1} << 24);  // B: read as a float's bits (bitcast; -1, 0, 1 are NaN, 0, a subnormal)
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
