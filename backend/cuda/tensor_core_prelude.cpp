// backend/cuda/tensor_core_prelude.cpp — PTX wrappers for tensor-core kernels (see the header).
//
// Spellings follow ../shared/reference/ptx (compiled with nvcc 13 for sm_90a and sm_100a):
// mbarrier.try_wait.parity loops, arrive.expect_tx, the shared::cluster spelling of the 2-D TMA
// load, elect.sync, setmaxnreg, wgmma.fence / commit_group / wait_group and tcgen05's alloc, mma,
// commit, ld and dealloc. Shared-memory matrix descriptors (both targets): start address, leading
// byte offset and stride byte offset in 16-byte units at bits 0, 16 and 32; sm_90a puts the
// 128-byte swizzle mode (1) at bits 62-63, sm_100a a fixed 1 at bit 46 and its 128-byte swizzle
// mode (2) at bits 61-63.
//
// Every helper with inline PTX keeps its asm inside `#ifndef TILEC_EMULATE`; its `#else` body
// calls the instruction's emulation, tilec_emu::ptx::* in runtime/emulate/include/tilec_emulate.h
// (runtime/emulate/ptx_table.h maps each PTX spelling to its function; tests/cuda/
// emulation_contract_test.cpp checks every expected .cu against it), passing the caller's line.
#include "backend/cuda/tensor_core_prelude.h"

#include <utility>

#include <fmt/core.h>

#include "backend/target.h"

namespace tilec::cuda {

namespace {

// A wrapper's types: A's and B's PTX types, "bf16" for both or "e4m3_e5m2" when they differ.
std::pair<std::string, std::string> operand_types(const std::string& types) {
  const size_t cut = types.find('_');
  if (cut == std::string::npos) return {types, types};
  return {types.substr(0, cut), types.substr(cut + 1)};
}

constexpr std::string_view kCommon = R"(
// ---------------------------------------------------------------------------------------------
// Tensor-core helpers: mbarriers, TMA, named barriers, register rebalancing and shared-memory
// matrix descriptors. Device code only runs in the arch-guarded kernel bodies below.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t tilec_shared_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}
// Each helper below that wraps PTX has two bodies: the asm nvcc compiles, and under
// TILEC_EMULATE (`tilec emulate`) the call of the instruction's emulation in
// runtime/emulate/include/tilec_emulate.h, with the caller's line (TILEC_SITE).
__device__ __forceinline__ void tilec_mbarrier_init(uint32_t barrier, uint32_t count TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(barrier), "r"(count));
#else
  ::tilec_emu::ptx::mbarrier_init(barrier, count, tilec_line);
#endif
}
// Makes the initialized barriers visible to the other threads and to the async proxy (TMA).
__device__ __forceinline__ void tilec_fence_barrier_init(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
  ::tilec_emu::ptx::fence_mbarrier_init(tilec_line);
  ::tilec_emu::ptx::fence_proxy_async(tilec_line);
#endif
}
// Spins until the phase with parity `parity` of the barrier has completed.
__device__ __forceinline__ void tilec_mbarrier_wait(uint32_t barrier, uint32_t parity TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("{\n .reg .pred done;\n wait_again:\n"
               " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               " @!done bra wait_again;\n}" :: "r"(barrier), "r"(parity) : "memory");
#else
  ::tilec_emu::ptx::mbarrier_wait_parity(barrier, parity, tilec_line);
#endif
}
__device__ __forceinline__ void tilec_mbarrier_arrive(uint32_t barrier TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(barrier) : "memory");
#else
  ::tilec_emu::ptx::mbarrier_arrive(barrier, tilec_line);
#endif
}
// Arrives and tells the barrier to expect `bytes` more from the TMA loads completing on it.
__device__ __forceinline__ void tilec_mbarrier_arrive_expect_tx(uint32_t barrier, uint32_t bytes TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(barrier), "r"(bytes) : "memory");
#else
  ::tilec_emu::ptx::mbarrier_arrive_expect_tx(barrier, bytes, tilec_line);
#endif
}
// A TMA coordinate (32 bits) from an index computed from data or a scalar: saturated, so that one
// far outside the tensor stays outside (zero-filled, not written) instead of wrapping into it; at
// most 2^31 - 257, so no box of up to 256 elements starting there wraps either.
__device__ __forceinline__ int32_t tilec_tma_coordinate(int64_t coordinate) {
  const int64_t highest = INT32_MAX - 256;
  return static_cast<int32_t>(coordinate < INT32_MIN ? INT32_MIN : coordinate > highest ? highest : coordinate);
}
// One box of a 2-D tensor map into shared memory; completes `bytes` on `barrier`. Coordinates
// are elements, innermost first; out-of-bounds elements are filled with zeros.
__device__ __forceinline__ void tilec_tma_load_2d(uint32_t destination, const CUtensorMap* map, int32_t inner,
                                                  int32_t outer, uint32_t barrier TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4}], [%2];"
               :: "r"(destination), "l"(map), "r"(barrier), "r"(inner), "r"(outer) : "memory");
#else
  ::tilec_emu::ptx::tma_load_2d(destination, map, inner, outer, barrier, tilec_line);
