// gpt_harness.h — test helper: one Gpt<T> with dense parameters and gradients (DenseParamProvider)
// and its workspace, allocated with a trailing guard band so tests can prove that the model stays
// inside the sizes activation_bytes()/scratch_bytes()/checkpoint_bytes() promise. Parameters are
// given in canonical order and stored in the model's storage manifest (a model-parallel rank
// keeps only its blocks); grads_canonical() maps the gradient back.
#pragma once

#include <cstdlib>
#include <cstring>
#include <limits>
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

  GuardedBuffer checkpoints;

  /// @param master FP32 parameters in canonical order (rounded to T for the compute copy).
  /// @param fill_byte what the workspace is filled with before use (to catch uninitialised reads).
  /// @param options model-parallel placement and checkpointing. @param mp_sum completes block sums.
  Harness(const zt::model::GptConfig& c, int64_t b, const std::vector<float>& master, unsigned char fill_byte = 0,
          const zt::model::ModelOptions& options = {}, zt::model::ModelParallelSum mp_sum = {})
      : cfg(c),
        B(b),
        model(c, b, options, std::move(mp_sum)),
        params(static_cast<std::size_t>(model.manifest().param_count)),
        grads(params.size()),
        provider(model.manifest(), params.data(), grads.data()),
        fill(fill_byte),
        acts(zt::model::activation_bytes(c, b, zt::model::precision_of<T>(), options), fill_byte),
        scratch(zt::model::scratch_bytes(c, b, zt::model::precision_of<T>(), options), fill_byte),
        checkpoints(zt::model::checkpoint_bytes(c, b, zt::model::precision_of<T>(), options), fill_byte) {
    std::vector<float> stored(params.size());
    zt::model::from_canonical(model.manifest(), master.data(), stored.data());
    for (std::size_t i = 0; i < stored.size(); ++i) params[i] = zt::kernels::from_f<T>(stored[i]);
    std::memset(static_cast<void*>(grads.data()), fill_byte, grads.size() * sizeof(T));
    ws = {acts.data.get(), acts.size, scratch.data.get(), scratch.size, checkpoints.data.get(), checkpoints.size};
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
  /// The gradient in canonical order; elements this rank does not hold are NaN.
  std::vector<float> grads_canonical() const {
    std::vector<float> g(static_cast<std::size_t>(zt::model::param_count(cfg)),
                         std::numeric_limits<float>::quiet_NaN());
    const auto stored = grads_f();
    zt::model::to_canonical(model.manifest(), stored.data(), g.data());
    return g;
  }
  bool guards_intact() const {
    return acts.guard_intact(fill) && scratch.guard_intact(fill) && checkpoints.guard_intact(fill);
  }
};

/// Dense parameters and gradients, as DenseParamProvider, writing down every call the model makes
/// (model/param_provider.h's protocol), for comparison with provider_calls().
template <typename T>
struct RecordingProvider : zt::model::ParamProvider<T> {
  /// @param m the manifest. @param p dense parameters. @param g dense gradient slots.
  RecordingProvider(const zt::model::Manifest& m, const T* p, T* g) : manifest(m), params(p), grads(g) {}
  const zt::model::Manifest& manifest;
  const T* params;
  T* grads;
  std::vector<zt::model::ProviderCall> calls;  ///< in order
  const T* acquire(int u) override {
    calls.push_back({zt::model::ProviderCall::Kind::acquire, u});
    return params + manifest.units[static_cast<std::size_t>(u)].offset;
  }
  void release(int u) override { calls.push_back({zt::model::ProviderCall::Kind::release, u}); }
  T* grad(int u) override {
    calls.push_back({zt::model::ProviderCall::Kind::grad, u});
    return grads + manifest.units[static_cast<std::size_t>(u)].offset;
  }
  void grad_done(int u) override { calls.push_back({zt::model::ProviderCall::Kind::grad_done, u}); }
  void param_grad_done(int p) override {
    calls.push_back(
        {zt::model::ProviderCall::Kind::param_grad_done, manifest.params[static_cast<std::size_t>(p)].unit, p});
  }
};

/// Whether two call lists are the same calls in the same order. @param a one. @param b the other.
/// @return true if equal.
inline bool same_calls(const std::vector<zt::model::ProviderCall>& a, const std::vector<zt::model::ProviderCall>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].unit != b[i].unit || a[i].param != b[i].param) return false;
  return true;
}

/// GPT-2 initial parameters.
inline std::vector<float> gpt_init(const zt::model::GptConfig& cfg, uint64_t seed) {
  std::vector<float> p(static_cast<std::size_t>(zt::model::param_count(cfg)));
  zt::model::init_params(cfg, seed, p.data());
  return p;
}

}  // namespace zt_test
