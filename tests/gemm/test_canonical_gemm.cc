// The canonical GEMM against its definition (gemm/canonical_dot.h), written out again here: every
// CPU path (scalar, AVX2, AVX-512, where this CPU has them) and the GPU kernel's per-thread body run
// by the host launch layer give the definition's bits, for every transpose, odd sizes (edge tiles),
// K across the packing blocks, and padded strides, on inputs where the order of the sum matters;
// the CPU paths also with C split over 2, 3 and 4 threads of a rank's pool (core/cpu_pool.h).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/cpu_pool.h"
#include "device/host_launch.h"
#include "gemm/canonical_gemm.h"
#include "gemm/canonical_gemm_kernel.h"
#include "support/order_sensitive.h"

using namespace zt;
using namespace zt::gemm;

using zt::test::order_sensitive;

namespace {

// values whose sums depend on their order: random signs, mantissas and exponents over 2^-20..2^20

// the definition, independently: c = +0, then c = fma(a_ik, b_kj, c) for k = k0 .. k1-1
float definition(const std::vector<float>& a, int64_t lda, bool ta, const std::vector<float>& b, int64_t ldb, bool tb,
                 int64_t i, int64_t j, int64_t k0, int64_t k1) {
  float c = 0.0f;
  for (int64_t k = k0; k < k1; ++k) {
    const float x = ta ? a[k * lda + i] : a[i * lda + k];
    const float y = tb ? b[j * ldb + k] : b[k * ldb + j];
    c = std::fma(x, y, c);
  }
  return c;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

struct Shape {
  int64_t m, n, k;
};
// edge tiles in both dimensions, a single element, K across the 256-deep packing blocks
const Shape kShapes[] = {{1, 1, 1}, {7, 13, 5}, {6, 16, 256}, {8, 32, 257}, {97, 45, 300}, {130, 70, 600}, {3, 200, 2}};

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

}  // namespace

TEST_CASE("canonical GEMM: every CPU path and the GPU body give the definition's bits", "[ch13]") {
  const Isa before = canonical_isa();
  for (const Shape& sh : kShapes)
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      DYNAMIC_SECTION(sh.m << "x" << sh.n << "x" << sh.k << (ta ? " A^T" : "") << (tb ? " B^T" : "")) {
        const int64_t lda = (ta ? sh.m : sh.k) + 3, ldb = (tb ? sh.k : sh.n) + 1, ldc = sh.n + 2;
        const auto a = order_sensitive(static_cast<std::size_t>((ta ? sh.k : sh.m) * lda), 1);
        const auto b = order_sensitive(static_cast<std::size_t>((tb ? sh.n : sh.k) * ldb), 2);
        std::vector<float> want(static_cast<std::size_t>(sh.m * ldc), -7.0f);  // padding stays untouched
        for (int64_t i = 0; i < sh.m; ++i)
          for (int64_t j = 0; j < sh.n; ++j) want[i * ldc + j] = definition(a, lda, ta, b, ldb, tb, i, j, 0, sh.k);
        for (Isa isa : supported_isas())
          for (const int threads : {1, 2, 3, 4}) {  // C split over a rank's threads: the same bits
            INFO("path " << isa_name(isa) << ", " << threads << " threads");
            set_canonical_isa(isa);
            CpuPool pool(threads, CpuPool::Split::every_loop);
            UseCpuPool use(&pool);
            std::vector<float> got(want.size(), -7.0f);
            gemm_canonical_f32(ta, tb, sh.m, sh.n, sh.k, a.data(), lda, b.data(), ldb, got.data(), ldc);
            CHECK(same_bits(got, want));
          }
        // the CUDA kernel's per-thread body, every thread of the launch run on the host
        std::vector<float> gpu(want.size(), -7.0f);
        const GemmArgs g{{a.data(), lda, ta}, {b.data(), ldb, tb}, sh.m, sh.n, sh.k, gpu.data(), ldc};
        device::launch_on_host(element_grid(sh.m, sh.n), {kElementBlock, kElementBlock, 1},
                               [&](const device::ThreadIndex& ti) { canonical_gemm_thread(ti, g); });
        CHECK(same_bits(gpu, want));
      }
    }
  set_canonical_isa(before);
}

TEST_CASE("canonical GEMM: the inputs are order-sensitive (the test can fail)", "[ch13]") {
  // the same products summed in reverse k order differ from the canonical chain somewhere: a path
  // that reordered k would be caught by the test above
  const int64_t m = 16, n = 16, k = 300;
  const auto a = order_sensitive(static_cast<std::size_t>(m * k), 1),
             b = order_sensitive(static_cast<std::size_t>(k * n), 2);
  int differ = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float reversed = 0.0f;
      for (int64_t p = k - 1; p >= 0; --p) reversed = std::fma(a[i * k + p], b[p * n + j], reversed);
      differ += reversed != definition(a, k, false, b, n, false, i, j, 0, k);
    }
  CHECK(differ > m * n / 4);
}

TEST_CASE("canonical triangular multiply: every CPU path gives the definition's bits", "[ch13]") {
  const Isa before = canonical_isa();
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{1, 1}, {5, 3}, {64, 32}, {37, 19}, {70, 64}, {33, 150}})
    for (bool trans : {false, true}) DYNAMIC_SECTION(m << "x" << n << (trans ? " A^T" : "")) {
        const int64_t lda = m + 2, ldb = n + 1;
        auto a = order_sensitive(static_cast<std::size_t>(m * lda), 3);
        // the upper (lower, for A^T) part is never read: NaNs there would show it
        for (int64_t i = 0; i < m; ++i)
          for (int64_t k = i + 1; k < m; ++k) a[i * lda + k] = std::nanf("");
        const auto b = order_sensitive(static_cast<std::size_t>(m * ldb), 4);
        std::vector<float> want = b;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            want[i * ldb + j] = definition(a, lda, trans, b, ldb, false, i, j, trans ? i : 0, trans ? m : i + 1);
        for (Isa isa : supported_isas()) {
          INFO("path " << isa_name(isa));
          set_canonical_isa(isa);
          std::vector<float> got = b;
          trmm_canonical_f32(trans, m, n, a.data(), lda, got.data(), ldb);
          CHECK(same_bits(got, want));
        }
      }
  set_canonical_isa(before);
}

TEST_CASE("canonical GEMM: K = 0 gives +0, an unsupported forced path is an error", "[ch13]") {
  std::vector<float> c(6, 5.0f);
  gemm_canonical_f32(false, false, 2, 3, 0, nullptr, 1, nullptr, 3, c.data(), 3);
  for (float x : c) CHECK((x == 0.0f && !std::signbit(x)));
  for (Isa isa : {Isa::avx2, Isa::avx512})
    if (!isa_supported(isa)) CHECK_THROWS_WITH(set_canonical_isa(isa), Catch::Contains("not supported"));
}
