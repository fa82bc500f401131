// tests/unit/ir_test.cpp — the .tir text form: exact round trips, attribute and type spellings,
// and parse errors with their locations; the op table's rows and integer folding (ir/fold.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <vector>

#include "ir/fold.h"
#include "test_support.h"

namespace tilec::testing {
namespace {

using ::testing::HasSubstr;

std::string round_trip(const std::string& text) {
  Compiled c = parse_tir(text);
  EXPECT_TRUE(c.module) << c.errors();
  return c.module ? print_module(*c.module) : "";
}

constexpr const char* kLoop = R"(// tilec IR
module {passes = ["parse"], source = "x.tile"}

kernel @k(%A: tensor<M, 64, ?, bf16>, %s: f32) {note = "a \"quoted\"\nline"} loc(1:1) {
  %M = dim %A {axis = 0} : index loc(2:3)
  %0 = constant {value = 0} : index
  %1 = constant {value = 1} : index
  %i, %j = grid_ids %M, %1 {schedule = "tiles"} : index, index
  %2 = constant {value = -1.5e-07} : f32
  %t = zeros : tile<4x8xf32, reg>
  %acc = for %0, %M, %1, %t {pipeline = 2, tileas.schedule.constraint.force_serial_execution} : tile<4x8xf32, reg> {
    ^(%k: index, %c: tile<4x8xf32, reg>):
    %3 = add %c, %2 {stage = 0, order = 1, weights = [1, 2.5, "x", [true, false]]} : tile<4x8xf32, reg>
    yield %3
  }
  %4 = cmp %i, %j {predicate = "lt"} : i1
  %5 = if %4 : tile<4x8xf32, reg> {
    yield %acc
  } {
    yield %t
  }
  return
}
)";

TEST(IrText, PrintParsePrintIsIdentical) {
  std::string once = round_trip(kLoop);
  EXPECT_EQ(round_trip(once), once);
}

TEST(IrText, AttributesKeepTheirValues) {
  Compiled c = parse_tir(kLoop);
  ASSERT_TRUE(c.module) << c.errors();
  Operation* kernel = c.module->kernels()[0].get();
  EXPECT_EQ(kernel->string_attr("note"), "a \"quoted\"\nline");
  const Type& a = kernel->region().argument(0)->type();
  EXPECT_EQ(a.to_string(), "tensor<M, 64, ?, bf16>");
  double constant = 0;
  walk(*c.module, [&](Operation& op) {
    if (op.kind() == OpKind::constant && op.result()->type() == Type::scalar(ScalarKind::f32))
      constant = op.attr("value")->as_float();
  });
  EXPECT_EQ(constant, -1.5e-07);
}

TEST(IrText, FloatsAlwaysReadBackAsFloats) {
  EXPECT_EQ(Attribute(2.0).to_string(), "2.0");
  EXPECT_EQ(Attribute(1e300).to_string(), "1e+300");
  EXPECT_EQ(Attribute(int64_t{2}).to_string(), "2");
  EXPECT_EQ(Attribute(0.1).to_string(), "0.1");
}

TEST(IrText, TypesPrintAsTheyParse) {
  for (const char* spelled : {"tile<128x64xbf16, smem>", "tile<1xf8e4m3, tmem>", "pipe<tile<64x64xf16, smem>, 4>",
                              "tensor<?, f32>", "index", "i1", "token", "mutex", "mbarrier"}) {
    std::string text = std::string("module\nkernel @k(%a: ") + spelled + ") {\n  return\n}\n";
    Compiled c = parse_tir(text);
    ASSERT_TRUE(c.module) << spelled << "\n" << c.errors();
    EXPECT_EQ(c.module->kernels()[0]->region().argument(0)->type().to_string(), spelled);
  }
}

TEST(IrText, ParseErrorsPointAtTheProblem) {
  struct Case { const char* text; const char* message; uint32_t line; uint32_t column; };
  const Case cases[] = {
      {"module\nkernel @k() {\n  %0 = frobnicate : index\n  return\n}\n", "unknown operation 'frobnicate'", 3, 8},
      {"module\nkernel @k() {\n  %0 = add %x, %x : index\n  return\n}\n", "use of undefined value %x", 3, 12},
      {"module\nkernel @k(%a: tile<4xf99, reg>) {\n  return\n}\n", "unknown element type 'f99'", 2, 22},
      {"module\nkernel @k() {\n  %0 = constant {value = 1} : index\n  %0 = constant {value = 2} : index\n  return\n}\n", "value %0 is defined twice", 4, 3},
      {"module\nkernel @k() {\n  %0, %1 = constant {value = 1} : index\n  return\n}\n", "names 2 results but gives 1 type", 3, 3},
      {"module\nkernel @k() {\n  return\n", "missing '}'", 4, 1},
  };
  for (const Case& c : cases) {
    Compiled parsed = parse_tir(c.text);
    EXPECT_FALSE(parsed.module) << c.text;
    ASSERT_EQ(parsed.diagnostics->error_count(), 1) << c.text;
    const Diagnostic& d = parsed.diagnostics->diagnostics()[0];
    EXPECT_THAT(d.message, HasSubstr(c.message));
    EXPECT_EQ(d.location.line, c.line) << c.message;
    EXPECT_EQ(d.location.column, c.column) << c.message;
  }
}

TEST(IrText, EmptyAttributeDictionariesParse) {
  Compiled c = parse_tir("module {}\nkernel @k() {} {\n  return\n}\n");
  ASSERT_TRUE(c.module) << c.errors();
  EXPECT_EQ(print_module(*c.module), "// tilec IR\nmodule\n\nkernel @k() {\n  return\n}\n");
}

TEST(IrText, NameHintsAreMadeUnique) {
  Compiled c = parse_tir("module\nkernel @k() {\n  %x = constant {value = 1} : index\n  return\n}\n");
  ASSERT_TRUE(c.module);
  Operation* kernel = c.module->kernels()[0].get();
  Builder b(&kernel->region());
  b.set_insertion_point(&kernel->region(), 1);
  b.constant_index(2)->set_name_hint("x");
  b.constant_index(3)->set_name_hint("x_1");
  std::string printed = print_module(*c.module);
  EXPECT_THAT(printed, HasSubstr("%x = constant {value = 1}"));
  EXPECT_THAT(printed, HasSubstr("%x_1 = constant {value = 2}"));
  EXPECT_THAT(printed, HasSubstr("%x_1_1 = constant {value = 3}"));
  EXPECT_EQ(round_trip(printed), printed);
}

TEST(OpTable, EveryRowIsConsistent) {
  for (const OpInfo& info : all_ops()) {
    EXPECT_EQ(parse_op_kind(info.name), info.kind) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_TRUE(info.max_operands < 0 || info.max_operands >= info.min_operands) << info.name;
  }
}

// An op that issues on no hardware pipe is structure (a region or a terminator) or
// synchronization (kSync, run by the interpreter's sync executor and left alone by insert-sync's
// events): a new protocol op without the trait fails here.
TEST(OpTable, OpsOnNoPipeAreStructureOrSynchronization) {
  for (const OpInfo& info : all_ops()) {
    const bool structure = info.regions > 0 || info.has(kTerminator);
    if (info.pipe == Pipe::none) {
      EXPECT_TRUE(structure || info.has(kSync)) << info.name;
    }
    if (info.has(kSync)) {
      EXPECT_FALSE(structure) << info.name;
    }
  }
  EXPECT_TRUE(op_info(OpKind::tma_load_async).has(kSync));  // on the TMA pipe, into a stage buffer
  EXPECT_FALSE(op_info(OpKind::tma_load).has(kSync));
  EXPECT_FALSE(op_info(OpKind::warp_specialize).has(kSync));
}

// The tensor-operand column: exactly the ops that read or write global memory name one, and it
// is an operand every such op has.
TEST(OpTable, MemoryOpsNameTheirTensorOperand) {
  for (const OpInfo& info : all_ops()) {
    const bool memory = info.has(kReadsMemory) || info.has(kWritesMemory);
    EXPECT_EQ(memory, info.tensor_operand >= 0) << info.name;
    if (memory) {
      EXPECT_LT(info.tensor_operand, info.min_operands) << info.name;
    }
  }
}

// tensor_access gives each memory op's tensor and direction, the TMA copy into a stage buffer
// included (its tensor is operand 2), and nothing for other ops.
TEST(OpTable, TensorAccessNamesTheTensorAndTheDirection) {
  Compiled c = parse_tir(R"(module
kernel @k(%A: tensor<M, K, bf16>, %C: tensor<M, K, bf16>) {
  %M = dim %A {axis = 0} : index
  %m = grid_ids %M {schedule = "tiles"} : index
  %full = mbarrier_create {arrivals = 1, count = 2} : mbarrier
  %empty = mbarrier_create {arrivals = 1, count = 2} : mbarrier
  %buffer = stage_buffer %full, %empty : pipe<tile<64x32xbf16, smem>, 2>
  %c0 = constant {value = 0} : index
  tma_load_async %buffer, %c0, %A, %m, %c0
  %t = load %C, %m, %c0 : tile<64x32xbf16, reg>
  store %C, %m, %c0, %t
  return
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::string> accesses;
  walk(*c.module, [&](Operation& op) {
    if (auto access = tensor_access(op))
      accesses.push_back(fmt::format("{} {}{}{}", op.name(), access->tensor->name_hint(), access->reads ? " reads" : "",
                                     access->writes ? " writes" : ""));
  });
  EXPECT_EQ(accesses, (std::vector<std::string>{"tma_load_async A reads", "load C reads", "store C writes"}));
}

// ir/fold.h: a fold gives the run-time result or nothing.
TEST(IntegerFolding, FoldsWhatRunTimeComputesAndNothingElse) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(fold_integer(OpKind::add, 2, 3), 5);
  EXPECT_EQ(fold_integer(OpKind::add, kMax, 1), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::sub, kMin, 1), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::mul, int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::mul, -4, 5), -20);
  // div and rem truncate toward zero, as C++ and PTX do.
  EXPECT_EQ(fold_integer(OpKind::div, 7, -2), -3);
  EXPECT_EQ(fold_integer(OpKind::div, -7, 2), -3);
  EXPECT_EQ(fold_integer(OpKind::rem, -7, 2), -1);
  EXPECT_EQ(fold_integer(OpKind::div, 7, 0), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::rem, 7, 0), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::div, kMin, -1), std::nullopt);
  // INT64_MIN % -1 is 0 at run time (rem_i64), and 0 fits: a constant `B % -1` was called an
  // overflow (found by a helper writing wrong programs).
  EXPECT_EQ(fold_integer(OpKind::rem, kMin, -1), 0);
  EXPECT_EQ(fold_integer(OpKind::cdiv, 7, 2), 4);
  EXPECT_EQ(fold_integer(OpKind::cdiv, 0, 3), 0);
  EXPECT_EQ(fold_integer(OpKind::cdiv, -1, 2), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::cdiv, 1, 0), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::cdiv, kMax, 2), int64_t{1} << 62);  // run time's a / b + 1: no a + b - 1 overflows
  EXPECT_EQ(fold_integer(OpKind::max, -1, 4), 4);
  EXPECT_EQ(fold_integer(OpKind::min, -1, 4), -1);
  EXPECT_EQ(fold_integer(OpKind::exp, 1, 1), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::cmp, 1, 1), std::nullopt);
  // A shift by 63 keeps its bits only for 0 and -1 (-1 << 63 is the sign bit, as language.md says;
  // a docs audit found it refused).
  EXPECT_EQ(fold_integer(OpKind::shl, -1, 63), kMin);
  EXPECT_EQ(fold_integer(OpKind::shl, 0, 63), 0);
  EXPECT_EQ(fold_integer(OpKind::shl, 1, 63), std::nullopt);
  EXPECT_EQ(fold_integer(OpKind::shl, 1, 64), std::nullopt);
}