#endif
}
// The reverse: a box from shared memory to the tensor at (inner, outer), in this thread's bulk
// group; the parts of the box outside the tensor are not written.
__device__ __forceinline__ void tilec_tma_store_2d(const CUtensorMap* map, uint32_t source, int32_t inner,
                                                   int32_t outer TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               :: "l"(map), "r"(inner), "r"(outer), "r"(source) : "memory");
#else
  ::tilec_emu::ptx::tma_store_2d(map, source, inner, outer, tilec_line);
#endif
}
__device__ __forceinline__ void tilec_bulk_commit(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#else
  ::tilec_emu::ptx::bulk_commit_group(tilec_line);
#endif
}
// Waits until at most `Pending` of this thread's bulk groups still read shared memory.
template <int Pending> __device__ __forceinline__ void tilec_bulk_wait_read(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(Pending) : "memory");
#else
  ::tilec_emu::ptx::bulk_wait_group_read(Pending, tilec_line);
#endif
}
// Waits until this thread's bulk groups are complete (their writes done).
__device__ __forceinline__ void tilec_bulk_wait_all(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#else
  ::tilec_emu::ptx::bulk_wait_group(0, tilec_line);
#endif
}
// Makes this thread's ordinary shared-memory writes visible to the async proxy (TMA, tcgen05.mma).
__device__ __forceinline__ void tilec_fence_proxy_async(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
  ::tilec_emu::ptx::fence_proxy_async(tilec_line);
#endif
}
// True in one lane of the (converged) warp.
__device__ __forceinline__ bool tilec_elect_one(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  uint32_t elected = 0;
  asm volatile("{\n .reg .pred P;\n elect.sync _|P, 0xffffffff;\n selp.u32 %0, 1, 0, P;\n}" : "=r"(elected));
  return elected != 0;
#else
  return ::tilec_emu::ptx::elect_one(tilec_line);
#endif
}
__device__ __forceinline__ void tilec_named_barrier_sync(uint32_t id, uint32_t threads TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
#else
  ::tilec_emu::ptx::named_barrier_sync(id, threads, tilec_line);
#endif
}
__device__ __forceinline__ void tilec_named_barrier_arrive(uint32_t id, uint32_t threads TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(threads) : "memory");
#else
  ::tilec_emu::ptx::named_barrier_arrive(id, threads, tilec_line);
#endif
}
// `value`, which the compiler may not take to equal any other: each element-by-element store
// takes the thread's position through one, so its bounds and masks per element are not kept for
// the tile's next store (kept, they spilled: a triangle mask and its complement stored from one
// accumulator). The empty asm constrains the compiler only; it emits no instruction.
__device__ __forceinline__ int tilec_opaque(int value TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("" : "+r"(value));
#else
  (void)tilec_line;  // no instruction to emulate
#endif
  return value;
}
template <uint32_t Registers> __device__ __forceinline__ void tilec_lower_registers(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(Registers));
#else
  ::tilec_emu::ptx::setmaxnreg(false, Registers, tilec_line);
#endif
}
template <uint32_t Registers> __device__ __forceinline__ void tilec_raise_registers(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(Registers));
#else
  ::tilec_emu::ptx::setmaxnreg(true, Registers, tilec_line);
#endif
}

// Host: encodes a tensor map through the driver's cuTensorMapEncodeTiled, looked up through the
// runtime, so the program needs no -lcuda. Extents and boxes innermost first; `strides` in bytes,
// of dimensions 1 and up.
typedef CUresult (*TilecEncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
inline cudaError_t tilec_encode_tensor_map(CUtensorMap* map, CUtensorMapDataType type, const void* base, uint32_t rank,
                                           const cuuint64_t* extents, const cuuint64_t* strides, const cuuint32_t* box,
                                           CUtensorMapSwizzle swizzle) {
  // Looked up once, by the first launch of any thread (a static's initialization is thread-safe).
  struct Lookup {
    cudaError_t status;
    TilecEncodeTiled encode;
  };
  static const Lookup lookup = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000,
                                                                cudaEnableDefault, &found);
    if (status != cudaSuccess) return Lookup{status, nullptr};
    if (found != cudaDriverEntryPointSuccess || !entry) return Lookup{cudaErrorNotSupported, nullptr};
    return Lookup{cudaSuccess, reinterpret_cast<TilecEncodeTiled>(entry)};
  }();
  if (lookup.status != cudaSuccess) return lookup.status;
  const TilecEncodeTiled encode = lookup.encode;
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult result = encode(map, type, rank, const_cast<void*>(base), extents, strides, box, element_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// Host: a tensor map over a row-major matrix (`rows` x `columns`, `row_bytes` apart) with boxes
// of `box_rows` x `box_columns` elements, swizzled in shared memory (128-byte rows, or the 64- or
// 32-byte swizzle for boxes of rows that short); of rank 3, over
// `batches` such matrices one after another, with boxes of one matrix.
inline cudaError_t tilec_tensor_map(CUtensorMap* map, CUtensorMapDataType type, const void* base, uint32_t rank,
                                    int64_t batches, int64_t rows, int64_t columns, int64_t row_bytes, uint32_t box_rows,
                                    uint32_t box_columns, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  // TMA needs a 16-byte aligned base and row pitch (e.g. bf16 rows of a multiple of 8 elements),
  // and its coordinates are signed 32-bit: an extent past 2^31 - 1 would be encoded (the driver
  // takes up to 2^32) but boxes past there never addressed (loads of zeros, dropped stores); and
  // tilec_tma_coordinate saturates computed coordinates at 2^31 - 257, which must lie past the end.
  constexpr int64_t kLargest = INT32_MAX - 256;
  if ((rank != 2 && rank != 3) || batches < 1 || rows < 1 || columns < 1 || row_bytes % 16 != 0 ||
      reinterpret_cast<uintptr_t>(base) % 16 != 0 || batches > kLargest || rows > kLargest || columns > kLargest)
    return cudaErrorInvalidValue;
  const cuuint64_t extents[3] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows),
                                 static_cast<cuuint64_t>(batches)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(row_bytes), static_cast<cuuint64_t>(row_bytes * rows)};
  const cuuint32_t box[3] = {box_columns, box_rows, 1};
  return tilec_encode_tensor_map(map, type, base, rank, extents, strides, box, swizzle);
}

