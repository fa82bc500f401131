// tilec_emulate.h — the CUDA that tilec's generated .cu files use, for a host C++ compiler.
//
// `tilec emulate` builds a generated .cu with g++ or clang++, -DTILEC_EMULATE and this folder
// first on the include path: <cuda_runtime.h>, <cuda.h>, <cuda_fp16.h>, <cuda_bf16.h> and
// <cuda_fp8.h> all land here. It gives
//   1. the keywords (__global__, __device__, ...) as nothing, the launch/shared-memory macros
//      the emitter writes (TILEC_LAUNCH_BOUNDS, TILEC_DYNAMIC_SHARED, TILEC_LAUNCH) in their
//      emulated form;
//   2. the element types (__half, __nv_bfloat16, __nv_fp8_e4m3, __nv_fp8_e5m2) with the
//      conversions CUDA defines (round to nearest even; f8 saturating);
//   3. threadIdx/blockIdx/blockDim/gridDim, __syncthreads, __shfl_xor_sync, __shfl_sync, __trap:
//      each CUDA thread is a fiber of its CTA (runtime/emulate/cta.h), and these read or block it;
//      __byte_perm computes;
//   4. the host API the launchers call (cudaFuncSetAttribute, cudaMemcpyToSymbolAsync, the driver
//      entry point for cuTensorMapEncodeTiled, cudaLaunchKernelEx, ...);
//   5. tilec_emu::ptx::* — one function per PTX instruction the prelude helpers wrap: the
//      `#else` branch of each helper calls these (each takes the helper's call line last).
// Nothing here is seen by nvcc. docs/emulation.md describes the model.
#pragma once

#ifndef TILEC_EMULATE
#error "tilec_emulate.h is the CPU emulation of CUDA: build with -DTILEC_EMULATE (tilec emulate does)"
#endif

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

// --- 1. keywords -----------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __constant__
#define __grid_constant__
#define __align__(n) alignas(n)
#define __launch_bounds__(...)
#ifndef __restrict__
#define __restrict__
#endif

// --- 2. element types --------------------------------------------------------------------------
namespace tilec_emu {
uint16_t float_to_half_bits(float value);      // round to nearest even, IEEE overflow to inf
float half_bits_to_float(uint16_t bits);
uint16_t float_to_bfloat16_bits(float value);  // round to nearest even
float bfloat16_bits_to_float(uint16_t bits);
uint16_t double_to_bfloat16_bits(double value);  // one rounding from double
uint8_t float_to_e4m3_bits(float value);       // round to nearest even, saturating (satfinite)
float e4m3_bits_to_float(uint8_t bits);
uint8_t float_to_e5m2_bits(float value);
float e5m2_bits_to_float(uint8_t bits);
}  // namespace tilec_emu

