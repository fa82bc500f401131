// backend/cuda/cuda_prelude.cpp — the helpers at the top of every generated .cu.
//
// They spell docs/ir.md's arithmetic once, so the kernels below them read like the IR:
// f16/bf16/f8 compute in f32 and round back to nearest even; f32 add/sub/mul/div use the
// `__f*_rn` intrinsics, which nvcc never contracts into an FMA, so a GPU result equals the CPU
// interpreter's bit for bit (exp and exp2 excepted: CUDA's expf and exp2f are within 2 ulp of the C library's);
// integer arithmetic is 64-bit. Every helper is __host__ __device__ so the host launcher can
// evaluate the scalar ops that size the grid with the same code. The helpers go into an unnamed
// namespace (emit_cuda.cpp opens it after the preamble): two generated files link into one
// program, with or without -rdc, and a user's function of the same name replaces none of them.
#include "backend/cuda/cuda_prelude.h"

namespace tilec::cuda {

std::string cuda_preamble(bool tensor_maps) {
  std::string out(R"(#include <cstdint>
#include <cstddef>
#include <climits>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

// ---------------------------------------------------------------------------------------------
// For `tilec emulate`, which builds this file with a host C++ compiler and -DTILEC_EMULATE
// (runtime/emulate/include/tilec_emulate.h then defines the first three macros): kernels
// declare their launch bounds and dynamic shared memory, and launchers launch, through these
// macros. TILEC_SITE ends the parameter list of every helper that wraps PTX (TILEC_SITE_ONLY is
// the whole list of one without parameters): emulated, it is the caller's line, for reports.
// Under nvcc they are the plain CUDA spellings and TILEC_SITE is nothing.
// ---------------------------------------------------------------------------------------------
#ifndef TILEC_EMULATE
#define TILEC_LAUNCH_BOUNDS(...) __launch_bounds__(__VA_ARGS__)
#define TILEC_DYNAMIC_SHARED(alignment, name) extern __shared__ __align__(alignment) unsigned char name[]
#define TILEC_LAUNCH(kernel, grid, block, shared, stream, ...) kernel<<<grid, block, shared, stream>>>(__VA_ARGS__)
#define TILEC_SITE
#define TILEC_SITE_ONLY
#else
#define TILEC_SITE , int tilec_line = __builtin_LINE()
#define TILEC_SITE_ONLY int tilec_line = __builtin_LINE()
#endif
)");
  if (tensor_maps) out += "#include <cuda.h>  // CUtensorMap and its enums (a header only: nothing links against libcuda)\n";
  return out;
}

std::string_view cuda_prelude() {
  return R"(
// ---------------------------------------------------------------------------------------------
// Element helpers (docs/ir.md): floating-point elements compute in f32 and round back to their
// type with round-to-nearest-even; integer and index arithmetic is 64-bit. These helpers use no
// architecture-specific instruction.
// ---------------------------------------------------------------------------------------------
__host__ __device__ inline float to_f32(float x) { return x; }
__host__ __device__ inline float to_f32(__half x) { return __half2float(x); }
__host__ __device__ inline float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__host__ __device__ inline float to_f32(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
__host__ __device__ inline float to_f32(__nv_fp8_e5m2 x) { return static_cast<float>(x); }
// An f32 mma operand as the tensor cores read it (tf32): the low 13 mantissa bits cleared, a
// truncation toward zero; a NaN stays as it is.
__host__ __device__ inline float tf32_operand(float x) {
  if (x != x) return x;
#ifdef __CUDA_ARCH__
  return __uint_as_float(__float_as_uint(x) & 0xffffe000u);
#else
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= 0xffffe000u;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

// f32 → element type, round to nearest even (f8: saturating to the largest finite value).
template <typename T> __host__ __device__ T from_f32(float x);
template <> __host__ __device__ inline float from_f32<float>(float x) { return x; }
template <> __host__ __device__ inline __half from_f32<__half>(float x) { return __float2half_rn(x); }
template <> __host__ __device__ inline __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __host__ __device__ inline __nv_fp8_e4m3 from_f32<__nv_fp8_e4m3>(float x) { return __nv_fp8_e4m3(x); }
template <> __host__ __device__ inline __nv_fp8_e5m2 from_f32<__nv_fp8_e5m2>(float x) { return __nv_fp8_e5m2(x); }

// f32 arithmetic, rounded once per op: the __f*_rn intrinsics are never fused into an FMA.
__host__ __device__ inline float add_f32(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
__host__ __device__ inline float sub_f32(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
__host__ __device__ inline float mul_f32(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
__host__ __device__ inline float div_f32(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
__host__ __device__ inline float sqrt_f32(float x) {
#ifdef __CUDA_ARCH__
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}
__host__ __device__ inline float rsqrt_f32(float x) { return div_f32(1.0f, sqrt_f32(x)); }
__host__ __device__ inline float exp_f32(float x) { return expf(x); }
__host__ __device__ inline float exp2_f32(float x) { return exp2f(x); }  // one ex2.approx.f32
__host__ __device__ inline float fma_f32(float a, float b, float c) { return fmaf(a, b, c); }  // one rounding
// A NaN operand gives the other one, and -0.0 is below +0.0 whatever the order: PTX's max.f32 and
// min.f32 (what fmaxf and fminf are on the GPU); on the host (tilec emulate) fmaxf may give either
// zero (glibc gives the first), so the zeros are ordered by hand.
__host__ __device__ inline float max_f32(float a, float b) {
#ifdef __CUDA_ARCH__
  return fmaxf(a, b);
#else
  return a == b ? (std::signbit(a) ? b : a) : fmaxf(a, b);
#endif
}
__host__ __device__ inline float min_f32(float a, float b) {
#ifdef __CUDA_ARCH__
  return fminf(a, b);
#else
  return a == b ? (std::signbit(a) ? a : b) : fminf(a, b);
#endif
}
__host__ __device__ inline float relu_f32(float x) { return x > 0.0f ? x : 0.0f; }
__host__ __device__ inline float tanh_f32(float x) { return tanhf(x); }
__host__ __device__ inline float erf_f32(float x) { return erff(x); }
__host__ __device__ inline float log_f32(float x) { return logf(x); }
__host__ __device__ inline float log2_f32(float x) { return log2f(x); }
__host__ __device__ inline float log1p_f32(float x) { return log1pf(x); }
__host__ __device__ inline float expm1_f32(float x) { return expm1f(x); }
__host__ __device__ inline float tan_f32(float x) { return tanf(x); }
__host__ __device__ inline float atan_f32(float x) { return atanf(x); }
__host__ __device__ inline float asin_f32(float x) { return asinf(x); }
__host__ __device__ inline float acos_f32(float x) { return acosf(x); }
__host__ __device__ inline float sinh_f32(float x) { return sinhf(x); }
__host__ __device__ inline float cosh_f32(float x) { return coshf(x); }
__host__ __device__ inline float atan2_f32(float y, float x) { return atan2f(y, x); }
__host__ __device__ inline float sin_f32(float x) { return sinf(x); }  // the accurate sinf, not __sinf
__host__ __device__ inline float cos_f32(float x) { return cosf(x); }
__host__ __device__ inline float sigmoid_f32(float x) { return div_f32(1.0f, add_f32(1.0f, expf(-x))); }
__host__ __device__ inline float abs_f32(float x) { return fabsf(x); }
__host__ __device__ inline float pow_f32(float a, float b) { return powf(a, b); }
__host__ __device__ inline float floor_f32(float x) { return floorf(x); }
__host__ __device__ inline float ceil_f32(float x) { return ceilf(x); }
__host__ __device__ inline float round_f32(float x) { return rintf(x); }  // halves to even
__host__ __device__ inline float trunc_f32(float x) { return truncf(x); }

// 64-bit integer helpers. Sums, differences and products that wrap in two's complement, as the
// interpreter's do (int64_t's own operators are undefined on overflow): i64 arithmetic, u32
// products, reductions and scans, and the negations below.
__host__ __device__ inline int64_t add_i64(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
__host__ __device__ inline int64_t sub_i64(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
__host__ __device__ inline int64_t mul_i64(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// cdiv is the ceiling of a / b, for any signs (the remainder has a's sign: round the truncated
// quotient up when it is nonzero and a and b agree in sign); by 0 and -1 as div_i64 divides.
__host__ __device__ inline int64_t cdiv_i64(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  const int64_t r = a % b;
  return a / b + (r != 0 && (r > 0) == (b > 0) ? 1 : 0);
}
// Division by a value that may be 0 or -1, defined as the interpreter defines it: x / 0 = -1,
// x % 0 = x, INT64_MIN / -1 wraps.
__host__ __device__ inline int64_t div_i64(int64_t a, int64_t b) { return b == 0 ? -1 : b == -1 ? sub_i64(0, a) : a / b; }
__host__ __device__ inline int64_t rem_i64(int64_t a, int64_t b) { return b == 0 ? a : b == -1 ? 0 : a % b; }
__host__ __device__ inline int64_t abs_i64(int64_t a) { return a < 0 ? sub_i64(0, a) : a; }  // abs(INT64_MIN) wraps
__host__ __device__ inline int64_t max_i64(int64_t a, int64_t b) { return a < b ? b : a; }
// A grid's tiles, a · b for extents read as max(e, 0), saturating at INT64_MAX, which a launcher
// refuses as more than INT_MAX tiles (the product wrapped past 2^63 to a few tiles, launched).
__host__ __device__ inline int64_t tile_product_i64(int64_t a, int64_t b) {
  a = a < 0 ? 0 : a;
  b = b < 0 ? 0 : b;
  return b != 0 && a > INT64_MAX / b ? INT64_MAX : a * b;
}
__host__ __device__ inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
// Shifts by an amount outside 0..63 shift everything out (C++ leaves them undefined).
__host__ __device__ inline int64_t shl_i64(int64_t a, int64_t n) {
  return n < 0 || n > 63 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << n);
}
__host__ __device__ inline int64_t shr_i64(int64_t a, int64_t n) { return n < 0 || n > 63 ? (a < 0 ? -1 : 0) : a >> n; }

// Casts: integer → float rounds once to nearest even; float → integer truncates toward zero and
// saturates at the type's range, NaN giving 0 (as cvt.rzi does, and the interpreter).
template <typename T> __host__ __device__ inline T int_to_float(int64_t x) { return from_f32<T>(static_cast<float>(x)); }
// One rounding to nearest even: past 2^53 the double in between is rounded to odd (its low bit
// records what was dropped), so rounding it to bf16's 8 bits is exact where rounding it to nearest
// first would round twice (2^62 + 2^54 + 1 gave 2^62, not 2^62 + 2^55).
template <> __host__ __device__ inline __nv_bfloat16 int_to_float<__nv_bfloat16>(int64_t x) {
  const unsigned long long bits = static_cast<unsigned long long>(x);
  const unsigned long long magnitude = x < 0 ? 0ULL - bits : bits;
  int dropped = 0;
  while ((magnitude >> dropped) >= (1ULL << 53)) ++dropped;
  unsigned long long kept = magnitude >> dropped;
  if (dropped > 0 && (magnitude & ((1ULL << dropped) - 1)) != 0) kept |= 1;
  const double odd = static_cast<double>(kept) * static_cast<double>(1ULL << dropped);
  return __double2bfloat16(x < 0 ? -odd : odd);
}
template <typename T> __host__ __device__ inline T float_to_int(float x) {
  const bool is_signed = static_cast<T>(-1) < static_cast<T>(0);
  const int bits = 8 * static_cast<int>(sizeof(T)) - (is_signed ? 1 : 0);  // value bits: 7, 8, 15, 31, 63
  const unsigned long long largest = (1ULL << bits) - 1;
  const float high = static_cast<float>(largest) + 1.0f;  // 2^bits: the first value past the largest
  if (!(x == x)) return 0;
  if (x >= high) return static_cast<T>(largest);
  if (!is_signed) return x <= -1.0f ? static_cast<T>(0) : static_cast<T>(x);
  if (x < -high) return static_cast<T>(-static_cast<long long>(largest) - 1);
  return static_cast<T>(x);
}
template <> __host__ __device__ inline bool float_to_int<bool>(float x) { return x != 0.0f; }
// bitcast: an element's bits read as another type of the same width (memcpy, which nvcc turns
// into a register move).
template <typename To, typename From> __host__ __device__ inline To bits_as(From x) {
  static_assert(sizeof(To) == sizeof(From), "bitcast keeps the width");
  To y;
  memcpy(&y, &x, sizeof y);
  return y;
}
)";
}

// sort's order (docs/ir.md): integers by value; floats by value with -0.0 before +0.0 and every
// NaN after every number, NaNs equivalent among themselves. A line is heap-sorted in place by one
// thread, in n log n comparisons and no memory of its own; NaNs of different bits may end up in
// another order than the interpreter's stable sort (a comparison takes NaN for NaN).
std::string_view sort_prelude() {
  return R"(
// ---------------------------------------------------------------------------------------------
// sort: one line of `count` elements `stride` apart, in place (heapsort), ascending or descending.
// ---------------------------------------------------------------------------------------------
// Integers by value (the float types take the overloads below, exact matches before a template).
template <typename T> __host__ __device__ inline bool tilec_sorts_before(T a, T b) { return a < b; }
__host__ __device__ inline bool tilec_float_sorts_before(float a, float b) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) return !a_nan && b_nan;
  return a < b || (a == b && std::signbit(a) && !std::signbit(b));
}
__host__ __device__ inline bool tilec_sorts_before(float a, float b) { return tilec_float_sorts_before(a, b); }
__host__ __device__ inline bool tilec_sorts_before(__half a, __half b) { return tilec_float_sorts_before(to_f32(a), to_f32(b)); }
__host__ __device__ inline bool tilec_sorts_before(__nv_bfloat16 a, __nv_bfloat16 b) {
  return tilec_float_sorts_before(to_f32(a), to_f32(b));
}
__host__ __device__ inline bool tilec_sorts_before(__nv_fp8_e4m3 a, __nv_fp8_e4m3 b) {
  return tilec_float_sorts_before(to_f32(a), to_f32(b));
}
__host__ __device__ inline bool tilec_sorts_before(__nv_fp8_e5m2 a, __nv_fp8_e5m2 b) {
  return tilec_float_sorts_before(to_f32(a), to_f32(b));
}
template <typename T>
__host__ __device__ inline void tilec_sort_line(T* line, int64_t count, int64_t stride, bool descending) {
  auto before = [&](int64_t i, int64_t j) {
    return descending ? tilec_sorts_before(line[j * stride], line[i * stride])
                      : tilec_sorts_before(line[i * stride], line[j * stride]);
  };
  auto swap = [&](int64_t i, int64_t j) {
    const T kept = line[i * stride];
    line[i * stride] = line[j * stride];
    line[j * stride] = kept;
  };
  // A heap whose root sorts last; each step moves the root behind the heap.
  auto sift = [&](int64_t root, int64_t end) {
    for (int64_t child = 2 * root + 1; child < end; child = 2 * root + 1) {
      if (child + 1 < end && before(child, child + 1)) ++child;
      if (!before(root, child)) return;
      swap(root, child);
      root = child;
    }
  };
  for (int64_t start = count / 2 - 1; start >= 0; --start) sift(start, count);
  for (int64_t end = count - 1; end > 0; --end) {
    swap(0, end);
    sift(0, end);
  }
}
)";
}

// randint's word (docs/ir.md): Philox4x32-10 as the interpreter computes it
// (runtime/interpreter/element_semantics.cpp), in 32-bit products the GPU issues as mul.hi and mul.lo.
std::string_view random_prelude() {
  return R"(
// ---------------------------------------------------------------------------------------------
// randint: word 0 of Philox4x32-10, key (seed's low, high word), counter (offset's low, high word, 0, 0).
// ---------------------------------------------------------------------------------------------
__host__ __device__ inline uint32_t tilec_randint(int64_t seed, int64_t offset) {
  uint32_t c0 = static_cast<uint32_t>(offset), c1 = static_cast<uint32_t>(static_cast<uint64_t>(offset) >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(static_cast<uint64_t>(seed) >> 32);
  // Not unrolled: a register tile's 64 draws, each unrolled ten rounds deep, were interleaved by
  // ptxas into 13 KB of spills a thread (a 4 x 4096 dropout; an adversarial review); a loop keeps
  // one draw's six words live at a time.
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = 0xD2511F53ull * c0, product1 = 0xCD9E8D57ull * c2;
    const uint32_t next0 = static_cast<uint32_t>(product1 >> 32) ^ c1 ^ k0;
    const uint32_t next2 = static_cast<uint32_t>(product0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(product1);
    c3 = static_cast<uint32_t>(product0);
    c0 = next0;
    c2 = next2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}
)";
}

}  // namespace tilec::cuda
