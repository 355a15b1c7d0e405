// bench/gemm/canonical_vs_blas.cc — GFLOP/s of the canonical GEMM (--gemm canonical) and of
// OpenBLAS (--gemm blas) on one core, side by side, for the products a GPT step makes: forward
// y = x W^T (NT), input gradient dx = dy W (NN), weight gradient dW = dy^T x (TN).
// usage: bench-gemm [reps]  — one line per shape and product, best of `reps` (default 10).
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gemm/canonical_gemm.h"
#include "kernels/blas.h"

namespace {
double best_seconds(int reps, bool ta, bool tb, long long m, long long n, long long k, const float* a, long long lda,
                    const float* b, long long ldb, float* c) {
  zt::kernels::gemm_f32(ta, tb, m, n, k, a, lda, b, ldb, c, n);  // warm-up (packing buffers, pages)
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    zt::kernels::gemm_f32(ta, tb, m, n, k, a, lda, b, ldb, c, n);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = dt < best ? dt : best;
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 10;
  zt::kernels::set_blas_threads(1);
  std::printf("canonical path: %s; one thread; best of %d\n", zt::gemm::isa_name(zt::gemm::canonical_isa()), reps);
  // The peer is only as fair as the kernel OpenBLAS picked: a CPU it does not recognise (a virtual
  // CPU newer than the library, say) gets an older kernel, and OPENBLAS_CORETYPE can name the right one.
  std::printf("OpenBLAS kernel: %s\n", openblas_get_corename());
  std::printf("%-22s %-4s %12s %12s %8s\n", "M x N x K", "op", "blas GF/s", "canon GF/s", "ratio");
  // rows = tokens of a micro-batch (B T), the default model's widths (C = 128: 3C, 4C) and a larger one
  const long long shapes[][3] = {{2048, 384, 128},  {2048, 128, 128},  {2048, 512, 128}, {2048, 128, 512},
                                 {1024, 1152, 384}, {1024, 384, 1536}, {512, 512, 512}};
  double worst = 1e30;
  for (const auto& s : shapes) {
    const long long m = s[0], n = s[1], k = s[2];
    for (int op = 0; op < 3; ++op) {
      // NT: C[m,n] = A[m,k] B[n,k]^T; NN: C[m,n] = A[m,k] B[k,n]; TN: C[m,n] = A[k,m]^T B[k,n]
      const bool ta = op == 2, tb = op == 0;
      std::vector<float> a(m * k), b(n * k), c(m * n);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 13) - 6) / 8.0f;
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 5 % 11) - 5) / 8.0f;
      const long long lda = ta ? m : k, ldb = tb ? k : n;
      double t[2];
      for (int be = 0; be < 2; ++be) {
        zt::kernels::set_gemm_backend(be ? zt::kernels::GemmBackend::canonical : zt::kernels::GemmBackend::blas);
        t[be] = best_seconds(reps, ta, tb, m, n, k, a.data(), lda, b.data(), ldb, c.data());
      }
      const double flop = 2.0 * m * n * k, ratio = t[0] / t[1];
      worst = ratio < worst ? ratio : worst;
      char name[40];
      std::snprintf(name, sizeof name, "%lldx%lldx%lld", m, n, k);
      std::printf("%-22s %-4s %12.1f %12.1f %8.2f\n", name,
                  op == 0   ? "NT"
                  : op == 1 ? "NN"
                            : "TN",
                  flop / t[0] / 1e9, flop / t[1] / 1e9, ratio);
    }
  }
  std::printf("lowest canonical / blas ratio: %.2f\n", worst);
  return 0;
}
