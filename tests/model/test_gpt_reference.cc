// The whole FP32 model against the independent float64 reference (ref_gpt_double.cc).
//
// Loss: Gpt<float>::forward's loss sum against ref_gpt_loss_sum. Gradient: Gpt<float>::backward
// with grad_scale = 1 (the gradient of the loss SUM) against central differences of the double
// reference, h = 1e-5 (truncation ~h^2 ~ 1e-10, round-off ~1e-16 * |L| / h ~ 1e-10).
//
// Tolerance, from float32 rounding: every stored float value carries relative error below
// (n + 4) u, u = 2^-24, where n <= 4C = 32 is the longest sum feeding it (BLAS dot products
// accumulate linearly; the canonical tree only better). Along the longest chain of the forward
// and backward passes of this 2-layer model (~40 stored stages) those errors add, amplified by
// the network's sensitivity, which stays O(1) for these weights. Worst case 40 * 36 u ~ 1e-4
// relative to the gradient's scale (max |g|); the errors are independent roundings, so they add
// in quadrature: sqrt(40) * 36 u ~ 1.4e-5. We assert 2e-5 element-wise against max |g| (measured:
// ~1.2e-7), and 1e-5 relative for the loss (summed over 12 positions from O(1) terms). A wrong
// formula in any op is off by O(1); a wrong epsilon or scale by far more than 2e-5.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "model/gpt_harness.h"
#include "model/ref_gpt_double.h"

using zt::model::GptConfig;

TEST_CASE("FP32 GPT loss and gradient match an independent float64 implementation", "[ch2][model][reference]") {
  const GptConfig cfg{.vocab = 13, .context = 6, .layers = 2, .heads = 2, .width = 8};
  const int64_t B = 2;
  // Weights larger than GPT-2's init so every path (attention, GELU's curve, LayerNorm gains)
  // carries gradient of the same order; LayerNorm gains near 1.
  const auto manifest = zt::model::make_manifest(cfg);
  std::vector<float> master(static_cast<std::size_t>(manifest.param_count));
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-0.4f, 0.4f);
  for (const auto& p : manifest.params) {
    const bool ln_gain =
        p.shape.size() == 1 && p.name.find("ln_") != std::string::npos && p.name.find(".weight") != std::string::npos;
    for (int64_t i = 0; i < p.numel; ++i) master[p.offset + i] = (ln_gain ? 1.0f : 0.0f) + dist(gen);
  }
  const auto batch = zt_test::random_batch(B, cfg.context, cfg.vocab, 99);

  zt_test::Harness<float> h(cfg, B, master);
  const float loss = h.forward(batch);
  h.backward(batch, 1.0f);

  const zt_test::RefGptConfig rc{13, 6, 2, 2, 8};
  std::vector<double> pd(master.begin(), master.end());
  const double ref_loss = zt_test::ref_gpt_loss_sum(rc, pd, batch, static_cast<int>(B));
  INFO("loss " << loss << " reference " << ref_loss);
  CHECK(std::fabs(loss - ref_loss) <= 1e-5 * std::fabs(ref_loss));

  const double step = 1e-5;
  std::vector<double> g_ref(pd.size());
  double scale = 0;
  for (std::size_t i = 0; i < pd.size(); ++i) {
    const double keep = pd[i];
    pd[i] = keep + step;
    const double up = zt_test::ref_gpt_loss_sum(rc, pd, batch, static_cast<int>(B));
    pd[i] = keep - step;
    const double down = zt_test::ref_gpt_loss_sum(rc, pd, batch, static_cast<int>(B));
    pd[i] = keep;
    g_ref[i] = (up - down) / (2 * step);
    scale = std::max(scale, std::fabs(g_ref[i]));
  }
  double worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < pd.size(); ++i) {
    const double e = std::fabs(h.grads[i] - g_ref[i]);
    if (e > worst) worst = e, worst_at = i;
  }
  std::string where;
  for (const auto& p : manifest.params)
    if (static_cast<int64_t>(worst_at) >= p.offset) where = p.name;
  INFO("max |g - g_ref| = " << worst << " at " << where << ", scale max|g_ref| = " << scale);
  CHECK(worst <= 2e-5 * scale);
  CHECK(scale > 0.1);  // the instance has real gradients
}
