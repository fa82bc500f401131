// tests/emulate/samples_emulate_test.cpp — the sample sweep: every samples/*.tile on both
// targets, in several shapes, under several schedules, through `tilec emulate`; every output
// of every schedule must match the interpreter.
//
// 1. A shape names what it exercises (ragged extents, one k-step, fewer k-steps than stages,
//    several persistent rounds per CTA, ...). Before running, the test checks that claim against
//    the tile sizes the .tile declares (its `const` lines), so a shape that stops meaning what
//    its name says — a sample's BK or STAGES changed — fails instead of testing less.
// 2. The run: `tilec emulate samples/S.tile --target T --dims D --sms N --schedules N --seed S`,
//    eager and lazy for every sample, plus random schedules for the tensor-core samples (their
//    TMA loads, WGMMAs and tcgen05 MMAs are what the schedules move).
// 3. The report: exit 0, and exactly one line `kernel K [DIMS] TARGET, schedule S: OUT ok (...)`
//    per kernel and schedule (besides `kernel K: scalars ...`), each output `ok`, so a run that silently skipped a kernel or a
//    schedule fails too; then the final `ok`.
//
// Cost: each case is one tilec run (well under a second with a warm build cache); every run
// shares the build cache under the build directory (TILEC_TEST_CACHE_DIR). Shapes stay small:
// CI runs this suite twice, the second time under ASan/UBSan.
//
// The shapes keep bf16/f16 rows (gemm's K and N, attention's T and HD) at multiples of 8
// elements even when ragged, so TMA reads the tensors in place; rows TMA cannot address (padded
// copies) are emulate_cli_test's UnalignedRowsGoThroughPaddedCopies.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulate_test_support.h"

