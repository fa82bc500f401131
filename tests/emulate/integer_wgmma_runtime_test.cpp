// tests/emulate/integer_wgmma_runtime_test.cpp — the integer WGMMA (s8/u8 operands, s32
// accumulators) through the emulation runtime itself: a kernel written in C++ against
// tilec_emulate.h, as a generated .cu's helpers would call it, runs on 128 fibers.
//
// The kernel copies its operands (laid out by smem_canonical.json's b8_K_64B_64x64 tile) into
// shared memory, fences and meets, then each thread issues the k-steps into its own int32_t
// registers, commits and waits. That exercises what the float form has and the integer one must
// share: per-thread calls assembled into one warpgroup-wide operation, wgmma.fence, wait_group,
// the hazard checks of its shared-memory reads, in each scheduling policy. The registers are
// mapped to D through wgmma_accumulator.json (PTX: the s32 D fragment is the f32 one) and compared
// with a naive product; the run must report nothing. The mismatched forms (f32 accumulators with
// s8 operands, s32 ones with e4m3) must be reported as invalid operands, as `tilec emulate` prints
// them: they run in a death test's child process, which exits with finish()'s status.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/emulate/include/tilec_emulate.h"
#include "tests/emulate/layout_tables.h"

namespace {

using namespace tilec_emu::reference;
using tilec_emu::ptx::Operand;

constexpr int kN = 64;

// Which wgmma_mma_async the kernel calls.
enum class Form { integer, f32_accumulators_with_s8, s32_accumulators_with_e4m3 };

struct WgmmaLaunch {
  Form form = Form::integer;
  const uint8_t* image = nullptr;  // A at byte 0, B at 4096; copied to a 1024-aligned shared base
  uint32_t image_bytes = 0;
  std::vector<uint64_t> a_descriptors, b_descriptors;  // per k-step, start addresses from that base
  int32_t* registers = nullptr;  // out: kN / 2 per thread
};

// One thread's k-steps into `d` (scale-d 0 first), committed and waited for.
template <typename Accumulator>
void multiply(Accumulator* d, Operand a_type, Operand b_type, const WgmmaLaunch& launch, uint32_t base) {
  tilec_emu::ptx::wgmma_fence(__LINE__);
  for (size_t step = 0; step < launch.a_descriptors.size(); ++step)
    tilec_emu::ptx::wgmma_mma_async(d, kN, a_type, b_type, launch.a_descriptors[step] + (base >> 4), nullptr,
                                    launch.b_descriptors[step] + (base >> 4), step > 0, 1, 1, 0, 0, __LINE__);
  tilec_emu::ptx::wgmma_commit_group(__LINE__);
  tilec_emu::ptx::wgmma_wait_group(0, __LINE__);
}

void wgmma_kernel(const WgmmaLaunch* launch) {
  const unsigned thread = threadIdx.x;
  unsigned char* window = tilec_emu::dynamic_shared_memory();
  const uint32_t window_address = __cvta_generic_to_shared(window);
  const uint32_t base = (window_address + 1023) & ~1023u;
  for (uint32_t i = 16 * thread; i < launch->image_bytes; i += 16 * 128)
    std::memcpy(window + (base - window_address) + i, launch->image + i, 16);
  tilec_emu::ptx::fence_proxy_async(__LINE__);  // the async proxy reads what these stores wrote
  __syncthreads();
  switch (launch->form) {
    case Form::integer: {
      int32_t d[kN / 2];
      for (int32_t& value : d) value = 0x5a5a5a5a;  // scale-d 0 ignores it
      multiply(d, Operand::s8, Operand::u8, *launch, base);
      std::memcpy(launch->registers + thread * (kN / 2), d, sizeof d);
      break;
    }
    case Form::f32_accumulators_with_s8: {
      float d[kN / 2] = {};
      multiply(d, Operand::s8, Operand::s8, *launch, base);
      break;
    }
    case Form::s32_accumulators_with_e4m3: {
      int32_t d[kN / 2] = {};
      multiply(d, Operand::e4m3, Operand::u8, *launch, base);
      break;
    }
  }
}

// The operands: A (s8) and B (u8) tiles of random bytes, through the table's offsets.
struct Operands {
  std::vector<uint8_t> image = std::vector<uint8_t>(8192);
  std::vector<int64_t> a, b;  // [m][k], [n][k]
  WgmmaLaunch launch;
};

Operands place_operands(const json& table) {
  const json& tile = find_case(table, "b8_K_64B_64x64");
  Operands operands;
  std::mt19937 random(31);
  for (auto [offset, values, is_signed] : {std::tuple{0u, &operands.a, true}, std::tuple{4096u, &operands.b, false}})
    for (int mn = 0; mn < 64; ++mn)
      for (int k = 0; k < 64; ++k) {
        const uint8_t byte = mn == 0 ? 0x80 : static_cast<uint8_t>(random());
        operands.image[offset + table_offset(tile, mn, k)] = byte;
        values->push_back(is_signed ? int64_t{static_cast<int8_t>(byte)} : int64_t{byte});
      }
  for (const json& step : tile["k_steps"]) {
    operands.launch.a_descriptors.push_back(parse_hex(step["desc_sm90"]));
    operands.launch.b_descriptors.push_back(parse_hex(step["desc_sm90"]) + (4096 >> 4));
  }
  operands.launch.image = operands.image.data();
  operands.launch.image_bytes = static_cast<uint32_t>(operands.image.size());
  return operands;
}

cudaError_t run(const WgmmaLaunch& launch) {
  return tilec_emu::launch(__LINE__, wgmma_kernel, dim3(1), dim3(128), 1024 + launch.image_bytes, 1u, &launch);
}

void set_policy(const char* policy) {
  std::string program = "test", option = "--policy", value = policy;
  char* argv[] = {program.data(), option.data(), value.data(), nullptr};
  int argc = 3;
  ASSERT_TRUE(tilec_emu::configure(argc, argv, nullptr));
}

TEST(IntegerWgmmaRuntime, S8TimesU8MatchesANaiveProductInEveryPolicy) {
  LOAD_TABLE(table, "smem_canonical.json");
  json accumulator_table;
  {
    LOAD_TABLE(loaded, "wgmma_accumulator.json");
    accumulator_table = std::move(loaded);
  }
  const json* layout = nullptr;
  for (const json& entry : accumulator_table["cases"])
    if (entry["id"] == "f32_64x64") layout = &entry;
  ASSERT_NE(layout, nullptr);
  Operands operands = place_operands(table);
  std::vector<int32_t> registers(128 * kN / 2);
  operands.launch.registers = registers.data();
  for (const char* policy : {"eager", "lazy", "random"}) {
    SCOPED_TRACE(policy);
    set_policy(policy);
    std::fill(registers.begin(), registers.end(), 0);
    ASSERT_EQ(run(operands.launch), cudaSuccess);
    for (int thread = 0; thread < 128; ++thread)
      for (int reg = 0; reg < kN / 2; ++reg) {
        const int row = (*layout)["row"][thread][reg].get<int>(), column = (*layout)["col"][thread][reg].get<int>();
        int64_t sum = 0;
        for (int k = 0; k < 64; ++k) sum += operands.a[static_cast<size_t>(row) * 64 + k] * operands.b[static_cast<size_t>(column) * 64 + k];
        ASSERT_EQ(registers[static_cast<size_t>(thread) * (kN / 2) + reg], sum) << "thread " << thread << " register " << reg;
      }
  }
  set_policy("eager");
  // No hazard, no invalid operand: finish() prints the reports there are and says whether any.
  EXPECT_EQ(tilec_emu::finish(cudaSuccess), tilec_emu::exit_ok);
}

TEST(IntegerWgmmaRuntime, MismatchedAccumulatorAndOperandTypesAreInvalidOperands) {
  LOAD_TABLE(table, "smem_canonical.json");
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the runtime may have started executor threads
  Operands operands = place_operands(table);
  operands.launch.form = Form::f32_accumulators_with_s8;
  EXPECT_EXIT(std::exit(tilec_emu::finish(run(operands.launch))), ::testing::ExitedWithCode(tilec_emu::exit_hazard),
              "error: invalid operand: wgmma.mma_async with f32 accumulators and s8/u8 operands");
  operands.launch.form = Form::s32_accumulators_with_e4m3;
  EXPECT_EXIT(std::exit(tilec_emu::finish(run(operands.launch))), ::testing::ExitedWithCode(tilec_emu::exit_hazard),
              "error: invalid operand: wgmma.mma_async with s32 accumulators and a floating-point A or B");
}

}  // namespace