// Host: the memory one tensor's maps address. TMA needs a 16-byte aligned base and row pitch and
// a non-empty extent; a tensor without them (bf16 rows of K = 100, a pointer into a row, K = 0)
// is copied, in stream order, to rows padded to a multiple of 16 bytes (an empty one to one zero
// element, which reads as the zeros outside it and drops stores), and the maps address the copy.
// finish() copies a stored tensor's rows back and frees the copy; an early return frees it too.
struct TilecTmaTensor {
  void* user = nullptr;
  void* data = nullptr;
  int64_t rows = 0, columns = 0, row_bytes = 0, pitch = 0;
  bool copied = false, stored = false;
  cudaStream_t stream = nullptr;

  bool empty() const { return rows < 1 || columns < 1; }
  int64_t map_rows() const { return empty() ? 1 : rows; }
  int64_t map_columns() const { return empty() ? 1 : columns; }
  cudaError_t prepare(const void* base, int64_t tensor_rows, int64_t tensor_columns, int64_t element_bytes,
                      bool written, cudaStream_t on) {
    user = const_cast<void*>(base);
    rows = tensor_rows, columns = tensor_columns, row_bytes = tensor_columns * element_bytes;
    stored = written, stream = on;
    if (!empty() && row_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(base) % 16 == 0) {
      data = user, pitch = row_bytes;
      return cudaSuccess;
    }
    pitch = empty() ? 16 : (row_bytes + 15) / 16 * 16;
    if (const cudaError_t status = cudaMallocAsync(&data, static_cast<size_t>(map_rows() * pitch), stream); status != cudaSuccess)
      return status;
    copied = true;
    if (empty()) return cudaMemsetAsync(data, 0, static_cast<size_t>(pitch), stream);
    return cudaMemcpy2DAsync(data, static_cast<size_t>(pitch), user, static_cast<size_t>(row_bytes),
                             static_cast<size_t>(row_bytes), static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, stream);
  }
  cudaError_t finish() {
    if (!copied) return cudaSuccess;
    cudaError_t status = cudaSuccess;
    if (stored && !empty())
      status = cudaMemcpy2DAsync(user, static_cast<size_t>(row_bytes), data, static_cast<size_t>(pitch),
                                 static_cast<size_t>(row_bytes), static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, stream);
    copied = false;
    const cudaError_t freed = cudaFreeAsync(data, stream);
    return status != cudaSuccess ? status : freed;
  }
  ~TilecTmaTensor() {
    if (copied) cudaFreeAsync(data, stream);
  }
};
)";

// Kernels reading or writing rank-3 tensors: the 3-D forms of the TMA load and store (a box of
// one matrix of the batch: coordinates column, row, batch).
constexpr std::string_view kTma3d = R"(
// A box of a 3-D tensor map into shared memory at (inner, middle, outer); as tilec_tma_load_2d.
__device__ __forceinline__ void tilec_tma_load_3d(uint32_t destination, const CUtensorMap* map, int32_t inner,
                                                  int32_t middle, int32_t outer, uint32_t barrier TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4, %5}], [%2];"
               :: "r"(destination), "l"(map), "r"(barrier), "r"(inner), "r"(middle), "r"(outer) : "memory");
#else
  ::tilec_emu::ptx::tma_load_3d(destination, map, inner, middle, outer, barrier, tilec_line);
#endif
}
// The reverse, as tilec_tma_store_2d.
__device__ __forceinline__ void tilec_tma_store_3d(const CUtensorMap* map, uint32_t source, int32_t inner,
                                                   int32_t middle, int32_t outer TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
               :: "l"(map), "r"(inner), "r"(middle), "r"(outer), "r"(source) : "memory");
#else
  ::tilec_emu::ptx::tma_store_3d(map, source, inner, middle, outer, tilec_line);
#endif
}
)";