struct __half {
  uint16_t bits = 0;
  __half() = default;
  __half(float value) : bits(tilec_emu::float_to_half_bits(value)) {}
  operator float() const { return tilec_emu::half_bits_to_float(bits); }
};
struct __nv_bfloat16 {
  uint16_t bits = 0;
  __nv_bfloat16() = default;
  __nv_bfloat16(float value) : bits(tilec_emu::float_to_bfloat16_bits(value)) {}
  operator float() const { return tilec_emu::bfloat16_bits_to_float(bits); }
};
struct __nv_fp8_e4m3 {
  uint8_t __x = 0;
  __nv_fp8_e4m3() = default;
  explicit __nv_fp8_e4m3(float value) : __x(tilec_emu::float_to_e4m3_bits(value)) {}
  explicit operator float() const { return tilec_emu::e4m3_bits_to_float(__x); }
};
struct __nv_fp8_e5m2 {
  uint8_t __x = 0;
  __nv_fp8_e5m2() = default;
  explicit __nv_fp8_e5m2(float value) : __x(tilec_emu::float_to_e5m2_bits(value)) {}
  explicit operator float() const { return tilec_emu::e5m2_bits_to_float(__x); }
};
inline float __half2float(__half x) { return static_cast<float>(x); }
inline __half __float2half_rn(float x) { return __half(x); }
inline __half __float2half(float x) { return __half(x); }  // CUDA's default: to nearest even
inline float __bfloat162float(__nv_bfloat16 x) { return static_cast<float>(x); }
inline __nv_bfloat16 __float2bfloat16_rn(float x) { return __nv_bfloat16(x); }
inline __nv_bfloat16 __float2bfloat16(float x) { return __nv_bfloat16(x); }
inline __nv_bfloat16 __double2bfloat16(double x) {
  __nv_bfloat16 result;
  result.bits = tilec_emu::double_to_bfloat16_bits(x);
  return result;
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 x) { return x.bits; }
inline unsigned short __half_as_ushort(__half x) { return x.bits; }
inline float __uint_as_float(unsigned int x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
inline unsigned int __float_as_uint(float x) {
  unsigned int u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }

// CUDA's vector types that generated code moves memory with (16- and 8-byte accesses).
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned int x, y;
};

// Stores with a cache policy: a plain store here.
template <typename T>
inline void __stwb(T* address, T value) {
  *address = value;
}

// --- 3. threads ----------------------------------------------------------------------------------
struct uint3 {
  unsigned int x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace tilec_emu {
// Whether a CUDA thread (a fiber of a CTA) runs on this OS thread now: device code, which has
// no __CUDA_ARCH__ here.
bool in_cuda_thread();
// The running CUDA thread's ids (fiber-local; valid inside a kernel only).
const uint3& current_thread_index();
const uint3& current_block_index();
const dim3& current_block_dim();
const dim3& current_grid_dim();
// The running CTA's dynamic shared memory (its first byte is shared address kSharedBase).
unsigned char* dynamic_shared_memory();
void syncthreads(int line);
void syncwarp(unsigned mask, int line);
uint64_t shuffle_xor(unsigned mask, uint64_t value, int lane_mask, int line);
uint64_t shuffle_index(unsigned mask, uint64_t value, int source_lane, int line);
[[noreturn]] void trap(int line);
uint32_t shared_address(const void* pointer, int line);
}  // namespace tilec_emu

#define threadIdx (::tilec_emu::current_thread_index())
#define blockIdx (::tilec_emu::current_block_index())
// blockDim and gridDim are not macros: cudaLaunchConfig_t has members of those names, and the
// generated kernels use their compile-time thread counts instead.
#define __syncthreads() ::tilec_emu::syncthreads(__LINE__)
#define __syncwarp(...) ::tilec_emu::syncwarp(__VA_ARGS__ + 0u, __LINE__)
#define __trap() ::tilec_emu::trap(__LINE__)
#define __cvta_generic_to_shared(pointer) ::tilec_emu::shared_address((pointer), __LINE__)

// A shuffle of any value of up to 8 bytes: its bits through `shuffle` (shuffle_xor, shuffle_index).
template <typename T, typename Shuffle>
inline T tilec_shuffle_bits(T value, Shuffle shuffle) {
  static_assert(sizeof(T) <= 8, "a shuffle of a value wider than 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = shuffle(bits);
  T result;
  std::memcpy(&result, &bits, sizeof(T));
  return result;
}

template <typename T>
inline T __shfl_xor_sync_at(unsigned mask, T value, int lane_mask, int line) {
  return tilec_shuffle_bits(value, [&](uint64_t bits) { return ::tilec_emu::shuffle_xor(mask, bits, lane_mask, line); });
}
#define __shfl_xor_sync(mask, value, lane_mask, ...) __shfl_xor_sync_at((mask), (value), (lane_mask), __LINE__)
template <typename T>
inline T __shfl_sync_at(unsigned mask, T value, int source_lane, int line) {
  return tilec_shuffle_bits(value,
                            [&](uint64_t bits) { return ::tilec_emu::shuffle_index(mask, bits, source_lane, line); });
}
#define __shfl_sync(mask, value, source_lane, ...) __shfl_sync_at((mask), (value), (source_lane), __LINE__)

// __byte_perm(x, y, s): byte n of the result is byte (s >> 4n) & 7 of the eight bytes y:x (x's
// low byte first), as PRMT's default mode picks them.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t bytes = static_cast<uint64_t>(y) << 32 | x;
  unsigned result = 0;
  for (int n = 0; n < 4; ++n) result |= static_cast<unsigned>(bytes >> (8 * ((s >> (4 * n)) & 7)) & 0xffu) << (8 * n);
  return result;
}

// atomicAdd (an accumulating store, `store T[i] += tile`): a compare-and-swap loop on the
// element's bits, so CTAs running on several worker threads add as the GPU does: each add whole
// and rounded once to the element type, in some order. Integers wrap; halves add in f32 and
// round back (to nearest even), as the hardware's f16 and bf16 adds round; an f32 add flushes
// subnormal operands and results to zero of their sign, as atom.add.f32 and red.add.f32 do (the
// PTX ISA; RED.E.ADD.F32.FTZ.RN in SASS), and the TMA's reducing .add.f32 alike.
template <typename T>
inline T atomicAdd(T* address, std::type_identity_t<T> value) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomicAdd of 2, 4 or 8 bytes");
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  std::atomic_ref<Bits> bits(*reinterpret_cast<Bits*>(address));
  Bits expected = bits.load();
  for (;;) {
    T before, after;
    // void*: __half and __nv_bfloat16 are trivially copyable, though not trivial types.
    std::memcpy(static_cast<void*>(&before), &expected, sizeof(T));
    if constexpr (std::is_integral_v<T>)
      after = static_cast<T>(static_cast<std::make_unsigned_t<T>>(before) + static_cast<std::make_unsigned_t<T>>(value));
    else if constexpr (std::is_same_v<T, float>) {
      auto flush = [](float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; };
      after = flush(flush(before) + flush(value));
    } else if constexpr (std::is_same_v<T, double>)
      after = before + value;
    else
      after = T(static_cast<float>(before) + static_cast<float>(value));
    Bits desired;
    std::memcpy(&desired, &after, sizeof(T));
    if (bits.compare_exchange_weak(expected, desired)) return before;
  }
}

