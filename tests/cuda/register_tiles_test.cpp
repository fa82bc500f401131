// tests/cuda/register_tiles_test.cpp — the register form of plain kernels (emit_register_kernel.h):
//   - the blocked layout gives every element of the frame exactly one (thread, slot), keeps 16-byte
//     vectors along rows, and puts consecutive threads on consecutive vectors (coalescing);
//   - the emitted kernel is register code: no tile loop through shared memory, barriers only where
//     a reduction crosses warps or a column is staged for vector stores, vector accesses and
//     shuffles where the layout calls for them;
//   - kernels whose tiles fit no frame keep the shared-memory form and say why;
//   - the launcher picks the 32-bit instantiation only for tensors of at most 2^30 elements.
// What the code computes is checked by running it: tests/emulate/samples_emulate_test.cpp emulates
// every plain sample against the interpreter, ragged shapes included.
#include <fmt/core.h>

#include <map>

#include "backend/cuda/register_layout.h"
#include "tests/cuda/cuda_test_support.h"
#include "tests/edit_text.h"

namespace tilec::cuda_test {
namespace {

using tilec::testing::occurrences;

bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

struct Frame {
  int64_t rows, columns, element_bytes;
};

// Frames of the samples and the awkward ones: single rows and columns, odd extents, rows wider
// than the CTA, tiny tiles.
const Frame kFrames[] = {{1, 1024, 4}, {4, 512, 4}, {4, 256, 4}, {32, 128, 4}, {8, 128, 4}, {4, 1024, 2},
                         {16, 512, 2}, {32, 256, 4}, {1, 100, 4}, {3, 100, 4},  {4, 768, 4}, {16, 1, 4},
                         {1, 8, 2},    {7, 33, 1},  {1, 1, 4},   {64, 64, 8},  {2, 4096, 4}, {5, 3, 2}};

// Each element of the frame has one thread and slot; padding only where the layout says so.
void expect_each_element_owned_once(const Frame& frame, const cuda::RegisterLayout& layout, const std::string& name) {
    EXPECT_EQ(layout.threads_per_row * layout.thread_rows, layout.threads) << name;
    EXPECT_LE(layout.vector * frame.element_bytes, 16) << name;
    EXPECT_EQ(frame.columns % layout.vector, 0) << name;
    std::map<std::pair<int64_t, int64_t>, int> owners;
    int64_t padding = 0;
    for (int64_t thread = 0; thread < layout.threads; ++thread) {
      int64_t thread_row = thread / layout.threads_per_row, thread_column = thread % layout.threads_per_row;
      if (frame.rows == 1 && thread_row != 0) continue;  // a one-row frame: thread rows replicate row 0
      for (int64_t row_slot = 0; row_slot < layout.row_slots; ++row_slot)
        for (int64_t column_slot = 0; column_slot < layout.column_slots; ++column_slot)
          for (int64_t lane = 0; lane < layout.vector; ++lane) {
            int64_t row = frame.rows == 1 ? 0 : row_slot * layout.thread_rows + thread_row;
            int64_t column = (column_slot * layout.threads_per_row + thread_column) * layout.vector + lane;
            if (row >= frame.rows || column >= frame.columns) {
              ++padding;
              EXPECT_TRUE(row >= frame.rows ? layout.padded_rows() : layout.padded_columns()) << name;
              continue;
            }
            ++owners[{row, column}];
          }
    }
    EXPECT_EQ(static_cast<int64_t>(owners.size()), frame.rows * frame.columns) << name;
    for (const auto& [element, n] : owners)
      EXPECT_EQ(n, 1) << name << ": element (" << element.first << ", " << element.second << ")";
    // The threads are sized to the work: padding stays within the frame's size plus one slot per thread.
    EXPECT_LE(padding, frame.rows * frame.columns + layout.threads * layout.vector) << name;
}

TEST(RegisterLayout, EveryElementOfTheFrameHasExactlyOneThreadAndSlot) {
  for (const Frame& frame : kFrames) {
    cuda::RegisterLayout layout = cuda::blocked_layout(frame.rows, frame.columns, frame.element_bytes);
    std::string name = fmt::format("{}x{} ({} bytes): {}", frame.rows, frame.columns, frame.element_bytes,
                                   layout.describe());
    EXPECT_TRUE(is_power_of_two(layout.threads) && layout.threads >= 32 && layout.threads <= 256) << name;
    expect_each_element_owned_once(frame, layout, name);
  }
}

// Rows whose vector count has a small power-of-two factor (LLaMA's 11008 f32 columns: 2752
// vectors, 64 · 43) over 1024 threads: an exact split of 64 threads a row left 12 of 16 thread
// rows idle and 172 slots a thread, and the kernel was refused; every thread now takes every
// row, padded along it, as an odd width does (a hunt's layernorm, softmax and RMSNorm widths; a
// column sum then adds within each thread).
TEST(RegisterLayout, FewRowsOfAnAwkwardWidthUseEveryThread) {
  for (const Frame& frame : {Frame{4, 11008, 4}, Frame{4, 4352, 4}, Frame{4, 13824, 2}, Frame{2, 11008, 4}}) {
    cuda::RegisterLayout layout = cuda::blocked_layout(frame.rows, frame.columns, frame.element_bytes, 16, 1024);
    std::string name = fmt::format("{}x{} ({} bytes): {}", frame.rows, frame.columns, frame.element_bytes,
                                   layout.describe());
    EXPECT_EQ(layout.threads, 1024) << name;
    EXPECT_EQ(layout.thread_rows, 1) << name;
    EXPECT_EQ(layout.row_slots, frame.rows) << name;
    EXPECT_LE(layout.row_slots * layout.column_slots * layout.vector,
              2 * frame.rows * frame.columns / layout.threads) << name;
    expect_each_element_owned_once(frame, layout, name);
  }
  // An exact split that already uses every thread row is kept.
  cuda::RegisterLayout exact = cuda::blocked_layout(4, 16384, 4, 16, 1024);
  EXPECT_EQ(exact.threads_per_row, 1024) << exact.describe();
}

TEST(RegisterLayout, RowsMoveInSixteenByteVectorsAWarpWide) {
  cuda::RegisterLayout f32 = cuda::blocked_layout(4, 512, 4);
  EXPECT_EQ(f32.vector, 4);
  cuda::RegisterLayout bf16 = cuda::blocked_layout(4, 1024, 2);
  EXPECT_EQ(bf16.vector, 8);
  // A warp's 32 threads stand side by side along one row: 32 consecutive vectors, 512 bytes.
  for (const cuda::RegisterLayout& layout : {f32, bf16}) EXPECT_GE(layout.threads_per_row, 32) << layout.describe();
  // A row narrower than a warp's vectors: rows are split over fewer threads, the rest take rows.
  cuda::RegisterLayout narrow = cuda::blocked_layout(32, 64, 4);
  EXPECT_EQ(narrow.threads_per_row, 16);
  EXPECT_EQ(narrow.thread_rows * narrow.threads_per_row, narrow.threads);
}

// The slots of broadcast shapes: a reduced row keeps only the row slots, a row vector only the
// column slots, a scalar-like tile one slot.
TEST(RegisterLayout, BroadcastShapesDropTheSlotsOfTheirUnitDims) {
  cuda::RegisterLayout layout = cuda::blocked_layout(32, 256, 4);
  int64_t full = layout.row_slots * layout.column_slots * layout.vector;
  EXPECT_EQ(layout.slots_of({32, 256}), full);
  EXPECT_EQ(layout.slots_of({32, 1}), layout.row_slots);
  EXPECT_EQ(layout.slots_of({1, 256}), layout.column_slots * layout.vector);
  EXPECT_EQ(layout.slots_of({1, 1}), 1);
  EXPECT_EQ(layout.slots_of({256}), layout.column_slots * layout.vector);
}

std::string kernel_text(const std::string& cuda, const std::string& name) {
  size_t start = cuda.find("__global__ void TILEC_LAUNCH_BOUNDS(");
  start = cuda.find(name + "_kernel(", start);
  if (start == std::string::npos) return {};
  return cuda.substr(start, cuda.find("\n}\n", start) - start);
}

TEST(RegisterTiles, SoftmaxIsRegisterCodeWithVectorsAndShuffles) {
  Emitted emitted = emit_input("softmax", "sm_90a");
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  const std::string& cuda = *emitted.cuda;
  std::string kernel = kernel_text(cuda, "softmax");
  ASSERT_FALSE(kernel.empty());
  EXPECT_NE(cuda.find("template <typename Index>\n__global__ void TILEC_LAUNCH_BOUNDS("), std::string::npos);
  EXPECT_EQ(occurrences(kernel, "for (int elem"), 0u) << "a tile loop of the shared-memory form";
  EXPECT_GT(occurrences(kernel, "load_vector<4>"), 0u);
  EXPECT_GT(occurrences(kernel, "store_vector<4>"), 0u);
  EXPECT_GT(occurrences(kernel, "__shfl_xor_sync(0xffffffffu, acc, 1)"), 0u);
  // A 32x256 frame has a row for each of the 8 warps: 32 threads per row, so both reductions are
  // shuffles only, with no barrier and no shared memory.
  EXPECT_EQ(occurrences(kernel, "__syncthreads()"), 0u);
  EXPECT_EQ(occurrences(kernel, "shared_memory"), 0u);
  EXPECT_NE(cuda.find("tiles in registers"), std::string::npos);
}

TEST(RegisterTiles, AReductionInsideALoopWaitsForItsReadersBeforeTheNextIteration) {
  Emitted emitted = emit_input("row_mean_loop", "sm_90a");
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  std::string kernel = kernel_text(*emitted.cuda, "row_mean");
  ASSERT_FALSE(kernel.empty());
  // row_mean's 16x128 frame keeps a row inside one warp: its reduction is shuffles only. The
  // one barrier stages the 16x1 mean for its 16-byte stores (rows held by different threads).
  EXPECT_EQ(occurrences(kernel, "_partials"), 0u);
  EXPECT_EQ(occurrences(kernel, "__syncthreads"), 1u);
  EXPECT_EQ(occurrences(kernel, "__syncthreads();  // the column is staged"), 1u);
  EXPECT_NE(kernel.find("store_vector<4>(S, Index(0), column, 1, M,"), std::string::npos) << kernel;

  // A wide row reduced inside a loop: the partials cross warps, so the loop body ends its
  // reduction with a second barrier (the next iteration writes the same area).
  const char* text = R"(module

kernel @wide(%X: tensor<R, 2048, f32>, %Y: tensor<R, 1, f32>) {
  %R = dim %X {axis = 0} : index
  %0 = constant {value = 0} : index
  %1 = constant {value = 1} : index
  %two = constant {value = 2} : index
  %m = grid_ids %R {schedule = "tiles"} : index
  %init = zeros : tile<1x1xf32, reg>
  %acc = for %0, %two, %1, %init : tile<1x1xf32, reg> {
    ^(%k: index, %partial: tile<1x1xf32, reg>):
    %x = load %X, %m, %0 : tile<1x2048xf32, reg>
    %s = reduce_sum %x {axis = 1} : tile<1x1xf32, reg>
    %next = add %partial, %s : tile<1x1xf32, reg>
    yield %next
  }
  store %Y, %m, %0, %acc
  return
}
)";
  Emitted wide = emit_text(text, "wide.tir", CudaEmitOptions{});
  ASSERT_TRUE(wide.cuda) << wide.diagnostics;
  std::string wide_kernel = kernel_text(*wide.cuda, "wide");
  EXPECT_EQ(occurrences(wide_kernel, "__syncthreads();  // the warps' partials are written"), 1u) << wide_kernel;
  EXPECT_EQ(occurrences(wide_kernel, "__syncthreads();  // every warp has read the partials"), 1u) << wide_kernel;
}

// Two columns stored one after the other (a row max and a row sum; a layernorm's mean and rstd)
// share the staging: the second is written only once every storer of the first has read it.
// Without that barrier a warp could overwrite rows the first store's threads have yet to read
// (found writing a top-1 kernel: the value column held the index column's bits).
TEST(RegisterTiles, ASecondStagedColumnWaitsForTheFirstsReaders) {
  const char* text = R"(module

kernel @two_cols(%X: tensor<R, 64, f32>, %V: tensor<R, 1, f32>, %S: tensor<R, 1, f32>) {
  %R = dim %X {axis = 0} : index
  %0 = constant {value = 8} : index
  %1 = cdiv %R, %0 : index
  %r = grid_ids %1 {schedule = "tiles"} : index
  %2 = constant {value = 0} : index
  %x = load %X, %r, %2 : tile<8x64xf32, reg>
  %v = reduce_max %x {axis = 1} : tile<8x1xf32, reg>
  %s = reduce_sum %x {axis = 1} : tile<8x1xf32, reg>
  store %V, %r, %2, %v
  store %S, %r, %2, %s
  return
}
)";
  Emitted emitted = emit_text(text, "two_cols.tir", CudaEmitOptions{});
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  std::string kernel = kernel_text(*emitted.cuda, "two_cols");
  const size_t first_read = kernel.find("&v_column[");
  const size_t second_write = kernel.find("s_column[thread_row");
  ASSERT_NE(first_read, std::string::npos) << kernel;
  ASSERT_NE(second_write, std::string::npos) << kernel;
  const std::string between = kernel.substr(first_read, second_write - first_read);
  EXPECT_EQ(occurrences(between, "__syncthreads();  // the column staged before is read"), 1u) << kernel;
  EXPECT_EQ(occurrences(kernel, "__syncthreads();  // the column staged before is read"), 1u) << "not before the first";
}

