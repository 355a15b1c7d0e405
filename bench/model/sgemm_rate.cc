// bench/model/sgemm_rate.cc — the machine's sgemm rate through the project's GEMM wrapper
// (OpenBLAS, pinned threads; ZT_BENCH_GEMM=canonical for the canonical GEMM): the denominator of
// model FLOP utilisation.
// usage: bench-sgemm [threads]  — prints GFLOP/s for a few square and model-shaped products.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/blas.h"

int main(int argc, char** argv) {
  zt::kernels::set_blas_threads(argc > 1 ? std::atoi(argv[1]) : 1);
  const char* which = std::getenv("ZT_BENCH_GEMM");  // the peer PyTorch is compared with uses a BLAS
  zt::kernels::set_gemm_backend(which && std::string(which) == "canonical" ? zt::kernels::GemmBackend::canonical
                                                                           : zt::kernels::GemmBackend::blas);
  const long long shapes[][3] = {{512, 512, 512},   {1024, 1024, 1024}, {1024, 1152, 384},
                                 {1024, 1536, 384}, {1024, 384, 1536},  {1024, 256, 384}};
  for (const auto& s : shapes) {
    const long long m = s[0], n = s[1], k = s[2];
    std::vector<float> a(m * k, 0.5f), b(n * k, 0.25f), c(m * n);
    zt::kernels::gemm_f32(false, true, m, n, k, a.data(), k, b.data(), k, c.data(), n);
    double best = 1e30;
    for (int r = 0; r < 8; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      zt::kernels::gemm_f32(false, true, m, n, k, a.data(), k, b.data(), k, c.data(), n);
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = dt < best ? dt : best;
    }
    std::printf("sgemm %lldx%lldx%lld (threads %d): %.1f GFLOP/s (best of 8)\n", m, n, k, zt::kernels::blas_threads(),
                2.0 * m * n * k / best / 1e9);
  }
  return 0;
}
