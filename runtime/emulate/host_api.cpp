// runtime/emulate/host_api.cpp — the host side of the emulation: the driver's options and exit
// status, the CUDA runtime and driver calls a generated launcher makes, and the element-type
// conversions of cuda_fp16.h / cuda_bf16.h / cuda_fp8.h.
//
// Conversions round to nearest, ties to even, in one step from the source value: f16 and bf16
// overflow to infinity (IEEE), the f8 formats saturate to their largest finite value (the
// `satfinite` CUDA's __nv_fp8 constructors use); NaN stays NaN. They are written from the
// formats' definitions, independently of the interpreter's float_formats.cpp, so comparing the
// two runs checks both.
#include <algorithm>
#include <cfenv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "runtime/emulate/emulator.h"
#include "runtime/executor.h"

namespace tilec_emu {

namespace {

Options current_options;
std::mutex host_mutex;
cudaError_t last_error = cudaSuccess;
cudaError_t first_launch_error = cudaSuccess;
std::string error_detail;
uint64_t launched_ctas = 0, launched_threads = 0;
std::unique_ptr<tilec::runtime::Executor> shared_executor;

struct Format {
  int mantissa_bits;
  int exponent_bits;
  int bias;
  double max_finite;
  bool has_infinity;  // IEEE-style: the all-ones exponent holds inf and NaNs (e4m3's holds one NaN)
  bool saturates;     // encoding an infinity or a value past max_finite gives max_finite (the fp8
                      // conversions tilec emits are .satfinite); otherwise infinity
  uint32_t nan_bits;
};
constexpr Format kHalf{10, 5, 15, 65504.0, true, false, 0x7e00};
constexpr Format kBfloat16{7, 8, 127, 3.3895313892515355e38, true, false, 0x7fc0};
constexpr Format kE4m3{3, 4, 7, 448.0, false, true, 0x7f};
// e5m2 decodes 0x7c as inf and 0x7d-0x7f as NaN (an input tensor may hold them), but encodes
// saturating, as e4m3 does.
constexpr Format kE5m2{2, 5, 15, 57344.0, true, true, 0x7f};

uint32_t encode(double value, const Format& f) {
  const uint32_t sign = std::signbit(value) ? 1u << (f.mantissa_bits + f.exponent_bits) : 0u;
  const uint32_t all_ones = (1u << f.exponent_bits) - 1;
  if (std::isnan(value)) return sign | f.nan_bits;
  double magnitude = std::fabs(value);
  auto largest = [&] {
    int exponent = 0;
    const double mantissa = std::frexp(f.max_finite, &exponent);
    (void)mantissa;
    const int lead = exponent - 1;
    const uint32_t field = static_cast<uint32_t>(lead + f.bias);
    const uint32_t m = static_cast<uint32_t>(std::ldexp(f.max_finite, f.mantissa_bits - lead)) - (1u << f.mantissa_bits);
    return sign | field << f.mantissa_bits | m;
  };
  const uint32_t infinity = sign | all_ones << f.mantissa_bits;
  if (std::isinf(magnitude)) return f.saturates ? largest() : infinity;
  if (magnitude == 0) return sign;
  const int min_normal = 1 - f.bias;
  int exponent = 0;
  std::frexp(magnitude, &exponent);
  const int lead = exponent - 1;
  const int unit = std::max(lead, min_normal) - f.mantissa_bits;
  const int saved = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(magnitude, -unit)), unit);
  std::fesetround(saved);
  if (rounded > f.max_finite) return f.saturates ? largest() : infinity;
  if (rounded == 0) return sign;
  std::frexp(rounded, &exponent);
  const int rounded_lead = exponent - 1;
  if (rounded_lead < min_normal)
    return sign | static_cast<uint32_t>(std::ldexp(rounded, f.mantissa_bits - min_normal));
  const uint32_t field = static_cast<uint32_t>(rounded_lead + f.bias);
  const uint32_t m = static_cast<uint32_t>(std::ldexp(rounded, f.mantissa_bits - rounded_lead)) - (1u << f.mantissa_bits);
  return sign | field << f.mantissa_bits | m;
}

