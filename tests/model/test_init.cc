// GPT-2 initialisation: slices equal the whole tensor bitwise, the distribution's moments within
// statistically derived bounds, the c_proj scaling, zero biases and unit LayerNorm gains.
//
// Bounds. For n independent N(0, s^2) draws: the sample mean has standard deviation s/sqrt(n);
// the sample standard deviation has relative standard deviation ~1/sqrt(2n); the fraction beyond
// 2s is binomial with p = 0.0455 and standard deviation sqrt(p(1-p)/n). We assert each within 5
// standard deviations (a false failure has probability < 1e-6 per check).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "core/check.h"
#include "model/init.h"
#include "model/manifest.h"

using zt::model::GptConfig;

namespace {

struct Moments {
  double mean, std, frac_beyond_2s;
};

Moments moments(const float* x, int64_t n, double s) {
  double sum = 0, sq = 0;
  int64_t beyond = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / n;
  for (int64_t i = 0; i < n; ++i) {
    sq += (x[i] - mean) * (x[i] - mean);
    beyond += std::fabs(x[i]) > 2 * s;
  }
  return {mean, std::sqrt(sq / (n - 1)), static_cast<double>(beyond) / n};
}

void check_normal(const float* x, int64_t n, double s) {
  const Moments m = moments(x, n, s);
  INFO("n " << n << " mean " << m.mean << " std " << m.std << " (want " << s << ") beyond 2s " << m.frac_beyond_2s);
  CHECK(std::fabs(m.mean) <= 5 * s / std::sqrt(static_cast<double>(n)));
  CHECK(std::fabs(m.std / s - 1) <= 5 / std::sqrt(2.0 * n));
  const double p = 0.0455;
  CHECK(std::fabs(m.frac_beyond_2s - p) <= 5 * std::sqrt(p * (1 - p) / n));
}

}  // namespace

TEST_CASE("init: every slice equals the whole tensor's elements bitwise", "[ch2][model][init]") {
  const GptConfig cfg{.vocab = 50, .context = 16, .layers = 2, .heads = 2, .width = 16};
  const auto m = zt::model::make_manifest(cfg);
  std::vector<float> full(static_cast<std::size_t>(m.param_count));
  zt::model::init_params(cfg, 42, full.data());
  std::mt19937 gen(3);
  for (std::size_t p = 0; p < m.params.size(); ++p) {
    const int64_t n = m.params[p].numel;
    for (int trial = 0; trial < 4; ++trial) {
      const int64_t first = std::uniform_int_distribution<int64_t>(0, n - 1)(gen);
      const int64_t count = std::uniform_int_distribution<int64_t>(0, n - first)(gen);
      std::vector<float> slice(static_cast<std::size_t>(count) + 1, -7.0f);
      zt::model::init_param_slice(cfg, 42, static_cast<int64_t>(p), first, count, slice.data());
      REQUIRE(std::memcmp(slice.data(), full.data() + m.params[p].offset + first, count * sizeof(float)) == 0);
      REQUIRE(slice[static_cast<std::size_t>(count)] == -7.0f);  // nothing written past the slice
    }
  }
  CHECK_THROWS_AS(zt::model::init_param_slice(cfg, 42, 0, 799, 2, full.data()), zt::Error);
  CHECK_THROWS_AS(zt::model::init_param_slice(cfg, 42, 99, 0, 1, full.data()), zt::Error);
}

TEST_CASE("init: GPT-2 distributions, c_proj scaling, zero biases, unit LN gains", "[ch2][model][init]") {
  const GptConfig cfg{.vocab = 64, .context = 32, .layers = 8, .heads = 4, .width = 256};
  const auto m = zt::model::make_manifest(cfg);
  std::vector<float> w(static_cast<std::size_t>(m.param_count));
  zt::model::init_params(cfg, 7, w.data());
  const auto at = [&](const char* name) { return m.params[static_cast<std::size_t>(m.index_of(name))]; };
  // 262144-element weights: the N(0, 0.02) ones and a residual projection at 0.02/sqrt(2L) = 0.005.
  check_normal(w.data() + at("h.3.mlp.c_fc.weight").offset, at("h.3.mlp.c_fc.weight").numel, 0.02);
  check_normal(w.data() + at("h.3.mlp.c_proj.weight").offset, at("h.3.mlp.c_proj.weight").numel, 0.005);
  check_normal(w.data() + at("h.0.attn.c_proj.weight").offset, at("h.0.attn.c_proj.weight").numel, 0.005);
  check_normal(w.data() + at("h.1.attn.c_attn.weight").offset, at("h.1.attn.c_attn.weight").numel, 0.02);
  check_normal(w.data() + at("wte").offset, at("wte").numel, 0.02);
  for (const auto& p : m.params) {
    const bool bias = p.name.size() > 5 && p.name.compare(p.name.size() - 5, 5, ".bias") == 0;
    const bool gain = p.shape.size() == 1 && !bias;
    if (!bias && !gain) continue;
    for (int64_t i = 0; i < p.numel; ++i) REQUIRE(w[p.offset + i] == (bias ? 0.0f : 1.0f));
  }
  // seeds matter; different parameters draw different numbers
  std::vector<float> a(64), b(64), c(64);
  zt::model::init_param_slice(cfg, 7, 0, 0, 64, a.data());
  zt::model::init_param_slice(cfg, 8, 0, 0, 64, b.data());
  zt::model::init_param_slice(cfg, 7, 1, 0, 64, c.data());
  CHECK(std::memcmp(a.data(), b.data(), 256) != 0);
  CHECK(std::memcmp(a.data(), c.data(), 256) != 0);
}

TEST_CASE("init: the standard normal draws have the right tails", "[ch2][model][init]") {
  // 2^20 draws of z: mean 0, std 1, and the Box-Muller tail beyond 4 sigma (p = 6.33e-5).
  const int64_t n = 1 << 20;
  std::vector<float> z(n);
  int64_t beyond4 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = zt::model::init_standard_normal(1, 3, i);
    z[static_cast<std::size_t>(i)] = static_cast<float>(v);
    beyond4 += std::fabs(v) > 4;
  }
  check_normal(z.data(), n, 1.0);
  const double p4 = 6.334e-5;
  CHECK(std::fabs(static_cast<double>(beyond4) / n - p4) <= 5 * std::sqrt(p4 / n));
}