// Kernels whose TMA boxes have middle dimensions (a <BQ, D> tile of a [B, S, H, D] tensor): the
// 4-D map and the 4-D forms of the TMA load and store (coordinates column, middle, row, batch).
constexpr std::string_view kTma4d = R"(
// Host: a tensor map over `batches` x `rows` x `middles` x `columns` elements (row-major; rows of
// `columns` lie `row_bytes` apart), with boxes of `box_rows` rows of `box_columns` columns at one
// middle and one batch: a tile whose rows are middles · row_bytes apart, swizzled as
// tilec_tensor_map's.
inline cudaError_t tilec_tensor_map_4d(CUtensorMap* map, CUtensorMapDataType type, const void* base, int64_t batches,
                                       int64_t rows, int64_t middles, int64_t columns, int64_t row_bytes,
                                       uint32_t box_rows, uint32_t box_columns,
                                       CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  if (batches < 1 || rows < 1 || middles < 1 || columns < 1 || row_bytes % 16 != 0 ||
      reinterpret_cast<uintptr_t>(base) % 16 != 0 || batches > INT32_MAX - 256 || rows > INT32_MAX - 256 ||
      middles > INT32_MAX - 256 || columns > INT32_MAX - 256)  // 32-bit coordinates, as tilec_tensor_map's
    return cudaErrorInvalidValue;
  const cuuint64_t extents[4] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(middles),
                                 static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(batches)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(row_bytes), static_cast<cuuint64_t>(row_bytes * middles),
                                 static_cast<cuuint64_t>(row_bytes * middles * rows)};
  const cuuint32_t box[4] = {box_columns, 1, box_rows, 1};
  return tilec_encode_tensor_map(map, type, base, 4, extents, strides, box, swizzle);
}
// A box of a 4-D tensor map into shared memory at (column, middle, row, batch); as tilec_tma_load_2d.
__device__ __forceinline__ void tilec_tma_load_4d(uint32_t destination, const CUtensorMap* map, int32_t column,
                                                  int32_t middle, int32_t row, int32_t batch, uint32_t barrier TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4, %5, %6}], [%2];"
               :: "r"(destination), "l"(map), "r"(barrier), "r"(column), "r"(middle), "r"(row), "r"(batch) : "memory");
#else
  ::tilec_emu::ptx::tma_load_4d(destination, map, column, middle, row, batch, barrier, tilec_line);
#endif
}
// The reverse, as tilec_tma_store_2d.
__device__ __forceinline__ void tilec_tma_store_4d(const CUtensorMap* map, uint32_t source, int32_t column,
                                                   int32_t middle, int32_t row, int32_t batch TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];"
               :: "l"(map), "r"(column), "r"(middle), "r"(row), "r"(batch), "r"(source) : "memory");
#else
  ::tilec_emu::ptx::tma_store_4d(map, source, column, middle, row, batch, tilec_line);
#endif
}
)";

constexpr std::string_view kHopper = R"(
// sm_90a: WGMMA. A shared-memory matrix descriptor with the 128-, 64- or 32-byte swizzle
// (layout type 1, 2 or 3 in bits 62-63: 3 - swizzle_bytes / 64).
__device__ __forceinline__ uint64_t tilec_matrix_descriptor(uint32_t address, uint32_t leading_bytes,
                                                            uint32_t stride_bytes, uint32_t swizzle_bytes = 128) {
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | static_cast<uint64_t>(leading_bytes >> 4) << 16 |
         static_cast<uint64_t>(stride_bytes >> 4) << 32 | static_cast<uint64_t>(3 - swizzle_bytes / 64) << 62;
}
__device__ __forceinline__ void tilec_wgmma_fence(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#else
  ::tilec_emu::ptx::wgmma_fence(tilec_line);
#endif
}
__device__ __forceinline__ void tilec_wgmma_commit(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#else
  ::tilec_emu::ptx::wgmma_commit_group(tilec_line);
#endif
}
template <int Pending> __device__ __forceinline__ void tilec_wgmma_wait(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(Pending) : "memory");
#else
  ::tilec_emu::ptx::wgmma_wait_group(Pending, tilec_line);
#endif
}
// An accumulator register the WGMMAs a wait retired wrote: the wait's asm names no register, so
// this empty one keeps the register's reads after it (a bitcast read before it made ptxas
// serialize every WGMMA, C7514). Nothing to do in emulation, where the wait is a call.
__device__ __forceinline__ void tilec_wgmma_hold(float& value TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("" : "+f"(value) :: "memory");
#else
  (void)value, (void)tilec_line;  // no instruction to emulate
#endif
}
// Two 16-bit elements in one register, the first in the low half (a WGMMA A fragment register).
__device__ __forceinline__ uint32_t tilec_pack_pair(__nv_bfloat16 low, __nv_bfloat16 high) {
  return static_cast<uint32_t>(__bfloat16_as_ushort(low)) | static_cast<uint32_t>(__bfloat16_as_ushort(high)) << 16;
}
__device__ __forceinline__ uint32_t tilec_pack_pair(__half low, __half high) {
  return static_cast<uint32_t>(__half_as_ushort(low)) | static_cast<uint32_t>(__half_as_ushort(high)) << 16;
}
)";

