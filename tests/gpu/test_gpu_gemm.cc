// On a GPU: the canonical GEMM's two CUDA kernels (one thread per element; shared-memory tiles)
// give the CPU's canonical bits, for every transpose, edge tiles,
// padded strides and K across many tiles, on order-sensitive inputs; cuBLAS is run beside them and
// its largest difference from the canonical result reported (not asserted: its order is its own).
// Then `--gemm blas`'s 16-bit GEMM on the tensor cores (gemm/half_gemm.h), bf16 and fp16: each
// product run twice gives the same bits (cuBLAS's default algorithm, no atomics), and every element
// lies within FP32 summation's bound of the exact sum (k 2^-23 sum |a b|, from the exact products
// summed in double), so the operands reached cuBLAS as 16-bit values with FP32 accumulation.
// Without a device it prints why and exits 77, which CTest reports as skipped.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "device/cuda_probe.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "gemm/canonical_gemm.h"
#include "gemm/cuda/blas_gemm_cuda.h"
#include "gemm/cuda/canonical_gemm_cuda.h"
#include "support/order_sensitive.h"

using zt::test::order_sensitive;

namespace {

// C = op(A) op(B) on the device with 16-bit operands (H = bf16 or fp16), twice; 1 when the
// product failed: a second run with other bits, or an element outside the FP32 summation bound.
template <typename H>
int check_half_gemm(bool ta, bool tb, long long m, long long n, long long k) {
  const long long lda = ta ? m : k, ldb = tb ? k : n;
  const auto af = order_sensitive(std::size_t(m * k), 5), bf = order_sensitive(std::size_t(k * n), 6);
  std::vector<H> a(af.size()), b(bf.size());
  const float scale = std::is_same_v<H, zt::fp16> ? 0x1p-6f : 1.0f;  // inside fp16's range (below 2^15)
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = H(af[i] * scale);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = H(bf[i] * scale);
  const auto at = [&](long long i, long long p) { return float(a[std::size_t(ta ? p * lda + i : i * lda + p)]); };
  const auto bt = [&](long long p, long long j) { return float(b[std::size_t(tb ? j * ldb + p : p * ldb + j)]); };
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  const std::size_t cbytes = std::size_t(m * n) * sizeof(float);
  cudaMalloc(&da, a.size() * sizeof(H));
  cudaMalloc(&db, b.size() * sizeof(H));
  cudaMalloc(&dc, cbytes);
  cudaMemcpy(da, a.data(), a.size() * sizeof(H), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * sizeof(H), cudaMemcpyHostToDevice);
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  const zt::gemm::HalfGemmArgs g{{da, lda, ta},
                                 {db, ldb, tb},
                                 m,
                                 n,
                                 k,
                                 static_cast<float*>(dc),
                                 n,
                                 std::is_same_v<H, zt::bf16> ? zt::gemm::HalfType::bf16 : zt::gemm::HalfType::fp16};
  std::vector<float> first(std::size_t(m * n)), second(first.size());
  zt::gemm::cuda::blas_half_gemm_async(g, stream);
  cudaMemcpyAsync(first.data(), dc, cbytes, cudaMemcpyDeviceToHost, stream);
  zt::gemm::cuda::blas_half_gemm_async(g, stream);
  cudaMemcpyAsync(second.data(), dc, cbytes, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  int failures = 0;
  if (std::memcmp(first.data(), second.data(), cbytes) != 0) {
    ++failures;
    std::printf("FAIL tensor-core %lldx%lldx%lld: two runs differ\n", m, n, k);
  }
  long long outside = 0;
  for (long long i = 0; i < m; ++i)
    for (long long j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (long long p = 0; p < k; ++p) {  // each product exact in double (and in FP32)
        exact += double(at(i, p)) * double(bt(p, j));
        magnitude += std::fabs(double(at(i, p)) * double(bt(p, j)));
      }
      outside += std::fabs(double(first[std::size_t(i * n + j)]) - exact) > double(k) * 0x1p-23 * magnitude;
    }
  if (outside > 0) {
    ++failures;
    std::printf("FAIL tensor-core %lldx%lldx%lld: %lld elements outside the FP32 summation bound\n", m, n, k, outside);
  }
  return failures > 0 ? 1 : 0;
}

}  // namespace

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
  std::printf("canonical GEMM on the GPU: %d of %d products bitwise equal to the CPU (path %s)\n", checked - failures,
              checked, zt::gemm::isa_name(zt::gemm::canonical_isa()));
  int half_failures = 0;
  for (const auto& s : {std::array<long long, 3>{7, 13, 5}, {97, 45, 300}, {512, 384, 768}})
    for (int t = 0; t < 4; ++t) {
      half_failures += check_half_gemm<zt::bf16>(t & 1, t & 2, s[0], s[1], s[2]);
      half_failures += check_half_gemm<zt::fp16>(t & 1, t & 2, s[0], s[1], s[2]);
    }
  std::printf("tensor-core GEMM (bf16, fp16): %d of 24 products repeat bit for bit within FP32's bound\n",
              24 - half_failures);
  failures += half_failures;
  return failures == 0 ? 0 : 1;
}
