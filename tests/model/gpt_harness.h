// gpt_harness.h — test helper: one Gpt<T> with dense parameters and gradients (DenseParamProvider)
// and its workspace, allocated with a trailing guard band so tests can prove that the model stays
// inside the sizes activation_bytes()/scratch_bytes() promise.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "kernels/cast.h"
#include "model/gpt.h"
#include "model/init.h"

namespace zt_test {

/// 64-byte aligned bytes with a guard band after the requested size.
struct GuardedBuffer {
  static constexpr std::size_t kGuard = 256;
  std::size_t size = 0;
  std::unique_ptr<char, decltype(&std::free)> data{nullptr, &std::free};
  GuardedBuffer(std::size_t n, unsigned char fill) : size(n) {
    data.reset(static_cast<char*>(std::aligned_alloc(64, (n + kGuard + 63) / 64 * 64)));
    std::memset(data.get(), fill, n + kGuard);
  }
  bool guard_intact(unsigned char fill) const {
    for (std::size_t i = size; i < size + kGuard; ++i)
      if (static_cast<unsigned char>(data.get()[i]) != fill) return false;
    return true;
  }
};

/// Random [B, T+1] token batch.
inline std::vector<int32_t> random_batch(int64_t B, int64_t T, int64_t V, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(V - 1));
  std::vector<int32_t> b(static_cast<std::size_t>(B * (T + 1)));
  for (auto& t : b) t = dist(gen);
  return b;
}

/// A model plus everything it needs, for one compute type T.
template <typename T>
struct Harness {
  zt::model::GptConfig cfg;
  int64_t B;
  zt::model::Gpt<T> model;
  std::vector<T> params, grads;
  zt::model::DenseParamProvider<T> provider;
  unsigned char fill;
  GuardedBuffer acts, scratch;
  zt::model::Workspace ws;

  /// @param master FP32 parameters (rounded to T for the compute copy).
  /// @param fill_byte what the workspace is filled with before use (to catch uninitialised reads).
  Harness(const zt::model::GptConfig& c, int64_t b, const std::vector<float>& master, unsigned char fill_byte = 0)
      : cfg(c),
        B(b),
        model(c, b),
        params(master.size()),
        grads(master.size()),
        provider(model.manifest(), params.data(), grads.data()),
        fill(fill_byte),
        acts(zt::model::activation_bytes(c, b, zt::model::precision_of<T>()), fill_byte),
        scratch(zt::model::scratch_bytes(c, b, zt::model::precision_of<T>()), fill_byte) {
    for (std::size_t i = 0; i < master.size(); ++i) params[i] = zt::kernels::from_f<T>(master[i]);
    std::memset(static_cast<void*>(grads.data()), fill_byte, grads.size() * sizeof(T));
    ws = {acts.data.get(), acts.size, scratch.data.get(), scratch.size};
  }
  float forward(const std::vector<int32_t>& batch) {
    return model.forward(provider, zt::model::batch_inputs(batch.data(), B, cfg.context),
                         zt::model::batch_targets(batch.data(), B, cfg.context), ws);
  }
  void backward(const std::vector<int32_t>& batch, float grad_scale) {
    model.backward(provider, zt::model::batch_inputs(batch.data(), B, cfg.context),
                   zt::model::batch_targets(batch.data(), B, cfg.context), grad_scale, ws);
  }
  std::vector<float> grads_f() const {
    std::vector<float> g(grads.size());
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = zt::kernels::to_f(grads[i]);
    return g;
  }
  bool guards_intact() const { return acts.guard_intact(fill) && scratch.guard_intact(fill); }
};

/// GPT-2 initial parameters.
inline std::vector<float> gpt_init(const zt::model::GptConfig& cfg, uint64_t seed) {
  std::vector<float> p(static_cast<std::size_t>(zt::model::param_count(cfg)));
  zt::model::init_params(cfg, seed, p.data());
  return p;
}

}  // namespace zt_test
