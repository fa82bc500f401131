// tests/emulate/planted_bugs_test.cpp — one-line bugs planted in emitted .cu files must be reported
// by `tilec emulate --cu` in every scheduling policy, by name where a hazard applies.
//
// Each case takes samples/expected/SAMPLE.TARGET.cu (what tilec emits), replaces one piece of
// text (a line, or one line of a pair, so the edit stays a one-line change), runs
//   tilec emulate samples/SAMPLE.tile --target TARGET --cu MUTATED.cu --dims ... --sms 2 --schedules 3
// and checks that the eager, lazy and random schedules each fail, each with the expected report:
// the hazard kind ("race:", "missing wgmma.fence:", ...) printed by the emulator before that
// schedule's closing line, or "differs from the interpreter" where the bug only changes numbers
// (a wrong layout formula whose reads are still ordered). Where a bug shows as different hazards
// in different schedules (an early slot release races in one and deadlocks the pipeline in
// another), the case lists each accepted report. The unmutated files are the control: they
// pass in every schedule. The mutation must find its text exactly once, so a change in the emitter
// that moves the text fails here loudly instead of testing nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <regex>

#include "emulate_test_support.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

struct PlantedBug {
  const char* name;
  const char* sample;
  const char* target;
  const char* dims;
  const char* find;     // must occur exactly once in the expected .cu
  const char* replace;  // (with `after`: what stays where `find` was)
  const char* report;   // what each schedule's report must contain (alternatives split by '|')
  // A page that shows this bug's eager report (its indented block beginning `    SAMPLE.cu:`,
  // reflowed at will), which must still be what the emulator prints, line numbers included.
  const char* shown_in = nullptr;
  // A line moved: `find` is also inserted after the only occurrence of this text, which comes
  // before it (a slot released right after its wait instead of after its last read).
  const char* after = nullptr;
};

std::ostream& operator<<(std::ostream& out, const PlantedBug& bug) { return out << bug.name; }

// gemm: BM 128, BN 256, BK 64, 4 stages. K = 520 gives 9 k-steps, so every stage slot is reused.
constexpr const char* kGemm = "M=200,N=136,K=520";
// Several tiles per CTA on sm_100a (M = 600: 5 row blocks over 2 SMs) reuse TMEM.
constexpr const char* kGemmRounds = "M=600,N=136,K=136";
// attention: BQ 128, BKV 64, D 64, 2 stages; T = 296 is ragged (the last block is masked).
constexpr const char* kAttention = "S=200,T=296,HD=128";

// Plain kernels: a ragged row count (softmax, rmsnorm: BR 4) and ragged columns with several
// row blocks per loop (column_sum: BM 32, BN 256).
constexpr const char* kSoftmax = "R=7";
constexpr const char* kRmsnorm = "R=7";
constexpr const char* kColumnSum = "M=77,N=300";
constexpr const char* kGemv = "M=37,K=1000";
// w8a16_linear: BM = BN = 128, BK = 64, 4 stages; K = 520 gives 9 k-steps, the weight's rows 520 bytes.
constexpr const char* kW8a16 = "M=200,N=296,K=520";
// w4a16_linear: BM = BN = BK = 128, 3 stages; K = 640 gives 5 k-steps (the producer laps), the
// packed rows 320 bytes; two tiles, one per CTA.
constexpr const char* kW4a16 = "M=128,N=256,K=640,KP=320,G=5";
constexpr const char* kLinear = "M=200,N=296,K=200";  // linear: BM 128, BN 256, BK 64  // BM 16, BK 512: a ragged last row block and K block

constexpr const char* kNumbers = "differs from the interpreter";

