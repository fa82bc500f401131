// ir/fold.h — integer constant folding, written once for the front end, fold-constants and
// persistent-tiles.
//
// Integers are 64-bit and a fold never changes what the program computes: an operation that
// would overflow, divide by zero, or meet a case whose run-time result is not the folded one
// is not folded (nullopt), and the op stays for run time (or, in the front end, becomes an
// error the user sees).
#pragma once

#include <cstdint>
#include <optional>

#include "ir/op_table.h"

namespace tilec {

class Value;

// `a kind b` for kind add, sub, mul, div, rem, cdiv, max, min, and, or, xor, shl or shr; nullopt
// for any other kind and where the result is not representable or not defined. div and rem
// truncate toward zero (C++ and PTX); cdiv folds for a >= 0 and b > 0 only, the cases its
// lowering defines; shl only where no bit is shifted out, shr for amounts 0..63.
std::optional<int64_t> fold_integer(OpKind kind, int64_t a, int64_t b);

// Whether fold_integer has a rule for `kind`: every binary elementwise op that takes integers,
// except cmp (its i1 result is not folded).
bool folds_integer(OpKind kind);

// The value of an integer or index `constant` op's result; nullopt for anything else.
std::optional<int64_t> constant_integer(const Value* value);

}  // namespace tilec
