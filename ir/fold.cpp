// ir/fold.cpp — integer constant folding (see the header).
#include "ir/fold.h"

#include <algorithm>
#include <limits>

#include "ir/ir.h"

namespace tilec {

namespace {

using Result = std::optional<int64_t>;

// a op b by a __builtin_*_overflow, or nullopt where it overflows.
template <bool (*Op)(int64_t, int64_t, int64_t*)>
Result checked(int64_t a, int64_t b) {
  int64_t r = 0;
  if (Op(a, b, &r)) return std::nullopt;
  return r;
}
bool add(int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); }
bool sub(int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); }
bool mul(int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }

Result divide(int64_t a, int64_t b, bool remainder) {
  if (remainder && b == -1) return 0;  // INT64_MIN % -1 is 0, which fits (C++ leaves it undefined)
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
  return remainder ? a % b : a / b;
}

// One row per op the folder folds: the fold rules of the op table's integer binary ops (the
// test IntegerFolding.EveryIntegerBinaryOpHasARule holds the rows to the table).
struct FoldRule {
  OpKind kind;
  Result (*fold)(int64_t a, int64_t b);
};

constexpr FoldRule kRules[] = {
    {OpKind::add, checked<add>},
    {OpKind::sub, checked<sub>},
    {OpKind::mul, checked<mul>},
    {OpKind::div, [](int64_t a, int64_t b) { return divide(a, b, false); }},
    {OpKind::rem, [](int64_t a, int64_t b) { return divide(a, b, true); }},
    {OpKind::cdiv, [](int64_t a, int64_t b) -> Result {  // a >= 0, b > 0: no (a + b - 1) to overflow
       if (b <= 0 || a < 0) return std::nullopt;
       return a / b + (a % b != 0 ? 1 : 0);
     }},
    {OpKind::max, [](int64_t a, int64_t b) -> Result { return std::max(a, b); }},
    {OpKind::min, [](int64_t a, int64_t b) -> Result { return std::min(a, b); }},
    {OpKind::and_, [](int64_t a, int64_t b) -> Result { return a & b; }},
    {OpKind::or_, [](int64_t a, int64_t b) -> Result { return a | b; }},
    {OpKind::xor_, [](int64_t a, int64_t b) -> Result { return a ^ b; }},
    {OpKind::shl, [](int64_t a, int64_t b) -> Result {  // only where no bit is lost: the value a · 2^b
       if (b < 0 || b > 63) return std::nullopt;  // -1 << 63 is INT64_MIN; 1 << 63 loses its bit
       const int64_t shifted = static_cast<int64_t>(static_cast<uint64_t>(a) << b);
       if ((shifted >> b) != a) return std::nullopt;
       return shifted;
     }},
    {OpKind::shr, [](int64_t a, int64_t b) -> Result {
       if (b < 0 || b > 63) return std::nullopt;
       return a >> b;
     }},
    // A u32 word of its operands' type: not folded (fold_integer's value keeps the operands' type).
    {OpKind::randint, [](int64_t, int64_t) -> Result { return std::nullopt; }},
};

}  // namespace

bool folds_integer(OpKind kind) {
  for (const FoldRule& rule : kRules)
    if (rule.kind == kind) return true;
  return false;
}

std::optional<int64_t> fold_integer(OpKind kind, int64_t a, int64_t b) {
  for (const FoldRule& rule : kRules)
    if (rule.kind == kind) return rule.fold(a, b);
  return std::nullopt;
}

std::optional<int64_t> constant_integer(const Value* value) {
  const Operation* def = value->defining_op();
  if (!def || def->kind() != OpKind::constant || !is_integer(value->type().element())) return std::nullopt;
  const Attribute* attribute = def->attr("value");
  if (!attribute || !attribute->is_int()) return std::nullopt;
  return attribute->as_int();
}

}  // namespace tilec