namespace tilec::testing {
namespace {

// --- the samples: which extents their tiles cut, and which loop they pipeline -------------------

// What a sample's tiles are made of: each tiled extent with the `const` that is its block size,
// and, for the pipelined samples, the extent the pipelined loop walks and its stage count.
struct Sample {
  std::string name;
  bool tensor_cores = false;  // mma: three schedules (eager, lazy, random)
  bool persistent = false;    // grid persistent(...): --sms decides the rounds per CTA
  std::vector<std::pair<std::string, std::string>> grid;  // extent -> block const (or a number), one per grid axis
  std::string steps;          // the pipelined loop's extent (K, T), or ""
  std::string step;           // its block const (BK, BKV)
};

const std::vector<Sample>& samples() {
  static const std::vector<Sample> all = {
      {"gemm", true, true, {{"M", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"gemm_f16", true, true, {{"M", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"gemm_bias_relu", true, true, {{"M", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"linear", true, true, {{"M", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"gate_up", true, true, {{"M", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"fp8_linear", true, true, {{"M", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"tf32_linear", true, true, {{"M", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"weight_grad", true, true, {{"IN", "BI"}, {"OUT", "BO"}}, "T", "BT"},
      {"batched_gemm", true, true, {{"R", "BM"}, {"N", "BN"}}, "K", "BK"},
      {"bmm", true, true, {{"M", "BM"}, {"N", "BN"}, {"BATCH", "1"}}, "K", "BK"},
      {"attention", true, true, {{"S", "BQ"}, {"HD", "D"}}, "T", "BKV"},
      {"vector_add", false, false, {{"N", "BLOCK"}}, "", ""},
      {"scale_relu", false, false, {{"M", "BM"}, {"N", "BN"}}, "", ""},
      {"broadcast", false, false, {{"R", "BR"}, {"C", "BC"}}, "", ""},
      {"layernorm", false, false, {{"R", "BR"}}, "", ""},
      {"reduction_tree", false, false, {{"R", "BR"}}, "", ""},
      {"softmax", false, false, {{"R", "BR"}}, "", ""},
      {"rmsnorm", false, false, {{"R", "BR"}}, "", ""},
      {"add_layernorm", false, false, {{"R", "BR"}}, "", ""},
      {"silu", false, false, {{"M", "BM"}, {"N", "BN"}}, "", ""},
      {"column_sum", false, false, {{"N", "BN"}}, "", ""},
      {"gemv", false, false, {{"M", "BM"}}, "", ""},
      {"activations", false, false, {{"M", "BM"}}, "", ""},
      {"int_remainder", false, false, {{"M", "BM"}}, "", ""},
      {"transpose", false, false, {{"R", "B"}, {"C", "B"}}, "", ""},
      {"stencil", false, false, {{"R", "BR"}, {"C", "BC"}}, "", ""},
      {"head_softmax", false, false, {{"R", "BR"}, {"H", "1"}}, "", ""},
  };
  return all;
}

const Sample& sample_named(const std::string& name) {
  for (const Sample& sample : samples())
    if (sample.name == name) return sample;
  throw std::logic_error("no sample " + name);
}

// --- the shapes and what each claims ------------------------------------------------------------

enum class Claim {
  ragged,               // some grid extent and the pipelined extent (if any) are not multiples of their blocks
  one_tile,             // every grid extent equals its block: exactly one tile
  sub_tile,             // one tile, and some extent is smaller than its block
  multi_tile,           // several tiles, every extent a multiple of its block
  one_step,             // the pipelined loop runs once (K <= BK, T <= BKV)
  fewer_steps_than_stages,  // 1 < steps < STAGES: the pipeline never fills
  many_steps,           // steps >= 2 * STAGES: every stage's barrier is reused, parities flip
  rounds,               // persistent CTAs take at least two tiles each: tiles >= 2 * sms
};

struct Shape {
  std::string sample;
  std::string name;
  std::string dims;  // --dims
  int sms;
  std::vector<Claim> claims;
};

// gemm, gemm_f16, gemm_bias_relu and linear: BM=128, BN=256, BK=64, STAGES=4 (gate_up: BN=128).
std::vector<Shape> gemm_shapes(const std::string& sample) {
  return {
      // 2×2 tiles, all partial at the edges; 4 k-steps, the last 8 columns of K.
      {sample, "ragged", "M=200,N=296,K=200", 2, {Claim::ragged, Claim::rounds}},
      {sample, "one_kstep", "M=136,N=264,K=40", 2, {Claim::one_step}},
      {sample, "fewer_ksteps_than_stages", "M=256,N=256,K=128", 2, {Claim::multi_tile, Claim::fewer_steps_than_stages}},
      // One CTA walks all 3×2 tiles, 10 k-steps each: stage parities carry across tiles.
      {sample, "persistent_rounds", "M=300,N=296,K=600", 1, {Claim::ragged, Claim::rounds, Claim::many_steps}},
      // 3×3 tiles on 2 CTAs (5 and 4 rounds), 2 k-steps: a pipeline that never fills, many times.
      {sample, "rounds_short_k", "M=300,N=520,K=72", 2, {Claim::ragged, Claim::rounds, Claim::fewer_steps_than_stages}},
  };
}

std::vector<Shape> all_shapes() {
  std::vector<Shape> shapes;
  for (const char* sample : {"gemm", "gemm_f16", "gemm_bias_relu", "linear"})
    for (Shape& shape : gemm_shapes(sample)) shapes.push_back(shape);
  // gate_up (BN = 128, two accumulators): four of gemm's shapes, among them those where a CTA
  // walks several tiles, so both accumulators restart and the accumulator barrier's parity flips.
  for (Shape& shape : gemm_shapes("gate_up"))
    if (shape.name != "fewer_ksteps_than_stages") shapes.push_back(shape);
  // fp8_linear: BK = 128 (one 128-byte row of e4m3), so K moves in steps of 128; rows of X and
  // W are K bytes, multiples of 16 here.
  shapes.insert(shapes.end(), {
      {"fp8_linear", "ragged", "M=200,N=296,K=400", 2, {Claim::ragged, Claim::rounds}},
      {"fp8_linear", "one_kstep", "M=136,N=264,K=96", 2, {Claim::one_step}},
      {"fp8_linear", "fewer_ksteps_than_stages", "M=256,N=256,K=256", 2, {Claim::multi_tile, Claim::fewer_steps_than_stages}},
      {"fp8_linear", "persistent_rounds", "M=300,N=296,K=1200", 1, {Claim::ragged, Claim::rounds, Claim::many_steps}},
  });
  // tf32_linear: BN=256, BK = 32 (one 128-byte row of f32), so K moves in steps of 32; rows of X
  // and W are 4·K bytes, multiples of 16 here.
  shapes.insert(shapes.end(), {
      {"tf32_linear", "ragged", "M=200,N=296,K=200", 2, {Claim::ragged, Claim::rounds}},
      {"tf32_linear", "one_kstep", "M=136,N=264,K=24", 2, {Claim::one_step}},
      {"tf32_linear", "fewer_ksteps_than_stages", "M=256,N=256,K=96", 2, {Claim::multi_tile, Claim::fewer_steps_than_stages}},
      {"tf32_linear", "persistent_rounds", "M=300,N=296,K=600", 1, {Claim::ragged, Claim::rounds, Claim::many_steps}},
  });
  // weight_grad: BI=128, BO=256, BT=64, STAGES=4; an MN-major A.
  shapes.insert(shapes.end(), {
      {"weight_grad", "ragged", "IN=200,OUT=296,T=200", 2, {Claim::ragged, Claim::rounds}},
      {"weight_grad", "one_kstep", "IN=136,OUT=264,T=40", 2, {Claim::one_step}},
      {"weight_grad", "fewer_ksteps_than_stages", "IN=256,OUT=256,T=128", 2, {Claim::multi_tile, Claim::fewer_steps_than_stages}},
      {"weight_grad", "persistent_rounds", "IN=304,OUT=296,T=600", 1, {Claim::ragged, Claim::rounds, Claim::many_steps}},
  });
  // batched_gemm: M=512 rows per batch (R = batches·512), BM=128, BN=256, BK=64, STAGES=4;
  // B holds each batch's K rows padded to cdiv(K, BK)·BK, so Q = batches·cdiv(K, BK)·BK.
  shapes.insert(shapes.end(), {
      {"batched_gemm", "ragged", "R=1024,N=136,K=104,Q=256", 2, {Claim::ragged, Claim::rounds}},
      {"batched_gemm", "one_kstep", "R=512,N=264,K=48,Q=64", 2, {Claim::one_step}},
      {"batched_gemm", "fewer_ksteps_than_stages", "R=1024,N=256,K=192,Q=384", 2,
       {Claim::multi_tile, Claim::fewer_steps_than_stages}},
      {"batched_gemm", "persistent_rounds", "R=1024,N=296,K=200,Q=512", 1, {Claim::ragged, Claim::rounds}},
      {"batched_gemm", "rounds_short_k", "R=1536,N=136,K=72,Q=384", 2,
       {Claim::ragged, Claim::rounds, Claim::fewer_steps_than_stages}},
  });
  // bmm: BM=128, BN=256, BK=64, STAGES=4 over rank-3 tensors; every matrix of the batch has its
  // own ragged edges (rows past M, columns past N and K), which a folded batch would not.
  shapes.insert(shapes.end(), {
      {"bmm", "ragged", "BATCH=2,M=200,N=296,K=200", 2, {Claim::ragged, Claim::rounds}},
      {"bmm", "one_kstep", "BATCH=3,M=136,N=136,K=40", 2, {Claim::one_step}},
      {"bmm", "fewer_ksteps_than_stages", "BATCH=2,M=256,N=256,K=128", 2,
       {Claim::multi_tile, Claim::fewer_steps_than_stages}},
      {"bmm", "rounds_short_k", "BATCH=3,M=130,N=264,K=72", 2,
       {Claim::ragged, Claim::rounds, Claim::fewer_steps_than_stages}},
  });
  // attention: BQ=128 query rows, BKV=64 keys per step, D=64 columns per head, STAGES=2.
  shapes.insert(shapes.end(), {
      // 2 query blocks (the second partial), 4 key blocks, the last masked after 8 keys.
      {"attention", "ragged_t", "S=200,T=200,HD=64", 2, {Claim::ragged}},
      // 40 keys: one key block, most of it masked; two heads.
      {"attention", "short_t", "S=128,T=40,HD=128", 2, {Claim::one_step}},
      // One CTA walks 3 query blocks × 2 heads, 3 key blocks each.
      {"attention", "persistent_rounds", "S=300,T=136,HD=128", 1, {Claim::ragged, Claim::rounds}},
      // 9 key blocks through 2 stages: each stage's barrier is reused four times.
      {"attention", "long_t", "S=128,T=520,HD=64", 2, {Claim::many_steps}},
  });
  // The plain samples (no tensor cores, grid tiles): one tile, less than one tile, ragged, many.
  shapes.insert(shapes.end(), {
      {"vector_add", "one_tile", "N=1024", 2, {Claim::one_tile}},
      {"vector_add", "sub_tile", "N=37", 2, {Claim::sub_tile}},
      {"vector_add", "ragged", "N=3001", 2, {Claim::ragged}},
      {"vector_add", "multi_tile", "N=16384", 2, {Claim::multi_tile}},
      {"scale_relu", "one_tile", "M=32,N=128", 2, {Claim::one_tile}},
      {"scale_relu", "sub_tile", "M=5,N=7", 2, {Claim::sub_tile}},
      {"scale_relu", "ragged", "M=45,N=201", 2, {Claim::ragged}},
      {"scale_relu", "multi_tile", "M=96,N=384", 2, {Claim::multi_tile}},
      {"broadcast", "one_tile", "R=8,C=128", 2, {Claim::one_tile}},
      {"broadcast", "sub_tile", "R=3,C=5", 2, {Claim::sub_tile}},
      {"broadcast", "ragged", "R=13,C=201", 2, {Claim::ragged}},
      {"broadcast", "multi_tile", "R=32,C=512", 2, {Claim::multi_tile}},
  });
  for (const char* sample : {"layernorm", "reduction_tree", "softmax", "rmsnorm", "add_layernorm"})
    shapes.insert(shapes.end(), {
        {sample, "one_tile", "R=4", 2, {Claim::one_tile}},
        {sample, "sub_tile", "R=1", 2, {Claim::sub_tile}},
        {sample, "ragged", "R=7", 2, {Claim::ragged}},
        {sample, "multi_tile", "R=64", 2, {Claim::multi_tile}},
    });
  // silu: BM=16, BN=256 (bf16: 8 per 16-byte vector; N=201 leaves a 1-element vector tail).
  // column_sum: BN=256 columns per CTA, the loop walks M in blocks of BM=32.
  // gemv: BM=16 rows per CTA, the loop walks K in blocks of BK=512 (K=1000: a ragged last block).
  shapes.insert(shapes.end(), {
      {"silu", "one_tile", "M=16,N=256", 2, {Claim::one_tile}},
      {"silu", "sub_tile", "M=5,N=7", 2, {Claim::sub_tile}},
      {"silu", "ragged", "M=45,N=201", 2, {Claim::ragged}},
      {"silu", "multi_tile", "M=32,N=512", 2, {Claim::multi_tile}},
      {"column_sum", "one_tile", "M=32,N=256", 2, {Claim::one_tile}},
      {"column_sum", "sub_tile", "M=1,N=100", 2, {Claim::sub_tile}},
      {"column_sum", "ragged", "M=77,N=300", 2, {Claim::ragged}},
      {"column_sum", "multi_tile", "M=256,N=512", 2, {Claim::multi_tile}},
      {"gemv", "one_tile", "M=16,K=512", 2, {Claim::one_tile}},
      {"gemv", "sub_tile", "M=3,K=1000", 2, {Claim::sub_tile}},
      {"gemv", "ragged", "M=37,K=1000", 2, {Claim::ragged}},
      {"gemv", "multi_tile", "M=64,K=2048", 2, {Claim::multi_tile}},
      // activations: BM=16 rows of 64; int_remainder: BM=8 rows of 32 (divisors include 0 and -1).
      {"activations", "one_tile", "M=16", 2, {Claim::one_tile}},
      {"activations", "sub_tile", "M=3", 2, {Claim::sub_tile}},
      {"activations", "ragged", "M=37", 2, {Claim::ragged}},
      {"activations", "multi_tile", "M=64", 2, {Claim::multi_tile}},
      {"int_remainder", "one_tile", "M=8", 2, {Claim::one_tile}},
      {"int_remainder", "sub_tile", "M=3", 2, {Claim::sub_tile}},
      {"int_remainder", "ragged", "M=37", 2, {Claim::ragged}},
      {"int_remainder", "multi_tile", "M=64", 2, {Claim::multi_tile}},
      // transpose: 32x32 tiles of bf16, read at (i, j) and written at (j, i).
      {"transpose", "one_tile", "R=32,C=32", 2, {Claim::one_tile}},
      {"transpose", "sub_tile", "R=5,C=7", 2, {Claim::sub_tile}},
      {"transpose", "ragged", "R=70,C=45", 2, {Claim::ragged}},
      {"transpose", "multi_tile", "R=64,C=96", 2, {Claim::multi_tile}},
      // stencil: 16x64 tiles with a one-column halo read at element coordinates on each side.
      {"stencil", "one_tile", "R=16,C=64", 2, {Claim::one_tile}},
      {"stencil", "sub_tile", "R=3,C=5", 2, {Claim::sub_tile}},
      {"stencil", "ragged", "R=37,C=150", 2, {Claim::ragged}},
      {"stencil", "multi_tile", "R=32,C=256", 2, {Claim::multi_tile}},
      // head_softmax: BR=4 rows of D=256 per CTA, one head each; R=7 ends each head mid-tile.
      {"head_softmax", "one_tile", "H=1,R=4", 2, {Claim::one_tile}},
      {"head_softmax", "sub_tile", "H=1,R=3", 2, {Claim::sub_tile}},
      {"head_softmax", "ragged", "H=3,R=7", 2, {Claim::ragged}},
      {"head_softmax", "multi_tile", "H=2,R=16", 2, {Claim::multi_tile}},
  });
  return shapes;
}

struct Case {
  Shape shape;
  std::string target;
  int seed;  // the inputs' seed and the first random schedule's
};

// How gtest names a failing case's parameter: the command line's parts, not 168 bytes.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.shape.sample << " " << c.target << " " << c.shape.name << " (--dims " << c.shape.dims << " --sms "
       << c.shape.sms << " --seed " << c.seed << ")";
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  int seed = 1;
  for (const Shape& shape : all_shapes()) {
    for (const char* target : {"sm_90a", "sm_100a"}) cases.push_back({shape, target, seed});
    ++seed;
  }
  return cases;
}

// --- reading the .tile and the report -----------------------------------------------------------

// The integer `const NAME = VALUE;` lines of a .tile.
std::map<std::string, long> integer_constants(const std::string& source) {
  std::map<std::string, long> constants;
  std::regex line(R"((^|\n)const ([A-Za-z_][A-Za-z_0-9]*) = ([0-9]+);)");
  for (std::sregex_iterator it(source.begin(), source.end(), line), end; it != end; ++it)
    constants[(*it)[2]] = std::stol((*it)[3]);
  return constants;
}

std::vector<std::string> kernel_names(const std::string& source) {
  std::vector<std::string> names;
  std::regex line(R"((^|\n)kernel ([A-Za-z_][A-Za-z_0-9]*)\()");
  for (std::sregex_iterator it(source.begin(), source.end(), line), end; it != end; ++it) names.push_back((*it)[2]);
  return names;
}

// "M=200,N=296" -> {M: 200, N: 296}.
std::map<std::string, long> parse_dims(const std::string& dims) {
  std::map<std::string, long> values;
  std::regex entry(R"(([A-Za-z_][A-Za-z_0-9]*)=([0-9]+))");
  for (std::sregex_iterator it(dims.begin(), dims.end(), entry), end; it != end; ++it)
    values[(*it)[1]] = std::stol((*it)[2]);
  return values;
}

long cdiv(long a, long b) { return (a + b - 1) / b; }

// Checks that `shape` is what its claims say, with the sample's own tile sizes.
void expect_claims_hold(const Shape& shape, const Sample& sample, const std::map<std::string, long>& constants) {
  std::map<std::string, long> dims = parse_dims(shape.dims);
  auto value = [](const std::map<std::string, long>& map, const std::string& name) {
    auto it = map.find(name);
    EXPECT_NE(it, map.end()) << name << " is not given";
    return it == map.end() ? 1L : it->second;
  };
  long tiles = 1;
  bool any_ragged = false, all_exact = true, all_one_block = true, any_below = false;
  for (const auto& [extent, block_name] : sample.grid) {
    long n = value(dims, extent);
    long block = std::isdigit(static_cast<unsigned char>(block_name[0])) ? std::stol(block_name) : value(constants, block_name);
    tiles *= cdiv(n, block);
    any_ragged |= n % block != 0;
    all_exact &= n % block == 0;
    all_one_block &= n == block;
    any_below |= n < block;
  }
  long steps = 0, stages = 0;
  if (!sample.steps.empty()) {
    steps = cdiv(value(dims, sample.steps), value(constants, sample.step));
    stages = value(constants, "STAGES");
  }
  for (Claim claim : shape.claims) switch (claim) {
      case Claim::ragged:
        EXPECT_TRUE(any_ragged) << "no grid extent is ragged";
        EXPECT_GT(tiles, 1) << "ragged, but a single tile";
        if (!sample.steps.empty()) {
          EXPECT_NE(value(dims, sample.steps) % value(constants, sample.step), 0) << sample.steps << " is not ragged";
        }
        break;
      case Claim::one_tile: EXPECT_TRUE(all_one_block) << "not exactly one full tile"; break;
      case Claim::sub_tile:
        EXPECT_EQ(tiles, 1);
        EXPECT_TRUE(any_below) << "no extent is below its block";
        break;
      case Claim::multi_tile:
        EXPECT_GT(tiles, 1);
        EXPECT_TRUE(all_exact) << "an extent is ragged";
        break;
      case Claim::one_step: EXPECT_EQ(steps, 1); break;
      case Claim::fewer_steps_than_stages:
        EXPECT_GT(steps, 1);
        EXPECT_LT(steps, stages);
        break;
      case Claim::many_steps: EXPECT_GE(steps, 2 * stages); break;
      case Claim::rounds:
        EXPECT_TRUE(sample.persistent);
        EXPECT_GE(tiles, 2 * shape.sms) << "fewer than two tiles per CTA";
        break;
    }
  // batched_gemm: whole batches of M rows, and B padded to cdiv(K, BK)·BK rows per batch.
  if (sample.name == "batched_gemm") {
    long m = value(constants, "M"), bk = value(constants, "BK");
    EXPECT_EQ(value(dims, "R") % m, 0) << "R is not a whole number of batches";
    EXPECT_EQ(value(dims, "Q"), value(dims, "R") / m * cdiv(value(dims, "K"), bk) * bk);
  }
}

// --- the sweep ----------------------------------------------------------------------------------

class SampleSweep : public ::testing::TestWithParam<Case> {};

TEST_P(SampleSweep, EverySchedulesOutputsMatchTheInterpreter) {
  const Case& c = GetParam();
  const Sample& sample = sample_named(c.shape.sample);
  std::string source = read_file(source_dir() / "samples" / (sample.name + ".tile"));
  ASSERT_FALSE(source.empty()) << "cannot read samples/" << sample.name << ".tile";
  {
    SCOPED_TRACE("the shape " + c.shape.name + " (" + c.shape.dims + ") against samples/" + sample.name + ".tile");
    expect_claims_hold(c.shape, sample, integer_constants(source));
  }
  EXPECT_EQ(sample.tensor_cores, source.find("mma(") != std::string::npos) << "samples() is out of date";
  EXPECT_EQ(sample.persistent, source.find("grid persistent(") != std::string::npos) << "samples() is out of date";
  std::vector<std::string> kernels = kernel_names(source);
  ASSERT_FALSE(kernels.empty());

  int schedules = sample.tensor_cores ? 3 : 2;
  std::string command = "emulate samples/" + sample.name + ".tile --target " + c.target + " --dims " + c.shape.dims +
                        " --sms " + std::to_string(c.shape.sms) + " --schedules " + std::to_string(schedules) +
                        " --seed " + std::to_string(c.seed);
  SCOPED_TRACE("tilec " + command);
  CommandResult r = run_command(tilec(command));
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  // The schedules the run must report, for every kernel.
  std::vector<std::string> expected_schedules = {"eager", "lazy"};
  for (int i = 2; i < schedules; ++i) expected_schedules.push_back("random (seed " + std::to_string(c.seed + i - 2) + ")");
  std::set<std::pair<std::string, std::string>> expected;
  for (const std::string& kernel : kernels)
    for (const std::string& schedule : expected_schedules) expected.insert({kernel, schedule});

  // `kernel K [DIMS] TARGET, schedule S: RESULTS, T s`; RESULTS is `OUT ok (...)` per output.
  std::regex report(R"(kernel ([A-Za-z_][A-Za-z_0-9]*) \[([^\]]*)\] (\S+), schedule ([^:]+): (.*), [0-9.]+ s)");
  std::regex ok_output(R"(([A-Za-z_][A-Za-z_0-9]*) ok \(max abs error [^)]*\)(, )?)");
  std::regex scalars_line(R"(kernel [A-Za-z_][A-Za-z_0-9]*: scalars .*)");
  std::map<std::string, long> dims = parse_dims(c.shape.dims);
  std::set<std::pair<std::string, std::string>> seen;
  size_t report_lines = 0;
  std::istringstream lines(r.out);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (!line.empty()) last = line;
    if (line.rfind("kernel ", 0) != 0) continue;
    if (std::regex_match(line, scalars_line)) continue;  // the values given to scalar parameters
    ++report_lines;
    std::smatch m;
    if (!std::regex_match(line, m, report)) {
      ADD_FAILURE() << "unexpected report line: " << line;
      continue;
    }
    EXPECT_EQ(m[3].str(), c.target) << line;
    std::map<std::string, long> reported = parse_dims(m[2].str());
    for (const auto& [name, extent] : dims)
      if (reported.count(name)) {
        EXPECT_EQ(reported[name], extent) << line;
      }
    std::string results = m[5].str();
    EXPECT_NE(results, "no outputs") << line;
    EXPECT_TRUE(std::regex_replace(results, ok_output, "").empty()) << "an output is not ok: " << line;
    EXPECT_TRUE(seen.insert({m[1].str(), m[4].str()}).second) << "reported twice: " << line;
  }
  EXPECT_EQ(report_lines, kernels.size() * expected_schedules.size()) << r.out;
  EXPECT_EQ(seen, expected) << r.out;
  EXPECT_EQ(last, "ok") << r.out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.shape.sample + "_" + info.param.target + "_" + info.param.shape.name;
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleSweep, ::testing::ValuesIn(all_cases()), case_name);

// Every samples/*.tile is in the sweep, with at least four shapes.
TEST(SampleSweepCoverage, EverySampleHasAtLeastFourShapes) {
  std::map<std::string, int> shapes;
  for (const Shape& shape : all_shapes()) ++shapes[shape.sample];
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir() / "samples"))
    if (entry.path().extension() == ".tile") on_disk.insert(entry.path().stem().string());
  ASSERT_FALSE(on_disk.empty());
  for (const std::string& name : on_disk) {
    EXPECT_GE(shapes[name], 4) << "samples/" << name << ".tile";
    bool described = false;
    for (const Sample& sample : samples()) described |= sample.name == name;
    EXPECT_TRUE(described) << "samples/" << name << ".tile is not in samples()";
  }
  for (const auto& [name, count] : shapes) EXPECT_TRUE(on_disk.count(name)) << name << " is not in samples/";
}

}  // namespace
}  // namespace tilec::testing