TEST(RegisterTiles, KernelsWhoseTilesFitNoFrameKeepSharedMemoryAndSayWhy) {
  const char* text = R"(module

kernel @mixed(%X: tensor<8, 4, f32>, %Y: tensor<4, 8, f32>) {
  %0 = constant {value = 0} : index
  %x = load %X, %0, %0 : tile<8x4xf32, reg>
  %y = load %Y, %0, %0 : tile<4x8xf32, reg>
  store %X, %0, %0, %x
  store %Y, %0, %0, %y
  return
}
)";
  Emitted emitted = emit_text(text, "mixed.tir", CudaEmitOptions{});
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  EXPECT_NE(emitted.cuda->find("tiles in shared memory: its tiles' shapes fit no common 8x8 frame"), std::string::npos)
      << *emitted.cuda;
  EXPECT_NE(emitted.cuda->find("for (int elem = threadIdx.x;"), std::string::npos);
  // mma keeps the shared form too (the tensor-core backend handles warp-specialized kernels).
  Emitted matmul = emit_input("matmul", "sm_90a");
  ASSERT_TRUE(matmul.cuda) << matmul.diagnostics;
  EXPECT_NE(matmul.cuda->find("tiles in shared memory: it has an mma"), std::string::npos);
}

// A frame of more than 64 elements per thread at 256 threads (a 32768-wide softmax row, a
// 4 x 8192 RMSNorm: a hunt's kernels took the shared form and overflowed shared memory) spreads
// over 512 or 1024 threads, each holding at most kMaxSlotsPerThread, with the spill warning's
// budget of that CTA size (65536 registers shared: 128 or 64 a thread, less 23); a frame no
// CTA holds keeps the shared form.
TEST(RegisterTiles, FramesTooBigFor256ThreadsTake512Or1024) {
  auto kernel = [](const std::string& shape, const std::string& tile) {
    return "module\n\nkernel @wide(%X: tensor<" + shape + ", f32>) {\n  %0 = constant {value = 0} : index\n"
           "  %x = load %X, %0, %0 : tile<" + tile + "xf32, reg>\n  store %X, %0, %0, %x\n  return\n}\n";
  };
  const struct {
    std::string tile;
    const char* header;
    bool spills;
  } cases[] = {{"4x8192", "512 threads per CTA, tiles in registers", false},
               {"1x32768", "512 threads per CTA, tiles in registers", false},
               {"1x65536", "1024 threads per CTA, tiles in registers", true},
               {"2x65536", "tiles in shared memory: a 2x65536 tile would take 128 registers per thread (more than 64)",
                false}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.tile);
    std::string shape = c.tile;
    shape.replace(shape.find('x'), 1, ", ");
    Emitted emitted = emit_text(kernel(shape, c.tile), "wide.tir", CudaEmitOptions{});
    if (c.tile == "2x65536") {  // the shared form's 512 KiB do not fit either: refused, saying why
      EXPECT_NE(emitted.diagnostics.find(c.header), std::string::npos) << emitted.diagnostics;
      continue;
    }
    ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
    EXPECT_NE(emitted.cuda->find(c.header), std::string::npos) << emitted.cuda->substr(0, 600);
    EXPECT_EQ(emitted.diagnostics.find("more than the 41 a thread can spare in a CTA of 1024 threads") !=
                  std::string::npos,
              c.spills)
        << emitted.diagnostics;
  }
  EXPECT_EQ(cuda::spare_registers(256), cuda::kSpillRegisters);
  EXPECT_EQ(cuda::spare_registers(512), 105);
  EXPECT_EQ(cuda::spare_registers(1024), 41);
}

