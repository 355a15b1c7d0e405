// bench/gemm/gpu_gemm.cc — on a CUDA device: milliseconds and TFLOP/s of the canonical GEMM's two
// kernels (element, tiled) and of cuBLAS FP32 sgemm, for the forward products of a GPT-2 124M step
// (8 x 1024 tokens, C = 768). Without a device it says so and exits 77.
// usage: bench-gpu-gemm [reps]
#include <cstdio>
#include <cstdlib>

#include "device/cuda_probe.h"
#include "gemm/cuda/canonical_gemm_cuda.h"

int main(int argc, char** argv) {
  using zt::gemm::cuda::DeviceGemm;
  if (zt::device::probe_cuda().devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const long long shapes[][3] = {{8192, 2304, 768}, {8192, 768, 768}, {8192, 3072, 768}, {8192, 768, 3072}};
  std::printf("%-20s %14s %14s %14s   (ms, TFLOP/s; C = A B^T, FP32)\n", "M x N x K", "element", "tiled", "cuBLAS");
  for (const auto& s : shapes) {
    double ms[3];
    const DeviceGemm kinds[] = {DeviceGemm::element, DeviceGemm::tiled, DeviceGemm::cublas};
    for (int i = 0; i < 3; ++i) ms[i] = zt::gemm::cuda::time_gemm_ms(kinds[i], s[0], s[1], s[2], reps);
    const double flop = 2.0 * s[0] * s[1] * s[2];
    char name[40];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld", s[0], s[1], s[2]);
    std::printf("%-20s", name);
    for (double m : ms) std::printf(" %6.3f %6.1f", m, flop / (m * 1e-3) / 1e12);
    std::printf("\n");
  }
  return 0;
}
