// tests/emulate/emulate_kernels_test.cpp — `tilec emulate` of the language's kernels: each
// feature's kernel (tests/emulate/kernels/NAME.tile, in both plain forms; the tensor-core ones
// in tests/emulate/tensor_core/ on both targets) against the interpreter. Part of
// emulate_cli_tests (emulate_cli_test.cpp has the command line and the samples' variants).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "emulate_checks.h"

namespace tilec::testing {
namespace {

namespace fs = std::filesystem;

// floor, ceil, round and trunc (issue 18) as emitted CUDA, on exact quarters (halves included, so
// round's ties to even are exercised, and negative zeros), in both plain forms:
// the emitted floorf / ceilf / rintf / truncf give the interpreter's values; and an i64 cast to
// bf16 past 2^53 rounds once (it rounded twice, through a double; a helper found it).
TEST(EmulateRuntime, RoundingFunctionsMatchTheInterpreterOnHalves) {
  expect_plain_kernel_matches("rounding", {"Y", "Z"});
}

// log1p, expm1, tan, atan, atan2 (log1pf, expm1f, tanf, atanf, atan2f) and sign, isnan, isinf, isfinite
// (comparisons and selects) among infinities and NaNs, in both plain forms (issue 18).
TEST(EmulateRuntime, FloatClassesAndTheNewMathFunctionsMatchTheInterpreter) {
  expect_plain_kernel_matches("float_classes", {"Y", "Z", "S", "F", "M", "V"});
}

// exp2 (2^x: one ex2.approx on the GPU, exp2f on the host) of integers, of x·log2(e), and of a
// bf16 tile, in both plain forms; the samples' softmax runs it on the tensor cores.
TEST(EmulateRuntime, Exp2MatchesTheInterpreter) { expect_plain_kernel_matches("exp2", {"Y", "Z"}); }

// NumPy broadcasting of tiles of different rank (issue 18): a <64> row of a vector with <4, 64>
// tiles, rank-1 and rank-2 iotas, a <1, 64> load of a vector and a <1, 64> column sum stored into
// one, in both plain forms (the register form keeps its layout: a
// row <N> and a <1, N> tile are the same registers).
TEST(EmulateRuntime, TilesOfDifferentRankBroadcastAsInNumPy) {
  expect_plain_kernel_matches("rank_broadcast", {"Y", "Z", "V", "U"});
}

// Masked stores (`store T[i] = x if m`, tests/emulate/kernels/masked_stores.tile): full-tile,
// column, row and scalar masks, masked `+=` and `max=`, and a KV cache's rows appended at element
// coordinates of a rank-3 tensor with none written past T, in both plain forms. Elements masked
// off keep the tensor's random values, so a store that ignored its mask would differ.
TEST(EmulateRuntime, MaskedStoresWriteOnlyWhereTheMaskHolds) {
  expect_plain_kernel_matches("masked_stores", {"Y", "Z", "V", "W", "A", "M", "Cache"});
}

// Bitwise combining stores (`&=`, `|=`, `^=`; tests/emulate/kernels/bitwise_stores.tile): i32,
// u32 and i64 tensors combined by three CTAs each, in any order, one masked, in both plain forms.
TEST(EmulateRuntime, BitwiseCombiningStoresMatchTheInterpreter) {
  expect_plain_kernel_matches("bitwise_stores", {"O", "A", "L"});
}

// Subscripts and concat() (tests/emulate/kernels/slices.tile): RoPE's rotate-half, the interleaved
// halves x[:, ::2] and x[:, 1::2], rows by a negative start and a step, three tiles along axis 0,
// a column broadcast back, and a rank-1 tile, in both plain forms (the register form keeps such a
// kernel in shared memory, so both run the shared form's index arithmetic).
TEST(EmulateRuntime, SubscriptsAndConcatMatchTheInterpreter) {
  expect_plain_kernel_matches("slices", {"Y", "Z", "W", "M", "U"});
}

// The same in a tensor-core epilogue (tests/emulate/tensor_core/masked_epilogue.tile): SYRK's lower
// triangle of A·Aᵀ, a column mask and one computed from the accumulator, masked +=, max= and |=
// and a masked column, stored directly (not by TMA) on both targets, ragged, and on 64 x 64 tiles.
TEST(EmulateRuntime, MaskedStoresInATensorCoreEpilogueMatchTheInterpreter) {
  for (const char* tiles : {"", " -D BM=64 -D BN=64"})
    expect_tensor_core_kernel_matches("masked_epilogue", "M=200,K=72", {"C", "D", "S", "U", "R", "P"}, tiles, true);
}

// Column slices and concat() of an accumulator in a tensor-core kernel
// (tests/emulate/tensor_core/column_slices.tile): a fused QKV projection's three parts, SwiGLU's
// gate and up from one accumulator, a gate read as a register tile for its softmax (64 rows) and
// its RMS norm (128 rows: sm_100a reads each slice from TMEM into registers of its own), and a
// rotary embedding's rotate-half, on both targets at ragged shapes (TMA and direct stores, TMEM
// columns and registers).
TEST(EmulateRuntime, ColumnSlicesAndConcatOfAnAccumulatorMatchTheInterpreter) {
  expect_tensor_core_kernel_matches("column_slices", "M=200,K=72,D=100,N=300,F=100,F2=200",
                                    {"Q", "Kp", "V", "Y", "G", "Rq", "Yn"});
}

// A computed B (tests/emulate/tensor_core/computed_b.tile): int8 weights dequantized in the K
// loop, per output channel, per group of K rows (u8 with a zero point) and in nn.Linear's [N, K]
// layout (the transpose of the dequantized tile, written K-major), written into shared memory by
// the compute threads and read by the MMAs, on both targets at ragged shapes, with 128- and
// 64-row tiles, and with 32-column ones (the B's 64-byte rows, the weight's 32-byte rows, which
// TMA copies with the narrower swizzles). With 4-bit weights two a byte (KP = K / 2 bytes a row),
// the halves concatenated along K, and column slices of them for two groups a step: bytes rows
// of 32 and 64 bytes TMA copies, and of 16 (BK = 32), which stay register loads. And W4A8: the
// halves unpacked into an 8-bit B (e4m3 and i8, K-major) for 8-bit activations.
TEST(EmulateRuntime, AComputedBMatchesTheInterpreter) {
  for (const char* tiles : {"", " -D BM=64", " -D BN=32 -D BK=32"})
    expect_tensor_core_kernel_matches("computed_b", "M=200,K=136,KP=68,N=200,G=3",
                                      {"Y", "Z", "L", "S4", "T4", "F8", "I8"}, tiles);
}

// A computed B the cost-based schedule starts two stages before its mma
// (tests/emulate/tensor_core/early_computed_b.tile: attention over an FP8 V dequantized in the
// loop, pipeline(3)), through two register pipes, read where the B is written: both targets match
// the interpreter, with no race on the TMA slot the B's loads wait in.
TEST(EmulateRuntime, AComputedBScheduledTwoStagesEarlyMatches) {
  expect_tensor_core_kernel_matches("early_computed_b", "M=100,T=136", {"O"});
}

// One column of a tile broadcast along the columns (tests/emulate/tensor_core/broadcast_columns.tile):
// an epilogue's acc * s[:, 2:3], read at column 2 in every element (it read the element's own
// column, silently, before), and MXFP4-style weights whose computed B multiplies each block's
// slices by its own column of the scale tile, concatenated in four parts; both targets, 128- and
// 64-row tiles, at a ragged shape.
TEST(EmulateRuntime, ABroadcastColumnIsReadAtItsOwnColumn) {
  for (const char* tiles : {"", " -D BM=64"})
    expect_tensor_core_kernel_matches("broadcast_columns", "M=200,K=136,KP=68,N=200,G=5,F=4", {"Y", "Z", "R"}, tiles);
}

// interleave() (tests/emulate/kernels/interleave.tile): columns in turn, packed 4-bit halves,
// rows in turn, rank-1 tiles and a broadcast column of one, in both plain forms.
TEST(EmulateRuntime, InterleaveMatchesTheInterpreter) {
  expect_plain_kernel_matches("interleave", {"Y", "Q", "W", "U"});
}

// interleave() in tensor-core kernels (tests/emulate/tensor_core/interleave.tile): 4-bit weights
// packed sequentially two a byte along K (a computed B from a TMA-copied slot), eight a word along
// N in AWQ's order and along K as GPTQ packs them (from global memory, along axis 0), interleaved
// loads in an epilogue and as a register A (one interleaved along the rows, with a computed B);
// both targets, 128- and 64-row tiles. The packed i32
// words are random over all 32 bits (make_kernel_buffers: a tensor whose tiles are shifted or
// masked; as -1, 0 and 1, their nibbles were all alike, and a part read at the wrong nibble went
// unseen).
TEST(EmulateRuntime, InterleavedPartsAreReadAtTheirOwnPositions) {
  for (const char* tiles : {"", " -D BM=64"})
    expect_tensor_core_kernel_matches("interleave", "M=200,K=136,KP=68,NP=25,K8=17,N=200,NH=100,KH=68,MH=100",
                                      {"Y", "Z", "G", "E", "R", "Q"}, tiles);
}

// Rows and steps in tensor-core kernels (tests/emulate/tensor_core/row_moves.tile): 4-bit weights
// packed planar along K in [K/2, N] bytes, unpacked by a concat along axis 0 into a computed B
// (the bytes copied by TMA), two loaded halves stacked along the rows, every other row and column
// of a larger tile and a taller tile's second half in an epilogue, and one row of a loaded pair
// broadcast over 32 rows of a computed B and over an epilogue (it was read at the wrong row);
// both targets, 128- and 64-row tiles.
TEST(EmulateRuntime, RowsAndStepsOfLoadedTilesAreComputedPerElement) {
  for (const char* tiles : {"", " -D BM=64"})
    expect_tensor_core_kernel_matches("row_moves", "M=200,K=136,KH=68,N=200,MH=100,M2=400,N2=400,KG=5,PR=2",
                                      {"Y", "E", "F", "G"}, tiles);
}

// The same in a tensor-core epilogue: nn.Linear's bias vector b [N] as a <BN> row added to the
// accumulator, then the tanh GELU (tests/emulate/tensor_core/linear_bias.tile), on both targets
// at a ragged shape where CTAs walk several tiles.
TEST(EmulateRuntime, ABiasVectorBroadcastsInATensorCoreEpilogue) {
  expect_tensor_core_kernel_matches("linear_bias", "M=200,N=296,K=72", {"Y"});
}

// Integer MMAs (issue 18: "integer mma (i8 into i32) is not supported"): u8 x i8 into i32
// (tests/emulate/tensor_core/int8_mixed.tile), the sums stored as i32 and converted to f32, on
// both targets at a ragged shape: 64-row tiles of 48 columns with direct stores (sm_100a's
// TMEM layout F), and 128 x 128 tiles whose i32 tile goes out by TMA. Integer sums are exact,
// so the outputs match the interpreter's bit for bit (max abs error 0).
TEST(EmulateRuntime, IntegerMmasMatchTheInterpreterExactly) {
  for (const char* tiles : {"", " -D BM=128 -D BN=128"})
    expect_tensor_core_kernel_matches("int8_mixed", "M=200,N=296,K=200", {"Y", "Z"}, tiles, /*exact=*/true);
}

// One loaded tile used both as it is and transposed (FlashAttention's backward reads K so: S =
// Q·Kᵀ, then dQ = S·K), each use a TMA box of its own (tests/emulate/tensor_core/both_ways.tile;
// it was refused), on both targets with S and T ragged.
TEST(EmulateRuntime, ATileUsedAsItIsAndTransposedMatchesTheInterpreter) {
  expect_tensor_core_kernel_matches("both_ways", "S=200,T=136", {"DQ"});
}

// One loaded tile as several mma operands (tests/emulate/tensor_core/roles.tile; both were
// refused): K read transposed by two heads and as it is by both, and a tile that is the A of one
// mma and the B of another, on both targets.
TEST(EmulateRuntime, ATileReadInSeveralRolesMatchesTheInterpreter) {
  expect_tensor_core_kernel_matches("roles", "S=200,T=136", {"O1", "O2", "P", "G", "O"});
}

// A tf32 A from registers (issue 18: refused, "tf32 A only from shared memory"): an MLP block whose
// hidden layer relu(X·W1ᵀ) is the A of the second mma (tests/emulate/tensor_core/tf32_mlp.tile),
// written to shared memory before it on both targets; HID ragged inside the one hidden tile.
// (samples/fp8_attention.tile, in the sample sweep, does the same with an e4m3 P on sm_100a;
// sm_90a reads that one from registers: fp8_mlp below.)
TEST(EmulateRuntime, ATf32RegisterAIsStagedThroughSharedMemory) {
  expect_tensor_core_kernel_matches("tf32_mlp", "M=200,N=136,K=72,HID=56", {"Y"});
}

// Adding stores (`store T[i] += tile`; issue 18: split-K and gradients gathered over blocks need
// CTAs adding into one output): plain kernels whose CTAs add column sums into one row of f32,
// bf16 and i32 and whole tiles into f16, i64 (at element coordinates) and wrapping u32 tensors
// (tests/emulate/kernels/accumulate.tile), in both plain forms; the interpreter's sums are
// checked against values worked out by hand in InterpreterOps.TilesAddingToOneElementSumInAnyOrder.
TEST(EmulateRuntime, AddingStoresMatchTheInterpreter) {
  expect_plain_kernel_matches("accumulate", {"S", "H", "I", "F", "L", "U"});
}

// The same in a tensor-core epilogue: a GEMM split in two over K adds its bf16 result and its row
// sums (a column) element by element from registers
// (tests/emulate/tensor_core/accumulate_epilogue.tile), on both targets, ragged, with 128- and
// 64-row tiles.
TEST(EmulateRuntime, AddingStoresInATensorCoreEpilogueMatchTheInterpreter) {
  for (const char* tiles : {"", " -D BM=64"})
    expect_tensor_core_kernel_matches("accumulate_epilogue", "M=200,N=136,K=200", {"C", "S"}, tiles);
}

// Maxima and minima combined across CTAs (`store T[i] max= tile`, `min=`; issue 18: "atomics other
// than add", an FP8 amax): plain kernels whose CTAs take a per-tensor amax into one element, column
// maxima into a bf16 row and minima into an i32 one, row minima into an f16 column, and whole
// tiles into u32 (unsigned: the values pass 2^31) and i64 (at element coordinates), and the
// infinities into elements holding NaN (the compare-and-swap loop's first guess is the identity:
// it returned without a swap) (tests/emulate/kernels/extrema.tile), in both plain forms: float
// ones through the prelude's compare-and-swap loop, integer ones through atomicMax / atomicMin.
// Exact: maxima and minima do not depend on the order. The interpreter's are checked against
// values worked out by hand in InterpreterOps.TilesTakingMaximaAndMinimaAgreeInAnyOrder. Zeros of
// both signs order -0 below +0 (S, V: the host's fmaxf gave the first of the two).
TEST(EmulateRuntime, MaximaAndMinimaAcrossCtasMatchTheInterpreter) {
  expect_plain_kernel_matches("extrema", {"A", "H", "I", "N", "U", "L", "Z", "B", "S", "V"});
}

// Two stores of one tensor whose tiles differ (a <2048> max= of a row, then a one-element min=
// into its last element, which another thread of the register form holds): each waits for the
// block's earlier stores, so the element is written in program order (it was a race between
// threads 255 and 0 in the register form); a plain column (staged, its rows written by the first
// threads) then max= into it; one store at element coordinates a loop moves. Tiles of one shape
// at the same coordinates, or at coordinates two constants apart (rope's two halves), and stores
// that combine the same way keep no barrier.
TEST(EmulateRuntime, StoresOfOneTensorFromDifferentThreadsKeepProgramOrder) {
  expect_plain_kernel_matches("store_order", {"Y", "H", "C", "M"});
}

// The same in a tensor-core epilogue: each row's amax over the column tiles into an f32 column,
// its minimum into a bf16 one, and the larger of two K halves' partial products into i32
// (tests/emulate/tensor_core/extrema_epilogue.tile), element by element from registers; and the
// whole tile's amax, sum and (i32) minimum into one element each, the column of the rows' results
// reduced along axis 0 inside the combining store (it was refused: "a 'reduce_max' along axis 0 ...");
// on both targets, ragged, with 128 x 128 and 64 x 64 tiles.
TEST(EmulateRuntime, MaximaAndMinimaInATensorCoreEpilogueMatchTheInterpreter) {
  for (const char* tiles : {"", " -D BM=64 -D BN=64"})
    expect_tensor_core_kernel_matches("extrema_epilogue", "M=200,N=136,K=200",
                                      {"C", "AMAX", "LO", "P", "TMAX", "TSUM", "TMIN"}, tiles);
}

// Reductions along axis 0 in a tensor-core epilogue (issue 18's list: "reductions along axis 0"
// were refused), into stores that combine the same way: per-column amax, sum and i32 minimum over
// the row tiles, and the whole tile's amax (tests/emulate/tensor_core/column_extrema.tile), on
// both targets, persistent, ragged, with 128 x 128 and 64 x 64 tiles.
TEST(EmulateRuntime, ColumnReductionsFoldIntoCombiningStores) {
  for (const char* tiles : {"", " -D BM=64 -D BN=64"})
    expect_tensor_core_kernel_matches("column_extrema", "M=400,N=300,K=72", {"C", "CAMAX", "CSUM", "CMIN", "TAMAX"},
                                      tiles);
}

// A column's reduction along axis 1 is the column (tests/emulate/tensor_core/column_reductions.tile:
// found by a helper writing kernels from the docs; a sum counted each row once per thread holding
// a copy, 4x on sm_90a, and a maximum mixed rows r and r + 8), and a whole column's sum into one
// element, on both targets with 128- and 64-row tiles; reductions along axis 0 into vectors (V, X:
// a helper's kernel `store CS[n] += sum(acc, axis = 0)` into a [N] tensor was refused).
TEST(EmulateRuntime, AColumnReducedAlongItsRowsIsItself) {
  for (const char* tiles : {"", " -D BM=64"})
    expect_tensor_core_kernel_matches("column_reductions", "M=200,N=300,K=72", {"R", "Q", "T", "V", "X"}, tiles);
}

// The transpose of a register tile as an mma's A (issue 18's list: "transpose of a computed tile as
// an mma operand"; dQ needed a kernel of its own): Pᵀ computed per key block, transpose(Pᵀ) the A of
// P·K (tests/emulate/tensor_core/transposed_register_a.tile), staged as held and read MN-major, on
// both targets, with one compute warpgroup and with two (BKV = 128: each writes K rows the other's
// WGMMAs read), and from fresh zeros in a loop pipelined three deep (DQ2: the transpose was
// scheduled a stage before its mma, and refused). The emulator reads the staged bytes through the
// descriptor as the PTX ISA lays them out (checked against the golden tables), so a transpose
// staged wrongly differs.
TEST(EmulateRuntime, ATransposedRegisterTileIsAnMmasA) {
  for (const char* tiles : {"", " -D BKV=128 -D BQ=128"})
    expect_tensor_core_kernel_matches("transposed_register_a", "S=200,T=136", {"DQ", "DQ2"}, tiles);
}

// FlashAttention-2's whole backward in one kernel (tests/emulate/tensor_core/
// attention_backward_dq.tile): dK and dV as samples/attention_backward.tile, and dQ = dS·K·SCALE
// from transpose(dSᵀ), added over the key blocks with `store DQ[i, 0] += ...`, on both targets
// with S and T ragged (SampleReference.AttentionBackwardWithDqGivesAllThreeGradients checks the
// interpreter's gradients against the formulas).
TEST(EmulateRuntime, AttentionBackwardAddsDqAcrossKeyBlocks) {
  expect_tensor_core_kernel_matches("attention_backward_dq", "S=200,T=136", {"DQ", "DK", "DV"});
}

// An `if` that assigns a tile in tensor-core kernels (issue 18's list: refused, "its registers, or
// TMEM, are fixed for both paths"): the tile gets registers of its own, each branch copies into
// them (tests/emulate/tensor_core/if_tile.tile: an epilogue picked per tile row, so both paths run,
// and attention masking only its last key block inside the pipelined loop), on both targets.
TEST(EmulateRuntime, AnIfAssigningATileMatchesTheInterpreter) {
  expect_tensor_core_kernel_matches("if_tile", "M=300,N=136,K=100,S=200,T=296,HD=128", {"C", "O"});
}

// A tensor stored and then read, or stored twice, in a tensor-core epilogue
// (tests/emulate/tensor_core/stores_then_reads.tile): the read sees the add (the store is direct:
// TMA's writes land asynchronously, here into a padded copy since f32 rows of 101 are unaligned),
// and a plain store then an add through TMA give 1.5 x the product.
TEST(EmulateRuntime, StoresThenReadsOfOneTensorSeeEachOther) {
  expect_tensor_core_kernel_matches("stores_then_reads", "M=200,N=101,K=300", {"C", "D", "E", "F"});
}

// The same kernels with each TMA store that waits for an earlier one's writes (`=` then `+=`, and
// a store of the same box at every k-step) waiting only for its staging to be read, as the
// emitter did before: the emulator reports each pair as unordered TMA stores, by name, in every
// schedule (bulk operations land in no set order, though it performs them in issue order).
TEST(EmulateRuntime, TmaStoresOverAnEarlierStoresBoxWithoutAWaitAreReported) {
  const std::string wait = "if (chunk == 0) tilec_bulk_wait_all();";
  const fs::path directory = fs::temp_directory_path() / ("tilec_unordered_stores_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    const fs::path cu = directory / (std::string(target) + ".cu");
    CommandResult compiled = run_command(tilec("compile tests/emulate/tensor_core/stores_then_reads.tile --target " +
                                               std::string(target) + " -o " + cu.string()));
    ASSERT_EQ(compiled.status, 0) << compiled.err;
    std::string text = read_file(cu);
    int waits = 0;
    for (size_t at = text.find(wait); at != std::string::npos; at = text.find(wait, at), ++waits)
      text.replace(at, wait.size(), "if (chunk == 0) tilec_bulk_wait_read<0>();");
    EXPECT_EQ(waits, 2) << "one wait in assign_then_add and one in store_every_step";
    write_file(cu, text);
    for (const char* kernel : {"assign_then_add", "store_every_step"}) {
      SCOPED_TRACE(kernel);
      CommandResult r = run_command(tilec("emulate tests/emulate/tensor_core/stores_then_reads.tile --cu " +
                                          cu.string() + " --kernel " + kernel + " --target " + target +
                                          " --dims M=200,N=101,K=300 --sms 2 --schedules 3"));
      EXPECT_NE(r.status, 0) << r.out << r.err;
      EXPECT_EQ(occurrences(r.err, "unordered TMA stores:"), 3u) << r.out << r.err;
    }
  }
  fs::remove_all(directory);
}

// 8-bit register A operands (tests/emulate/tensor_core/fp8_mlp.tile): an MLP block whose hidden
// layer, cast to e4m3 or e5m2, is the A of the second mma. On sm_90a WGMMA reads it from
// registers, the bytes moved between the lanes of each quad into its 8-bit fragment (two shuffles
// and a byte permute; the fragment against the golden table: cuda_layout_tables_test); sm_100a
// stages it. Exact: the products of 8-bit values sum exactly in f32 (on an H200 the FP8 tensor
// cores' sums differ, and the cast to 8 bits flips values: bench/gpu checks it with integers=1).
TEST(EmulateRuntime, An8BitRegisterAIsFedAsRegistersOnSm90a) {
  expect_tensor_core_kernel_matches("fp8_mlp", "M=200,N=136,K=200,HID=100", {"Y"}, "", /*exact=*/true);
}

// A column of per-row values stored from a tensor-core epilogue (found writing kernels from the
// docs: "a stored tile tile<128x1xf32, reg>: a row vector" was refused): attention's log-sum-exp
// into LSE [S, H] (tests/emulate/tensor_core/attention_lse.tile), one writer per row, on both
// targets with S and T ragged.
TEST(EmulateRuntime, ALogSumExpColumnIsStoredFromATensorCoreEpilogue) {
  expect_tensor_core_kernel_matches("attention_lse", "S=200,T=136,HD=128,H=2", {"O", "LSE"});
}

// A row slice of a matrix in a tensor-core epilogue (found writing kernels from the docs: `load
// Bias[e, n] : <BN>` of a [E, N] bias was refused though the docs promise slices): a per-expert
// bias (tests/emulate/tensor_core/expert_linear.tile) over a batch grid axis, on both targets.
TEST(EmulateRuntime, ARowSliceOfAMatrixIsReadInATensorCoreEpilogue) {
  expect_tensor_core_kernel_matches("expert_linear", "E=2,M=200,N=136,K=72", {"Y"});
}

// Negative tile coordinates in a tensor-core epilogue (found writing kernels from the docs: a
// load at n - 1 read the memory before the tensor, and a direct store there wrote it): bias,
// residual and per-row scales one tile up or left, a store one tile left
// (tests/emulate/tensor_core/negative_coordinates.tile), on both targets. Without the checks
// the emulated program crashes.
TEST(EmulateRuntime, NegativeTileCoordinatesReadZerosAndWriteNothingInATensorCoreEpilogue) {
  expect_tensor_core_kernel_matches("negative_coordinates", "M=200,N=136,K=72", {"Y"});
}

// TMA coordinates computed from an offset read from memory (tests/emulate/tensor_core/
// loaded_offsets.tile), on both targets: one 2^32 past A reads zeros (cast to 32 bits it wrapped
// back into A; a helper planting far offsets found it).
TEST(EmulateRuntime, TmaCoordinatesFromLoadedOffsetsSaturate) {
  expect_tensor_core_kernel_matches("loaded_offsets", "M=200,N=72,K=136", {"C", "F"});
}

// A row loaded inside a pipelined mma loop (found writing kernels from the docs: a key padding
// mask row was refused, "a register tile tile<64xf32, reg> (2-D only)"): the schedule carries it
// a stage in a register pipe, through which it passes as a row read per element
// (tests/emulate/tensor_core/key_padding_attention.tile, u8 mask over [B, T]), on both targets.
TEST(EmulateRuntime, AMaskRowLoadedInTheKeyLoopPassesThroughItsRegisterPipe) {
  expect_tensor_core_kernel_matches("key_padding_attention", "B=2,H=2,S=136,T=72", {"O"});
}

// isinf and isfinite of f8e5m2 infinities read from memory (a helper's op sweep): the magnitude was
// taken in f8e5m2, whose abs() saturates to 57344, so +-inf counted as finite. Bytes +inf, -inf,
// 57344 and 1: isinf + 2 * isfinite is 1, 1, 2, 2, in the interpreter and as emitted CUDA.
TEST(EmulateRuntime, Fp8E5m2InfinitiesAreInfinite) {
  const fs::path directory = fs::temp_directory_path() / ("tilec_e5m2_" + std::to_string(::getpid()));
  fs::create_directories(directory / "in");
  write_file(directory / "in" / "E.bin", std::string("\x7c\xfc\x7b\x3c", 4));
  write_file(directory / "classes.tile",
             "kernel classes(E: tensor<4, f8e5m2>, C: tensor<4, i32>) grid tiles(1) as (t) {\n"
             "  e = load E[0] : <4>;\n"
             "  store C[0] = cast(isinf(e), i32) + 2 * cast(isfinite(e), i32);\n"
             "}\n");
  const std::string source = (directory / "classes.tile").string(), inputs = " --inputs " + (directory / "in").string();
  CommandResult run = run_command(tilec("run " + source + inputs + " --outputs " + directory.string()));
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  const std::string bytes = read_file(directory / "C.bin");
  ASSERT_EQ(bytes.size(), 16u);
  std::vector<int32_t> classes(4);
  std::memcpy(classes.data(), bytes.data(), 16);
  EXPECT_EQ(classes, (std::vector<int32_t>{1, 1, 2, 2}));
  for (const char* form : {"registers", "shared"})
    expect_emulation_matches(source + inputs + " --schedules 1 --plain-tiles " + form, "C");
  fs::remove_all(directory);
}

// A register tile of the epilogue stored masked and reduced (tests/emulate/tensor_core/
// register_epilogue.tile), whose loops now compute lane and warp before them: the numbers, on
// both targets, ragged.
TEST(EmulateRuntime, ARegisterEpilogueStoredMaskedAndReducedMatchesTheInterpreter) {
  expect_tensor_core_kernel_matches("register_epilogue", "M=200,N=136,K=72,NT=2", {"Y", "RS"});
}

// Loads of a tensor the epilogue also stores into (tests/emulate/tensor_core/loads_stored_over.tile;
// issue 18, found writing training kernels): an SGD update with momentum that keeps the old
// weights, and a tile added twice, read what was loaded, not what the store before their use
// wrote (the epilogue computed the load again at the later store); a B read by the mma and an
// amax compiles (a second load of B is the mma's). Both targets, ragged. item() of a tensor the
// kernel stores into is refused, saying why. A B read through a transpose and reduced too compiles.
TEST(EmulateRuntime, LoadsUsedAfterAStoreIntoTheirTensorKeepTheLoadedValues) {
  expect_tensor_core_kernel_matches("loads_stored_over", "M=100,N=72,K=80", {"W", "Mom", "Old", "C", "BMax", "BtMax"}, "",
                                    true);
  const fs::path file = fs::temp_directory_path() / ("tilec_item_stored_" + std::to_string(::getpid()) + ".tile");
  write_file(file, "kernel amax_scale(A: tensor<M, K, bf16>, B: tensor<K, N, bf16>, AMAX: tensor<1, 1, f32>,\n"
                   "                  Y: tensor<M, N, f32>) grid persistent(cdiv(M, 64), cdiv(N, 64)) as (m, n) {\n"
                   "  acc = zeros<64, 64, f32>();\n"
                   "  for k in 0 .. cdiv(K, 64) carry (acc) {\n"
                   "    acc = mma(load A[m, k] : <64, 64>, load B[k, n] : <64, 64>, acc); }\n"
                   "  s = item(load AMAX[0, 0] : <1, 1>);\n"
                   "  store AMAX[0, 0] max= max(abs(acc));\n"
                   "  store Y[m, n] = acc / s;\n"
                   "}\n");
  for (const char* target : {"sm_90a", "sm_100a"}) {
    CommandResult r = run_command(tilec("compile " + file.string() + " -o /dev/null --target " + target));
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.err, ::testing::HasSubstr(":6:12: error: the tensor-core CUDA backend (" + std::string(target) +
                                            ") does not support item() of %AMAX, which this kernel also stores into "
                                            "(line 7)"));
  }
  fs::remove(file);
}

// A carried accumulator another mma reads before its own update (tests/emulate/tensor_core/
// state_read_before_update.tile; issue 18, found writing chunked linear attention): run --check
// passes (it reported the race in flight after defer-mma-releases), and both targets give the
// interpreter's numbers at a ragged T (sm_90a gave zeros from the second chunk on).
TEST(EmulateRuntime, AStateReadBeforeItsUpdateIsWaitedForInItsIteration) {
  CommandResult checked =
      run_command(tilec("run tests/emulate/tensor_core/state_read_before_update.tile --check --dims T=200"));
  EXPECT_EQ(checked.status, 0) << checked.out << checked.err;
  EXPECT_THAT(checked.out, ::testing::HasSubstr("check %Out: ok"));
  expect_tensor_core_kernel_matches("state_read_before_update", "T=200", {"Out"});
}

// Variable-length attention over packed [TOTAL, H, D] tokens (tests/emulate/tensor_core/
// varlen_attention.tile; issue 18: a masked store of a tile between a tensor's dimensions was
// refused on the tensor cores): sequences of 37, 63 and 90 tokens, so query tiles run into the
// next sequence and only the mask keeps two CTAs off one row. run --check (the IR as parsed keeps
// the <BQ, 1, 1> mask) and both targets, 64- and 128-row tiles; without the mask run reports the race.
TEST(EmulateRuntime, AVarlenAttentionMasksItsStoreBetweenTheTensorsDimensions) {
  const fs::path inputs = fs::temp_directory_path() / ("tilec_varlen_" + std::to_string(::getpid()));
  fs::create_directories(inputs);
  const int32_t offsets[] = {0, 37, 100, 190};
  write_file(inputs / "CU.bin", std::string(reinterpret_cast<const char*>(offsets), sizeof offsets));
  const std::string source = "tests/emulate/tensor_core/varlen_attention.tile";
  const std::string shape = " --dims TOTAL=200,H=2,NSEQ=3,NSEQ1=4,MAXLEN=90 --inputs " + inputs.string();
  CommandResult checked = run_command(tilec("run " + source + " --check" + shape));
  EXPECT_EQ(checked.status, 0) << checked.out << checked.err;
  EXPECT_THAT(checked.out, ::testing::HasSubstr("check %O: ok"));
  for (const char* tiles : {"", " -D BQ=128"})
    for (const char* target : {"sm_90a", "sm_100a"}) {
      SCOPED_TRACE(std::string(target) + tiles);
      CommandResult r = run_command(tilec("emulate " + source + tiles + shape + " --target " + target +
                                          " --sms 2 --schedules 1"));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_THAT(r.out, ::testing::HasSubstr("O ok (max abs error"));
      EXPECT_THAT(r.out, ::testing::HasSubstr("LSE ok (max abs error"));
    }
  const fs::path unmasked = inputs / "unmasked.tile";
  std::string text = read_file(source_dir() / source);
  const std::string mask = " if iota<BQ, 1, 1, i32>(0) + cast(i * BQ, i32) < len;";
  ASSERT_NE(text.find(mask), std::string::npos);
  write_file(unmasked, text.replace(text.find(mask), mask.size(), ";"));
  CommandResult raced = run_command(tilec("run " + unmasked.string() + shape));
  EXPECT_NE(raced.status, 0);
  EXPECT_THAT(raced.err, ::testing::HasSubstr("race: tiles 0 and 4 both store element [37, 0, 0] of %O"));
  fs::remove_all(inputs);
}

// Scalars read from device memory in a tensor-core kernel (issue 18: "item() in a tensor-core
// kernel" was refused; tests/emulate/tensor_core/device_scalars.tile): a matrix index the
// producer's TMA takes, a per-batch loop bound both agents walk (1, 2 or 3 steps of BK = 32 over
// K = 40, by KLen[b]), and epilogue scales through arithmetic, on both targets. samples/moe_grouped_gemm.tile,
// in the sample sweep, picks an expert's weights this way.
TEST(EmulateRuntime, DeviceScalarsReadWithItemSteerATensorCoreKernel) {
  expect_tensor_core_kernel_matches("device_scalars", "B=3,G=2,M=100,N=72,K=40", {"C"});
}

// An i32 epilogue storing -1 through the TMA store's staging (a false "uninitialized read" when
// shared memory started as 0xff bytes; tests/emulate/tensor_core/minus_one_store.tile), on both
// targets: no report, and the exact values.
TEST(EmulateRuntime, StoringAllOnesBytesIsSeenAsAWrite) {
  expect_tensor_core_kernel_matches("minus_one_store", "M=200,N=136,K=72", {"P"}, "", /*exact=*/true);
}

// argmax along the rows and an i32 row sum in a tensor-core epilogue (found writing kernels from
// the docs: refused at a 'reduce_min' the author never wrote; tests/emulate/tensor_core/
// row_argmax.tile), V ragged, on both targets; indices and counts are exact, and so is the NaN
// maximum and minimum of a row of NaNs.
TEST(EmulateRuntime, RowArgmaxAndIntegerRowSumsRunInATensorCoreEpilogue) {
  expect_tensor_core_kernel_matches("row_argmax", "M=200,K=72,V=200,NB=4", {"Idx", "Count", "Nan"}, "", /*exact=*/true);
}

// A TMA coordinate computed from item() inside the k loop (a block-sparse GEMM; found writing
// kernels from the docs: an internal error in warp-specialize; tests/emulate/tensor_core/
// block_sparse.tile), and a K loop that runs no step in some tiles (a false uninitialized-TMEM
// report on sm_100a; empty_k_loop.tile), on both targets.
TEST(EmulateRuntime, LoadedTmaCoordinatesAndEmptyKLoopsRunOnTheTensorCores) {
  expect_tensor_core_kernel_matches("block_sparse", "M=200,N=72,K=256,NNZ=3,E=2", {"Y"});
  expect_tensor_core_kernel_matches("empty_k_loop", "B=2,M=200,N=72,K=64", {"C"});
}

// A loaded once per tile before a K loop that runs no step in later tiles (empty_k_loop.tile's
// tail_k_loop): its stage is released after the loop by one thread of each warpgroup, which on
// sm_90a left another thread waiting for the refilled stage's missed phase: a deadlock in the
// first random schedule (seed 1) on one SM, where each CTA walks several tiles. Found writing
// kernels from the docs.
TEST(EmulateRuntime, AStageReleasedAfterAnEmptyLoopWaitsForEveryThread) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    expect_emulation_matches(std::string("tests/emulate/tensor_core/empty_k_loop.tile --kernel tail_k_loop --dims "
                                         "M=600,K=128,N=72 --schedules 3 --sms 1 --target ") + target,
                             "D");
  }
}

