// ir/fold.cpp — integer constant folding (see the header).
#include "ir/fold.h"

#include <algorithm>
#include <limits>

#include "ir/ir.h"

namespace tilec {

std::optional<int64_t> fold_integer(OpKind kind, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (kind) {
    case OpKind::add: return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case OpKind::sub: return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case OpKind::mul: return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case OpKind::div:
    case OpKind::rem:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      return kind == OpKind::div ? a / b : a % b;
    case OpKind::cdiv:
      if (b <= 0 || a < 0 || __builtin_add_overflow(a, b - 1, &r)) return std::nullopt;
      return r / b;
    case OpKind::max: return std::max(a, b);
    case OpKind::min: return std::min(a, b);
    case OpKind::and_: return a & b;
    case OpKind::or_: return a | b;
    case OpKind::xor_: return a ^ b;
    case OpKind::shl: {  // only where no bit is lost: the value a · 2^b
      if (b < 0 || b > 62) return std::nullopt;
      const int64_t shifted = static_cast<int64_t>(static_cast<uint64_t>(a) << b);
      if ((shifted >> b) != a) return std::nullopt;
      return shifted;
    }
    case OpKind::shr:
      if (b < 0 || b > 63) return std::nullopt;
      return a >> b;
    default: return std::nullopt;
  }
}

std::optional<int64_t> constant_integer(const Value* value) {
  const Operation* def = value->defining_op();
  if (!def || def->kind() != OpKind::constant || !is_integer(value->type().element())) return std::nullopt;
  const Attribute* attribute = def->attr("value");
  if (!attribute || !attribute->is_int()) return std::nullopt;
  return attribute->as_int();
}

}  // namespace tilec
