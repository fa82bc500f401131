// tests/emulate/samples_emulate_test.cpp — the sample sweep: every samples/*.tile on both
// targets, in several shapes, under several schedules, through `tilec emulate`; every output
// of every schedule must match the interpreter.
//
// 1. The samples and shapes are data, tests/emulate/sample_sweep.json, which bench/gpu/gpu_check.py
//    runs on a GPU too. A shape names what it exercises (ragged extents, one k-step, fewer
//    k-steps than stages, several persistent rounds per CTA, ...). Before running, the test
//    checks that claim against the tile sizes the .tile declares (its `const` lines), so a shape
//    that stops meaning what its name says — a sample's BK or STAGES changed — fails instead of
//    testing less.
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
// Rows TMA cannot address (padded copies) are emulate_cli_test's UnalignedRowsGoThroughPaddedCopies.
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

#include <nlohmann/json.hpp>

#include "emulate_test_support.h"

namespace tilec::testing {
namespace {

// --- the samples and their shapes: tests/emulate/sample_sweep.json ---------------------------------

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

// What a shape claims about itself (sample_sweep.json explains each).
enum class Claim { ragged, one_tile, sub_tile, multi_tile, one_step, fewer_steps_than_stages, many_steps, rounds };

struct Shape {
  std::string sample;
  std::string name;
  std::string dims;  // --dims
  int sms;
  std::vector<Claim> claims;
};

struct Sweep {
  std::vector<Sample> samples;
  std::vector<Shape> shapes;  // in the file's order, each group sample-major
};

Claim claim_named(const std::string& name) {
  static const std::map<std::string, Claim> claims = {
      {"ragged", Claim::ragged}, {"one_tile", Claim::one_tile}, {"sub_tile", Claim::sub_tile},
      {"multi_tile", Claim::multi_tile}, {"one_step", Claim::one_step},
      {"fewer_steps_than_stages", Claim::fewer_steps_than_stages}, {"many_steps", Claim::many_steps},
      {"rounds", Claim::rounds}};
  auto it = claims.find(name);
  if (it == claims.end()) throw std::runtime_error("sample_sweep.json: unknown claim '" + name + "'");
  return it->second;
}

// Reads sample_sweep.json (whole-line // comments allowed); throws on a malformed file, which
// fails every test that reads it.
Sweep read_sweep() {
  using nlohmann::json;
  const std::string text = read_file(source_dir() / "tests" / "emulate" / "sample_sweep.json");
  const json file = json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  Sweep sweep;
  for (const json& entry : file.at("samples")) {
    Sample sample;
    sample.name = entry.at("name").get<std::string>();
    sample.tensor_cores = entry.value("tensor_cores", false);
    sample.persistent = entry.value("persistent", false);
    for (const json& axis : entry.at("grid")) sample.grid.emplace_back(axis.at(0).get<std::string>(), axis.at(1).get<std::string>());
    if (entry.contains("steps")) {
      sample.steps = entry.at("steps").at(0).get<std::string>();
      sample.step = entry.at("steps").at(1).get<std::string>();
    }
    sweep.samples.push_back(sample);
  }
  const json& groups = file.at("groups");
  auto shapes_of = [&](const json& group) -> json {
    if (!group.contains("like")) return group.at("shapes");
    const std::string like = group.at("like").get<std::string>();
    const json except = group.value("except", json::array());
    for (const json& other : groups)
      if (other.contains("shapes") && std::count(other.at("samples").begin(), other.at("samples").end(), like)) {
        json kept = json::array();
        for (const json& shape : other.at("shapes"))
          if (!std::count(except.begin(), except.end(), shape.at("name"))) kept.push_back(shape);
        return kept;
      }
    throw std::runtime_error("sample_sweep.json: no group with shapes holds '" + like + "'");
  };
  for (const json& group : groups) {
    const json shapes = shapes_of(group);
    for (const json& sample : group.at("samples"))
      for (const json& entry : shapes) {
        Shape shape{sample.get<std::string>(), entry.at("name").get<std::string>(), entry.at("dims").get<std::string>(),
                    entry.at("sms").get<int>(), {}};
        for (const json& claim : entry.at("claims")) shape.claims.push_back(claim_named(claim.get<std::string>()));
        sweep.shapes.push_back(shape);
      }
  }
  return sweep;
}

const Sweep& sweep() {
  static const Sweep read = read_sweep();
  return read;
}

const std::vector<Sample>& samples() { return sweep().samples; }
const std::vector<Shape>& all_shapes() { return sweep().shapes; }

const Sample& sample_named(const std::string& name) {
  for (const Sample& sample : samples())
    if (sample.name == name) return sample;
  throw std::logic_error("no sample " + name);
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
  EXPECT_EQ(sample.tensor_cores, source.find("mma(") != std::string::npos) << "sample_sweep.json is out of date";
  EXPECT_EQ(sample.persistent, source.find("grid persistent(") != std::string::npos) << "sample_sweep.json is out of date";
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
    EXPECT_TRUE(described) << "samples/" << name << ".tile is not in sample_sweep.json's samples";
  }
  for (const auto& [name, count] : shapes) EXPECT_TRUE(on_disk.count(name)) << name << " is not in samples/";
}

}  // namespace
}  // namespace tilec::testing