// rand, randn and randint (Philox4x32-10; tests/emulate/kernels/random.tile): a dropout, normals
// and raw words, the seed read from a tensor, per row, or a number, i32 and u32 offsets, in both
// plain forms; and attention's dropout drawn in the tensor-core epilogue on both targets
// (tests/emulate/tensor_core/attention_dropout.tile): the emitted tilec_randint gives the
// interpreter's words, which PhiloxGivesRandom123sKnownAnswers holds to the published ones.
TEST(EmulateRuntime, RandomNumbersAreTheInterpretersBitForBit) {
  expect_plain_kernel_matches("random", {"Y", "U", "N", "W", "Rows"});
  expect_tensor_core_kernel_matches("attention_dropout", "S=200,T=136,HD=128", {"O"}, " --scalar seed=-12345");
}

// Rank-4 tensors on the tensor cores (issue 18: rank > 3 was refused): attention on PyTorch's
// SDPA layout [B, H, S, D] (tests/emulate/tensor_core/sdpa_bhsd.tile), the two leading
// coordinates folded into one batch index of B·H matrices, on both targets, S and T ragged.
TEST(EmulateRuntime, RankFourTensorsFoldTheirBatchCoordinatesOnTheTensorCores) {
  expect_tensor_core_kernel_matches("sdpa_bhsd", "B=2,H=3,S=136,T=72", {"O"});
}

