// stage_fixture.h — shared by the pipeline tests: a small GPT, its micro-batches, a single-device
// run of a step (every micro-batch forward and backward on one model, the gradients summed along
// the canonical tree in micro-batch order), and the bit-level comparison of float vectors.
#pragma once

#include <cstring>
#include <vector>

#include "kernels/cast.h"
#include "model/gpt.h"
#include "model/gpt_harness.h"
#include "optim/grad_accumulator.h"

namespace zt_pipe_test {

using zt::model::GptConfig;

/// Micro-batch m's [B, T+1] tokens (fixed by m alone, so every stage draws the same ones).
inline std::vector<int32_t> tokens_of(const GptConfig& cfg, int64_t B, int m) {
  return zt_test::random_batch(B, cfg.context, cfg.vocab, 1000u + static_cast<unsigned>(m));
}

/// The compute copy of GPT-2 initial parameters, in the model's storage order.
template <typename T>
std::vector<T> stored_params(const zt::model::Manifest& manifest, const GptConfig& cfg) {
  const auto master = zt_test::gpt_init(cfg, 7);
  std::vector<float> stored(static_cast<std::size_t>(manifest.param_count));
  zt::model::from_canonical(manifest, master.data(), stored.data());
  std::vector<T> p(stored.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = zt::kernels::from_f<T>(stored[i]);
  return p;
}

/// The FP32 sum of M micro-batch gradients, canonical tree, and the loss sums.
struct StepSums {
  std::vector<float> grad;    ///< every parameter, storage order
  std::vector<float> losses;  ///< per micro-batch (the last stage's)
};

/// Accumulates widened micro-batch gradients along the canonical tree.
struct TreeSum {
  zt::CanonicalGradAccumulator<std::vector<float>> acc;
  explicit TreeSum(std::size_t n) : acc(n, [](std::size_t k) { return std::vector<float>(k); }) {}
  template <typename T>
  void push(const std::vector<T>& g) {
    acc.push_with([&](float* leaf) {
      for (std::size_t i = 0; i < g.size(); ++i) leaf[i] = zt::kernels::to_f(g[i]);
    });
  }
};

/// One device: every micro-batch through the whole model, in order.
template <typename T>
StepSums one_device(const GptConfig& cfg, int64_t B, int M, bool checkpointing, float grad_scale) {
  zt::model::ModelOptions o;
  o.checkpoint_activations = checkpointing;
  zt_test::Harness<T> h(cfg, B, zt_test::gpt_init(cfg, 7), 0, o);
  TreeSum sum(h.grads.size());
  StepSums out;
  for (int m = 0; m < M; ++m) {
    const auto batch = tokens_of(cfg, B, m);
    out.losses.push_back(h.forward(batch));
    h.backward(batch, grad_scale);
    sum.push(h.grads);
  }
  out.grad = sum.acc.finish();
  return out;
}

/// Bitwise equality of two float ranges (NaN-safe). @return whether every bit is equal.
inline bool same_bits(const float* a, const float* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

}  // namespace zt_pipe_test