const PlantedBug kBugs[] = {
    // --- gemm, sm_90a (TMA, mbarriers, WGMMA, TMA-store epilogue) ---
    {"sm90_parity_flipped", "gemm", "sm_90a", kGemm, "static_cast<uint32_t>(pipe_a_consumer_phase_2))",
     "static_cast<uint32_t>(1 - pipe_a_consumer_phase_2))", "race:"},
    {"sm90_missing_wgmma_fence", "gemm", "sm_90a", kGemm, "          tilec_wgmma_fence();\n", "", "missing wgmma.fence:"},
    {"sm90_missing_proxy_fence", "gemm", "sm_90a", kGemm,
     "            tilec_fence_proxy_async();  // the box is read by TMA\n", "", "missing fence.proxy.async:"},
    {"sm90_staging_reused_early", "gemm", "sm_90a", kGemm,
     "if (chunk == 0) tilec_bulk_wait_read<0>(); else tilec_bulk_wait_read<1>();", "", "staging reused:"},
    {"sm90_wrong_expect_tx", "gemm", "sm_90a", kGemm, "(pipe_a_producer_index_2), 16384);",
     "(pipe_a_producer_index_2), 8192);", "deadlock:"},
    // The descriptor's swizzle field: the 64-byte mode (2) where TMA wrote the 128-byte one (1).
    {"sm90_wrong_swizzle", "gemm", "sm_90a", kGemm, "static_cast<uint64_t>(3 - swizzle_bytes / 64) << 62",
     "static_cast<uint64_t>(4 - swizzle_bytes / 64) << 62", "layout mismatch:"},
    {"sm90_lbo_sbo_swapped", "gemm", "sm_90a", kGemm, "tilec_matrix_descriptor(b + 0, 8192, 1024)",
     "tilec_matrix_descriptor(b + 0, 1024, 8192)", kNumbers},
    {"sm90_k_step_offset", "gemm", "sm_90a", kGemm, "tilec_matrix_descriptor(a + 32 +",
     "tilec_matrix_descriptor(a + 64 +", kNumbers},
    {"sm90_slot_released_before_mma_done", "gemm", "sm_90a", kGemm, "tilec_wgmma_wait<1>();", "tilec_wgmma_wait<2>();",
     "race:|deadlock:"},
    {"sm90_fragment_row_formula", "gemm", "sm_90a", kGemm, "lane / 4 + 8 * ((i / 2) % 2)",
     "lane / 8 + 8 * ((i / 2) % 2)", "uninitialized read:"},
    {"sm90_missing_barrier_init_fence", "gemm", "sm_90a", kGemm, "    tilec_fence_barrier_init();\n", "",
     "missing barrier-init fence:"},
    {"sm90_wrong_named_barrier_count", "gemm", "sm_90a", kGemm,
     "tilec_named_barrier_sync(2 + compute_warpgroup, 128);\n            #pragma unroll",
     "tilec_named_barrier_sync(2 + compute_warpgroup, 96);\n            #pragma unroll", "barrier misuse:"},
    {"sm90_no_sync_after_barrier_init", "gemm", "sm_90a", kGemm, "  __syncthreads();\n  // warp_specialize",
     "  // warp_specialize", "race:|barrier misuse:"},
    {"sm90_wrong_empty_arrival_count", "gemm", "sm_90a", kGemm, "tilec_mbarrier_init(pipe_a_empty + 8 * slot, 2)",
     "tilec_mbarrier_init(pipe_a_empty + 8 * slot, 1)", "race:|deadlock:"},

    // The launcher copies the SM count it sized the grid with for device code to read; emulated
    // device code read the host's count instead (no __CUDA_ARCH__), so dropping the copy passed
    // (found by mutation testing). Device code now reads 0 workers: no tile runs.
    {"sm90_sm_count_not_copied_to_device", "gemm", "sm_90a", kGemm, "&launch_sm_count, sizeof(int64_t), 0,",
     "&launch_sm_count, 0, 0,", kNumbers},
    {"sm90_register_file_overdrawn", "gemm", "sm_90a", kGemm, "tilec_raise_registers<232>();",
     "tilec_raise_registers<240>();", "setmaxnreg.inc to find"},

    // --- gemm, sm_100a (tcgen05, TMEM) ---
    {"sm100_missing_after_thread_sync", "gemm", "sm_100a", kGemm,
     "accumulator_parity ^= 1;\n          tilec_tcgen05_after_sync();", "accumulator_parity ^= 1;",
     "missing tcgen05 fence:", "docs/tutorial.md"},
    {"sm100_missing_before_thread_sync", "gemm", "sm_100a", kGemmRounds,
     "          tilec_tcgen05_before_sync();\n          tilec_named_barrier_sync(1, 256);",
     "          tilec_named_barrier_sync(1, 256);", "missing tcgen05 fence:"},
    {"sm100_tmem_reused_before_every_warp_read", "gemm", "sm_100a", kGemmRounds,
     "          tilec_named_barrier_sync(1, 256);\n          tilec_tcgen05_after_sync();\n        }",
     "          tilec_tcgen05_after_sync();\n        }", "TMEM"},
    {"sm100_slot_released_at_issue", "gemm", "sm_100a", kGemm, "tilec_tcgen05_commit(pipe_a_empty +",
     "tilec_mbarrier_arrive(pipe_a_empty +", "race:"},
    {"sm100_missing_accumulator_commit", "gemm", "sm_100a", kGemm,
     "if (compute_thread == 0) tilec_tcgen05_commit(accumulator_barrier);", "", "deadlock:"},
    {"sm100_wrong_instruction_n", "gemm", "sm_100a", kGemm, "0x08410490u, acc_1_started", "0x08210490u, acc_1_started",
     "uninitialized read:"},
    // The descriptor's swizzle field: the 64-byte mode (4 at bit 61) where TMA wrote the 128-byte one (2).
    {"sm100_wrong_swizzle", "gemm", "sm_100a", kGemm, "static_cast<uint64_t>(3 - swizzle_bytes / 64) << 62",
     "static_cast<uint64_t>(4 - swizzle_bytes / 64) << 62", "layout mismatch:"},
    {"sm100_missing_proxy_fence", "gemm", "sm_100a", kGemm,
     "            tilec_fence_proxy_async();  // the box is read by TMA\n", "", "missing fence.proxy.async:",
     "docs/emulation.md"},
    {"sm100_wrong_expect_tx", "gemm", "sm_100a", kGemm, "(pipe_b_producer_index_2), 32768);",
     "(pipe_b_producer_index_2), 16384);", "deadlock:"},
    {"sm100_staging_reused_early", "gemm", "sm_100a", kGemm,
     "if (chunk == 0) tilec_bulk_wait_read<0>(); else tilec_bulk_wait_read<0>();", "", "staging reused:"},
    {"sm100_tmem_lane_of_warp", "gemm", "sm_100a", kGemm, "(static_cast<uint32_t>(warp * 32) << 16)",
     "(static_cast<uint32_t>(warp * 16) << 16)", "TMEM misuse:"},
    {"sm100_register_count_not_multiple_of_8", "gemm", "sm_100a", kGemm, "tilec_lower_registers<40>();",
     "tilec_lower_registers<44>();", "register pool:"},
    // The registers of a tcgen05.ld are undefined until tcgen05.wait::ld (the emulator filled them
    // at the load; a helper's mutation testing found it): they read as NaN, and the thread exits
    // with the load not waited for.
    {"sm100_tmem_load_not_waited", "gemm", "sm_100a", kGemm, "  ::tilec_emu::ptx::tcgen05_wait_ld(tilec_line);\n", "",
     "TMEM misuse:"},

    // --- attention ---
    {"sm90_attention_register_a_pairs", "attention", "sm_90a", kAttention, "t38_pairs[0], t38_pairs[1]",
     "t38_pairs[1], t38_pairs[0]", kNumbers},
    {"sm90_attention_missing_wgmma_fence", "attention", "sm_90a", kAttention,
     "          tilec_wgmma_fence();\n          tilec_wgmma_m64n64k16_bf16_register_a",
     "          tilec_wgmma_m64n64k16_bf16_register_a", "missing wgmma.fence:"},
    {"sm90_attention_quad_shuffle", "attention", "sm_90a", kAttention,
     "t32[0] = max_f32(t32[0], __shfl_xor_sync(0xffffffffu, t32[0], 2));",
     "t32[0] = max_f32(t32[0], __shfl_xor_sync(0xffffffffu, t32[0], 4));", kNumbers},
    {"sm90_attention_v_released_before_mma_done", "attention", "sm_90a", kAttention,
     "          tilec_wgmma_wait<0>();  // the stage may be released once its last reader is done\n"
     "          if (compute_thread % 128 == 0) tilec_mbarrier_arrive(pipe_v_empty",
     "          if (compute_thread % 128 == 0) tilec_mbarrier_arrive(pipe_v_empty", "race:"},
    {"sm100_attention_missing_proxy_fence", "attention", "sm_100a", kAttention,
     "tilec_fence_proxy_async();  // the writes above are read by tcgen05.mma", "", "missing fence.proxy.async:"},
    // P's ordinary stores are ordered before the P·V mma by the barrier and the issuing thread's
    // tcgen05.fence::after_thread_sync; without the fence the mma is not ordered after the barrier
    // (the emulator ordered it by the barrier alone; found by mutation testing).
    {"sm100_attention_p_read_without_after_thread_sync", "attention", "sm_100a", kAttention,
     "            tilec_tcgen05_after_sync();\n            tilec_tcgen05_mma(tmem_base + 64,",
     "            tilec_tcgen05_mma(tmem_base + 64,", "missing tcgen05 fence:"},
    {"sm100_attention_p_staged_without_barrier", "attention", "sm_100a", kAttention,
     "tilec_fence_proxy_async();  // the writes above are read by tcgen05.mma\n          tilec_named_barrier_sync(1, 256);",
     "tilec_fence_proxy_async();  // the writes above are read by tcgen05.mma", "race:"},
    {"sm100_attention_row_exchange_barrier", "attention", "sm_100a", kAttention,
     "            tilec_named_barrier_sync(1, 256);  // the exchange is read before it is written again\n"
     "          }\n          // stage_write pipe_buffer: t32",
     "          }\n          // stage_write pipe_buffer: t32", kNumbers},

    // --- w8a16_linear: a weight TMA copies, which the compute threads dequantize into the B ---
    // The compute threads read the weight's slot without waiting for its TMA load: the producer
    // laps them and refills slots they have not released.
    {"sm90_w8a16_weight_read_before_its_load_lands", "w8a16_linear", "sm_90a", kW8a16,
     "          tilec_mbarrier_wait(pipe_full + 8 * static_cast<uint32_t>(pipe_consumer_index_8), "
     "static_cast<uint32_t>(pipe_consumer_phase_8));\n",
     "", "race:"},
    // sm_90a writes every K step's B into the same staging buffer, which the WGMMA of the step
    // before, still in flight (wait_group 1), reads.
    {"sm90_w8a16_staging_buffer_not_alternated", "w8a16_linear", "sm_90a", kW8a16,
     "          computed_b_buffer ^= 1;\n", "", "race:"},
    // sm_100a writes a B into a staging buffer without waiting for the tcgen05.mma that read it
    // two K steps before; or waits on the parity it waited on last time (which passes at once
    // while the next phase is pending, so the write races the MMA, and later waits for a phase
    // whose commit comes after the wait: a deadlock).
    {"sm100_w8a16_staging_rewritten_before_mma_done", "w8a16_linear", "sm_100a", kW8a16,
     "            tilec_mbarrier_wait(computed_b_barrier + 8 * computed_b_buffer, computed_b_parity >> "
     "computed_b_buffer & 1);\n",
     "", "race:"},
    {"sm100_w8a16_staging_parity_not_flipped", "w8a16_linear", "sm_100a", kW8a16,
     "            computed_b_parity ^= 1u << computed_b_buffer;\n", "", "race:|deadlock:"},
    // --- w4a16_linear: both 4-bit halves of each byte read from the slot TMA filled ---
    // The packed weight's slot released right after its wait, as an operand's would be at its
    // read, though the compute threads read it later, where the mma computes its B: the producer
    // refills it while they read (the ordinary reads tilec_shared_read checks), or laps them so
    // far that they wait for a phase already gone.
    {"sm90_w4a16_weight_released_before_its_last_read", "w4a16_linear", "sm_90a", kW4a16,
     "          if (compute_thread % 128 == 0) tilec_mbarrier_arrive(pipe_packed_empty + 8 * "
     "static_cast<uint32_t>(pipe_packed_consumer_index_2));  // one arrival per warpgroup\n",
     "", "race:|deadlock:", nullptr,
     "          tilec_mbarrier_wait(pipe_packed_full + 8 * static_cast<uint32_t>(pipe_packed_consumer_index_2), "
     "static_cast<uint32_t>(pipe_packed_consumer_phase_2));\n"},
    {"sm100_w4a16_weight_released_before_its_last_read", "w4a16_linear", "sm_100a", kW4a16,
     "          if (compute_thread == 0) tilec_tcgen05_commit(pipe_packed_empty + 8 * "
     "static_cast<uint32_t>(pipe_packed_consumer_index_2));  // when the MMAs reading it are done\n",
     "", "race:|deadlock:", nullptr,
     "          tilec_mbarrier_wait(pipe_packed_full + 8 * static_cast<uint32_t>(pipe_packed_consumer_index_2), "
     "static_cast<uint32_t>(pipe_packed_consumer_phase_2));\n"},
    // --- plain kernels with register tiles (shuffle reductions, warp partials in shared memory) ---
    // softmax's row maximum read before every warp wrote its partial: stale partials skew it.
    {"sm90_plain_partials_read_before_written", "softmax", "sm_90a", kSoftmax,
     "  __syncthreads();  // the warps' partials are written\n  #pragma unroll\n  for (int o = 0;",
     "  #pragma unroll\n  for (int o = 0;", kNumbers},
    // column_sum's in-loop reduction: the next iteration overwrites partials still being read.
    {"sm100_plain_partials_overwritten_in_loop", "column_sum", "sm_100a", kColumnSum,
     "    __syncthreads();  // every warp has read the partials\n", "", kNumbers},
    // gemv's output column read back before every owner staged its rows.
    {"sm90_plain_column_read_before_staged", "gemv", "sm_90a", kGemv, "  __syncthreads();  // the column is staged\n", "",
     kNumbers},
    // rmsnorm's butterfly without its xor-4 step: lanes sum only part of the row.
    {"sm90_plain_butterfly_step_dropped", "rmsnorm", "sm_90a", kRmsnorm,
     "    acc = add_f32(acc, __shfl_xor_sync(0xffffffffu, acc, 4));\n", "", kNumbers},

    // --- what a CTA leaves behind, and memory it may not touch (a helper's mutation testing:
    // each passed every schedule or crashed the emulator before) ---
    // linear (sm_100a) without its tcgen05.dealloc: the CTA exits holding TMEM.
    {"sm100_tmem_not_freed", "linear", "sm_100a", kLinear, "    if (threadIdx.x / 32 == 4) tilec_tmem_dealloc<256>(tmem_base);\n",
     "", "TMEM misuse:"},
    // linear (sm_90a) without the final wait for its TMA stores: they may read freed shared memory.
    {"sm90_exit_with_tma_stores_pending", "linear", "sm_90a", kLinear,
     "    if (compute_thread % 128 == 0) tilec_bulk_wait_all();  // this warpgroup's TMA stores are written\n", "",
     "staging reused:"},
    // causal_attention's producer loads one key block more than the consumer reads.
    {"sm90_producer_loads_a_block_nobody_reads", "causal_attention", "sm_90a", "S=200",
     "const int64_t v6 = min_i64(v2, v5);", "const int64_t v6 = min_i64(v2, v5 + 1);", "race:"},
    // softmax's second reduction area placed past the CTA's shared memory (it corrupted the heap).
    {"sm90_plain_shared_area_past_the_end", "softmax", "sm_90a", kSoftmax, "constexpr int kReductionArea = 2048;",
     "constexpr int kReductionArea = 4096;", "out-of-bounds shared memory access: a write"},
    // scale_relu's 16-byte vector loads taken without the alignment check (a bare crash before).
    {"sm100_plain_vector_access_unaligned", "scale_relu", "sm_100a", "M=45,N=201",
     "if (vectors && row_inside && 0 <= column && column + V <= columns) {\n    using Raw = typename "
     "RawVector<vector_access_bytes<V, T>()>::type;\n    constexpr int kPart = sizeof(Raw) / sizeof(T);\n#pragma unroll\n"
     "    for (int part = 0; part < V; part += kPart) {\n      const Raw",
     "if (row_inside && 0 <= column && column + V <= columns) {\n    using Raw = typename "
     "RawVector<vector_access_bytes<V, T>()>::type;\n    constexpr int kPart = sizeof(Raw) / sizeof(T);\n#pragma unroll\n"
     "    for (int part = 0; part < V; part += kPart) {\n      const Raw",
     "invalid memory access: a general-protection fault"},
    // split-K's adding store writing its partial instead of adding it (TMA's plain store for its
    // reducing one): C keeps one split's sum.
    {"sm90_splitk_partial_overwrites", "splitk_gemm", "sm_90a", "M=200,N=136,K=680",
     "if (storer) { tilec_tma_reduce_add_2d(&C_store_map,", "if (storer) { tilec_tma_store_2d(&C_store_map,", kNumbers},
    // fp8_quantize's float max= giving up when its compare-and-swap finds another value (the
    // first one always does: it expects -inf): AMAX keeps what it held.
    {"sm90_amax_compare_and_swap_gives_up", "fp8_quantize", "sm_90a", "R=77,C=300",
     "    if (found == seen) return;\n", "    return;\n", kNumbers},
};