// Parameters and values named like the locals an epilogue, a computed B's staging, an 8-bit A's
// packing or a folded store declare (row, i, chunk, lane, e, computed_b_parity, first, folded, ...)
// and like CUDA names (tests/emulate/tensor_core/emitter_names.tile; found by a helper: a `row` was shadowed
// and the numbers were wrong), on both targets, and in a plain kernel like its helpers and
// template parameter (tests/emulate/kernels/emitter_names.tile: nvcc rejected the .cu).
TEST(EmulateRuntime, UserNamesNeverMeetTheEmittersOwn) {
  expect_tensor_core_kernel_matches("emitter_names", "M=130,N=200,K=64,T=136", {"C", "D", "S", "O"},
                                    " --scalar row=2,column=3,i=5,j=7,box=11,chunk=13,lane=17,warp=19,staging=23,"
                                    "cudaSuccess=29");
  expect_plain_kernel_matches("emitter_names", {"Y", "S", "Ya"});
}

// A coordinate made from a negative scalar cast to an unsigned type (cast(-1, u32) is 2^32 - 1,
// cast(-1, u16) * 65537 + 1 is 2^32) lies past the tensor, so every element reads zero; the
// register form's launcher bounded it by |s| = 1 and ran its 32-bit instantiation, where it
// wrapped back into the tensor and read real data (a hunt's wrong numbers).
TEST(EmulateRuntime, AnUnsignedCastOfANegativeScalarKeepsIndicesIn64Bits) {
  const fs::path dir = fs::temp_directory_path() / ("tilec_unsigned_index_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "unsigned_index.tile",
             "kernel wide(X: tensor<N, f32>, Z: tensor<N, f32>, s: i64) grid tiles(cdiv(N, 256)) as (i) {\n"
             "  store Z[i] = load X at [i * 256 + cast(cast(s, u32), index)] : <256>;\n}\n"
             "kernel scaled(X: tensor<N, f32>, Z: tensor<N, f32>, t: i32) grid tiles(cdiv(N, 256)) as (i) {\n"
             "  store Z[i] = load X at [i * 256 + cast(cast(t, u16), index) * 65537 + 1] : <256>;\n}\n"
             // u32 arithmetic that wraps to the top: 0 - 1, -0 - ..., ~0 (an adversarial review's)
             "kernel wrapped(X: tensor<N, f32>, Z: tensor<N, f32>, u: u32) grid tiles(cdiv(N, 256)) as (i) {\n"
             "  store Z[i] = load X at [i * 256 + cast(u - 1, index)] : <256> + load X at [i * 256 + cast(-(u + 1), index)] "
             ": <256> + load X at [i * 256 + cast(~u, index)] : <256>;\n"
             "  store Z at [i * 256 + cast(u - 1, index) + 1] = load X[i] : <256>;\n}\n");
  CommandResult r = run_command(tilec("emulate " + (dir / "unsigned_index.tile").string() +
                                      " --dims N=1000 --scalar s=-1,t=-1,u=0 --plain-tiles registers --schedules 1"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("kernel wide [N=1000] sm_90a, schedule eager: Z ok"));
  EXPECT_THAT(r.out, HasSubstr("kernel scaled [N=1000] sm_90a, schedule eager: Z ok"));
  EXPECT_THAT(r.out, HasSubstr("kernel wrapped [N=1000] sm_90a, schedule eager: Z ok"));
  fs::remove_all(dir);
}

// Grid extents whose product passes 2^63 (a hunt: 274177 · 67280421310721 = 2^64 + 1 wrapped to one
// tile, which the launcher launched, successfully): a plain launcher's count saturates and is
// refused as more than INT_MAX tiles, in the emitted CUDA run on the emulated GPU (the kept
// program, at extents the interpreter refuses); a persistent grid's count (computed in the
// kernel) is a launch precondition the interpreter checks as the launcher does.
TEST(EmulateRuntime, AGridOfMoreThan2To63TilesIsRefused) {
  const fs::path dir = fs::temp_directory_path() / ("tilec_tile_product_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "grid.tile",
             "kernel tiled(C: tensor<1, i32>, a: i64, b: i64) grid tiles(cast(a, index), cast(b, index)) as (i, j) {\n"
             "  store C[0] += full<1, i32>(1);\n}\n"
             "kernel walked(C: tensor<1, i32>, a: i64, b: i64)\n"
             "    grid persistent(cast(a, index), cast(b, index), workers = 4) as (i, j) {\n"
             "  store C[0] += full<1, i32>(1);\n}\n");
  const std::string source = (dir / "grid.tile").string();
  CommandResult small = run_command(tilec("emulate " + source + " --kernel tiled --scalar a=3,b=5 --schedules 1 --keep " +
                                          (dir / "kept").string()));
  ASSERT_EQ(small.status, 0) << small.out << small.err;
  const std::string kept = (dir / "kept").string();
  for (const char* extents : {"a=274177 b=67280421310721", "a=4294917296 b=4295017296"}) {
    CommandResult huge = run_command(kept + "/emulate_grid " + kept + "/grid.cu " + kept + "/tiled tiled " + extents +
                                     " --policy eager --sms 4 --workers 1");
    EXPECT_NE(huge.status, 0) << extents;
    EXPECT_THAT(huge.err, HasSubstr("the launcher returned cudaErrorInvalidConfiguration")) << extents;
  }
  CommandResult walked = run_command(tilec("run " + source + " --kernel walked --scalar a=274177,b=67280421310721"));
  EXPECT_EQ(walked.status, 1);
  EXPECT_THAT(walked.err, HasSubstr("assert the grid's tiles fit in 64 bits does not hold at launch"));
  fs::remove_all(dir);
}

// A softmax over one 30000-wide row of a 32768-wide tile, and an RMSNorm of 4 x 8192 bf16 rows (a
// hunt's LLM kernels: the shared form overflowed shared memory): 512 threads per CTA in the
// register form, on the emulated GPU as in the interpreter. (The shared form cannot hold them.)
TEST(EmulateRuntime, WideRowsTake512ThreadsAndMatch) {
  const fs::path dir = fs::temp_directory_path() / ("tilec_wide_rows_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "wide.tile",
             "kernel softmax(L: tensor<B, V, f32>, P: tensor<B, V, f32>) grid tiles(B) as (b) {\n"
             "  x = load L at [b, 0] : <1, 32768>;\n  e = exp(x - max(x, axis = 1));\n"
             "  store P at [b, 0] = e / sum(e, axis = 1);\n}\n"
             "kernel rmsnorm(X: tensor<R, 8192, bf16>, W: tensor<8192, bf16>, Y: tensor<R, 8192, bf16>)\n"
             "    grid tiles(cdiv(R, 4)) as (r) {\n  x = cast(load X[r, 0] : <4, 8192>, f32);\n"
             "  ms = sum(x * x, axis = 1) / 8192;\n"
             "  store Y[r, 0] = cast(x * rsqrt(ms + 0.000001) * cast(load W[0] : <8192>, f32), bf16);\n}\n");
  CommandResult r = run_command(tilec("emulate " + (dir / "wide.tile").string() + " --dims B=2,V=30000,R=6 --schedules 1"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("P ok (max abs error"));
  EXPECT_THAT(r.out, HasSubstr("Y ok (max abs error"));
  CommandResult header = run_command(tilec("compile " + (dir / "wide.tile").string()));
  EXPECT_THAT(header.out, HasSubstr("softmax: grid B, 512 threads per CTA, tiles in registers"));
  EXPECT_THAT(header.out, HasSubstr("rmsnorm: grid cdiv(R, 4), 512 threads per CTA, tiles in registers"));
  fs::remove_all(dir);
}

// sort (tests/emulate/kernels/sort.tile): rows and columns of f32 with NaNs and both zeros (their
// order compared bit for bit), bf16, i32 and u8, ascending and descending, and a top-k mask from a
// row's k-th largest: the shared form's heapsort of each line gives the interpreter's order.
TEST(EmulateRuntime, SortMatchesTheInterpreter) {
  expect_plain_kernel_matches("sort", {"Up", "Down", "Cols", "Zeros", "H", "I", "U", "Top"});
}

// Names the headers around the .cu define as macros (PATH_MAX, BIG_ENDIAN, EINVAL), a value named
// atomicAdd beside a `+=` store, and tensors X and X_bytes
// (tests/emulate/kernels/header_macros.tile; a hunt's kernels named so did not compile): renamed in
// the .cu and the emulation driver, which compile and give the interpreter's numbers.
TEST(EmulateRuntime, NamesLikeHeaderMacrosAndAtomicsAreRenamed) {
  expect_plain_kernel_matches("header_macros", {"EINVAL", "S"});
}

// Two GEMMs in one K loop (tests/emulate/tensor_core/dual_gemm.tile; found by a helper): on sm_100a
// the emulator kept an MMA covered by four tcgen05.commits only, and reported a false race when
// the epilogue waited on a fifth. Every commit covers all earlier MMAs of its thread.
TEST(EmulateRuntime, EveryTcgen05CommitCoversAllEarlierMmas) {
  expect_tensor_core_kernel_matches("dual_gemm", "M=200,N=72,K=136", {"G", "U"});
}

// reshape<...>(x): a vector of per-row scales as a column, and a general row-major reshape, in both
// plain forms (the register form leaves them to shared memory).
TEST(EmulateRuntime, ReshapeMatchesTheInterpreter) { expect_plain_kernel_matches("reshape", {"Y", "W"}); }

// A column and the vector holding it (issue 18: reshapes between <BM> and <BM, 1> kept plain
// kernels in shared memory and were refused on the tensor cores): a per-row scale read from an
// [R] vector and row results stored into [R] and [B, R] (tests/emulate/kernels/column_vectors.tile),
// then the same around a GEMM and attention's log-sum-exp into [B, H, S] on both targets
// (tests/emulate/tensor_core/column_vectors.tile).
TEST(EmulateRuntime, AColumnMovesThroughTheVectorHoldingIt) {
  expect_plain_kernel_matches("column_vectors", {"Y", "M", "L"});
  CommandResult compiled = run_command(tilec("compile tests/emulate/kernels/column_vectors.tile"));
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  EXPECT_THAT(compiled.out, ::testing::HasSubstr("rowscale: grid cdiv(R, 4), 64 threads per CTA, tiles in registers"));
  EXPECT_THAT(compiled.out, ::testing::HasSubstr("store_vector<1>(M, row, column, R, 1, false,"));
  expect_tensor_core_kernel_matches("column_vectors", "M=200,N=128,K=72,B=2,H=2,S=130,T=100", {"C", "R", "O", "L"});
}

// causal_attention with query blocks smaller than key blocks (-D BQ=64 -D BKV=128): its key loop
// took (i + 1)·(BQ / BKV) = 0 blocks, every output was 0/0, and the interpreter's NaNs matched
// (a helper's -D sweep). The bound is cdiv((i + 1)·BQ, BKV) now; NaNs in both are counted.
TEST(EmulateRuntime, CausalAttentionTakesQueryBlocksSmallerThanKeyBlocks) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(target);
    CommandResult r = run_command(tilec(std::string("emulate samples/causal_attention.tile -D BQ=64 -D BKV=128 "
                                                    "--dims S=200 --sms 2 --schedules 1 --target ") + target));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_THAT(r.out, ::testing::HasSubstr("O ok (max abs error"));
    EXPECT_THAT(r.out, ::testing::Not(::testing::HasSubstr("NaN")));
  }
}