TEST(RegisterTiles, TheLauncherRunsThe32BitInstantiationOnlyWhenEveryTensorFits) {
  Emitted emitted = emit_input("bias_clamp_2d", "sm_90a");
  ASSERT_TRUE(emitted.cuda) << emitted.diagnostics;
  const std::string& cuda = *emitted.cuda;
  size_t narrow = cuda.find("TILEC_LAUNCH(bias_clamp_kernel<int32_t>");
  size_t wide = cuda.find("TILEC_LAUNCH(bias_clamp_kernel<int64_t>");
  ASSERT_NE(narrow, std::string::npos);
  ASSERT_NE(wide, std::string::npos);
  EXPECT_LT(narrow, wide);
  size_t condition = cuda.rfind("if (index32_fits(", narrow);
  ASSERT_NE(condition, std::string::npos);
  std::string check = cuda.substr(condition, cuda.find('\n', condition) - condition);
  // One check per distinct tensor shape, each with every extent of that tensor.
  EXPECT_NE(check.find("index32_fits({M, X_dim1})"), std::string::npos) << check;
  EXPECT_NE(check.find("index32_fits({1, bias_dim1})"), std::string::npos) << check;
  // The grid is decomposed in 32-bit unsigned arithmetic in both instantiations.
  EXPECT_NE(cuda.find("tile_number / static_cast<uint32_t>("), std::string::npos);
}

}  // namespace
}  // namespace tilec::cuda_test