float decode(uint32_t bits, const Format& f) {
  const uint32_t mantissa_mask = (1u << f.mantissa_bits) - 1;
  const uint32_t all_ones = (1u << f.exponent_bits) - 1;
  const bool negative = (bits >> (f.mantissa_bits + f.exponent_bits)) & 1;
  const uint32_t field = (bits >> f.mantissa_bits) & all_ones;
  const uint32_t m = bits & mantissa_mask;
  double value = 0;
  if (f.has_infinity && field == all_ones) {
    value = m ? std::nan("") : INFINITY;
  } else if (!f.has_infinity && field == all_ones && m == mantissa_mask) {
    value = std::nan("");
  } else if (field == 0) {
    value = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(m | (1u << f.mantissa_bits)), static_cast<int>(field) - f.bias - f.mantissa_bits);
  }
  return static_cast<float>(negative ? -value : value);
}

CUresult encode_tiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* global, const cuuint64_t* extents,
                      const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* element_strides,
                      CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
                      CUtensorMapFloatOOBfill fill) {
  std::string error;
  const TensorMapFields fields = encode_tensor_map(type, rank, global, extents, strides, box, element_strides, interleave,
                                                   swizzle, fill, error);
  if (!error.empty() || !map) {
    set_error_detail("cuTensorMapEncodeTiled: " + (map ? error : std::string("a null tensor map")));
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::memset(map, 0, sizeof *map);
  std::memcpy(map, &fields, sizeof fields);
  return CUDA_SUCCESS;
}

}  // namespace

const Options& options() { return current_options; }

uint16_t float_to_half_bits(float value) { return static_cast<uint16_t>(encode(value, kHalf)); }
float half_bits_to_float(uint16_t bits) { return decode(bits, kHalf); }
uint16_t float_to_bfloat16_bits(float value) { return static_cast<uint16_t>(encode(value, kBfloat16)); }
float bfloat16_bits_to_float(uint16_t bits) { return decode(bits, kBfloat16); }
uint16_t double_to_bfloat16_bits(double value) { return static_cast<uint16_t>(encode(value, kBfloat16)); }
uint8_t float_to_e4m3_bits(float value) { return static_cast<uint8_t>(encode(value, kE4m3)); }
float e4m3_bits_to_float(uint8_t bits) { return decode(bits, kE4m3); }
uint8_t float_to_e5m2_bits(float value) { return static_cast<uint8_t>(encode(value, kE5m2)); }
float e5m2_bits_to_float(uint8_t bits) { return decode(bits, kE5m2); }

void set_error_detail(const std::string& detail) {
  std::lock_guard<std::mutex> lock(host_mutex);
  if (error_detail.empty()) error_detail = detail;
}

cudaError_t record_launch_error(cudaError_t error) {
  std::lock_guard<std::mutex> lock(host_mutex);
  last_error = error;
  if (first_launch_error == cudaSuccess) first_launch_error = error;
  return error;
}

void note_launch(uint64_t ctas, uint64_t threads) {
  std::lock_guard<std::mutex> lock(host_mutex);
  launched_ctas += ctas;
  launched_threads += ctas * threads;
}

tilec::runtime::Executor& executor() {
  std::lock_guard<std::mutex> lock(host_mutex);
  if (!shared_executor) {
    tilec::runtime::ExecutorOptions settings;
    settings.worker_count = current_options.workers;
    shared_executor = std::make_unique<tilec::runtime::Executor>(settings);
  }
  return *shared_executor;
}