// Tiles between a tensor's dimensions in plain kernels (tests/emulate/kernels/unit_dims_rows.tile:
// a qk-norm over [B, S, H, D], a row shift over [S, H, D], a masked store): the register form
// reads and writes their rows H·D elements apart (issue 18: the reshapes kept such kernels in
// shared memory, and the reason given blamed the reshape; a masked store kept its reshape).
TEST(EmulateRuntime, TilesBetweenATensorsDimensionsStayInRegisters) {
  expect_plain_kernel_matches("unit_dims_rows", {"O", "Y", "Z"});
  CommandResult compiled = run_command(tilec("compile tests/emulate/kernels/unit_dims_rows.tile"));
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  EXPECT_THAT(compiled.out, ::testing::HasSubstr("qk_norm: grid cdiv(S, 16) x H x B, 128 threads per CTA, tiles in registers"));
  EXPECT_THAT(compiled.out, ::testing::HasSubstr("masked_rows: grid cdiv(S, 16) x H, 256 threads per CTA, tiles in registers"));
  EXPECT_THAT(compiled.out, ::testing::HasSubstr("const auto* const Q_box = Q + static_cast<int64_t>(b) * S * H * 64 + "
                                                 "static_cast<int64_t>(h) * 64;"));
  EXPECT_THAT(compiled.out, ::testing::HasSubstr("Q_box, row, column, (0 <= b && b < B && 0 <= h && h < H ? S : 0), 64, "
                                                 "Q_vectors, H * 64);"));
}