// atomicCAS (the compare-and-swap a float max= or min= loops on, tilec_atomic_extremum) and
// atomicMax / atomicMin (integer max= and min=), atomic across worker threads as atomicAdd is.
template <typename T>
inline T atomicCAS(T* address, std::type_identity_t<T> compare, std::type_identity_t<T> value) {
  static_assert(std::is_unsigned_v<T> && (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8),
                "atomicCAS of unsigned short, unsigned int or unsigned long long");
  std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
  return compare;  // the value found: `compare` itself when the swap happened
}
template <typename T>
inline T tilec_atomic_extreme_integer(T* address, T value, bool max) {
  static_assert(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8), "atomicMax/atomicMin of 4 or 8 bytes");
  std::atomic_ref<T> element(*address);
  T seen = element.load();
  while ((max ? seen < value : value < seen) && !element.compare_exchange_weak(seen, value)) {}
  return seen;
}
template <typename T>
inline T atomicMax(T* address, std::type_identity_t<T> value) { return tilec_atomic_extreme_integer(address, value, true); }
template <typename T>
inline T atomicMin(T* address, std::type_identity_t<T> value) { return tilec_atomic_extreme_integer(address, value, false); }

// atomicAnd / atomicOr / atomicXor (`store T[i] &= tile`, `|=`, `^=`): the bits of 4- or 8-byte
// integers, atomic across worker threads.
template <typename T>
inline T atomicAnd(T* address, std::type_identity_t<T> value) {
  static_assert(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8), "atomicAnd of 4 or 8 bytes");
  return std::atomic_ref<T>(*address).fetch_and(value);
}
template <typename T>
inline T atomicOr(T* address, std::type_identity_t<T> value) {
  static_assert(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8), "atomicOr of 4 or 8 bytes");
  return std::atomic_ref<T>(*address).fetch_or(value);
}
template <typename T>
inline T atomicXor(T* address, std::type_identity_t<T> value) {
  static_assert(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8), "atomicXor of 4 or 8 bytes");
  return std::atomic_ref<T>(*address).fetch_xor(value);
}