// The text with its only occurrence of `find` replaced, or why not.
std::string mutate(const std::string& text, const PlantedBug& bug, std::string& error) {
  const size_t at = text.find(bug.find);
  if (at == std::string::npos) {
    error = "the text to mutate is not in the expected .cu";
    return {};
  }
  if (text.find(bug.find, at + 1) != std::string::npos) {
    error = "the text to mutate occurs more than once";
    return {};
  }
  std::string mutated = text.substr(0, at) + bug.replace + text.substr(at + std::strlen(bug.find));
  if (bug.after) {
    const size_t before = mutated.find(bug.after);
    if (before == std::string::npos || before >= at || mutated.find(bug.after, before + 1) != std::string::npos) {
      error = "the text to move the line after is not once in the expected .cu, before the line";
      return {};
    }
    mutated.insert(before + std::strlen(bug.after), bug.find);
  }
  return mutated;
}

// What the runs printed before each schedule's closing error line (that line included).
std::map<std::string, std::string> reports_by_schedule(const std::string& err) {
  static const std::regex closing(R"(^tilec: error: kernel \w+, schedule (eager|lazy|random \(seed \d+\)):)");
  std::map<std::string, std::string> reports;
  std::string pending;
  std::istringstream lines(err);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    pending += line + "\n";
    if (std::regex_search(line, match, closing)) {
      reports[match[1]] += pending;
      pending.clear();
    }
  }
  return reports;
}