// A gather (issue 18: data-dependent coordinates could not be written): an embedding lookup whose
// row comes from item() of a loaded id, and a row divided by item() of a whole-tile sum, in both
// plain forms (the shared form reads the id from shared memory, then a barrier before its bytes
// are reused: without it the lookup raced with the next tile's writes); an id plus 2^32 reads
// zeros (the 32-bit index instantiation cut it back into the table).
TEST(EmulateRuntime, AnEmbeddingLookupGathersRowsAtLoadedIds) {
  expect_plain_kernel_matches("embedding", {"Y", "Z", "W"});
}

// Coordinates computed past the tensor from a grid coordinate (i * 2^30; found by a helper
// auditing the docs): the 32-bit instantiation wrapped them back inside the tensor where the
// interpreter reads zeros; the launcher now bounds every computed index before taking it
// (tests/emulate/kernels/computed_coordinates.tile).
TEST(EmulateRuntime, CoordinatesComputedPastTheTensorReadZerosInBothIndexWidths) {
  expect_plain_kernel_matches("computed_coordinates", {"Y", "Z", "W"});
}

// A column tile stored from a grid that also walks columns (found writing a log-sum-exp): only
// the CTAs of column block 0 may write the one-column output (the register form's staged column
// store ignored the column coordinate, so later blocks overwrote it).
TEST(EmulateRuntime, AColumnStoreWritesOnlyFromTheColumnBlockInsideTheTensor) {
  expect_plain_kernel_matches("row_logsumexp", {"L"});
}

