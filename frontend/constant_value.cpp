// frontend/constant_value.cpp — folding of compile-time constants (see the header).
#include "frontend/constant_value.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>

#include "ir/fold.h"

namespace tilec::frontend {

std::optional<OpKind> binary_operator_op(std::string_view op) {
  static constexpr std::pair<std::string_view, OpKind> kOperators[] = {
      {"+", OpKind::add},   {"-", OpKind::sub}, {"*", OpKind::mul},  {"/", OpKind::div},  {"%", OpKind::rem},
      {"&", OpKind::and_},  {"|", OpKind::or_}, {"^", OpKind::xor_}, {"<<", OpKind::shl}, {">>", OpKind::shr}};
  for (const auto& [text, kind] : kOperators)
    if (text == op) return kind;
  return std::nullopt;
}

namespace {

// A result that is not a finite number, as a message names it.
const char* nonfinite_text(double value) { return std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf"; }

}  // namespace

std::string float_text(double value) {
  const bool whole = std::isfinite(value) && std::abs(value) < 1e15 && value == std::trunc(value);
  return whole ? fmt::format("{:.1f}", value) : fmt::format("{}", value);
}

std::optional<ConstantValue> fold_constants(const std::string& op, ConstantValue a, ConstantValue b,
                                            std::string& error) {
  if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=" || op == "&&" || op == "||") {
    error = "comparisons and logic on constants are not supported; compare values in the kernel";
    return std::nullopt;
  }
  if (op == "**") {
    if (a.is_float || b.is_float) {
      const double r = std::pow(a.as_double(), b.as_double());
      if (!std::isfinite(r)) {
        error = fmt::format("the constant expression pow({}, {}) is {}, not a finite number", a.as_double(),
                            b.as_double(), nonfinite_text(r));
        return std::nullopt;
      }
      return ConstantValue{true, 0, r};
    }
    if (b.integer < 0) {
      error = fmt::format("{} ** {}: a negative integer exponent; write {}.0 ** {} for a float", a.integer, b.integer,
                          a.integer, b.integer);
      return std::nullopt;
    }
    // Squaring: once base * base overflows with exponent bits left, so does the result.
    int64_t r = 1, base = a.integer;
    bool overflow = false;
    for (uint64_t n = static_cast<uint64_t>(b.integer); n != 0 && !overflow; n >>= 1) {
      if (n & 1) overflow = __builtin_mul_overflow(r, base, &r);
      if (n > 1 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
    }
    if (overflow) {
      error = fmt::format("integer overflow in the constant expression {} ** {}", a.integer, b.integer);
      return std::nullopt;
    }
    return ConstantValue{false, r, 0};
  }
  if (a.is_float || b.is_float) {
    double x = a.as_double(), y = b.as_double(), r = 0;
    if (op == "+") r = x + y;
    else if (op == "-") r = x - y;
    else if (op == "*") r = x * y;
    else if (op == "/") r = x / y;
    else {
      error = fmt::format("'{}' needs integer constants", op);
      return std::nullopt;
    }
    if (!std::isfinite(r)) {  // as a -D value, a float constant is a finite number
      auto shown = [](double v) { return v < 0 ? fmt::format("({})", v) : fmt::format("{}", v); };  // -8 ** 0.5 reads as -(8 ** 0.5)
      error = fmt::format("the constant expression {} {} {} is {}, not a finite number", shown(x), op, shown(y),
                          nonfinite_text(r));
      return std::nullopt;
    }
    return ConstantValue{true, 0, r};
  }
  int64_t x = a.integer, y = b.integer;
  if ((op == "/" || op == "%") && y == 0) {
    error = "division by zero in a constant expression";
    return std::nullopt;
  }
  const std::optional<OpKind> kind = binary_operator_op(op);
  if (!kind) {
    error = fmt::format("'{}' is not an operation on integer constants (+ - * / % ** & | ^ << >>)", op);
    return std::nullopt;
  }
  if ((op == "<<" || op == ">>") && (y < 0 || y > 63)) {
    error = fmt::format("the shift {} {} {} moves by {} bits: a constant shift takes 0 to 63", x, op, y, y);
    return std::nullopt;
  }
  std::optional<int64_t> r = fold_integer(*kind, x, y);  // ir/fold.h: what the IR folds
  if (!r) {
    error = fmt::format("integer overflow in the constant expression {} {} {}", x, op, y);
    return std::nullopt;
  }
  return ConstantValue{false, *r, 0};
}

std::errc parse_integer_literal(std::string_view text, int64_t& out) {
  const bool negative = text.starts_with('-');
  std::string_view digits = text.substr(negative ? 1 : 0);
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  if (digits.empty() || digits[0] == '-' || digits[0] == '+') return std::errc::invalid_argument;
  uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ptr != digits.data() + digits.size()) return std::errc::invalid_argument;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (ec == std::errc::result_out_of_range || magnitude > limit) return std::errc::result_out_of_range;
  if (ec != std::errc()) return ec;
  out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return std::errc();
}

std::optional<ConstantValue> parse_constant_value(const std::string& given, std::string& error) {
  // A leading + is the number's sign, as a C or Python literal reads it (from_chars takes none).
  const std::string text = given.size() > 1 && given[0] == '+' && given[1] != '-' && given[1] != '+' ? given.substr(1)
                                                                                                       : given;
  ConstantValue c;
  const char* end = text.data() + text.size();
  std::errc ec = parse_integer_literal(text, c.integer);
  if (ec == std::errc()) return c;
  if (ec == std::errc::result_out_of_range) {  // all digits: an integer, too wide
    error = text[0] == '-' ? "the integer is too small (limit -2^63)" : "the integer is too large (limit 2^63 - 1)";
    return std::nullopt;
  }
  c.is_float = true;
  auto [fptr, fec] = std::from_chars(text.data(), end, c.floating);
  if (fptr == end && fec == std::errc() && std::isnan(c.floating)) {
    error = "NaN is not a constant value (write a number)";
    return std::nullopt;
  }
  if (fptr == end && (fec == std::errc::result_out_of_range || (fec == std::errc() && !std::isfinite(c.floating)))) {
    // from_chars reports underflow as out of range too: tell the two apart by the exponent's sign.
    const size_t exponent = text.find_first_of("eE");
    const bool tiny = fec == std::errc::result_out_of_range && exponent != std::string::npos &&
                      exponent + 1 < text.size() && text[exponent + 1] == '-';
    error = tiny ? "the number is too small to represent (a nonzero float constant is at least about 4.9e-324 "
                   "in magnitude; write 0 for zero)"
                 : "the number is too large (a float constant is finite, at most about 1.8e308)";
    return std::nullopt;
  }
  if (fec == std::errc() && fptr == end) return c;
  error = "the value is not a number";
  return std::nullopt;
}

}  // namespace tilec::frontend
