// fp/cuda/convert_cuda.cu — device kernels for the array casts declared in convert_cuda.h.
#include "fp/cuda/convert_cuda.h"

#include <cuda_runtime.h>

#include "core/check.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "fp/random_bits.h"
#include "fp/stochastic_round.h"

namespace zt::cuda {
namespace {

void check(cudaError_t err, const char* what) {
  ZT_CHECK(err == cudaSuccess, "CUDA ", what, ": ", cudaGetErrorString(err));
}

// Every rounding takes (value, element index, seed); the nearest ones ignore the last two.
using RoundFn = uint16_t (*)(float, std::size_t, uint64_t);

template <RoundFn Round>
__global__ void round_kernel(const float* in, uint16_t* out, std::size_t n, uint64_t seed) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = Round(in[i], i, seed);
}

__device__ uint16_t to_fp16(float f, std::size_t, uint64_t) { return fp16_bits_from_float(f); }
__device__ uint16_t to_bf16(float f, std::size_t, uint64_t) { return bf16_bits_from_float(f); }
__device__ uint16_t to_fp16_sr(float f, std::size_t i, uint64_t seed) {
  return fp16_bits_stochastic(f, random16(seed, i));
}
__device__ uint16_t to_bf16_sr(float f, std::size_t i, uint64_t seed) {
  return bf16_bits_stochastic(f, random16(seed, i));
}

template <RoundFn Round>
void round_on_device(const float* in, uint16_t* out, std::size_t n, uint64_t seed = 0) {
  if (n == 0) return;
  float* d_in = nullptr;
  uint16_t* d_out = nullptr;
  check(cudaMalloc(&d_in, n * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&d_out, n * sizeof(uint16_t)), "cudaMalloc");
  check(cudaMemcpy(d_in, in, n * sizeof(float), cudaMemcpyHostToDevice), "copy in");
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  round_kernel<Round><<<blocks, threads>>>(d_in, d_out, n, seed);
  check(cudaGetLastError(), "kernel launch");
  check(cudaMemcpy(out, d_out, n * sizeof(uint16_t), cudaMemcpyDeviceToHost), "copy out");
  cudaFree(d_in);
  cudaFree(d_out);
}

}  // namespace

void round_to_fp16(const float* in, uint16_t* out, std::size_t n) { round_on_device<to_fp16>(in, out, n); }
void round_to_bf16(const float* in, uint16_t* out, std::size_t n) { round_on_device<to_bf16>(in, out, n); }
void round_to_fp16_stochastic(const float* in, uint16_t* out, std::size_t n, uint64_t seed) {
  round_on_device<to_fp16_sr>(in, out, n, seed);
}
void round_to_bf16_stochastic(const float* in, uint16_t* out, std::size_t n, uint64_t seed) {
  round_on_device<to_bf16_sr>(in, out, n, seed);
}

}  // namespace zt::cuda