// fma (one rounding: fmaf on the host and the GPU) of f32 tiles broadcast with a row and a
// number, of bf16 tiles, and with the shape from its third operand, in both plain forms.
TEST(EmulateRuntime, ARowSumTimesAReshapedColumnTakesTheReassociatedTolerance) {
  expect_plain_kernel_matches("column_reshape_sum", {"Y"});
}

TEST(EmulateRuntime, FmaMatchesTheInterpreter) { expect_plain_kernel_matches("fma", {"Y", "Z", "U", "T"}); }

// Stores at element coordinates a loop moves, computed from its variable (topk.tile).
TEST(EmulateRuntime, StoresAtElementCoordinatesAComputedLoopIndexMovesMatchTheInterpreter) {
  expect_plain_kernel_matches("topk", {"IDX", "VAL"});
}

// float → integer casts out of the type's range saturate and NaN gives 0, as the interpreter
// defines them and cvt.rzi does on the GPU (the emitted CUDA used to convert through int64_t and
// wrap: 1e10 became 1410065408 in an i32). Both plain forms.
TEST(EmulateRuntime, CastsOfFloatsOutOfRangeSaturateAndNanGivesZero) {
  expect_plain_kernel_matches("saturate", {"Y", "Z", "N"});
}

// i8 tensors (issue 18: the quantization kernel): per-row absmax quantization to i8 (a saturating
// cast of round(x / scale), and one 1.5 times larger so some values saturate), dequantization of
// an i8 input, and i8 arithmetic that wraps (p·100 + p·100). Both plain forms,
// ragged columns (the register form's 16-element vectors end mid-row). P is stored from the f32
// layout (4 elements a thread) and loaded back in the i8 one (16): without the __syncthreads the
// register form now puts before each access of a tensor it stores and loads, threads read
// elements other threads had not stored yet (D mismatched).
TEST(EmulateRuntime, Int8QuantizationMatchesTheInterpreter) {
  expect_plain_kernel_matches("int8", {"Q", "S", "D", "W"});
}

