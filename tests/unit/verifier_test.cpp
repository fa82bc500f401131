// tests/unit/verifier_test.cpp — the verifier accepts valid IR and rejects each invariant it
// lists (ir/verifier.cpp), with a message naming what broke.
#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../verify_text.h"
#include "test_support.h"

namespace tilec::testing {
namespace {

using ::testing::HasSubstr;

// A valid kernel; each case replaces one line (marked by its text) to break one invariant.
constexpr const char* kValid = R"(module
kernel @k(%A: tensor<M, K, bf16>, %C: tensor<M, N, f32>) {
  %M = dim %A {axis = 0} : index
  %N = dim %C {axis = 1} : index
  %m, %n = grid_ids %M, %N {schedule = "tiles"} : index, index
  %c0 = constant {value = 0} : index
  %c1 = constant {value = 1} : index
  %acc0 = zeros : tile<64x64xf32, reg>
  %acc = for %c0, %M, %c1, %acc0 {pipeline = 2} : tile<64x64xf32, reg> {
    ^(%k: index, %x: tile<64x64xf32, reg>):
    %a = tma_load %A, %m, %k {tileas.schedule.constraint.gid = 1} : tile<64x32xbf16, smem>
    %b = tma_load %A, %k, %n : tile<32x64xbf16, smem>
    %y = mma %a, %b, %x : tile<64x64xf32, reg>
    yield %y
  }
  %r = reduce_max %acc {axis = 1} : tile<64x1xf32, reg>
  %s = sub %acc, %r : tile<64x64xf32, reg>
  %p = cmp %m, %n {predicate = "lt"} : i1
  %out = if %p : tile<64x64xf32, reg> {
    yield %s
  } {
    yield %acc
  }
  store %C, %m, %n, %out
  return
}
)";

TEST(Verifier, AcceptsValidIr) { EXPECT_EQ(verify_text(kValid), ""); }

// An op's stage is one of its loop's (stage = 2^63 - 1 in a 2-stage loop overflowed the depth of
// the pipes materialize-schedule made: a hunt's IR text).
TEST(Verifier, AnOpsStageIsOneOfItsLoops) {
  const std::string scheduled = replace_once(kValid, "{pipeline = 2}", "{pipeline = 2, stages = 2}");
  EXPECT_EQ(verify_text(replace_once(scheduled, "%y = mma %a, %b, %x", "%y = mma %a, %b, %x {stage = 1}")), "");
  EXPECT_THAT(verify_text(replace_once(scheduled, "%y = mma %a, %b, %x", "%y = mma %a, %b, %x {stage = 5}")),
              HasSubstr("'mma': attribute 'stage' is 5, but its loop's schedule has 2 stages (0 to 1)"));
}

// A masked store's mask (the operand before its tile) may be an i1 scalar.
TEST(Verifier, AcceptsAMaskedStore) {
  EXPECT_EQ(verify_text(replace_once(kValid, "store %C, %m, %n, %out", "store %C, %m, %n, %p, %out {masked}")), "");
}

struct Broken {
  const char* invariant;
  const char* from;
  const char* to;
  const char* message;
};

class VerifierRejects : public ::testing::TestWithParam<Broken> {};

TEST_P(VerifierRejects, EachInvariant) {
  const Broken& b = GetParam();
  std::string errors = verify_text(replace_once(kValid, b.from, b.to));
  EXPECT_THAT(errors, HasSubstr(b.message)) << b.invariant;
}

INSTANTIATE_TEST_SUITE_P(
    Invariants, VerifierRejects,
    ::testing::Values(
        // 1. structure and arity
        Broken{"operand_count", "%s = sub %acc, %r", "%s = sub %acc", "'sub': has 1 operands, expected 2"},
        Broken{"result_count", "store %C, %m, %n, %out", "%z = store %C, %m, %n, %out : index", "'store': has 1 results, expected 0"},
        Broken{"duplicate_kernel", "  return\n}\n", "  return\n}\nkernel @k() {\n  return\n}\n", "kernel @k is defined twice"},
        Broken{"sort_descending", "%s = sub %acc, %r", "%s = sort %acc {axis = 1, descending = 2}",
               "attribute 'descending' must be 0 or 1"},
        Broken{"sort_axis", "%s = sub %acc, %r", "%s = sort %acc {axis = 2, descending = 0}", "needs an 'axis' within the tile's rank"},
        Broken{"randint_float", "%s = sub %acc, %r", "%s = randint %acc, %r",
               "'randint': takes integer operands, not tile<64x64xf32, reg> and tile<64x1xf32, reg>"},
        Broken{"randint_result", "%p = cmp %m, %n {predicate = \"lt\"} : i1", "%p = randint %m, %n : i1",
               "'randint': result must be u32, not i1"},
        // A grid's schedule is tiles or persistent ("tile" ran as tiles: a hunt's IR text).
        Broken{"grid_schedule", "{schedule = \"tiles\"}", "{schedule = \"tile\"}",
               "attribute 'schedule' must be \"tiles\" or \"persistent\", not \"tile\""},
        // A misspelling of an attribute tilec reads ({acumulate} on a store made it overwrite).
        Broken{"misspelled_attribute", "{predicate = \"lt\"} : i1", "{predicat = \"lt\"} : i1",
               "unknown attribute 'predicat'; did you mean 'predicate'?"},
        Broken{"stages_limit", "{pipeline = 2}", "{pipeline = 2, stages = 9223372036854775807}",
               "attribute 'stages' is 9223372036854775807; a schedule has at most 1024"},
        // 2. terminators
        Broken{"missing_return", "  store %C, %m, %n, %out\n  return\n", "  store %C, %m, %n, %out\n", "its region must end with 'return'"},
        Broken{"terminator_inside", "    yield %y\n  }", "    yield %y\n    yield %y\n  }", "a terminator must be the last op"},
        // 3. dominance
        Broken{"value_escapes_region", "%r = reduce_max %acc", "%r = reduce_max %y", "does not dominate"},
        // 4. types
        Broken{"for_bounds", "%acc = for %c0, %M, %c1, %acc0", "%acc = for %c0, %A, %c1, %acc0", "bounds and step must be index values"},
        Broken{"if_condition", "%out = if %p", "%out = if %m", "the condition must be i1"},
        Broken{"yield_type", "    yield %acc\n", "    yield %r\n", "yields tile<64x1xf32, reg> for a result of type"},
        Broken{"broadcast", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%s = sub %acc, %m : tile<64x64xf32, reg>", "do not broadcast"},
        Broken{"reshape_count", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%q = reshape %r : tile<32x1xf32, reg>\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "'reshape': gives a tile of the same element type and count as its operand, not tile<32x1xf32, reg> from tile<64x1xf32, reg>"},
        Broken{"item_count", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%q = item %r : f32\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "'item': gives the scalar of a tile of one element, not f32 from tile<64x1xf32, reg>"},
        Broken{"reduce_shape", "%r = reduce_max %acc {axis = 1} : tile<64x1xf32, reg>", "%r = reduce_max %acc {axis = 1} : tile<1x64xf32, reg>", "result must be tile<64x1xf32, reg>"},
        Broken{"load_coordinates", "%b = tma_load %A, %k, %n :", "%b = tma_load %A, %k :", "takes 1 tile coordinates for a rank-2 tensor"},
        Broken{"tma_space", "tile<32x64xbf16, smem>", "tile<32x64xbf16, reg>", "a tma_load fills shared memory"},
        Broken{"box_extents", "%b = tma_load %A, %k, %n :", "%b = tma_load %A, %k, %n {box = [32, 32]} :", "'box' [32, 32] does not hold the tile tile<32x64xbf16, smem>"},
        Broken{"box_rank", "%b = tma_load %A, %k, %n :", "%b = tma_load %A, %k, %n {box = [1, 32, 1, 64]} :", "'box' must be an array of at most 2 positive extents"},
        Broken{"box_of_store", "store %C, %m, %n, %out", "store %C, %m, %n, %out {box = [64, 0]}", "'box' must be an array of at most 2 positive extents"},
        Broken{"accumulate_on_load", "%b = tma_load %A, %k, %n :", "%b = tma_load %A, %k, %n {accumulate} :", "'accumulate' is an attribute of store: `accumulate` (add), or `accumulate = \"max\"`, \"min\", \"and\", \"or\" or \"xor\""},
        Broken{"accumulate_value", "store %C, %m, %n, %out", "store %C, %m, %n, %out {accumulate = 1}", "'accumulate' is an attribute of store: `accumulate` (add)"},
        Broken{"accumulate_product", "store %C, %m, %n, %out", "store %C, %m, %n, %out {accumulate = \"mul\"}", "'accumulate' is an attribute of store: `accumulate` (add)"},
        Broken{"or_on_floats", "store %C, %m, %n, %out", "store %C, %m, %n, %out {accumulate = \"or\"}", "a combining store (|=) works on i32, u32 or i64 elements atomically, not f32"},
        Broken{"masked_by_a_number", "store %C, %m, %n, %out", "store %C, %m, %n, %r, %out {masked}", "the mask tile<64x1xf32, reg> must be i1, a scalar or a tile of the stored tile's rank whose shape broadcasts to tile<64x64xf32, reg>"},
        Broken{"mask_without_masked", "store %C, %m, %n, %out", "store %C, %m, %n, %p, %out", "takes 3 tile coordinates for a rank-2 tensor"},
        Broken{"masked_value", "store %C, %m, %n, %out", "store %C, %m, %n, %p, %out {masked = 1}", "'masked' is a unit attribute of store"},
        Broken{"mma_shapes", "%y = mma %a, %b, %x", "%y = mma %a, %a, %x", "do not form a matrix product"},
        Broken{"grid_types", "%m, %n = grid_ids %M, %N", "%m, %n = grid_ids %M, %A", "grid extents must be index values"},
        Broken{"dim_axis", "%N = dim %C {axis = 1}", "%N = dim %C {axis = 2}", "needs an 'axis' within the tensor's rank"},
        Broken{"rem_on_floats", "%s = sub %acc, %r", "%s = rem %acc, %r", "'rem': takes integer operands"},
        Broken{"tanh_on_index", "%p = cmp %m, %n {predicate = \"lt\"} : i1", "%t = tanh %m : index\n  %p = cmp %m, %n {predicate = \"lt\"} : i1", "'tanh': takes floating-point operands"},
        Broken{"and_on_floats", "%s = sub %acc, %r", "%s = and %acc, %r", "'and': takes integer or i1 operands"},
        Broken{"transpose_shape", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%t = transpose %r : tile<64x1xf32, reg>\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "result must be tile<1x64xf32, reg>"},
        Broken{"transpose_dims_not_a_permutation", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%t = transpose %r {dims = [0, 0]} : tile<1x64xf32, reg>\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "'dims' must be a permutation of the tile's dimensions"},
        Broken{"interleave_shape", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%t = interleave %r, %r {axis = 1} : tile<128x1xf32, reg>\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "result must be tile<64x2xf32, reg>"},
        Broken{"interleave_types", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%t = interleave %r, %acc {axis = 1} : tile<64x2xf32, reg>\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "interleaves tiles of one type"},
        Broken{"bitcast_width", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%t = bitcast %r : tile<64x1xi16, reg>\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "'bitcast': reads f32 as i16: bitcast takes element types of the same width (not i1 or index)"},
        Broken{"bitcast_shape", "%s = sub %acc, %r : tile<64x64xf32, reg>", "%t = bitcast %r : tile<1x64xi32, reg>\n  %s = sub %acc, %r : tile<64x64xf32, reg>", "'bitcast': changes only the element type"},
        Broken{"reduce_min_shape", "%r = reduce_max %acc {axis = 1} : tile<64x1xf32, reg>", "%r = reduce_min %acc {axis = 1} : tile<1x64xf32, reg>", "result must be tile<64x1xf32, reg>"},
        Broken{"constant_kind", "%c1 = constant {value = 1} : index", "%c1 = constant {value = 1.0} : index", "'value' (float) does not match"},
        // 5. placement
        Broken{"grid_twice", "%c0 = constant {value = 0} : index", "%c0 = constant {value = 0} : index\n  %g = grid_ids %M {schedule = \"tiles\"} : index", "at most one grid_ids"},
        Broken{"tile_before_grid", "  %m, %n = grid_ids", "  %early = zeros : tile<4xf32, reg>\n  %m, %n = grid_ids", "only pure scalar ops may come before grid_ids"},
        Broken{"assert_after_grid", "  %c0 = constant {value = 0} : index", "  %c0 = constant {value = 0} : index\n  %ok = cmp %M, %c0 {predicate = \"gt\"} : i1\n  assert %ok", "an assert comes before grid_ids"},
        Broken{"assert_of_index", "  %m, %n = grid_ids", "  assert %M\n  %m, %n = grid_ids", "its condition is an i1 scalar, not index"},
        Broken{"assert_text", "  %m, %n = grid_ids", "  %ok = cmp %M, %N {predicate = \"gt\"} : i1\n  assert %ok {text = 3}\n  %m, %n = grid_ids", "'text' is a string"},
        // 6. attributes
        Broken{"gid_negative", "tileas.schedule.constraint.gid = 1", "tileas.schedule.constraint.gid = -1", "must be >= 0"},
        Broken{"max_depth_zero", "tileas.schedule.constraint.gid = 1", "tileas.schedule.constraint.max_depth = 0", "'tileas.schedule.constraint.max_depth' must be >= 1"},
        Broken{"latency_type", "tileas.schedule.constraint.gid = 1", "latency = \"x\"", "attribute 'latency' must be an integer, not string"},
        Broken{"latency_huge", "tileas.schedule.constraint.gid = 1", "latency = 2147483648", "attribute 'latency' is 2147483648; at most 65536 cycles"},
        Broken{"resources_short", "tileas.schedule.constraint.gid = 1", "resources = [[\"tma\", 0, 8]]", "attribute 'resources' must be an array of [\"slot\", at, for, occupancy]"},
        Broken{"resources_kind", "tileas.schedule.constraint.gid = 1", "resources = [\"tma\"]", "got \"tma\""},
        Broken{"resources_zero", "tileas.schedule.constraint.gid = 1", "resources = [[\"tma\", 0, 0, 1]]", "got [\"tma\", 0, 0, 1]"},
        Broken{"force_serial_value", "{pipeline = 2}", "{pipeline = 2, tileas.schedule.constraint.force_serial_execution = 1}", "takes no value"},
        Broken{"pipeline_zero", "{pipeline = 2}", "{pipeline = 0}", "'pipeline' must be >= 1"},
        Broken{"leader_type", "tileas.schedule.constraint.gid = 1", "tileas.schedule.constraint.leader_gid = \"zero\"", "must be an integer, not string"},
        Broken{"ii_zero", "{pipeline = 2}", "{pipeline = 2, ii = 0}", "'ii' must be >= 1"},
        Broken{"cycle_negative", "{pipeline = 2}", "{pipeline = 2, cycle = -3}", "'cycle' must be >= 0"},
        Broken{"generator_name", "{pipeline = 2}", "{pipeline = 2, generator = \"greedy\"}", "'generator' must be"},
        Broken{"predicate", "{predicate = \"lt\"}", "{predicate = \"less\"}", "'predicate' must be one of"}),
    [](const auto& info) { return std::string(info.param.invariant); });

// CUDA's atomicAdd adds f32, f16, bf16, i32, u32 and (unsigned) 64-bit integers: an
// accumulating store of any other element type is refused in IR text too.
TEST(Verifier, AnAccumulatingStoreAddsOnlyWhatAtomicAddTakes) {
  constexpr const char* kAdd = R"(module
kernel @k(%X: tensor<8, ELEMENT>) {
  %c0 = constant {value = 0} : index
  %one = constant {value = 1} : index
  %i = grid_ids %one : index
  %x = load %X, %c0 : tile<8xELEMENT, reg>
  store %X, %c0, %x {accumulate}
  return
}
)";
  for (const auto& [attribute, spelling] : {std::pair{"{accumulate}", "+="}, {"{accumulate = \"max\"}", "max="},
                                            {"{accumulate = \"min\"}", "min="}}) {
    const std::string text = replace_once(kAdd, "{accumulate}", attribute);
    for (const char* element : {"f32", "f16", "bf16", "i32", "u32", "i64"})
      EXPECT_EQ(verify_text(replace_once(replace_once(text, "ELEMENT", element), "ELEMENT", element)), "") << element;
    for (const char* element : {"i8", "u8", "i16", "u16", "f8e4m3"})
      EXPECT_THAT(verify_text(replace_once(replace_once(text, "ELEMENT", element), "ELEMENT", element)),
                  HasSubstr(fmt::format("a combining store ({}) works on f32, f16, bf16, i32, u32 or i64 elements "
                                        "atomically, not {}", spelling, element)));
  }
  // The bitwise combines name their own types, for floats and narrow integers alike.
  for (const auto& [attribute, spelling] : {std::pair{"{accumulate = \"and\"}", "&="}, {"{accumulate = \"or\"}", "|="},
                                            {"{accumulate = \"xor\"}", "^="}}) {
    const std::string text = replace_once(kAdd, "{accumulate}", attribute);
    for (const char* element : {"i32", "u32", "i64"})
      EXPECT_EQ(verify_text(replace_once(replace_once(text, "ELEMENT", element), "ELEMENT", element)), "") << element;
    for (const char* element : {"i8", "u16", "f32"})
      EXPECT_THAT(verify_text(replace_once(replace_once(text, "ELEMENT", element), "ELEMENT", element)),
                  HasSubstr(fmt::format("a combining store ({}) works on i32, u32 or i64 elements atomically, not {}",
                                        spelling, element)));
  }
}

TEST(Verifier, AssertsMustSitInTheKernelBody) {
  std::string text = replace_once(kValid, "    yield %y\n", "    %t = cmp %k, %c1 {predicate = \"lt\"} : i1\n    assert %t\n    yield %y\n");
  EXPECT_THAT(verify_text(text), HasSubstr("assert must sit directly in a kernel body"));
  std::string valid = replace_once(kValid, "  %m, %n = grid_ids", "  %ok = cmp %M, %N {predicate = \"gt\"} : i1\n  assert %ok {text = \"M > N\"}\n  %m, %n = grid_ids");
  EXPECT_EQ(verify_text(valid), "");
  // The launcher checks asserts before it sizes the grid: a kernel without one has no place for them.
  const char* no_grid = R"(module
kernel @k(%A: tensor<M, K, bf16>) {
  %M = dim %A {axis = 0} : index
  %c0 = constant {value = 0} : index
  %ok = cmp %M, %c0 {predicate = "gt"} : i1
  assert %ok
  return
})";
  EXPECT_THAT(verify_text(no_grid), HasSubstr("an assert needs the kernel's grid_ids after it"));
}

TEST(Verifier, GridIdsMustSitInTheKernelBody) {
  std::string text = replace_once(kValid, "    yield %y\n", "    %g = grid_ids %M {schedule = \"tiles\"} : index\n    yield %y\n");
  EXPECT_THAT(verify_text(text), HasSubstr("grid_ids must sit directly in a kernel body"));
}

}  // namespace
}  // namespace tilec::testing