// --- 4. host API ---------------------------------------------------------------------------------
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNotSupported = 801,
  cudaErrorLaunchFailure = 719,
  cudaErrorUnknown = 999,
};
using cudaStream_t = struct tilec_emu_stream*;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 };
enum { cudaEnableDefault = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
                      cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaLaunchAttributeID { cudaLaunchAttributeClusterDimension = 4 };
struct cudaLaunchAttributeValue {
  struct {
    unsigned int x, y, z;
  } clusterDim;
};
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  cudaLaunchAttributeValue val;
};
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned int numAttrs;
};

cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device);
cudaError_t cudaDeviceSynchronize();
// Device memory is host memory; the stream-ordered calls run at once (a launch runs to completion
// before it returns, so stream order holds). Each allocation lies between guard pages
// (global_memory.cpp): 16-byte aligned where it ends at the trailing guard (--bounds end), page
// aligned where it starts at the leading one (--bounds start); cudaMalloc's are 256-byte aligned.
cudaError_t cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* pointer, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t stream);
cudaError_t cudaMemcpy2DAsync(void* destination, size_t destination_pitch, const void* source, size_t source_pitch,
                              size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int version,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult* status);

namespace tilec_emu {
// Kernel attributes the launchers set (max dynamic shared memory), keyed by the kernel address.
cudaError_t set_max_dynamic_shared(const void* kernel, int bytes);
}  // namespace tilec_emu

template <typename... Parameters>
cudaError_t cudaFuncSetAttribute(void (*kernel)(Parameters...), cudaFuncAttribute attribute, int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaErrorInvalidValue;
  return ::tilec_emu::set_max_dynamic_shared(reinterpret_cast<const void*>(kernel), value);
}
template <typename T>
cudaError_t cudaMemcpyToSymbol(T& symbol, const void* source, size_t count, size_t offset = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  std::memcpy(reinterpret_cast<unsigned char*>(&symbol) + offset, source, count);
  return cudaSuccess;
}
// Launches run when they are made, so a copy in a stream can run at once too.
template <typename T>
cudaError_t cudaMemcpyToSymbolAsync(T& symbol, const void* source, size_t count, size_t offset, cudaMemcpyKind kind,
                                    cudaStream_t) {
  return cudaMemcpyToSymbol(symbol, source, count, offset, kind);
}
template <typename T>
cudaError_t cudaMemcpyFromSymbol(void* destination, const T& symbol, size_t count, size_t offset = 0,
                                 cudaMemcpyKind = cudaMemcpyDeviceToHost) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  std::memcpy(destination, reinterpret_cast<const unsigned char*>(&symbol) + offset, count);
  return cudaSuccess;
}

// cuda.h: tensor maps. The 128 opaque bytes hold tilec_emu::TensorMapFields.
using cuuint32_t = uint32_t;
using cuuint64_t = uint64_t;
enum CUresult { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 };
struct alignas(64) CUtensorMap {
  unsigned long long opaque[16];
};
enum CUtensorMapDataType {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, CU_TENSOR_MAP_DATA_TYPE_UINT16, CU_TENSOR_MAP_DATA_TYPE_UINT32,
  CU_TENSOR_MAP_DATA_TYPE_INT32, CU_TENSOR_MAP_DATA_TYPE_UINT64, CU_TENSOR_MAP_DATA_TYPE_INT64,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
};
enum CUtensorMapInterleave { CU_TENSOR_MAP_INTERLEAVE_NONE = 0, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_32B };
enum CUtensorMapSwizzle { CU_TENSOR_MAP_SWIZZLE_NONE = 0, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
                          CU_TENSOR_MAP_SWIZZLE_128B };
