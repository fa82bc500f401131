// backend/cuda/cuda_syntax.cpp — element types, literals and identifiers in CUDA C++.
#include "backend/cuda/cuda_syntax.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tilec::cuda {

std::string_view element_type(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::i1: return "bool";
    case ScalarKind::i8: return "int8_t";
    case ScalarKind::i16: return "int16_t";
    case ScalarKind::u8: return "uint8_t";
    case ScalarKind::u16: return "uint16_t";
    case ScalarKind::u32: return "uint32_t";
    case ScalarKind::i32: return "int32_t";
    case ScalarKind::i64: return "int64_t";
    case ScalarKind::index: return "int64_t";
    case ScalarKind::f16: return "__half";
    case ScalarKind::bf16: return "__nv_bfloat16";
    case ScalarKind::f32: return "float";
    case ScalarKind::f8e4m3: return "__nv_fp8_e4m3";
    case ScalarKind::f8e5m2: return "__nv_fp8_e5m2";
  }
  return "void";
}

std::string float_literal(float value) {
  if (std::isnan(value)) return "NAN";
  if (std::isinf(value)) return value > 0 ? "INFINITY" : "-INFINITY";
  // The shortest form that reads back as the same float: plain decimals for moderate
  // magnitudes (`100.0f`, `0.001f`), else %g with an exponent (`1e+20f`).
  char text[64] = "";
  double magnitude = std::fabs(static_cast<double>(value));
  bool found = false;
  if (magnitude == 0.0 || (magnitude >= 1e-4 && magnitude < 1e9)) {
    for (int decimals = 0; decimals <= 12 && !found; ++decimals) {
      std::snprintf(text, sizeof text, "%.*f", decimals, static_cast<double>(value));
      found = std::strtof(text, nullptr) == value;
    }
  }
  for (int precision = 1; precision <= 9 && !found; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, static_cast<double>(value));
    found = std::strtof(text, nullptr) == value;
  }
  std::string out = text;
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out + "f";
}