constexpr std::string_view kBlackwell = R"(
// sm_100a: tcgen05 and TMEM. A shared-memory matrix descriptor with the 128-, 64- or 32-byte
// swizzle (layout type 2, 4 or 6 in bits 61-63, i.e. 3 - swizzle_bytes / 64 at bit 62), version
// 1 in bit 46.
__device__ __forceinline__ uint64_t tilec_matrix_descriptor(uint32_t address, uint32_t leading_bytes,
                                                            uint32_t stride_bytes, uint32_t swizzle_bytes = 128) {
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | static_cast<uint64_t>(leading_bytes >> 4) << 16 |
         static_cast<uint64_t>(stride_bytes >> 4) << 32 | 1ull << 46 | static_cast<uint64_t>(3 - swizzle_bytes / 64) << 62;
}
// Allocates `Columns` TMEM columns (a power of two, 32..512); the base address goes to `slot`.
template <uint32_t Columns> __device__ __forceinline__ void tilec_tmem_alloc(uint32_t slot TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" :: "r"(slot), "n"(Columns) : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
#else
  ::tilec_emu::ptx::tcgen05_alloc(slot, Columns, tilec_line);
  ::tilec_emu::ptx::tcgen05_relinquish_alloc_permit(tilec_line);
#endif
}
template <uint32_t Columns> __device__ __forceinline__ void tilec_tmem_dealloc(uint32_t base TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(base), "n"(Columns) : "memory");
#else
  ::tilec_emu::ptx::tcgen05_dealloc(base, Columns, tilec_line);
#endif
}
__device__ __forceinline__ void tilec_tcgen05_before_sync(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
#else
  ::tilec_emu::ptx::tcgen05_fence_before_thread_sync(tilec_line);
#endif
}
__device__ __forceinline__ void tilec_tcgen05_after_sync(TILEC_SITE_ONLY) {
#ifndef TILEC_EMULATE
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
#else
  ::tilec_emu::ptx::tcgen05_fence_after_thread_sync(tilec_line);
#endif
}
// D[tmem] (+)= A[smem] * B[smem]; `accumulate` false overwrites D.
__device__ __forceinline__ void tilec_tcgen05_mma(uint32_t tmem, uint64_t a, uint64_t b, uint32_t instruction,
                                                  bool accumulate TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
               "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}"
               :: "r"(tmem), "l"(a), "l"(b), "r"(instruction), "r"(static_cast<uint32_t>(accumulate)) : "memory");
#else
  ::tilec_emu::ptx::tcgen05_mma(tmem, a, b, instruction, ::tilec_emu::ptx::MmaKind::f16, accumulate, tilec_line);
#endif
}
// Arrives on `barrier` once every tcgen05.mma this thread issued before has completed.
__device__ __forceinline__ void tilec_tcgen05_commit(uint32_t barrier TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(barrier) : "memory");
#else
  ::tilec_emu::ptx::tcgen05_commit(barrier, tilec_line);
#endif
}
)";

// tilec_tmem_load_W: tcgen05.ld 32x32b.xW, W consecutive f32 columns of this thread's TMEM lane
// (the warp's 32 lanes start at `address`), then tcgen05.wait::ld. The operand list is spelled
// out: 16 registers per line of the asm string, 5 outputs per line of constraints.
std::string tmem_load_wrapper(int width) {
  std::string registers, outputs;
  for (int i = 0; i < width; ++i) {
    if (i > 0 && i % 16 == 0) registers += "\"\n               \"";
    registers += fmt::format("%{}{}", i, i + 1 < width ? "," : "");
    if (i > 0) outputs += i % 5 == 0 ? ",\n                 " : ", ";
    outputs += fmt::format("\"=r\"(values[{}])", i);
  }
  return fmt::format(
      "// {width} consecutive f32 columns of this thread's TMEM lane (the warp's 32 lanes start at `address`).\n"
      "__device__ __forceinline__ void tilec_tmem_load_{width}(uint32_t address, uint32_t (&values)[{width}] TILEC_SITE) {{\n"
      "#ifndef TILEC_EMULATE\n"
      "  asm volatile(\"tcgen05.ld.sync.aligned.32x32b.x{width}.b32 {{{registers}}}, [%{width}];\"\n"
      "               : {outputs}\n"
      "               : \"r\"(address));\n"
      "  asm volatile(\"tcgen05.wait::ld.sync.aligned;\" ::: \"memory\");\n"
      "#else\n"
      "  ::tilec_emu::ptx::tcgen05_ld_32x32b(address, values, {width}, tilec_line);\n"
      "  ::tilec_emu::ptx::tcgen05_wait_ld(tilec_line);\n"
      "#endif\n"
      "}}\n",
      fmt::arg("width", width), fmt::arg("registers", registers), fmt::arg("outputs", outputs));
}