enum CUtensorMapL2promotion { CU_TENSOR_MAP_L2_PROMOTION_NONE = 0, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B };
enum CUtensorMapFloatOOBfill { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA };

// --- launches --------------------------------------------------------------------------------------
namespace tilec_emu {
// Runs a grid: `cta(block)` builds and runs the CTA's threads; returns the launch status.
// Declared here, defined in the runtime (launch.cpp).
struct LaunchShape {
  dim3 grid, block;
  size_t dynamic_shared = 0;
  unsigned cluster = 1;
  const void* kernel = nullptr;
  int line = 0;
};
using ThreadBody = void (*)(void* closure);
cudaError_t launch_grid(const LaunchShape& shape, ThreadBody body, void* closure);

template <typename... Parameters, typename... Arguments>
cudaError_t launch(int line, void (*kernel)(Parameters...), dim3 grid, dim3 block, size_t shared, unsigned cluster,
                   Arguments&&... arguments) {
  // The kernel's parameters are copied once, as the driver copies them to constant memory.
  std::tuple<std::decay_t<Parameters>...> copied(static_cast<Parameters>(arguments)...);
  struct Closure {
    void (*kernel)(Parameters...);
    std::tuple<std::decay_t<Parameters>...>* parameters;
  } closure{kernel, &copied};
  LaunchShape shape{grid, block, shared, cluster, reinterpret_cast<const void*>(kernel), line};
  return launch_grid(shape, [](void* raw) {
    auto* c = static_cast<Closure*>(raw);
    std::apply(c->kernel, *c->parameters);
  }, &closure);
}
}  // namespace tilec_emu

template <typename... Parameters, typename... Arguments>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* config, void (*kernel)(Parameters...),
                               Arguments&&... arguments) {
  unsigned cluster = 1;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == cudaLaunchAttributeClusterDimension) {
      const auto& d = config->attrs[i].val.clusterDim;
      if (d.y != 1 || d.z != 1) return cudaErrorNotSupported;
      cluster = d.x;
    }
  return ::tilec_emu::launch(__LINE__, kernel, config->gridDim, config->blockDim, config->dynamicSmemBytes, cluster,
                             std::forward<Arguments>(arguments)...);
}

// The emitter's macros, emulated (their CUDA spelling is in the generated prelude).
#define TILEC_LAUNCH_BOUNDS(...)
#define TILEC_DYNAMIC_SHARED(alignment, name) unsigned char* const name = ::tilec_emu::dynamic_shared_memory()
#define TILEC_LAUNCH(kernel, grid, block, shared, stream, ...) \
  ::tilec_emu::launch(__LINE__, kernel, dim3(grid), dim3(block), (shared), 1u, __VA_ARGS__)

