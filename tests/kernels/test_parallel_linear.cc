// kernels/parallel_linear.h: with one block it is linear.h, bit for bit; with B blocks split over
// N_m "devices" (each running its B/N_m blocks, the block sums completed by the canonical tree over
// devices) it is the one-device result with B blocks, bit for bit; and the OpenBLAS property this
// rests on: the same GEMM call on the same values gives the same bits at any address and stride.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "fp/bf16.h"
#include "fp/fp16.h"
#include "kernels/blas.h"
#include "kernels/linear.h"
#include "kernels/parallel_linear.h"
#include "reduce/canonical_tree.h"

using namespace zt;
using namespace zt::kernels;

namespace {

template <typename T>
std::vector<T> random_values(std::size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<T> v(n);
  for (auto& x : v) x = from_f<T>(d(g));
  return v;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>(a[i]) !=
        std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>(b[i]))
      return false;
  return true;
}

// column block j of a [rows, cols] row-major matrix split into B column blocks, contiguous
template <typename T>
std::vector<T> col_block(const std::vector<T>& m, int64_t rows, int64_t cols, int64_t B, int64_t j) {
  const int64_t w = cols / B;
  std::vector<T> out(static_cast<std::size_t>(rows * w));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < w; ++c) out[r * w + c] = m[r * cols + j * w + c];
  return out;
}

}  // namespace