// i16 and u8 tensors (issue 18): saturating casts from floats, wrapping arithmetic, a comparison
// and casts between the two, stored and loaded back (the register form syncs between), both
// plain forms.
TEST(EmulateRuntime, SixteenBitAndUnsignedEightBitIntegersMatchTheInterpreter) {
  expect_plain_kernel_matches("narrow_ints", {"H", "U", "S", "V", "F"});
}

// u16 and u32 tensors: saturating casts (negatives to 0), arithmetic modulo 2^16 and 2^32 (u32
// products past 2^63 wrap through mul_i64), a comparison, a row sum and casts, both plain forms.
TEST(EmulateRuntime, SixteenAndThirtyTwoBitUnsignedIntegersMatchTheInterpreter) {
  expect_plain_kernel_matches("unsigned_ints", {"H", "W", "S", "P", "T", "F"});
}

// Bitwise operators and shifts (tests/emulate/kernels/bitwise.tile): the prelude's shl_i64 and
// shr_i64 against the interpreter's rows, for every shift amount from -3 to 66, in both forms.
TEST(EmulateRuntime, BitwiseOperatorsAndShiftsMatchTheInterpreter) {
  expect_plain_kernel_matches("bitwise", {"Y", "V", "B", "F"});
}

// bitcast (issue 18; tests/emulate/kernels/bitcast.tile) in both plain forms against the
// interpreter, and the interpreter's bits against the patterns the kernel writes: every f8e5m2
// and e4m3 pattern stored and read back as integers unchanged (an e5m2 infinity and signaling
// NaN copied as the GPU copies them, not saturated or quieted), and bf16 patterns across the
// 16-bit range.
TEST(EmulateRuntime, BitcastReadsTheBitsAndStoresCopyThem) {
  expect_plain_kernel_matches("bitcast", {"E5", "E4", "E5B", "E4B", "H", "HB", "EXP", "NEG", "SR"});
  const fs::path outputs = fs::temp_directory_path() / ("tilec_bitcast_" + std::to_string(::getpid()));
  fs::create_directories(outputs);
  CommandResult r = run_command(tilec("run tests/emulate/kernels/bitcast.tile --dims R=8,C=100 --outputs " +
                                      outputs.string()));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string e5 = read_file(outputs / "E5.bin"), e5b = read_file(outputs / "E5B.bin"),
                    e4 = read_file(outputs / "E4.bin"), e4b = read_file(outputs / "E4B.bin"),
                    h = read_file(outputs / "H.bin"), hb = read_file(outputs / "HB.bin");
  ASSERT_EQ(e5.size(), 800u);
  ASSERT_EQ(h.size(), 1600u);
  for (int row = 0; row < 8; ++row)
    for (int column = 0; column < 100; ++column) {
      const int at = row * 100 + column;
      const int n = (row % 4) * 64 + column % 64 + (row / 4) * 256;  // the kernel's n, per tile
      SCOPED_TRACE(::testing::Message() << "[" << row << ", " << column << "]");
      EXPECT_EQ(static_cast<uint8_t>(e5[at]), n & 255);
      EXPECT_EQ(e5b[at], e5[at]);
      EXPECT_EQ(static_cast<uint8_t>(e4[at]), n & 255);
      EXPECT_EQ(e4b[at], e4[at]);
      uint16_t bits = 0, read = 0;
      std::memcpy(&bits, h.data() + 2 * at, 2);
      std::memcpy(&read, hb.data() + 2 * at, 2);
      EXPECT_EQ(bits, static_cast<uint16_t>(n * 131 + (column / 64) * 7));
      EXPECT_EQ(read, bits);
    }
  fs::remove_all(outputs);
}