std::string integer_literal(int64_t value) {
  if (value == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
  if (value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max())
    return std::to_string(value);
  return std::to_string(value) + "LL";
}

std::string grouped(const std::string& text) {
  bool simple = std::all_of(text.begin(), text.end(),
                            [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  return simple ? text : "(" + text + ")";
}

std::string literal(const Attribute& value, ScalarKind kind) {
  double number = value.is_float() ? value.as_float()
                  : value.is_bool() ? (value.as_bool() ? 1.0 : 0.0)
                  : value.is_int()  ? static_cast<double>(value.as_int())
                                    : 0.0;
  // A float attribute for an integer element (the verifier keeps these in range): truncated, and
  // clamped so that converting it is never undefined (NaN gives 0).
  auto truncated = [](double x) -> int64_t {
    if (!(x == x)) return 0;
    if (x >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
    if (x <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(x);
  };
  int64_t integer = value.is_int()    ? value.as_int()
                    : value.is_bool() ? (value.as_bool() ? 1 : 0)
                                      : truncated(number);
  // f32 rounding of the double, to nearest: up to half an f32 ulp past FLT_MAX (3.4028235e38, as
  // NumPy prints FLT_MAX) is FLT_MAX, as the interpreter rounds it (this said INFINITY: a masked
  // softmax's -3.4028235e38 gave NaN on the GPU only); from there on infinity (the conversion
  // itself is undefined beyond the range, so it is not asked).
  const double largest = std::numeric_limits<float>::max();
  const double rounds_to_infinity = largest + std::ldexp(1.0, 103);  // FLT_MAX + half its ulp (a tie: to even, inf)
  float single = number >= rounds_to_infinity   ? std::numeric_limits<float>::infinity()
                 : number <= -rounds_to_infinity ? -std::numeric_limits<float>::infinity()
                 : number > largest             ? std::numeric_limits<float>::max()
                 : number < -largest            ? -std::numeric_limits<float>::max()
                                                : static_cast<float>(number);
  switch (kind) {
    case ScalarKind::i1: return integer != 0 ? "true" : "false";
    case ScalarKind::i8: return integer_literal(static_cast<int8_t>(integer));
    case ScalarKind::i16: return integer_literal(static_cast<int16_t>(integer));
    case ScalarKind::u8: return integer_literal(static_cast<uint8_t>(integer));
    case ScalarKind::u16: return integer_literal(static_cast<uint16_t>(integer));
    case ScalarKind::u32: return integer_literal(static_cast<uint32_t>(integer));
    case ScalarKind::i32: return integer_literal(static_cast<int32_t>(integer));
    case ScalarKind::i64:
    case ScalarKind::index: return integer_literal(integer);
    case ScalarKind::f32: return float_literal(single);
    default:
      // f16, bf16, f8: written as the f32 value, rounded to the element type at run time.
      return fmt::format("from_f32<{}>({})", element_type(kind),
                         float_literal(single));
  }
}

std::string zero_literal(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::i1: return "false";
    case ScalarKind::i8:
    case ScalarKind::i16:
    case ScalarKind::u8:
    case ScalarKind::u16:
    case ScalarKind::u32:
    case ScalarKind::i32:
    case ScalarKind::i64:
    case ScalarKind::index: return "0";
    case ScalarKind::f32: return "0.0f";
    default: return fmt::format("from_f32<{}>(0.0f)", element_type(kind));
  }
}

namespace {

// C++ keywords, CUDA built-ins and library names, and every name the emitter spells itself.
constexpr std::string_view kReserved[] = {
    // C++
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
    "class", "const", "constexpr", "continue", "decltype", "default", "delete", "do", "double",
    "else", "enum", "explicit", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
    "operator", "or", "private", "protected", "public", "register", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try",
    "typedef", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while",
    "xor", "main", "std", "size_t", "int32_t", "int64_t", "uint32_t", "uint64_t", "uint8_t",
    "NAN", "INFINITY", "INT_MAX", "assert", "printf", "exit", "abs", "max", "min",
    "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "static_assert", "thread_local",
    "typeid", "wchar_t", "char8_t", "char16_t", "char32_t", "bitand", "bitor", "compl", "and_eq",
    "or_eq", "xor_eq", "not_eq", "export", "requires", "concept", "consteval", "constinit",
    "co_await", "co_return", "co_yield", "NULL", "EOF", "int8_t", "int16_t", "uint16_t", "uintptr_t",
    "INT32_MAX", "INT32_MIN", "INT64_MAX", "INT64_MIN", "memcpy", "strlen", "strncmp", "atof",
    // macros of the headers a generated file (or the host code including its header) brings in,
    // and names GNU C++ predefines: a tensor named one is renamed (found building kernels into
    // programs: RAND_MAX broke the .cu, errno silently changed a declared type)
    "CHAR_BIT", "SCHAR_MIN", "SCHAR_MAX", "UCHAR_MAX", "CHAR_MIN", "CHAR_MAX", "MB_LEN_MAX", "SHRT_MIN",
    "SHRT_MAX", "USHRT_MAX", "INT_MIN", "UINT_MAX", "LONG_MIN", "LONG_MAX", "ULONG_MAX", "LLONG_MIN",
    "LLONG_MAX", "ULLONG_MAX", "INT8_MIN", "INT8_MAX", "INT16_MIN", "INT16_MAX", "UINT8_MAX", "UINT16_MAX",
    "UINT32_MAX", "UINT64_MAX", "INTPTR_MIN", "INTPTR_MAX", "UINTPTR_MAX", "SIZE_MAX", "PTRDIFF_MIN",
    "PTRDIFF_MAX", "WCHAR_MIN", "WCHAR_MAX", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "FP_NAN", "FP_INFINITE",
    "FP_ZERO", "FP_SUBNORMAL", "FP_NORMAL", "FP_ILOGB0", "FP_ILOGBNAN", "MATH_ERRNO", "MATH_ERREXCEPT",
    "math_errhandling", "M_E", "M_LOG2E", "M_LOG10E", "M_LN2", "M_LN10", "M_PI", "M_PI_2", "M_PI_4", "M_1_PI",
    "M_2_PI", "M_2_SQRTPI", "M_SQRT2", "M_SQRT1_2", "FLT_MAX", "FLT_MIN", "FLT_EPSILON", "FLT_DIG",
    "FLT_MANT_DIG", "FLT_RADIX", "FLT_TRUE_MIN", "DBL_MAX", "DBL_MIN", "DBL_EPSILON", "DBL_DIG", "DBL_MANT_DIG",
    "DBL_TRUE_MIN", "LDBL_MAX", "LDBL_MIN", "LDBL_EPSILON", "RAND_MAX", "EXIT_SUCCESS", "EXIT_FAILURE",
    "MB_CUR_MAX", "BUFSIZ", "FILENAME_MAX", "FOPEN_MAX", "L_tmpnam", "TMP_MAX", "SEEK_SET", "SEEK_CUR",
    "SEEK_END", "stdin", "stdout", "stderr", "errno", "EDOM", "ERANGE", "EILSEQ", "SIGINT", "SIGTERM",
    "SIGABRT", "SIGFPE", "SIGILL", "SIGSEGV", "SIG_DFL", "SIG_IGN", "SIG_ERR", "CLOCKS_PER_SEC", "linux", "unix",
    "i386", "offsetof", "va_start", "va_end", "va_arg", "setjmp",
    // the atomics a `+=`, `|=`, `max=` store calls (a value of the name hid the function in its scope)
    "atomicAdd", "atomicSub", "atomicOr", "atomicAnd", "atomicXor", "atomicMax", "atomicMin", "atomicCAS",
    "atomicExch", "atomicInc", "atomicDec",
    // CUDA
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "cudaStream_t",
    "cudaError_t", "__half", "__nv_bfloat16", "__nv_fp8_e4m3", "__nv_fp8_e5m2", "expf",
    "sqrtf", "fmaxf", "fminf", "exp", "sqrt", "rsqrt", "rsqrtf", "tanh", "tanhf", "erf", "erff",
    "log", "logf", "log2", "log2f", "sin", "sinf", "cos", "cosf", "pow", "powf", "fabs", "fabsf", "floor", "floorf", "ceil", "ceilf",
    "rint", "rintf", "trunc", "truncf", "exp2", "exp2f", "fma", "fmaf", "log1p", "log1pf", "expm1", "expm1f",
    "tan", "tanf", "atan", "atanf", "atan2", "atan2f", "asin", "asinf", "acos", "acosf", "sinh", "sinhf", "cosh",
    "coshf",
    // the generated prelude, kernels, launchers and harness
    "to_f32", "from_f32", "add_f32", "sub_f32", "mul_f32", "div_f32", "sqrt_f32", "rsqrt_f32",
    "exp_f32", "max_f32", "min_f32", "relu_f32", "cdiv_i64", "max_i64", "min_i64",
    "tanh_f32", "erf_f32", "log_f32", "log2_f32", "sin_f32", "cos_f32", "sigmoid_f32", "abs_f32", "pow_f32", "div_i64", "rem_i64", "abs_i64",
    "floor_f32", "ceil_f32", "round_f32", "trunc_f32", "exp2_f32", "fma_f32", "log1p_f32", "expm1_f32", "tan_f32",
    "atan_f32", "atan2_f32", "asin_f32", "acos_f32", "sinh_f32", "cosh_f32",
    "int_to_float", "float_to_int", "bits_as", "kBlockThreads", "shared_memory", "scratch", "slot",
    "slots", "elem", "pos", "acc", "stream", "status", "shared_bytes",
    "tile_number", "tile_count", "in_bounds", "index0", "index1", "index2", "index3", "index4", "index5", "index6",
    "index7", "next", "argc", "argv", "pass", "bytes", "seconds", "milliseconds", "start",
    "stop", "repeat", "failures", "config", "cluster_attribute", "launched",
    "Index", "IndexOf", "Raw", "RawVector", "MmaKind", "load_vector", "store_vector", "vectors_fit",
    "index32_fits", "index32_bounds_fit", "cdiv_index", "max_index", "min_index", "add_i64", "sub_i64", "mul_i64", "tf32_operand", "tile_product_i64",
    "shl_i64", "shr_i64", "float2", "uint2", "uint4", "cuuint32_t", "cuuint64_t",
    // locals the plain kernels and the launchers spell by hand (a parameter or value of the same
    // name would be shadowed where they are declared, or redeclared)
    "thread_row", "thread_column", "kColumnStage", "kReductionArea", "kPart", "copied", "count_only",
    "failed", "launch_sm_count", "tilec_line", "opted_in", "opted_in1",
    // the position along a concat's or an interleave's axis (the shared form, and every harness's
    // reference kernel)
    "along"};

// Every other macro of the headers around a generated .cu (PATH_MAX, BIG_ENDIAN, EINVAL: a hunt's
// tensors named so broke the .cu), listed by scripts/reserved_macros.sh.
constexpr std::string_view kReservedMacros[] = {
#include "backend/cuda/reserved_macros.inc"
};

// Locals the tensor-core kernels declare by hand in blocks that read user values (an epilogue's
// `row`, `column` and loop counter `i`): reserved in those kernels only (reserve_tensor_core_locals).
constexpr std::string_view kTensorCoreLocals[] = {
    "address", "box", "box_row", "byte", "chunk", "row", "column", "compute_thread", "compute_warpgroup",
    "elected", "first_column", "i", "j", "index", "instruction", "lane", "warp", "piece", "shared_aligned",
    "shared_base", "staging", "staging_bytes", "storer", "tmem", "tmem_base", "tmem_slot", "values",
    "accumulator_barrier", "accumulator_parity", "exchange", "origin0", "origin1", "corner", "row_step",
    "column_step",
    // found by an adversarial helper: the staging loop's `e` shadowed a scalar a computed B read
    // (silently wrong numbers), sm_100a's computed-B ring, the 8-bit A packing loop's `first`,
    // a folded store's `folded`
    "e", "computed_b_barrier", "computed_b_buffer", "computed_b_read", "computed_b_parity", "first", "folded"};

// Prefixes of the names of the CUDA runtime and driver APIs and of tilec's own helpers and
// macros, and suffixes of the names the tensor-core emitter makes from a tensor's or an
// accumulator's (`A_map`, `C_store_map`, `C_tma`, `acc_started`): a name with one is renamed
// (`cudaSuccess` -> `cudaSuccess_1`).
constexpr std::string_view kReservedPrefixes[] = {"cuda", "cuTensor", "cuuint", "CUDA_", "CUDART_", "CU_",
                                                  "CUtensor", "CUresult", "tilec_", "Tilec", "TILEC_", "harness_"};
constexpr std::string_view kReservedSuffixes[] = {"_map", "_tma", "_started"};

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

NameTable::NameTable(bool reserve_macros) {
  for (std::string_view name : kReserved) taken_.insert(std::string(name));
  if (reserve_macros)
    for (std::string_view name : kReservedMacros) taken_.insert(std::string(name));
}

void NameTable::reserve_tensor_core_locals() {
  for (std::string_view name : kTensorCoreLocals) taken_.insert(std::string(name));
}

std::string kernel_prefix_problem(std::string_view prefix) {
  if (prefix.empty()) return "";
  if (!std::all_of(prefix.begin(), prefix.end(), is_identifier_char))
    return "is not the start of a C++ identifier: use letters, digits and '_' (e.g. sm90_)";
  if (!((prefix.front() >= 'a' && prefix.front() <= 'z') || (prefix.front() >= 'A' && prefix.front() <= 'Z')))
    return "must start with a letter (names starting with '_' or a digit are not C++ identifiers or are reserved)";
  if (prefix.find("__") != std::string_view::npos)
    return "holds '__', which C++ reserves: use single underscores";
  for (std::string_view reserved : kReservedPrefixes)
    if (prefix.starts_with(reserved))
      return fmt::format("would make names starting with '{}', which the CUDA toolkit or tilec's own code use: pick "
                         "another (e.g. sm90_)",
                         reserved);
  return "";
}

std::string kernel_rename_reason(std::string_view name) {
  const std::string quoted = fmt::format("'{}'", name);
  if (!std::all_of(name.begin(), name.end(), is_identifier_char))
    return quoted + " holds characters a C++ identifier cannot";
  if (name.empty() || name.front() == '_' || (name.front() >= '0' && name.front() <= '9'))
    return quoted + " starts with '_' or a digit, which C++ reserves or does not take";
  if (name.find("__") != std::string_view::npos) return quoted + " holds '__', which C++ reserves";
  if (name.back() == '_') return fmt::format("{0}_kernel would hold '__', which C++ reserves", name);
  if (NameTable(false).unique(name) != name) return quoted + " is reserved in CUDA C++ or by tilec's own code";
  return "another kernel's functions take its names";
}

std::string NameTable::unique(std::string_view hint) {
  std::string base;
  for (char c : hint) {
    char d = is_identifier_char(c) ? c : '_';
    if (d == '_' && !base.empty() && base.back() == '_') continue;  // no "__": reserved in C++
    base += d;
  }
  if (base.empty() || base.front() == '_' || (base.front() >= '0' && base.front() <= '9'))
    base = "v" + base;
  if (base.size() > 1 && base.back() == '_') base.pop_back();
  const bool api_name = std::any_of(std::begin(kReservedPrefixes), std::end(kReservedPrefixes),
                                    [&](std::string_view prefix) { return base.starts_with(prefix); }) ||
                        std::any_of(std::begin(kReservedSuffixes), std::end(kReservedSuffixes),
                                    [&](std::string_view suffix) { return base.ends_with(suffix); });
  // The smallest free suffix: those below the last one given for `base` are all taken (names
  // are never given back), so the search resumes there, linear in the names, not quadratic.
  int& suffix = next_suffix_[base];
  suffix = std::max(suffix, 1);
  std::string name = api_name ? fmt::format("{}_{}", base, suffix++) : base;
  while (taken_.count(name)) name = fmt::format("{}_{}", base, suffix++);
  taken_.insert(name);
  return name;
}

}  // namespace tilec::cuda