// Whether `report` holds one of the '|'-separated `alternatives`.
bool reports_one_of(const std::string& report, const std::string& alternatives) {
  size_t start = 0;
  while (start <= alternatives.size()) {
    size_t end = alternatives.find('|', start);
    if (end == std::string::npos) end = alternatives.size();
    if (report.find(alternatives.substr(start, end - start)) != std::string::npos) return true;
    start = end + 1;
  }
  return false;
}

// `cu` is given relative to the source directory, where the command runs: a report names it as given.
std::string emulate(const PlantedBug& bug, const fs::path& cu) {
  return tilec(std::string("emulate samples/") + bug.sample + ".tile --target " + bug.target + " --cu " +
               fs::relative(cu, source_dir()).string() + " --dims " + bug.dims + " --sms 2 --schedules 3");
}

fs::path work_directory() {
  fs::path path = fs::path(TILEC_TEST_CACHE_DIR).parent_path() / "planted";
  fs::create_directories(path);
  return path;
}

// Text with every run of whitespace one space: a page's reflowed report compares with the
// emulator's long lines.
std::string words(const std::string& text) {
  std::istringstream in(text);
  std::string joined;
  for (std::string word; in >> word;) joined += (joined.empty() ? "" : " ") + word;
  return joined;
}

// The indented block of `page` beginning with a line `    FILE:...`, as words; "" if none.
std::string shown_report(const std::string& page, const std::string& file) {
  std::istringstream lines(page);
  std::string line, block;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (!inside && line.rfind("    " + file + ":", 0) != 0) continue;
    if (inside && line.rfind("    ", 0) != 0) break;
    inside = true;
    block += line + "\n";
  }
  return words(block);
}

