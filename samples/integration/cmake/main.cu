// main.cu — host program for the tilec integration example: Z = X + Y on the GPU.
//
// vector_add.cu is generated from vector_add.tile by `tilec compile`, and vector_add.h (its
// --header) declares the C launcher it defines. This program fills two vectors, launches the
// kernel through it, copies the sum back and checks every element. It needs a GPU to run; it
// builds without one.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

// launch_vector_add(X, Y, Z, N, stream), for `kernel vector_add(X, Y, Z)`: a change to the
// kernel's parameters makes the call below a compile error.
#include "vector_add.h"

static bool check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "vector_add_demo: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

int main() {
  const int64_t count = 1 << 20;
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  std::vector<float> x(count), y(count), z(count, 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = 0.5f * static_cast<float>(i % 7);
  }
  float *device_x = nullptr, *device_y = nullptr, *device_z = nullptr;
  if (!check(cudaMalloc(&device_x, bytes), "cudaMalloc X") || !check(cudaMalloc(&device_y, bytes), "cudaMalloc Y") ||
      !check(cudaMalloc(&device_z, bytes), "cudaMalloc Z"))
    return 1;
  if (!check(cudaMemcpy(device_x, x.data(), bytes, cudaMemcpyHostToDevice), "copy X") ||
      !check(cudaMemcpy(device_y, y.data(), bytes, cudaMemcpyHostToDevice), "copy Y"))
    return 1;
  if (!check(launch_vector_add(device_x, device_y, device_z, count, nullptr), "launch_vector_add") ||
      !check(cudaDeviceSynchronize(), "kernel") ||
      !check(cudaMemcpy(z.data(), device_z, bytes, cudaMemcpyDeviceToHost), "copy Z"))
    return 1;
  int64_t wrong = 0;
  for (int64_t i = 0; i < count; ++i)
    if (z[i] != x[i] + y[i]) ++wrong;
  cudaFree(device_x);
  cudaFree(device_y);
  cudaFree(device_z);
  std::printf("vector_add_demo: %lld elements, %lld wrong\n", static_cast<long long>(count),
              static_cast<long long>(wrong));
  return wrong == 0 ? 0 : 1;
}