// A tcgen05.mma wrapper of another kind than kind::f16 (kBlackwell's tilec_tcgen05_mma): `kind`
// is PTX's (f8f6f4, tf32) and the emulation's MmaKind; `what` says what the inputs are.
std::string tcgen05_kind_wrapper(const std::string& kind, const std::string& what) {
  const std::string name = "tilec_tcgen05_mma_" + kind;
  return fmt::format(
      "\n// {what}: D[tmem] (+)= A[smem] * B[smem].\n"
      "__device__ __forceinline__ void {name}(uint32_t tmem, uint64_t a, uint64_t b, uint32_t instruction,\n"
      "{indent}bool accumulate TILEC_SITE) {{\n"
      "#ifndef TILEC_EMULATE\n"
      "  asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %4, 0;\\n\"\n"
      "               \"tcgen05.mma.cta_group::1.kind::{kind} [%0], %1, %2, %3, p;\\n}}\"\n"
      "               :: \"r\"(tmem), \"l\"(a), \"l\"(b), \"r\"(instruction), \"r\"(static_cast<uint32_t>(accumulate)) : \"memory\");\n"
      "#else\n"
      "  ::tilec_emu::ptx::tcgen05_mma(tmem, a, b, instruction, ::tilec_emu::ptx::MmaKind::{kind}, accumulate, tilec_line);\n"
      "#endif\n"
      "}}\n",
      fmt::arg("what", what), fmt::arg("name", name), fmt::arg("kind", kind),
      fmt::arg("indent", std::string(std::string_view("__device__ __forceinline__ void (").size() + name.size(), ' ')));
}

// `%0,%1,...` and `"+f"(d[0]), ...` (`"+r"` for s32): the accumulator registers of an m64nN WGMMA
// in an asm statement.
void accumulator_operands(int64_t registers, bool integer, std::string& list, std::string& outputs) {
  for (int64_t i = 0; i < registers; ++i) {
    list += fmt::format("{}%{}", i ? "," : "", i);
    outputs += fmt::format("{}\"+{}\"(d[{}])", i ? ", " : "", integer ? 'r' : 'f', i);
    if (i % 8 == 7 && i + 1 < registers) outputs += "\n        ";
  }
}

// The immediates both wrappers pass: scale-d (D += A·B rather than D = A·B), scale-a, scale-b
// (no negation), trans-a (shared-memory A only): 0 for a K-major A ([M, K] loaded as is), 1 for
// an MN-major one (a transposed [K, M] load), and trans-b: 1 for an MN-major B ([K, N] loaded as
// is), 0 for a K-major one (a transposed [N, K] load).
constexpr int kScaleD = 1, kScaleA = 1, kScaleB = 1, kTransposeA = 0;
int transpose_b(bool b_k_major) { return b_k_major ? 0 : 1; }

// `wgmma.mma_async ... m64nNk16.f32.T.T`, A from shared memory, D += A·B: A K-major (trans-a =
// 0) or MN-major (1), B MN-major (trans-b = 1) or K-major (0). 8-bit floats (`m64nNk32`) and
// tf32 (`m64nNk8`): both operands K-major, and PTX takes no transpose immediates (the emulation
// call passes 0, 0); their A and B types may differ (e4m3 x e5m2: `element` "e4m3_e5m2").
// 8-bit integers (`m64nNk32.s32.s8.u8`): s32 registers, and PTX takes neither the scale nor the
// transpose immediates (the emulation call passes 1, 1, 0, 0).
// Emulated: tilec_emu::ptx::wgmma_mma_async with the same shape, types and immediates.
std::string wgmma_wrapper(const WgmmaShape& shape) {
  const int64_t n = shape.n;
  const std::string& element = shape.types;
  const bool b_k_major = shape.b_k_major, a_mn_major = shape.a_mn_major;
  const bool no_transposes = !shape.transposes;
  const auto [a_type, b_type] = operand_types(element);
  int64_t registers = n / 2;
  std::string list, outputs;
  accumulator_operands(registers, shape.integer, list, outputs);
  const int trans_a = a_mn_major ? 1 : kTransposeA, trans_b = no_transposes ? 0 : transpose_b(b_k_major);
  std::string immediates = shape.integer ? "" : fmt::format(", {}, {}", kScaleA, kScaleB);
  if (!no_transposes) immediates += fmt::format(", {}, {}", trans_a, trans_b);
  const std::string_view d_type = shape.integer ? "s32" : "f32";
  return fmt::format(
      "// D (64 x {0}, {d_type}, {1} registers per thread) += A (64 x {k}, {a_major}) * B ({k} x {0}, {b_major}){type}.\n"
      "__device__ __forceinline__ void {2}({d_element} (&d)[{1}], uint64_t a, uint64_t b TILEC_SITE) {{\n"
      "#ifndef TILEC_EMULATE\n"
      "  asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{5}, 0;\\n\"\n"
      "               \"wgmma.mma_async.sync.aligned.m64n{0}k{k}.{d_type}.{a_type}.{b_type} {{{4}}}, %{1}, %{6}, p{immediates};\\n}}\\n\"\n"
      "      : {7}\n"
      "      : \"l\"(a), \"l\"(b), \"n\"({8}));\n"
      "#else\n"
      "  ::tilec_emu::ptx::wgmma_mma_async(d, {0}, ::tilec_emu::ptx::Operand::{a_type}, ::tilec_emu::ptx::Operand::{b_type}, a,\n"
      "                                    nullptr, b, {9}, {10}, {11}, {12}, {13}, tilec_line);\n"
      "#endif\n"
      "}}\n",
      n, registers, wgmma_function(shape), element, list, registers + 2, registers + 1,
      outputs, kScaleD, kScaleD != 0 ? "true" : "false", kScaleA, kScaleB, trans_a, trans_b,
      fmt::arg("k", shape.k), fmt::arg("a_major", a_mn_major ? "M-major" : "K-major"),
      fmt::arg("b_major", b_k_major ? "K-major" : "N-major"),
      fmt::arg("type", !no_transposes ? std::string() : a_type == b_type ? ", " + a_type : ", " + a_type + " x " + b_type),
      fmt::arg("immediates", immediates), fmt::arg("a_type", a_type), fmt::arg("b_type", b_type),
      fmt::arg("d_type", d_type), fmt::arg("d_element", shape.integer ? "int32_t" : "float"));
}

