// kernels/blas.cc — OpenBLAS behind the two calls of blas.h, with explicit thread pinning.
#include "kernels/blas.h"

#include <cblas.h>

#include <atomic>

#include "core/check.h"
#include "gemm/canonical_gemm.h"

namespace zt::kernels {
namespace {
std::atomic<int> g_threads{0};  // 0: not pinned yet
std::atomic<GemmBackend> g_backend{GemmBackend::canonical};

void ensure_pinned() {
  if (g_threads.load(std::memory_order_acquire) == 0) set_blas_threads(1);
}
}  // namespace

void set_gemm_backend(GemmBackend backend) { g_backend.store(backend, std::memory_order_release); }

GemmBackend gemm_backend() { return g_backend.load(std::memory_order_acquire); }

void set_blas_threads(int n) {
  ZT_CHECK(n >= 1, "set_blas_threads: need at least one thread, got ", n);
  openblas_set_num_threads(n);
  g_threads.store(n, std::memory_order_release);
}

int blas_threads() {
  ensure_pinned();
  return g_threads.load(std::memory_order_acquire);
}

void gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
              int64_t ldb, float* c, int64_t ldc) {
  gemm_f32_on(gemm_backend(), trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
}

void trmm_lower_left_f32(bool trans, int64_t m, int64_t n, const float* a, int64_t lda, float* b, int64_t ldb) {
  trmm_lower_left_f32_on(gemm_backend(), trans, m, n, a, lda, b, ldb);
}

void gemm_f32_on(GemmBackend backend, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (backend == GemmBackend::canonical)
    return gemm::gemm_canonical_f32(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
  ensure_pinned();
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c, static_cast<blasint>(ldc));
}

void trmm_lower_left_f32_on(GemmBackend backend, bool trans, int64_t m, int64_t n, const float* a, int64_t lda,
                            float* b, int64_t ldb) {
  if (backend == GemmBackend::canonical) return gemm::trmm_canonical_f32(trans, m, n, a, lda, b, ldb);
  ensure_pinned();
  cblas_strmm(CblasRowMajor, CblasLeft, CblasLower, trans ? CblasTrans : CblasNoTrans, CblasNonUnit,
              static_cast<blasint>(m), static_cast<blasint>(n), 1.0f, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb));
}

}  // namespace zt::kernels
