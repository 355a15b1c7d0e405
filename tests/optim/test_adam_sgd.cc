// Adam, AdamW and SGD-momentum: steps whose exact values are worked out by hand (inputs chosen so
// that every operation is exact in float), an independent double-precision Adam over many steps,
// and the shard invariance chapter 6 relies on (a shard's update is bitwise the whole's).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "optim/adam.h"
#include "optim/sgd.h"

using namespace zt;

TEST_CASE("Adam steps worked out by hand", "[ch2][optim]") {
  // β1 = 1/2, β2 = 3/4, ε = 2, η = 1/2, g = 2, p = 1, t = 1:
  //   m = 1/2·2 = 1, v = 1/4·4 = 1, η/(1 − β1) = 1, √(1 − β2) = 1/2,
  //   denominator = √1 / (1/2) + 2 = 4, p = 1 − 1·(1/4) = 3/4.
  AdamConfig c{0.5, 0.75, 2.0, 0.0, true};
  float p = 1, m = 0, v = 0;
  adam_update_element(p, 2.0f, m, v, adam_step_scalars(c, 0.5, 1));
  CHECK(m == 1.0f);
  CHECK(v == 1.0f);
  CHECK(p == 0.75f);
  // t = 2 with β1 = β2 = 1/2, ε = 1, η = 3/4, g = 0 from m = 1, v = 1:
  //   m = 1/2, v = 1/2, η/(1 − 1/4) = 1, √(1 − 1/4) = √3/2 (not exact, so check via the same
  //   float rounding): p = 3/4 − (1/2) / (√(1/2)/(√3/2) + 1)
  AdamConfig c2{0.5, 0.5, 1.0, 0.0, true};
  p = 0.75f;
  adam_update_element(p, 0.0f, m, v, adam_step_scalars(c2, 0.75, 2));
  CHECK(m == 0.5f);
  CHECK(v == 0.5f);
  const double expected = 0.75 - 0.5 / (std::sqrt(0.5) / (std::sqrt(3.0) / 2) + 1);
  CHECK(std::fabs(p - expected) <= 1e-6);  // six float roundings of values below 2
}

TEST_CASE("AdamW decays the weight, Adam adds the decay to the gradient", "[ch2][optim]") {
  // zero gradient and zero state: Adam's move is 0 and AdamW leaves p·(1 − ηλ) = 4·(1 − 1/4) = 3
  AdamConfig w{0.9, 0.999, 1e-8, 0.5, true};
  float p = 4, m = 0, v = 0;
  adam_update_element(p, 0.0f, m, v, adam_step_scalars(w, 0.5, 1));
  CHECK(p == 3.0f);
  CHECK((m == 0.0f && v == 0.0f));
  // Adam (L2): g_eff = 0 + λ·p = 2, the first step moves by ≈ η·sign(g_eff) = 1/2
  AdamConfig a = w;
  a.decoupled = false;
  p = 4, m = 0, v = 0;
  adam_update_element(p, 0.0f, m, v, adam_step_scalars(a, 0.5, 1));
  CHECK(m == Approx(0.2).epsilon(1e-6));  // (1 − β1) · 2
  CHECK(p == Approx(3.5).epsilon(1e-6));
}

TEST_CASE("Adam matches an independent double-precision Adam over 50 steps", "[ch2][optim]") {
  // textbook form (Kingma & Ba, Alg. 1): m̂ = m/(1 − β1^t), v̂ = v/(1 − β2^t), p −= η m̂/(√v̂ + ε)
  const double b1 = 0.9, b2 = 0.95, eps = 1e-8, lr = 1e-2;
  AdamConfig c{b1, b2, eps, 0.0, true};
  float p = 0.3f, m = 0, v = 0;
  double pd = 0.3, md = 0, vd = 0;
  for (int t = 1; t <= 50; ++t) {
    const double g = std::sin(0.7 * t) + 0.1 * pd;  // a gradient that depends on the weight
    adam_update_element(p, static_cast<float>(std::sin(0.7 * t) + 0.1 * p), m, v, adam_step_scalars(c, lr, t));
    md = b1 * md + (1 - b1) * g;
    vd = b2 * vd + (1 - b2) * g * g;
    pd -= lr * (md / (1 - std::pow(b1, t))) / (std::sqrt(vd / (1 - std::pow(b2, t))) + eps);
  }
  // float vs double over 50 steps of O(1) values: agreement to ~1e-5 absolute is the float model
  CHECK(std::fabs(p - pd) < 1e-5);
  CHECK(power_by_squaring(0.9, 13) == Approx(std::pow(0.9, 13)).epsilon(1e-15));
}

