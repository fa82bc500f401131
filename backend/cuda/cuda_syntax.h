// backend/cuda/cuda_syntax.h — how IR things are spelled in CUDA C++.
//
// Element types (`__nv_bfloat16`), literals that round-trip exactly (`0.1f`, `1LL << 40`
// spelled out), identifiers made from value name hints (sanitized, kept clear of C++ keywords,
// CUDA built-ins and the names the emitter itself uses, and made unique per scope).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ir/attributes.h"
#include "ir/types.h"

namespace tilec::cuda {

// The C++ type holding one element: float, __half, __nv_bfloat16, __nv_fp8_e4m3, int64_t, ...
std::string_view element_type(ScalarKind kind);

// A C++ expression of type element_type(kind) equal to the constant `value` (rounded to the
// element type with round-to-nearest-even).
std::string literal(const Attribute& value, ScalarKind kind);
// The C++ spelling of 0 in `kind`.
std::string zero_literal(ScalarKind kind);
// An exactly round-tripping float literal (`1.5f`, `INFINITY`, `-0.0f`).
std::string float_literal(float value);
// A decimal integer literal that is an int64_t expression (`42`, `4294967296LL`).
std::string integer_literal(int64_t value);
// `text`, in parentheses unless it is one identifier or number: an expression as an operand.
std::string grouped(const std::string& text);

// Why `prefix` cannot go in front of kernels' names (--kernel-prefix), or "" when it can: it
// must start a C++ identifier no one else owns (a letter, then letters, digits and single
// underscores; not cuda..., CU_..., tilec_..., which the toolkit and the emitter use).
std::string kernel_prefix_problem(std::string_view prefix);

// Why a kernel named `name` (its prefix included) is emitted under another name: its spelling
// (characters an identifier cannot hold, a leading '_' or digit, "__", a trailing '_' that would
// make NAME__kernel), a name CUDA C++ or tilec reserves, or else another kernel's names.
std::string kernel_rename_reason(std::string_view name);

// Hands out C++ identifiers: each name once, none reserved.
class NameTable {
 public:
  // `reserve_macros`: the header macros too (reserved_macros.inc), which a kernel's name need not
  // avoid: it is only ever part of an identifier (EOF_kernel, launch_EOF), never one itself.
  explicit NameTable(bool reserve_macros = true);
  // A fresh identifier close to `hint` (sanitized; `hint_1`, `hint_2` when taken).
  std::string unique(std::string_view hint);
  // Marks `name` as taken (a name the emitter spells by hand).
  void reserve(const std::string& name) { taken_.insert(name); }
  // Marks the locals the tensor-core emitter declares by hand in blocks that read user values
  // (an epilogue's `row`, `i`, `chunk`) as taken: for a kernel that warp-specialize split.
  void reserve_tensor_core_locals();

 private:
  std::set<std::string, std::less<>> taken_;
  std::unordered_map<std::string, int> next_suffix_;  // per base: the suffix to try first
};

}  // namespace tilec::cuda