// --- 5. PTX instructions -------------------------------------------------------------------------
// Each function is one PTX instruction (or the fixed sequence a helper wraps); `line` is the
// .cu line of the helper's call. ptx_table.h lists the PTX spelling each implements.
namespace tilec_emu::ptx {
// mbarrier
void mbarrier_init(uint32_t barrier, uint32_t count, int line);                // mbarrier.init.shared::cta.b64
void fence_mbarrier_init(int line);                                            // fence.mbarrier_init.release.cluster
void mbarrier_wait_parity(uint32_t barrier, uint32_t parity, int line);        // mbarrier.try_wait.parity loop
void mbarrier_arrive(uint32_t barrier, int line);                              // mbarrier.arrive.shared::cta.b64
void mbarrier_arrive_expect_tx(uint32_t barrier, uint32_t bytes, int line);    // mbarrier.arrive.expect_tx
// TMA and bulk groups
void tma_load_2d(uint32_t destination, const CUtensorMap* map, int32_t inner, int32_t outer, uint32_t barrier,
                 int line);                                                    // cp.async.bulk.tensor.2d ... complete_tx
void tma_store_2d(const CUtensorMap* map, uint32_t source, int32_t inner, int32_t outer,
                  int line);                                                   // cp.async.bulk.tensor.2d.global ... bulk_group
void tma_load_3d(uint32_t destination, const CUtensorMap* map, int32_t inner, int32_t middle, int32_t outer,
                 uint32_t barrier, int line);                                  // cp.async.bulk.tensor.3d ... complete_tx
void tma_store_3d(const CUtensorMap* map, uint32_t source, int32_t inner, int32_t middle, int32_t outer,
                  int line);                                                   // cp.async.bulk.tensor.3d.global ... bulk_group
void tma_load_4d(uint32_t destination, const CUtensorMap* map, int32_t column, int32_t middle, int32_t row,
                 int32_t batch, uint32_t barrier, int line);                   // cp.async.bulk.tensor.4d ... complete_tx
void tma_store_4d(const CUtensorMap* map, uint32_t source, int32_t column, int32_t middle, int32_t row, int32_t batch,
                  int line);                                                   // cp.async.bulk.tensor.4d.global ... bulk_group
void tma_reduce_add_2d(const CUtensorMap* map, uint32_t source, int32_t inner, int32_t outer,
                       int line);  // cp.reduce.async.bulk.tensor.2d ... .add: as tma_store_2d, each element added
void bulk_commit_group(int line);                                              // cp.async.bulk.commit_group
void bulk_wait_group_read(int pending, int line);                              // cp.async.bulk.wait_group.read N
void bulk_wait_group(int pending, int line);                                   // cp.async.bulk.wait_group N
void fence_proxy_async(int line);                                              // fence.proxy.async.shared::cta
// An ordinary load of `bytes` of shared memory (ld.shared, not an asm helper's): checked against
// the TMA writes of those bytes (tilec_shared_read, a computed B's weight).
void shared_read(const void* address, uint32_t bytes, int line);
// warps, barriers, registers
bool elect_one(int line);                                                      // elect.sync _|P, 0xffffffff
void named_barrier_sync(uint32_t id, uint32_t threads, int line);              // bar.sync
void named_barrier_arrive(uint32_t id, uint32_t threads, int line);            // bar.arrive
void setmaxnreg(bool increase, uint32_t registers, int line);                  // setmaxnreg.{inc,dec}.sync.aligned.u32
// WGMMA (sm_90a)
// tf32: f32 bits, the low 13 of the mantissa ignored; s8/u8: 8-bit integers (s32 accumulators).
enum class Operand { f16, bf16, e4m3, e5m2, tf32, s8, u8 };
void wgmma_fence(int line);                                                    // wgmma.fence.sync.aligned
void wgmma_commit_group(int line);                                             // wgmma.commit_group.sync.aligned
void wgmma_wait_group(int pending, int line);                                  // wgmma.wait_group.sync.aligned N
// wgmma.mma_async.sync.aligned.m64n{n}k{K}.f32.{a_type}.{b_type} (K: 32 bytes of the types; they
// differ only as e4m3 and e5m2): d holds n/2 f32 registers; A from shared memory (a_descriptor)
// or, when a_registers is not null (16-bit types and e4m3/e5m2), from 4 registers.
void wgmma_mma_async(float* d, int n, Operand a_type, Operand b_type, uint64_t a_descriptor, const uint32_t* a_registers,
                     uint64_t b_descriptor, bool scale_d, int scale_a, int scale_b, int trans_a, int trans_b,
                     int line);
// wgmma.mma_async.sync.aligned.m64n{n}k32.s32.{a_type}.{b_type} (s8/u8 in any combination): d
// holds n/2 s32 registers in the f32 accumulator layout, sums wrap at 32 bits. PTX gives the
// integer forms no scale-a/b or transpose immediates and reads A from shared memory: the call
// passes a_registers = nullptr, scale_a = scale_b = 1, trans_a = trans_b = 0.
void wgmma_mma_async(int32_t* d, int n, Operand a_type, Operand b_type, uint64_t a_descriptor,
                     const uint32_t* a_registers, uint64_t b_descriptor, bool scale_d, int scale_a, int scale_b,
                     int trans_a, int trans_b, int line);
// tcgen05 (sm_100a)
void tcgen05_alloc(uint32_t slot, uint32_t columns, int line);                 // tcgen05.alloc.cta_group::1
void tcgen05_relinquish_alloc_permit(int line);                                // tcgen05.relinquish_alloc_permit
void tcgen05_dealloc(uint32_t base, uint32_t columns, int line);               // tcgen05.dealloc.cta_group::1
void tcgen05_fence_before_thread_sync(int line);                               // tcgen05.fence::before_thread_sync
void tcgen05_fence_after_thread_sync(int line);                                // tcgen05.fence::after_thread_sync
// tcgen05.mma.cta_group::1.kind::{f16|tf32|f8f6f4|i8} [tmem], a_desc, b_desc, idesc, accumulate
// (kind::i8: s8/u8 operands, s32 accumulators whose sums wrap at 32 bits)
enum class MmaKind { f16, tf32, f8f6f4, i8 };
void tcgen05_mma(uint32_t tmem, uint64_t a_descriptor, uint64_t b_descriptor, uint32_t idesc, MmaKind kind,
                 bool accumulate, int line);
void tcgen05_commit(uint32_t barrier, int line);                               // tcgen05.commit ... mbarrier::arrive::one
// tcgen05.ld.sync.aligned.32x32b.x{count}.b32
void tcgen05_ld_32x32b(uint32_t address, uint32_t* values, int count, int line);
void tcgen05_wait_ld(int line);                                                // tcgen05.wait::ld.sync.aligned
}  // namespace tilec_emu::ptx

