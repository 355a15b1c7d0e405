// The model's contract with its callers: config validation, manifest, unit order of the
// ParamProvider calls, workspace sizes, loss-sum and grad_scale semantics, predictions, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>

#include "model/gpt_harness.h"

using zt::model::GptConfig;

TEST_CASE("config validation rejects bad sizes with one clear line", "[ch2][model][config]") {
  CHECK_NOTHROW(zt::model::validate(GptConfig{}));
  CHECK_THROWS_WITH(zt::model::validate(GptConfig{.heads = 5}), "width 384 is not divisible by heads 5");
  CHECK_THROWS_WITH(zt::model::validate(GptConfig{.vocab = 0}), "vocab must be positive, got 0");
  CHECK_THROWS_WITH(zt::model::validate(GptConfig{.context = -3}), "context must be positive, got -3");
  CHECK_THROWS_AS(zt::model::validate(GptConfig{.layers = 0}), zt::Error);
  CHECK_THROWS_AS(zt::model::validate(GptConfig{.heads = 0}), zt::Error);
  CHECK_THROWS_AS(zt::model::validate(GptConfig{.width = -1}), zt::Error);
  CHECK_THROWS_AS(zt::model::Gpt<float>(GptConfig{.heads = 7}, 1), zt::Error);
  CHECK_THROWS_AS(zt::model::Gpt<float>(GptConfig{}, 0), zt::Error);
}

TEST_CASE("manifest: canonical names, shapes, dense offsets, units", "[ch2][model][manifest]") {
  const GptConfig cfg{.vocab = 256, .context = 256, .layers = 6, .heads = 6, .width = 384};
  const auto m = zt::model::make_manifest(cfg);
  CHECK(m.param_count == 10844160);  // V C + T C + L (12 C^2 + 13 C) + 2 C, the ~10.8M model
  CHECK(m.param_count == zt::model::param_count(cfg));
  REQUIRE(m.params.size() == 2 + 12 * 6 + 2);
  CHECK(m.params[0].name == "wte");
  CHECK(m.params[0].shape == std::vector<int64_t>{256, 384});
  CHECK(m.params[1].name == "wpe");
  CHECK(m.params[4].name == "h.0.attn.c_attn.weight");
  CHECK(m.params[4].shape == std::vector<int64_t>{3 * 384, 384});
  CHECK(m.params[13].name == "h.0.mlp.c_proj.bias");
  CHECK(m.params[14].name == "h.1.ln_1.weight");
  CHECK(m.params[12].shape == std::vector<int64_t>{384, 4 * 384});
  CHECK(m.params.back().name == "ln_f.bias");
  int64_t at = 0;
  for (const auto& p : m.params) {
    CHECK(p.offset == at);
    at += p.numel;
    const auto& u = m.units[static_cast<std::size_t>(p.unit)];
    CHECK(p.offset_in_unit == p.offset - u.offset);
  }
  CHECK(at == m.param_count);
  REQUIRE(m.units.size() == 8);
  CHECK(m.units[0].name == "embeddings");
  CHECK(m.units[1].name == "h.0");
  CHECK(m.units[7].name == "ln_f");
  int64_t u_at = 0;
  for (const auto& u : m.units) {
    CHECK(u.offset == u_at);
    u_at += u.numel;
  }
  CHECK(m.index_of("h.5.ln_2.bias") == 2 + 5 * 12 + 7);
  CHECK_THROWS_AS(m.index_of("nope"), zt::Error);
}

namespace {
// Records every provider call; serves a dense buffer underneath.
struct RecordingProvider final : zt::model::ParamProvider<float> {
  zt::model::DenseParamProvider<float> inner;
  std::string log;
  RecordingProvider(const zt::model::Manifest& m, const float* p, float* g) : inner(m, p, g) {}
  void note(char what, int u) {
    log.push_back(what);
    log.append(std::to_string(u));
    log.push_back(' ');
  }
  const float* acquire(int u) override { return note('a', u), inner.acquire(u); }
  void release(int u) override { note('r', u); }
  float* grad(int u) override { return note('g', u), inner.grad(u); }
  void grad_done(int u) override { note('d', u); }
  void param_grad_done(int p) override { note('p', p); }
};
}  // namespace

TEST_CASE("forward and backward visit units in the documented order", "[ch2][model][api]") {
  const GptConfig cfg{.vocab = 11, .context = 4, .layers = 2, .heads = 2, .width = 8};
  zt_test::Harness<float> h(cfg, 1, zt_test::gpt_init(cfg, 1));
  RecordingProvider rec(h.model.manifest(), h.params.data(), h.grads.data());
  const auto batch = zt_test::random_batch(1, 4, 11, 2);
  const auto in = zt::model::batch_inputs(batch.data(), 1, 4);
  const auto tg = zt::model::batch_targets(batch.data(), 1, 4);
  h.model.forward(rec, in, tg, h.ws);
  CHECK(rec.log == "a0 r0 a1 r1 a2 r2 a3 r3 a0 r0 ");
  rec.log.clear();
  h.model.backward(rec, in, tg, 1.0f, h.ws);
  // Parameters: 0 wte, 1 wpe, block l holds 2+12(l-1) .. 13+12(l-1), ln_f 26 and 27.
  const auto block = [](int first) {
    std::string s;
    for (int k : {10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1}) {
      s.push_back('p');
      s.append(std::to_string(first + k));
      s.push_back(' ');
    }
    return s;
  };
  std::string want = "a0 g0 r0 a3 g3 p26 p27 d3 r3 a2 g2 ";
  want.append(block(14)).append("d2 r2 a1 g1 ").append(block(2)).append("d1 r1 p1 p0 d0 ");
  CHECK(rec.log == want);
}