bool configure(int& argc, char** argv, const char* cu_path) {
  current_options.cu_path = cu_path ? cu_path : "";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tilec emulate: %s needs a value\n", name);
        return nullptr;
      }
      return argv[++i];
    };
    auto number = [&](const char* name, uint64_t& out, uint64_t low, uint64_t high) {
      const char* text = value(name);
      if (!text) return false;
      char* end = nullptr;
      const unsigned long long parsed = std::strtoull(text, &end, 10);
      if (!*text || *end || parsed < low || parsed > high) {
        std::fprintf(stderr, "tilec emulate: %s %s: expected a number from %llu to %llu\n", name, text,
                     static_cast<unsigned long long>(low), static_cast<unsigned long long>(high));
        return false;
      }
      out = parsed;
      return true;
    };
    uint64_t parsed = 0;
    if (argument == "--policy") {
      const char* text = value("--policy");
      if (!text) return false;
      const std::string policy = text;
      if (policy == "eager") current_options.policy = Policy::eager;
      else if (policy == "lazy") current_options.policy = Policy::lazy;
      else if (policy == "random") current_options.policy = Policy::random;
      else {
        std::fprintf(stderr, "tilec emulate: --policy %s: expected eager, lazy or random\n", text);
        return false;
      }
    } else if (argument == "--seed") {
      if (!number("--seed", current_options.seed, 0, UINT64_MAX)) return false;
    } else if (argument == "--sms") {
      if (!number("--sms", parsed, 1, 4096)) return false;
      current_options.sms = static_cast<int>(parsed);
    } else if (argument == "--workers") {
      if (!number("--workers", parsed, 1, 64)) return false;
      current_options.workers = static_cast<unsigned>(parsed);
    } else if (argument == "--no-hazards") {
      current_options.hazards = false;
    } else if (argument == "--bounds") {
      const char* text = value("--bounds");
      if (!text) return false;
      const std::string bounds = text;
      if (bounds == "end") current_options.bounds = Bounds::end;
      else if (bounds == "start") current_options.bounds = Bounds::start;
      else {
        std::fprintf(stderr, "tilec emulate: --bounds %s: expected end or start\n", text);
        return false;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return true;
}

int finish(cudaError_t launch_status) {
  print_reports();
  if (fatal_reported()) return exit_deadlock;
  if (hazards_reported()) return exit_hazard;
  if (launch_status != cudaSuccess) {
    std::fprintf(stderr, "tilec emulate: error: the launcher returned %s%s%s\n", cudaGetErrorString(launch_status),
                 error_detail.empty() ? "" : ": ", error_detail.c_str());
    return exit_launch_error;
  }
  return exit_ok;
}

}  // namespace tilec_emu

using namespace tilec_emu;

cudaError_t cudaGetLastError() {
  std::lock_guard<std::mutex> lock(host_mutex);
  const cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() {
  std::lock_guard<std::mutex> lock(host_mutex);
  return last_error;
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    default: return "cudaErrorUnknown";
  }
}

cudaError_t cudaGetDevice(int* device) {
  if (!device) return cudaErrorInvalidValue;
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (!value || device != 0 || attribute != cudaDevAttrMultiProcessorCount) return cudaErrorInvalidValue;
  *value = options().sms;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t) {
  if (!pointer) return cudaErrorInvalidValue;
  *pointer = allocate_global(bytes, "a buffer the launcher allocated (cudaMallocAsync)");
  return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFreeAsync(void* pointer, cudaStream_t) {
  free_global(pointer);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t) {
  if (!pointer && bytes > 0) return cudaErrorInvalidValue;
  if (bytes > 0) std::memset(pointer, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* destination, size_t destination_pitch, const void* source, size_t source_pitch,
                              size_t width, size_t height, cudaMemcpyKind, cudaStream_t) {
  if (width > destination_pitch || width > source_pitch) return cudaErrorInvalidValue;
  if (height > 0 && width > 0 && (!destination || !source)) return cudaErrorInvalidValue;
  for (size_t row = 0; row < height; ++row)
    std::memmove(static_cast<unsigned char*>(destination) + row * destination_pitch,
                 static_cast<const unsigned char*>(source) + row * source_pitch, width);
  return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int, unsigned long long,
                                             cudaDriverEntryPointQueryResult* status) {
  if (!symbol || !function) return cudaErrorInvalidValue;
  if (std::string(symbol) == "cuTensorMapEncodeTiled") {
    *function = reinterpret_cast<void*>(&encode_tiled);
    if (status) *status = cudaDriverEntryPointSuccess;
  } else {
    *function = nullptr;
    if (status) *status = cudaDriverEntryPointSymbolNotFound;
  }
  return cudaSuccess;
}