// The folder's rules cover the op table: a new integer binary op without a rule fails here.
TEST(IntegerFolding, EveryIntegerBinaryOpHasARule) {
  for (const OpInfo& info : all_ops()) {
    const bool integer_binary = info.has(kElementwise) && info.min_operands == 2 && info.max_operands == 2 &&
                                info.takes_operands(false) && info.kind != OpKind::cmp;
    EXPECT_EQ(folds_integer(info.kind), integer_binary) << info.name;
  }
}

// The operand-kind traits in words and as a test, as the verifier, interpreter and backend read them.
TEST(OpTable, OperandKindsFollowTheTraits) {
  EXPECT_TRUE(op_info(OpKind::add).takes_operands(true));
  EXPECT_TRUE(op_info(OpKind::add).takes_operands(false));
  EXPECT_EQ(op_info(OpKind::add).operand_kinds(), "");
  EXPECT_FALSE(op_info(OpKind::exp).takes_operands(false));
  EXPECT_EQ(op_info(OpKind::exp).operand_kinds(), "floating-point");
  EXPECT_FALSE(op_info(OpKind::rem).takes_operands(true));
  EXPECT_EQ(op_info(OpKind::rem).operand_kinds(), "integer");
  EXPECT_FALSE(op_info(OpKind::xor_).takes_operands(true));
  EXPECT_TRUE(op_info(OpKind::xor_).takes_operands(false));
  EXPECT_EQ(op_info(OpKind::xor_).operand_kinds(), "integer or i1");
}