// The same with A from registers: four 32-bit registers per thread. 16-bit types (`m64nNk16`):
// two elements per register, in the layout of a WGMMA accumulator's columns 16k..16k+15 (so an
// mma's result, cast, is an A operand). 8-bit floats (`m64nNk32`, A and B types possibly
// e4m3 x e5m2): four elements per register, lane mod 4 holding four consecutive columns
// (tilec_wgmma_a_bytes builds them from the accumulator layout), and PTX takes no transpose
// immediates for them. PTX has no trans-a for a register A; the emulation call passes
// kTransposeA (0).
std::string wgmma_register_a_wrapper(const WgmmaShape& shape) {
  const int64_t n = shape.n;
  const bool b_k_major = shape.b_k_major;
  const auto [a_type, b_type] = operand_types(shape.types);
  int64_t registers = n / 2;
  std::string list, outputs;
  accumulator_operands(registers, false, list, outputs);
  std::string immediates = fmt::format("{}, {}", kScaleA, kScaleB);
  if (shape.transposes) immediates += fmt::format(", {}", transpose_b(b_k_major));
  return fmt::format(
      "// D (64 x {0}, f32, {1} registers per thread) += A (64 x {k}, registers) * B ({k} x {0}, {16}){type}.\n"
      "__device__ __forceinline__ void {2}(float (&d)[{1}], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,\n"
      "    uint64_t b TILEC_SITE) {{\n"
      "#ifndef TILEC_EMULATE\n"
      "  asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{4}, 0;\\n\"\n"
      "               \"wgmma.mma_async.sync.aligned.m64n{0}k{k}.f32.{a_type}.{b_type} {{{3}}}, "
      "{{%{1}, %{5}, %{6}, %{7}}}, %{8}, p, {immediates};\\n}}\\n\"\n"
      "      : {9}\n"
      "      : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"l\"(b), \"n\"({10}));\n"
      "#else\n"
      "  const uint32_t a[4] = {{a0, a1, a2, a3}};\n"
      "  ::tilec_emu::ptx::wgmma_mma_async(d, {0}, ::tilec_emu::ptx::Operand::{a_type}, "
      "::tilec_emu::ptx::Operand::{b_type}, 0, a, b,\n"
      "                                    {15}, {11}, {12}, {13}, {14}, tilec_line);\n"
      "#endif\n"
      "}}\n",
      n, registers, wgmma_function(shape), list, registers + 5, registers + 1, registers + 2, registers + 3,
      registers + 4, outputs, kScaleD, kScaleA, kScaleB, kTransposeA, shape.transposes ? transpose_b(b_k_major) : 0,
      kScaleD != 0 ? "true" : "false", b_k_major ? "K-major" : "N-major",
      fmt::arg("k", shape.k), fmt::arg("a_type", a_type), fmt::arg("b_type", b_type),
      fmt::arg("immediates", immediates),
      fmt::arg("type", shape.transposes   ? std::string()
                       : a_type == b_type ? ", " + a_type
                                          : ", " + a_type + " x " + b_type));
}

// CUTLASS's warpgroup_fence_operand: an empty asm reading and writing each accumulator register.
constexpr std::string_view kWgmmaPin = R"(
// The accumulator's registers pinned where they stand: an empty asm that reads and writes each,
// so nvcc cannot sink what computed them (a fill, a copy, a rescale) past wgmma.fence into the
// WGMMA's operands (ptxas then injects a warpgroup.arrive before it: note C7519).
template <typename T, int N> __device__ __forceinline__ void tilec_wgmma_pin(T (&d)[N] TILEC_SITE) {
#ifndef TILEC_EMULATE
  static_assert(sizeof(T) == 4, "WGMMA accumulators are 32-bit");
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(reinterpret_cast<uint32_t&>(d[i])) :: "memory");
#else
  (void)d, (void)tilec_line;  // no instruction: it only constrains nvcc
#endif
}
)";