TEST_CASE("OpenBLAS: the same GEMM call on the same values gives the same bits at any address and stride", "[ch11]") {
  // the property tensor parallelism here rests on (kernels/parallel_linear.h); checked for this
  // build's OpenBLAS kernel on shapes like the model's, operands placed at different offsets and
  // inside wider matrices (other leading dimensions)
  for (auto [m, n, k] : {std::tuple{64, 48, 32}, {128, 16, 64}, {31, 67, 129}, {256, 384, 96}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const auto A = random_values<float>(static_cast<std::size_t>(m * k), 1);
        const auto Bm = random_values<float>(static_cast<std::size_t>(k * n), 2);
        std::vector<float> c1(static_cast<std::size_t>(m * n));
        const int64_t lda = ta ? m : k, ldb = tb ? k : n;
        gemm_f32(ta, tb, m, n, k, A.data(), lda, Bm.data(), ldb, c1.data(), n);
        // the same operands, shifted by 3 floats and padded to wider rows (leading dim + 5)
        const int64_t arows = ta ? k : m, brows = tb ? n : k;
        std::vector<float> A2(static_cast<std::size_t>(arows * (lda + 5) + 3)),
            B2(static_cast<std::size_t>(brows * (ldb + 5) + 3));
        for (int64_t r = 0; r < arows; ++r)
          for (int64_t c = 0; c < lda; ++c) A2[3 + r * (lda + 5) + c] = A[r * lda + c];
        for (int64_t r = 0; r < brows; ++r)
          for (int64_t c = 0; c < ldb; ++c) B2[3 + r * (ldb + 5) + c] = Bm[r * ldb + c];
        std::vector<float> c2(static_cast<std::size_t>(m * (n + 7) + 1));
        gemm_f32(ta, tb, m, n, k, A2.data() + 3, lda + 5, B2.data() + 3, ldb + 5, c2.data() + 1, n + 7);
        bool same = true;
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c)
            same &= std::bit_cast<uint32_t>(c1[r * n + c]) == std::bit_cast<uint32_t>(c2[1 + r * (n + 7) + c]);
        INFO("m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb);
        CHECK(same);
      }
}

TEMPLATE_TEST_CASE("one block: the parallel Linears are linear.h, bit for bit", "[ch11]", float, fp16, bf16) {
  using T = TestType;
  const bool nar = !std::is_same_v<T, float>;
  const int64_t N = 24, in = 32, out = 48;
  const auto x = random_values<T>(N * in, 3), W = random_values<T>(out * in, 4, 0.1f), b = random_values<T>(out, 5);
  const auto dy = random_values<T>(N * out, 6);
  std::vector<float> fs(1 << 16);
  // column-parallel with three groups of out/3 (as c_attn: q, k, v) and one block
  std::vector<T> y_ref(N * out), y(N * out);
  linear_forward(y_ref.data(), x.data(), W.data(), b.data(), N, in, out, fs.data());
  column_parallel_forward(y.data(), x.data(), {{W.data(), b.data()}}, N, in, 3, out / 3, fs.data());
  CHECK(same_bits(y, y_ref));
  std::vector<T> dx_ref(N * in), dW_ref(out * in), db_ref(out), dx(N * in), dW(out * in), db(out);
  linear_backward(dx_ref.data(), dW_ref.data(), db_ref.data(), dy.data(), x.data(), W.data(), N, in, out, fs.data());
  column_parallel_backward(dx.data(), {{dW.data(), db.data()}}, dy.data(), x.data(), {{W.data(), b.data()}}, N, in, 3,
                           out / 3, {}, fs.data());
  CHECK(same_bits(dx, dx_ref));
  CHECK(same_bits(dW, dW_ref));
  CHECK(same_bits(db, db_ref));
  CHECK(column_parallel_backward_floats(N, in, 3, out / 3, 1, nar) == linear_backward_scratch_floats(N, in, out, nar));
  // row-parallel, one block
  row_parallel_forward(y.data(), x.data(), {{W.data(), nullptr}}, b.data(), N, in, out, {}, fs.data());
  CHECK(same_bits(y, y_ref));
  row_parallel_backward(dx.data(), {{dW.data(), nullptr}}, db.data(), dy.data(), x.data(), {{W.data(), nullptr}}, N, in,
                        out, fs.data());
  CHECK(same_bits(dx, dx_ref));
  CHECK(same_bits(dW, dW_ref));
  CHECK(same_bits(db, db_ref));
  CHECK(row_parallel_forward_floats(N, in, out, 1, nar) == linear_forward_scratch_floats(N, in, out, nar));
  CHECK(row_parallel_backward_floats(N, in, out, 1, nar) == linear_backward_scratch_floats(N, in, out, nar));
}

TEMPLATE_TEST_CASE("B blocks on N_m devices: the bits of one device with B blocks", "[ch11]", float, fp16, bf16) {
  using T = TestType;
  const int64_t N = 16, C = 32, B = 4;
  const int64_t out = 4 * C, outb = out / B;  // a c_fc: one group of 4C/B rows per block
  const auto x = random_values<T>(N * C, 7);
  const auto W = random_values<T>(out * C, 8, 0.1f), b = random_values<T>(out, 9);    // [4C, C] rows by block
  const auto Wr = random_values<T>(C * out, 10, 0.1f), br = random_values<T>(C, 11);  // row-parallel [C, 4C]
  std::vector<float> fs(1 << 18);
  for (int64_t devices : {1, 2, 4}) {
    const int64_t J = B / devices;
    // column-parallel forward: every device's output columns equal the one-device columns
    std::vector<T> y_all(N * out);
    std::vector<LinearBlock<T>> all;
    for (int64_t j = 0; j < B; ++j) all.push_back({W.data() + j * outb * C, b.data() + j * outb});
    column_parallel_forward(y_all.data(), x.data(), all, N, C, 1, outb, fs.data());
    // row-parallel forward over the hidden layer y: partial sums of each device, completed by the
    // canonical tree over devices (what a deterministic all-reduce computes)
    std::vector<LinearBlock<T>> all_r;
    std::vector<std::vector<T>> wr_blocks;
    for (int64_t j = 0; j < B; ++j) wr_blocks.push_back(col_block(Wr, C, out, B, j));
    for (int64_t j = 0; j < B; ++j) all_r.push_back({wr_blocks[j].data(), nullptr});
    std::vector<T> z_ref(N * C);
    row_parallel_forward(z_ref.data(), y_all.data(), all_r, br.data(), N, outb, C, {}, fs.data());
    std::vector<std::vector<float>> partial(devices, std::vector<float>(N * C));
    std::vector<std::vector<T>> z(devices, std::vector<T>(N * C));
    for (int pass = 0; pass < 2; ++pass)  // pass 0 records each device's partial, pass 1 finishes it
      for (int64_t d = 0; d < devices; ++d) {
        std::vector<T> y_local(N * J * outb);
        std::vector<LinearBlock<T>> mine(all.begin() + d * J, all.begin() + (d + 1) * J);
        column_parallel_forward(y_local.data(), x.data(), mine, N, C, 1, outb, fs.data());
        CHECK(same_bits(y_local, col_block(y_all, N, out, devices, d)));
        std::vector<LinearBlock<T>> mine_r(all_r.begin() + d * J, all_r.begin() + (d + 1) * J);
        row_parallel_forward(
            z[d].data(), y_local.data(), mine_r, br.data(), N, outb, C,
            [&](float* p, std::size_t n) {
              if (pass == 0) {
                partial[d].assign(p, p + n);
                return;
              }
              for (std::size_t i = 0; i < n; ++i)
                p[i] = canonical_reduce(
                    static_cast<std::size_t>(devices), [&](std::size_t q) { return partial[q][i]; },
                    [](float a, float c) { return a + c; });
            },
            fs.data());
      }
    for (int64_t d = 0; d < devices; ++d) {
      INFO(devices << " devices, device " << d);
      CHECK(same_bits(z[d], z_ref));
    }
  }
}