TEST_CASE("SGD with momentum, worked out by hand", "[ch2][optim]") {
  // μ = 1/2, η = 1/4, g = 1 each step: b = 1, 3/2, 7/4; p = −1/4, −5/8, −17/16 (all exact)
  auto s = sgd_step_scalars(SgdConfig{0.5, 0.0, false}, 0.25);
  float p = 0, b = 0;
  const float expected_p[] = {-0.25f, -0.625f, -1.0625f}, expected_b[] = {1.0f, 1.5f, 1.75f};
  for (int t = 0; t < 3; ++t) {
    sgd_update_element(p, 1.0f, b, s);
    CHECK(b == expected_b[t]);
    CHECK(p == expected_p[t]);
  }
  // Nesterov: direction g + μ·b = 1 + 1/2 after the first step, p = −3/8
  auto n = sgd_step_scalars(SgdConfig{0.5, 0.0, true}, 0.25);
  p = 0, b = 0;
  sgd_update_element(p, 1.0f, b, n);
  CHECK(p == -0.375f);
  // L2 decay: g_eff = 1 + 1/2·2 = 2 from p = 2, so b = 2 and p = 2 − 1/4·2 = 3/2
  auto d = sgd_step_scalars(SgdConfig{0.5, 0.5, false}, 0.25);
  p = 2, b = 0;
  sgd_update_element(p, 1.0f, b, d);
  CHECK(p == 1.5f);
  CHECK_THROWS(sgd_step_scalars(SgdConfig{1.0, 0.0, false}, 0.1));
}

namespace {
struct State {
  std::vector<float> p, g, m, v;
};
State make_state(std::size_t n) {
  State s{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n, 0.0f), std::vector<float>(n, 0.0f)};
  for (std::size_t i = 0; i < n; ++i) {
    s.p[i] = std::ldexp(std::sin(1.0f + i), static_cast<int>(i % 7) - 3);
    s.g[i] = std::ldexp(std::cos(3.0f * i), static_cast<int>(i % 11) - 12);
  }
  return s;
}
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
}  // namespace

TEST_CASE("an update on shards is bitwise the update on the whole span", "[ch2][optim]") {
  const std::size_t n = 1003;
  AdamConfig adamw{0.9, 0.999, 1e-8, 0.1, true};
  SgdConfig sgd{0.9, 1e-4, true};
  State whole = make_state(n);
  for (int t = 1; t <= 5; ++t) {
    const auto s = adam_step_scalars(adamw, 1e-3, t);
    adam_update(whole.p.data(), whole.g.data(), whole.m.data(), whole.v.data(), n, s);
    sgd_update(whole.p.data(), whole.g.data(), whole.m.data(), n, sgd_step_scalars(sgd, 1e-2));
  }
  for (std::size_t ranks : {2u, 3u, 7u}) {
    State sharded = make_state(n);
    const std::size_t shard = (n + ranks - 1) / ranks;
    for (int t = 1; t <= 5; ++t)
      for (std::size_t r = 0; r < ranks; ++r) {
        const std::size_t a = r * shard, len = std::min(n, a + shard) - a;
        adam_update(sharded.p.data() + a, sharded.g.data() + a, sharded.m.data() + a, sharded.v.data() + a, len,
                    adam_step_scalars(adamw, 1e-3, t));
        sgd_update(sharded.p.data() + a, sharded.g.data() + a, sharded.m.data() + a, len, sgd_step_scalars(sgd, 1e-2));
      }
    INFO("ranks " << ranks);
    CHECK(same_bits(whole.p, sharded.p));
    CHECK(same_bits(whole.m, sharded.m));
    CHECK(same_bits(whole.v, sharded.v));
  }
}

TEST_CASE("Adam rejects bad hyper-parameters", "[ch2][optim]") {
  CHECK_THROWS(adam_step_scalars(AdamConfig{1.0, 0.999, 1e-8, 0, true}, 1e-3, 1));
  CHECK_THROWS(adam_step_scalars(AdamConfig{0.9, 0.999, 0.0, 0, true}, 1e-3, 1));
  CHECK_THROWS(adam_step_scalars(AdamConfig{}, 1e-3, 0));
  CHECK_THROWS(adam_step_scalars(AdamConfig{}, -1.0, 1));
}