class PlantedBugs : public ::testing::TestWithParam<PlantedBug> {};

TEST_P(PlantedBugs, IsReportedInEverySchedule) {
  const PlantedBug& bug = GetParam();
  const std::string original =
      read_file(source_dir() / "samples" / "expected" / (std::string(bug.sample) + "." + bug.target + ".cu"));
  ASSERT_FALSE(original.empty());
  std::string error;
  const std::string mutated = mutate(original, bug, error);
  ASSERT_TRUE(error.empty()) << bug.name << ": " << error << ":\n" << bug.find;
  // SAMPLE.cu in a directory of the bug's own, as a page's `tilec compile ... -o SAMPLE.cu` names it.
  const fs::path cu = work_directory() / bug.name / (std::string(bug.sample) + ".cu");
  fs::create_directories(cu.parent_path());
  write_file(cu, mutated);

  CommandResult result = run_command(emulate(bug, cu));
  EXPECT_EQ(result.status, 1) << result.out << result.err;
  const auto reports = reports_by_schedule(result.err);
  for (const char* schedule : {"eager", "lazy", "random (seed 1)"}) {
    auto it = reports.find(schedule);
    ASSERT_NE(it, reports.end()) << "schedule " << schedule << " did not fail:\n" << result.out << result.err;
    EXPECT_TRUE(reports_one_of(it->second, bug.report)) << "schedule " << schedule << " does not report " << bug.report
                                                         << ":\n" << it->second;
  }
  if (bug.shown_in && reports.count("eager")) {
    const std::string shown = shown_report(read_file(source_dir() / bug.shown_in), cu.filename().string());
    ASSERT_FALSE(shown.empty()) << bug.shown_in << " shows no report of " << cu.filename();
    std::string eager = reports.at("eager");
    // The report names the .cu as the command gave it (a page's `--cu gemm.cu` shows `gemm.cu:842`).
    const std::string directory = fs::relative(cu, source_dir()).parent_path().string() + "/";
    EXPECT_EQ(eager.rfind(directory + cu.filename().string() + ":", 0), 0u) << eager;
    for (size_t at; (at = eager.find(directory)) != std::string::npos;) eager.erase(at, directory.size());
    EXPECT_NE(words(eager).find(shown), std::string::npos)
        << bug.shown_in << " shows a report the emulator no longer prints; update the page to:\n" << eager;
  }
}