TEST_CASE("loss is the sum over positions; grad_scale scales the gradient", "[ch2][model][api]") {
  const GptConfig cfg{.vocab = 17, .context = 8, .layers = 1, .heads = 2, .width = 8};
  const auto master = zt_test::gpt_init(cfg, 3);
  const auto batch = zt_test::random_batch(3, 8, 17, 4);
  zt_test::Harness<float> h(cfg, 3, master);
  const float sum = h.forward(batch);
  const float* per = h.model.token_losses(h.ws);
  double direct = 0;
  for (int i = 0; i < 24; ++i) direct += per[i];
  CHECK(std::fabs(sum - direct) <= 1e-5 * direct);
  // At initialisation the logits are nearly 0, so each loss is close to ln V.
  CHECK(std::fabs(sum / 24 - std::log(17.0)) < 0.05);
  // Scaling by a power of two scales every gradient exactly (no rounding changes).
  h.backward(batch, 1.0f);
  const auto g1 = h.grads_f();
  h.backward(batch, 8.0f);
  const auto g8 = h.grads_f();
  for (std::size_t i = 0; i < g1.size(); ++i) REQUIRE(g8[i] == 8.0f * g1[i]);
}

TEST_CASE("workspace sizes are exact upper bounds and checked", "[ch2][model][api]") {
  const GptConfig cfg{.vocab = 20, .context = 5, .layers = 2, .heads = 1, .width = 4};
  using zt::model::Precision;
  // The activation layout is a closed form: per layer 14 N C + B H T^2 stored values and 4 N
  // floats, plus 2 N C + N V values and 5 N floats; every region rounded up to 64 bytes.
  const int64_t B = 3, N = 15;
  const auto pad = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  for (const auto p : {Precision::fp32, Precision::fp16}) {
    const int64_t t = static_cast<int64_t>(zt::model::bytes_of(p));
    const int64_t C = 4, H = 1, T = 5, V = 20;
    int64_t expect = pad(N * C * t);
    expect += 2 * (pad(N * C * t) * 5 + pad(3 * N * C * t) + pad(B * H * T * T * t) + 2 * pad(4 * N * C * t) +
                   4 * pad(N * 4));
    expect += pad(N * C * t) + pad(N * V * t) + 5 * pad(N * 4);
    CHECK(static_cast<int64_t>(zt::model::activation_bytes(cfg, B, p)) == expect);
  }
  // A workspace one byte short is refused.
  zt_test::Harness<float> h(cfg, B, zt_test::gpt_init(cfg, 1));
  auto batch = zt_test::random_batch(B, 5, 20, 1);
  zt::model::Workspace small = h.ws;
  small.scratch_size -= 1;
  CHECK_THROWS_AS(h.model.forward(h.provider, zt::model::batch_inputs(batch.data(), B, 5),
                                  zt::model::batch_targets(batch.data(), B, 5), small),
                  zt::Error);
  // Out-of-range tokens are refused with a clear error.
  batch[3] = 20;
  CHECK_THROWS_AS(h.forward(batch), zt::Error);
  batch[3] = -1;
  CHECK_THROWS_AS(h.forward(batch), zt::Error);
}

TEST_CASE("predictions are the per-position argmax of the logits", "[ch2][model][api]") {
  // With every parameter but wte zeroed and ln_f weight 1, bias b: ln_f's output is b at every
  // position, so the logits are wte b: the prediction is argmax_v (wte_v . b), the same everywhere.
  const GptConfig cfg{.vocab = 9, .context = 3, .layers = 1, .heads = 1, .width = 4};
  auto master = zt_test::gpt_init(cfg, 12);
  const auto m = zt::model::make_manifest(cfg);
  for (std::size_t i = 1; i < m.params.size(); ++i)
    for (int64_t k = 0; k < m.params[i].numel; ++k) master[m.params[i].offset + k] = 0.0f;
  const int lnf_b = m.index_of("ln_f.bias");
  const float b[4] = {1.0f, -2.0f, 0.5f, 3.0f};
  for (int c = 0; c < 4; ++c) master[m.params[lnf_b].offset + c] = b[c];
  int best = 0;
  double best_v = -1e30;
  for (int v = 0; v < 9; ++v) {
    double s = 0;
    for (int c = 0; c < 4; ++c) s += master[v * 4 + c] * b[c];
    if (s > best_v) best_v = s, best = v;
  }
  zt_test::Harness<float> h(cfg, 2, master);
  h.forward(zt_test::random_batch(2, 3, 9, 5));
  int32_t pred[6];
  h.model.predictions(h.ws, pred);
  for (int i = 0; i < 6; ++i) CHECK(pred[i] == best);
}