TEST(IntegerFolding, ConstantIntegerReadsIntegerConstantsOnly) {
  Compiled c = parse_tir(R"(module
kernel @k(%A: tensor<M, f32>) {
  %i = constant {value = 12} : index
  %j = constant {value = -3} : i32
  %f = constant {value = 2.0} : f32
  %M = dim %A {axis = 0} : index
  return
}
)");
  ASSERT_TRUE(c.module) << c.errors();
  std::vector<std::optional<int64_t>> values;
  walk(*c.module, [&](Operation& op) {
    if (op.num_results() == 1) values.push_back(constant_integer(op.result()));
  });
  EXPECT_EQ(values, (std::vector<std::optional<int64_t>>{12, -3, std::nullopt, std::nullopt}));
}

}  // namespace
}  // namespace tilec::testing

namespace tilec::testing {
namespace {
TEST(IrClone, ACloneIsIndependentAndPrintsTheSame) {
  Compiled c = parse_tir(kLoop);
  ASSERT_TRUE(c.module) << c.errors();
  std::unique_ptr<Module> copy = clone_module(*c.module);
  std::string original = print_module(*c.module);
  EXPECT_EQ(print_module(*copy), original);
  // Mutating the copy leaves the original alone, and the copy refers only to its own values.
  walk(*copy, [](Operation& op) { op.set_attr("touched", UnitAttr{}); });
  EXPECT_EQ(print_module(*c.module), original);
  DiagnosticEngine d;
  c.module.reset();
  EXPECT_TRUE(verify_module(*copy, d)) << d.render_all();
}
}  // namespace
}  // namespace tilec::testing
