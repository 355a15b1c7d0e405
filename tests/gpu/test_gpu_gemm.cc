// On a GPU: the canonical GEMM's two CUDA kernels (one thread per element; shared-memory tiles)
// and its triangular multiply give the CPU's canonical bits, for every transpose, edge tiles,
// padded strides and K across many tiles, on order-sensitive inputs; cuBLAS is run beside them and
// its largest difference from the canonical result reported (not asserted: its order is its own).
// Without a device it prints why and exits 77, which CTest reports as skipped.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "device/cuda_probe.h"
#include "gemm/canonical_gemm.h"
#include "gemm/cuda/canonical_gemm_cuda.h"
#include "support/order_sensitive.h"

using zt::test::order_sensitive;

int main() {
  using zt::gemm::cuda::DeviceGemm;
  if (zt::device::probe_cuda().devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  int failures = 0, checked = 0;
  const long long shapes[][3] = {{1, 1, 1},      {7, 13, 5},      {64, 64, 16},     {97, 45, 300},
                                 {130, 70, 600}, {512, 384, 128}, {1000, 333, 1031}};
  for (const auto& s : shapes)
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      const long long m = s[0], n = s[1], k = s[2];
      const long long lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
      const auto a = order_sensitive(std::size_t((ta ? k : m) * lda), 1);
      const auto b = order_sensitive(std::size_t((tb ? n : k) * ldb), 2);
      std::vector<float> cpu(std::size_t(m * ldc), -7.0f);
      zt::gemm::gemm_canonical_f32(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, cpu.data(), ldc);
      for (DeviceGemm kind : {DeviceGemm::element, DeviceGemm::tiled, DeviceGemm::cublas}) {
        std::vector<float> gpu(cpu.size(), -7.0f);
        zt::gemm::cuda::gemm_f32_host(kind, ta, tb, m, n, k, a.data(), lda, b.data(), ldb, gpu.data(), ldc);
        const char* name = kind == DeviceGemm::element ? "element" : kind == DeviceGemm::tiled ? "tiled" : "cuBLAS";
        if (kind == DeviceGemm::cublas) {
          double worst = 0;
          long long differ = 0;
          for (std::size_t i = 0; i < cpu.size(); ++i) {
            differ += std::memcmp(&cpu[i], &gpu[i], 4) != 0;
            if (cpu[i] != 0) worst = std::fmax(worst, std::fabs(double(gpu[i]) - cpu[i]) / std::fabs(double(cpu[i])));
          }
          std::printf("%lldx%lldx%lld%s%s cuBLAS: %lld of %zu elements differ from canonical, largest rel. diff %.2e\n",
                      m, n, k, ta ? " A^T" : "", tb ? " B^T" : "", differ, cpu.size(), worst);
          continue;
        }
        ++checked;
        if (std::memcmp(gpu.data(), cpu.data(), cpu.size() * sizeof(float)) != 0) {
          ++failures;
          std::printf("FAIL %lldx%lldx%lld%s%s %s: bits differ from the CPU's canonical GEMM\n", m, n, k,
                      ta ? " A^T" : "", tb ? " B^T" : "", name);
        }
      }
    }
  for (long long m : {1LL, 37LL, 64LL, 256LL})
    for (bool trans : {false, true}) {
      const long long n = 19;
      auto a = order_sensitive(std::size_t(m * m), 3);
      for (long long i = 0; i < m; ++i)
        for (long long j = i + 1; j < m; ++j) a[i * m + j] = std::nanf("");  // never read
      const auto b = order_sensitive(std::size_t(m * n), 4);
      std::vector<float> cpu = b, gpu(b.size());
      zt::gemm::trmm_canonical_f32(trans, m, n, a.data(), m, cpu.data(), n);
      zt::gemm::cuda::trmm_f32_host(trans, m, n, a.data(), b.data(), gpu.data());
      ++checked;
      if (std::memcmp(gpu.data(), cpu.data(), cpu.size() * sizeof(float)) != 0) {
        ++failures;
        std::printf("FAIL trmm %lldx%lld%s: bits differ from the CPU's\n", m, n, trans ? " A^T" : "");
      }
    }
  std::printf("canonical GEMM on the GPU: %d of %d products bitwise equal to the CPU (path %s)\n", checked - failures,
              checked, zt::gemm::isa_name(zt::gemm::canonical_isa()));
  return failures == 0 ? 0 : 1;
}