// One register of WGMMA's 8-bit A fragment from the accumulator layout, in which lane q of each
// quad holds columns 2q and 2q+1 of every 8 (a row's two bytes per 8-column group): `word` is this
// lane's bytes of two neighbouring groups (the first group's in the low half). Lane q takes the
// four columns 4q..4q+3 of the two groups' 16: lanes 2(q mod 2) and 2(q mod 2) + 1 hold them, in the
// first group for q < 2 and in the second for q >= 2 (two shuffles from those lanes, then one byte
// permute: on an H200, fp8_attention ran 281 us against 331 us with three xor shuffles and a pick
// of halves, and 286 us with P through shared memory).
constexpr std::string_view kWgmmaAbytes = R"(
// Four 8-bit elements in one register, the first in the low byte.
template <typename T>
__device__ __forceinline__ uint32_t tilec_pack_bytes(T b0, T b1, T b2, T b3) {
  return static_cast<uint32_t>(b0.__x) | static_cast<uint32_t>(b1.__x) << 8 | static_cast<uint32_t>(b2.__x) << 16 |
         static_cast<uint32_t>(b3.__x) << 24;
}
// A register of WGMMA's 8-bit A fragment (lane q mod 4: columns 4q..4q+3 of 16) from `word`, this
// lane's bytes of two 8-column groups in the accumulator layout (columns 2q, 2q+1 of each; the
// first group in the low half): lanes 2(q mod 2) and 2(q mod 2) + 1 hold the four, in the first
// group for q < 2, the second for q >= 2.
__device__ __forceinline__ uint32_t tilec_wgmma_a_bytes(uint32_t word) {
  const unsigned q = threadIdx.x % 4, source = (threadIdx.x & ~3u) | (q & 1u) << 1;  // lane 2(q mod 2)
  const uint32_t low = __shfl_sync(0xffffffffu, word, source), high = __shfl_sync(0xffffffffu, word, source + 1);
  return __byte_perm(low, high, q < 2 ? 0x5410 : 0x7632);  // the two low halves, or the two high ones
}
)";

// `store T[i] += tile` through TMA (a rank-2 tensor): cp.reduce.async.bulk.tensor's .add.
constexpr std::string_view kTmaReduceAdd = R"(
// As tilec_tma_store_2d, but each element of the box is added to the tensor's, atomically, in the
// tensor map's type (`store T[i] += tile`: split-K and other CTAs adding into one tile).
__device__ __forceinline__ void tilec_tma_reduce_add_2d(const CUtensorMap* map, uint32_t source, int32_t inner,
                                                        int32_t outer TILEC_SITE) {
#ifndef TILEC_EMULATE
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];"
               :: "l"(map), "r"(inner), "r"(outer), "r"(source) : "memory");
#else
  ::tilec_emu::ptx::tma_reduce_add_2d(map, source, inner, outer, tilec_line);
#endif
}
)";

// A computed B's input that TMA copied, read element by element by the compute threads.
constexpr std::string_view kSharedRead = R"(
// One element of a stage buffer TMA fills, read by this thread with an ordinary load (a computed
// B's quantized weight). Emulated, the read is checked against the TMA writes of its bytes: it
// must come after the wait that completes the one it reads, and before the release that lets
// the next one overwrite it.
template <typename T>
__device__ __forceinline__ T tilec_shared_read(const unsigned char* address TILEC_SITE) {
#ifdef TILEC_EMULATE
  ::tilec_emu::ptx::shared_read(address, sizeof(T), tilec_line);
#endif
  return *reinterpret_cast<const T*>(address);
}
)";

}  // namespace

std::string wgmma_function(const WgmmaShape& shape) {
  return fmt::format("tilec_wgmma_m64n{}k{}_{}{}{}{}", shape.n, shape.k, shape.types,
                     shape.register_a ? "_register_a" : "", shape.a_mn_major ? "_am" : "", shape.b_k_major ? "_bk" : "");
}

std::string tensor_core_prelude(const TensorCoreNeeds& needs) {
  std::string out(kCommon);
  // Built for another architecture (-arch=sm_90 without the "a", a second -gencode), the kernels
  // trap at launch (their arch guard); nvcc says so while compiling instead of the build passing.
  out += fmt::format(
      "\n// Device code for another architecture than {0} traps at launch: say so when it is compiled.\n"
      "#if defined(__CUDA_ARCH__) && !defined({1})\n"
      "#warning \"tilec: this file's tensor-core kernels are for {0} and trap on any other architecture: compile it "
      "with -gencode arch=compute_{2},code=sm_{2}\"\n"
      "#endif\n",
      needs.target->name, needs.target->feature_macro, needs.target->architecture);
  if (needs.tma_3d) out += kTma3d;
  if (needs.tma_4d) out += kTma4d;
  if (needs.tma_reduce_add) out += kTmaReduceAdd;
  if (needs.shared_read) out += kSharedRead;
  if (needs.target->mma == target::MmaFamily::tcgen05) {
    out += kBlackwell;
    for (int width : needs.tmem_load_widths) out += tmem_load_wrapper(width);
    for (const auto& [kind, row] : needs.tcgen05_kinds)
      if (kind != "f16") out += tcgen05_kind_wrapper(std::string(kind), std::string(row->about));
    return out;
  }
  out += kHopper;
  if (needs.wgmma_operand_fence) out += kWgmmaPin;
  for (const WgmmaShape& shape : needs.wgmma_shapes)
    if (shape.register_a && shape.k == 32) {
      out += kWgmmaAbytes;
      break;
    }
  for (const WgmmaShape& shape : needs.wgmma_shapes)
    out += shape.register_a ? wgmma_register_a_wrapper(shape) : wgmma_wrapper(shape);
  return out;
}

}  // namespace tilec::cuda