// Integer outputs are compared exactly, also in a kernel whose float sums the GPU reassociates
// (they took the floats' tolerance there: a u32 hash off by one, or 200000, passed; an
// adversarial helper's edits). An integer read through bitcast is filled over its whole range.
TEST(EmulateRuntime, IntegerOutputsAreComparedExactly) {
  const fs::path dir = fs::temp_directory_path() / ("tilec_exact_ints_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path tile = dir / "hs.tile", cu = dir / "hs.cu";
  write_file(tile, "kernel hs(X: tensor<R, C, f32>, S: tensor<R, 1, f32>, H: tensor<R, C, u32>) grid tiles(cdiv(R, 4)) "
                   "as (i) {\n  x = load X[i, 0] : <4, 256>;\n  store S[i, 0] = sum(x, axis = 1);\n"
                   "  store H[i, 0] = bitcast(x, u32) ^ 2654435769;\n}\n");
  CommandResult compiled = run_command(tilec("compile " + tile.string() + " -o " + cu.string()));
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  std::string text = read_file(cu);
  const std::string key = "int64_t(2654435769LL)";
  ASSERT_NE(text.find(key), std::string::npos);
  write_file(cu, text.replace(text.find(key), key.size(), "int64_t(2654435768LL)"));
  CommandResult r = run_command(tilec("emulate " + tile.string() + " --cu " + cu.string() + " --dims R=8,C=256 --schedules 1"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.err, ::testing::HasSubstr("H differs from the interpreter's result"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("S ok (max abs error"));
  fs::remove_all(dir);
}

// cumsum (issue 18) as emitted CUDA: along rows and columns, of f32, bf16 (f32 running sums,
// each rounded) and i32 tiles, ragged; the register form falls back to shared-memory tiles for
// it (one thread per line). Both forms.
TEST(EmulateRuntime, CumsumMatchesTheInterpreter) {
  expect_plain_kernel_matches("cumsum", {"Y", "Z", "J"});
}

// permute (issue 18: "a general transpose/permute of a tile for plain kernels"): rank-3 tiles in
// two dimension orders (f32 and i32) and rank-2 slices, at extents no tile divides. Plain
// kernels with a permute keep the shared form, so both forms emit the same body.
TEST(EmulateRuntime, PermutesOfRankThreeTilesMatchTheInterpreter) {
  expect_plain_kernel_matches("permute", {"Y", "Z", "T"});
}

// cumprod, cummax and cummin (issue 18): the scans' other combinations, of f32, bf16 and i32
// tiles (i32 products wrap), along both axes. Both forms (the register form falls back).
TEST(EmulateRuntime, ScansOfProductsMaximaAndMinimaMatchTheInterpreter) {
  expect_plain_kernel_matches("scans", {"Y", "Z", "J", "K"});
}

// i64 arithmetic and integer sums that wrap: i64 values near 2^62 (products, differences,
// negations and running sums overflow; the emitted C++ spells them add_i64 / sub_i64 / mul_i64,
// which wrap, where int64_t's operators would be undefined) and i32 near 2^30 (summed in 64
// bits, then narrowed). Both plain forms.
TEST(EmulateRuntime, IntegerArithmeticAndSumsThatWrapMatchTheInterpreter) {
  expect_plain_kernel_matches("int_sums", {"RA", "CA", "PA", "RB", "CB"});
}

}  // namespace
}  // namespace tilec::testing