INSTANTIATE_TEST_SUITE_P(Emitted, PlantedBugs, ::testing::ValuesIn(kBugs),
                         [](const ::testing::TestParamInfo<PlantedBug>& info) { return std::string(info.param.name); });

// The control: the files the bugs are planted in pass in every schedule at the same shapes.
struct Control {
  const char* sample;
  const char* target;
  const char* dims;
};

class Unmutated : public ::testing::TestWithParam<Control> {};

TEST_P(Unmutated, PassesInEverySchedule) {
  const Control& control = GetParam();
  const PlantedBug as_bug{"control", control.sample, control.target, control.dims, "", "", ""};
  const fs::path cu = source_dir() / "samples" / "expected" / (std::string(control.sample) + "." + control.target + ".cu");
  CommandResult result = run_command(emulate(as_bug, cu));
  EXPECT_EQ(result.status, 0) << result.out << result.err;
  EXPECT_EQ(reports_by_schedule(result.err).size(), 0u) << result.err;
  EXPECT_THAT(result.out, ::testing::HasSubstr("schedule random (seed 1)")) << result.out;
}

INSTANTIATE_TEST_SUITE_P(Emitted, Unmutated,
                         ::testing::Values(Control{"gemm", "sm_90a", kGemm}, Control{"gemm", "sm_100a", kGemm},
                                           Control{"gemm", "sm_100a", kGemmRounds},
                                           Control{"attention", "sm_90a", kAttention},
                                           Control{"attention", "sm_100a", kAttention},
                                           Control{"softmax", "sm_90a", kSoftmax},
                                           Control{"column_sum", "sm_100a", kColumnSum},
                                           Control{"rmsnorm", "sm_90a", kRmsnorm},
                                           Control{"gemv", "sm_90a", kGemv},
                                           Control{"w8a16_linear", "sm_90a", kW8a16},
                                           Control{"w8a16_linear", "sm_100a", kW8a16}),
                         [](const ::testing::TestParamInfo<Control>& info) {
                           return std::string(info.param.sample) + "_" + info.param.target + "_" +
                                  std::to_string(info.index);
                         });

}  // namespace
}  // namespace tilec::testing
