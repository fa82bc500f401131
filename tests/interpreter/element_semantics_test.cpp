// tests/interpreter/element_semantics_test.cpp — the interpreter's table of elementwise meanings
// (runtime/interpreter/element_semantics.h) covers the op table: every elementwise op but cmp,
// select and cast has one row, with a function for each operand kind its traits allow and the
// arity its operand count says, and none for the kinds they exclude; and the IR's integer folder
// (ir/fold.h) gives what this table computes wherever it folds; randint's Philox4x32-10 gives the
// known answers its authors publish.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ir/fold.h"
#include "runtime/interpreter/element_semantics.h"

namespace tilec::runtime {
namespace {

TEST(InterpreterElementSemantics, EveryElementwiseOpHasItsRow) {
  for (const OpInfo& info : all_ops()) {
    const bool by_code = info.kind == OpKind::cmp || info.kind == OpKind::select || info.kind == OpKind::cast ||
                          info.kind == OpKind::bitcast;
    if (!info.has(kElementwise) || by_code) {
      EXPECT_THROW(element_semantics(info.kind), std::logic_error) << info.name;
      continue;
    }
    const ElementSemantics& row = element_semantics(info.kind);
    const bool floats = info.takes_operands(true);
    const bool integers = info.takes_operands(false);  // masks are integers 0 and 1
    const int arity = info.min_operands;
    EXPECT_EQ(row.f32_unary != nullptr, floats && arity == 1) << info.name;
    EXPECT_EQ(row.f32_binary != nullptr, floats && arity == 2) << info.name;
    EXPECT_EQ(row.f32_ternary != nullptr, floats && arity == 3) << info.name;
    EXPECT_EQ(row.integer_unary != nullptr, integers && arity == 1) << info.name;
    EXPECT_EQ(row.integer_binary != nullptr, integers && arity == 2) << info.name;
  }
  for (const ElementSemantics& row : all_element_semantics())
    EXPECT_EQ(&element_semantics(row.kind), &row) << op_info(row.kind).name << " has two rows";
}

// The known-answer vectors of Random123 (the implementation of Salmon et al., SC 2011, in its
// tests/kat_vectors) for Philox4x32-10: counter and key all zeros, all ones, and pi's digits.
TEST(InterpreterElementSemantics, PhiloxGivesRandom123sKnownAnswers) {
  using Block = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  // randint's word: key (seed's low, high word), counter (offset's low, high word, 0, 0), the two
  // read as 64-bit two's complement (so -1 is all ones).
  EXPECT_EQ(philox_randint(0, 0), 0x6627e8d5u);
  EXPECT_EQ(philox_randint(-1, -1), philox4x32_10({0xffffffff, 0xffffffff, 0, 0}, {0xffffffff, 0xffffffff})[0]);
  EXPECT_EQ(philox_randint(int64_t{5} << 32 | 7, 9), philox4x32_10({9, 0, 0, 0}, {7, 5})[0]);
  EXPECT_EQ(static_cast<uint32_t>(element_semantics(OpKind::randint).integer_binary(3, 4)), philox_randint(3, 4));
}

// The front end and fold-constants fold through fold_integer; the interpreter runs this table. A
// fold that differs from the run-time value would change what a program computes, so wherever
// fold_integer answers (no overflow, no division by zero) it must give the row's value.
TEST(InterpreterElementSemantics, TheIntegerFolderAgreesWithTheRows) {
  constexpr int64_t lowest = std::numeric_limits<int64_t>::min(), highest = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> values = {lowest, lowest + 1, -1000003, -65536, -7, -2, -1, 0, 1, 2, 3, 7,
                                       64, 1000003, int64_t{1} << 32, highest - 1, highest};
  int folded = 0;
  for (const ElementSemantics& row : all_element_semantics()) {
    if (!row.integer_binary) continue;
    for (int64_t a : values)
      for (int64_t b : values) {
        const std::optional<int64_t> fold = fold_integer(row.kind, a, b);
        if (!fold) continue;
        ++folded;
        EXPECT_EQ(*fold, row.integer_binary(a, b)) << op_info(row.kind).name << "(" << a << ", " << b << ")";
      }
  }
  EXPECT_GT(folded, 1000);  // add, sub, mul, div, rem, cdiv, max and min fold most of these pairs
}

TEST(InterpreterElementSemantics, RowsComputeWhatDocsIrSays) {
  constexpr int64_t lowest = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(element_semantics(OpKind::add).integer_binary(std::numeric_limits<int64_t>::max(), 1), lowest);
  EXPECT_EQ(element_semantics(OpKind::neg).integer_unary(lowest), lowest);
  EXPECT_EQ(element_semantics(OpKind::div).integer_binary(7, 0), -1);
  EXPECT_EQ(element_semantics(OpKind::div).integer_binary(lowest, -1), lowest);
  EXPECT_EQ(element_semantics(OpKind::rem).integer_binary(7, 0), 7);
  EXPECT_EQ(element_semantics(OpKind::cdiv).integer_binary(7, 2), 4);
  EXPECT_EQ(element_semantics(OpKind::cdiv).integer_binary(-7, 2), -3);
  EXPECT_EQ(element_semantics(OpKind::max).f32_binary(NAN, 2.0f), 2.0f);
  EXPECT_TRUE(std::signbit(element_semantics(OpKind::min).f32_binary(0.0f, -0.0f)));
  EXPECT_EQ(element_semantics(OpKind::round).f32_unary(2.5f), 2.0f);
  EXPECT_EQ(element_semantics(OpKind::relu).integer_unary(-3), 0);
  EXPECT_EQ(element_semantics(OpKind::not_).integer_unary(0), -1);  // ~0; an i1 keeps its low bit: 1
  // Shifts by 0..63 are C++'s on int64_t; other amounts shift everything out.
  const auto shl = element_semantics(OpKind::shl).integer_binary, shr = element_semantics(OpKind::shr).integer_binary;
  EXPECT_EQ(shl(3, 4), 48);
  EXPECT_EQ(shl(1, 63), lowest);
  EXPECT_EQ(shl(1, 64), 0);
  EXPECT_EQ(shl(5, -1), 0);
  EXPECT_EQ(shr(-16, 2), -4);
  EXPECT_EQ(shr(-16, 64), -1);
  EXPECT_EQ(shr(16, -3), 0);
  EXPECT_EQ(element_semantics(OpKind::xor_).integer_binary(0b1100, 0b1010), 0b0110);
}

}  // namespace
}  // namespace tilec::runtime
