// frontend/constant_value.h — compile-time numbers of the .tile language.
//
// `const` declarations, numbers, and arithmetic on them are folded at compile time with these
// rules: integers are 64-bit and overflow or division by zero is an error; an operation with a
// float operand is computed in double; comparisons are not constants.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "ir/op_table.h"

namespace tilec::frontend {

struct ConstantValue {
  bool is_float = false;
  int64_t integer = 0;
  double floating = 0;
  double as_double() const { return is_float ? floating : static_cast<double>(integer); }
};

// A float as a message shows it: a whole number keeps a decimal point (1.0, not 1, which would
// read as the integer the message asks for).
std::string float_text(double value);

// The op a binary operator stands for, where one op does: + - * / % & | ^ << >> (not **, the
// comparisons, && or ||, which lower otherwise). The front end's lowering and folding both read it.
std::optional<OpKind> binary_operator_op(std::string_view op);

// Folds `a op b` (op one of + - * / % and comparisons); on failure returns nullopt and sets
// `error` to a message for the user.
std::optional<ConstantValue> fold_constants(const std::string& op, ConstantValue a, ConstantValue b,
                                            std::string& error);

// Reads all of `text` as an integer literal: decimal digits, or 0x/0X and hex digits (0xFF),
// with an optional leading '-'. errc::result_out_of_range past i64, errc::invalid_argument when
// `text` is not one.
std::errc parse_integer_literal(std::string_view text, int64_t& out);

// Reads the VALUE of -D NAME=VALUE: an integer (decimal or 0x hex), else a finite float; nullopt
// when neither, with `error` saying why (not a number, an integer too wide for i64, a float out
// of range).
std::optional<ConstantValue> parse_constant_value(const std::string& text, std::string& error);

}  // namespace tilec::frontend