// --- 6. the emulation driver's side ---------------------------------------------------------------
// A driver main() (tilec emulate writes one per kernel) calls configure() first, then the
// launcher, then returns finish(status). Options it consumes from argv (others are left):
//   --policy eager|lazy|random   when asynchronous operations (TMA, WGMMA, tcgen05.mma) read and
//                                write: at issue, as late as possible, or at random points (default eager)
//   --seed N                     the random policy's seed (default 1)
//   --sms N                      the SM count the launcher sees (default 4)
//   --workers N                  executor threads running CTAs (default 1)
//   --no-hazards                 skip the happens-before checker (faster; deadlocks still reported)
//   --bounds end|start           which end of each allocation a guard page borders (default end):
//                                an access past it is reported (exit_memory) with the tensor's name
// Reports go to stderr as `FILE.cu:LINE: error: KIND: message` (with the .tile line when the .cu
// has a `(line N)` comment above it) followed by `note:` lines.
namespace tilec_emu {
enum ExitStatus { exit_ok = 0, exit_usage = 1, exit_internal = 2, exit_hazard = 3, exit_deadlock = 4,
                  exit_launch_error = 5, exit_memory = 6 };
bool configure(int& argc, char** argv, const char* cu_path);
int finish(cudaError_t launch_status);
// Device memory of `bytes` between guard pages (after configure, which reads --bounds): an access
// that reaches a guard is reported naming `name` ("tensor X") and ends the program with
// exit_memory. The driver reads each tensor into one; cudaMallocAsync makes one too.
void* allocate_global(size_t bytes, const char* name);
void free_global(void* pointer);
}  // namespace tilec_emu
