// backend/cuda/tensor_core_prelude.h — the PTX helpers a tensor-core kernel's .cu file needs.
//
// One block of device functions for mbarriers, TMA, named barriers, setmaxnreg and shared-memory
// matrix descriptors, and the host function that encodes a 2-D or 3-D tensor map through the driver
// entry point (no -lcuda); then, per shape a kernel uses, a WGMMA (sm_90a) or a TMEM load
// (sm_100a) wrapper, since their register lists are spelled out operand by operand.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace tilec::target {
struct MmaInstruction;
struct Target;
}  // namespace tilec::target

namespace tilec::cuda {

// One WGMMA instruction a kernel issues, m64nNkK with f32 (or, for 8-bit integers, s32)
// accumulators: the prelude writes one wrapper per distinct shape, and the emitter calls it by
// wgmma_function(shape).
struct WgmmaShape {
  int64_t n = 0;
  int64_t k = 0;  // the MMA form's K (target.h): 16 for 16-bit inputs, 32 for 8-bit ones, 8 for tf32
  // The operand types as PTX spells them, A's then B's where they differ (wgmma_types in
  // tensor_core_analysis.h): "bf16", "f16", "e4m3", "e4m3_e5m2", "tf32", "s8", "s8_u8".
  std::string types;
  bool integer = false;     // s32 accumulators (8-bit integer inputs): no scale-a/b immediates
  bool transposes = false;  // the form takes MN-major operands: PTX spells the transpose immediates
  bool register_a = false;  // A from registers (16-bit and 8-bit floats)
  bool a_mn_major = false;  // A MN-major in shared memory (a transposed A)
  bool b_k_major = false;   // B K-major (8-bit and tf32 always)
  auto operator<=>(const WgmmaShape&) const = default;
};

// What the kernels of one file use; the prelude spells exactly that.
struct TensorCoreNeeds {
  const target::Target* target = nullptr;  // backend/target.h
  std::set<WgmmaShape> wgmma_shapes;       // sm_90a
  // sm_100a: the tcgen05.mma kinds used ("f16", "f8f6f4", "tf32") and a row of each; every kind
  // but kind::f16 (in the common part) gets a wrapper.
  std::map<std::string_view, const target::MmaInstruction*> tcgen05_kinds;
  // sm_100a: the tcgen05.ld 32x32b widths read (32: every kernel; 16 or 8: columns per
  // warpgroup of a narrow tile), one tilec_tmem_load_W each.
  std::set<int> tmem_load_widths = {32};
  bool tma_3d = false;          // a TMA load or store of a rank-3 tensor (a batch of matrices)
  bool tma_4d = false;          // one through a box with middle dimensions ([BQ, 1, D] of [B, S, H, D])
  bool tma_reduce_add = false;  // `store T[i] += tile` through TMA (tilec_tma_reduce_add_2d)
  bool shared_read = false;     // a computed B reads a stage buffer TMA fills (tilec_shared_read)
  bool wgmma_operand_fence = false;  // sm_90a: an accumulator computed before the mma (tilec_wgmma_pin)
};

std::string tensor_core_prelude(const TensorCoreNeeds& needs);

// The name of the WGMMA wrapper for `shape` ("tilec_wgmma_m64n256k16_bf16", "..._register_a",
// "..._am", "..._bk").
std::string wgmma_function(const WgmmaShape& shape);

}  // namespace tilec::cuda
