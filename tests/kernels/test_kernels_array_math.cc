// The kernels that evaluate exp/tanh a chunk at a time through kernels/math_array.h (GELU,
// cross-entropy, the attention softmax) give exactly the bits of the element-wise formulas with
// the scalar exp_f/tanh_f, on both dispatch paths and across chunk boundaries.
//
// References: GELU against gelu_f/gelu_grad_f per element; cross-entropy against its formulas
// written out here as plain loops with exp_f (the kernel's code before the chunking); attention
// (whose change is only the row's exp) on the AVX2 path against the forced scalar loop, which is
// exp_f per element.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/attention.h"
#include "kernels/cross_entropy.h"
#include "kernels/gelu.h"
#include "kernels/math.h"
#include "kernels/math_array_test_util.h"
#include "kernels/row_sum.h"

namespace {

using zt::kernels::math_array_test::bits_of;
using zt::kernels::math_array_test::PathGuard;

std::vector<float> random_floats(std::size_t n, float lo, float hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace

TEST_CASE("gelu forward/backward with array tanh equal gelu_f/gelu_grad_f bitwise", "[ch2][kernels][math]") {
  for (bool scalar_only : {false, true}) {
    PathGuard guard(scalar_only);
    for (int64_t n : {0, 1, 7, 255, 256, 257, 1000}) {
      auto x = random_floats(static_cast<std::size_t>(n), -8.0f, 8.0f, 11 + n);
      if (n > 3) x[3] = 0.01f;  // the series branch of tanh
      const auto dy = random_floats(static_cast<std::size_t>(n), -1.0f, 1.0f, 99 + n);
      std::vector<float> y(x.size()), dx = dy;
      zt::kernels::gelu_forward(y.data(), x.data(), n);
      zt::kernels::gelu_backward(dx.data(), dx.data(), x.data(), n);  // in place, as the model calls it
      for (int64_t i = 0; i < n; ++i) {
        INFO("scalar_only " << scalar_only << ", n " << n << ", i " << i << ", x " << x[i]);
        REQUIRE(bits_of(y[i]) == bits_of(zt::kernels::gelu_f(x[i])));
        REQUIRE(bits_of(dx[i]) == bits_of(dy[i] * zt::kernels::gelu_grad_f(x[i])));
      }
    }
  }
}

TEST_CASE("cross-entropy with array exp equals its per-element formulas bitwise", "[ch2][kernels][math]") {
  const int64_t B = 2, Tc = 3, N = B * Tc;
  std::vector<int32_t> tokens(static_cast<std::size_t>(B * (Tc + 1)));
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 37) % 200);
  const zt::kernels::TokenView tg{tokens.data() + 1, B, Tc, Tc + 1};
  for (bool scalar_only : {false, true}) {
    PathGuard guard(scalar_only);
    for (int64_t V : {200, 256, 300, 520}) {  // within one chunk, exactly one, and across chunks
      const auto logits = random_floats(static_cast<std::size_t>(N * V), -12.0f, 12.0f, 5 + V);
      std::vector<float> loss(N), mx(N), sm(N), d(static_cast<std::size_t>(N * V));
      zt::kernels::cross_entropy_forward(loss.data(), mx.data(), sm.data(), logits.data(), tg, V);
      zt::kernels::cross_entropy_backward(d.data(), logits.data(), mx.data(), sm.data(), tg, V, 0.125f);
      for (int64_t n = 0; n < N; ++n) {
        const float* l = logits.data() + n * V;
        float m = l[0];
        for (int64_t j = 1; j < V; ++j) m = l[j] > m ? l[j] : m;
        const float s = zt::kernels::canonical_sum_f(static_cast<std::size_t>(V),
                                                     [&](std::size_t j) { return zt::kernels::exp_f(l[j] - m); });
        const int32_t y = tg.flat(n);
        INFO("scalar_only " << scalar_only << ", V " << V << ", row " << n);
        REQUIRE(bits_of(mx[n]) == bits_of(m));
        REQUIRE(bits_of(sm[n]) == bits_of(s));
        REQUIRE(bits_of(loss[n]) == bits_of((m + zt::kernels::log_f(s)) - l[y]));
        for (int64_t j = 0; j < V; ++j) {
          const float p = zt::kernels::exp_f(l[j] - m) / s;
          REQUIRE(bits_of(d[n * V + j]) == bits_of((p - (j == y ? 1.0f : 0.0f)) * 0.125f));
        }
      }
    }
  }
}

TEST_CASE("attention forward: the array-exp path equals the scalar exp_f loop bitwise", "[ch2][kernels][math]") {
  const int64_t B = 2, Tc = 19, C = 8, H = 2;  // rows of 1..19 scores: every tail length
  const auto qkv = random_floats(static_cast<std::size_t>(B * Tc * 3 * C), -3.0f, 3.0f, 2026);
  std::vector<float> scratch(static_cast<std::size_t>(zt::kernels::attention_forward_scratch_floats(Tc, C, false)));
  std::vector<float> out[2], P[2];
  for (int path = 0; path < 2; ++path) {
    PathGuard guard(path == 1);
    out[path].assign(static_cast<std::size_t>(B * Tc * C), 0.0f);
    P[path].assign(static_cast<std::size_t>(B * H * Tc * Tc), 0.0f);
    zt::kernels::attention_forward(out[path].data(), P[path].data(), qkv.data(), B, Tc, C, H, scratch.data());
  }
  for (std::size_t i = 0; i < P[0].size(); ++i) REQUIRE(bits_of(P[0][i]) == bits_of(P[1][i]));
  for (std::size_t i = 0; i < out[0].size(); ++i) REQUIRE(bits_of(out[0][i]) == bits_of(out[1][i]));
  // The softmax rows are probabilities: a sanity check that the comparison is not of zeros.
  CHECK(P[0][0] == 1.0f);
  CHECK(P[0][Tc] > 0.0f);
  CHECK(P[0][Tc + 1] > 0.0f);
}
