// model/workspace.cc — the activation and scratch layouts: one bump allocator each, 64-byte aligned.
#include "model/workspace.h"

#include <algorithm>

#include "core/check.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"

namespace zt::model {
namespace {

constexpr std::size_t kAlign = 64;

// Hands out consecutive regions, each starting on a kAlign boundary.
struct Bump {
  std::size_t at = 0;
  std::size_t take(int64_t count, std::size_t elem_bytes) {
    const std::size_t here = at;
    const std::size_t bytes = static_cast<std::size_t>(count) * elem_bytes;
    at += (bytes + kAlign - 1) / kAlign * kAlign;
    return here;
  }
};

}  // namespace

ActivationLayout activation_layout(const GptConfig& cfg, int64_t B, Precision p) {
  validate(cfg);
  ZT_CHECK(B > 0, "micro-batch size must be positive, got ", B);
  const int64_t T = cfg.context, C = cfg.width, H = cfg.heads, N = B * T;
  const std::size_t t = bytes_of(p), f = sizeof(float);
  Bump a;
  ActivationLayout l;
  l.x0 = a.take(N * C, t);
  for (int64_t i = 0; i < cfg.layers; ++i) {
    LayerActivations la{};
    la.ln1 = a.take(N * C, t);
    la.ln1_mean = a.take(N, f);
    la.ln1_rstd = a.take(N, f);
    la.qkv = a.take(N * 3 * C, t);
    la.att_p = a.take(B * H * T * T, t);
    la.att_y = a.take(N * C, t);
    la.res1 = a.take(N * C, t);
    la.ln2 = a.take(N * C, t);
    la.ln2_mean = a.take(N, f);
    la.ln2_rstd = a.take(N, f);
    la.fc = a.take(N * 4 * C, t);
    la.gelu = a.take(N * 4 * C, t);
    la.res2 = a.take(N * C, t);
    l.layers.push_back(la);
  }
  l.lnf = a.take(N * C, t);
  l.lnf_mean = a.take(N, f);
  l.lnf_rstd = a.take(N, f);
  l.logits = a.take(N * cfg.vocab, t);
  l.ce_max = a.take(N, f);
  l.ce_sum = a.take(N, f);
  l.losses = a.take(N, f);
  l.total = a.at;
  return l;
}

ScratchLayout scratch_layout(const GptConfig& cfg, int64_t B, Precision p) {
  validate(cfg);
  ZT_CHECK(B > 0, "micro-batch size must be positive, got ", B);
  const int64_t T = cfg.context, C = cfg.width, V = cfg.vocab, N = B * T;
  const bool nar = p != Precision::fp32;
  const std::size_t t = bytes_of(p);
  int64_t floats = 0;
  const auto need = [&](int64_t n) { floats = std::max(floats, n); };
  using namespace kernels;
  for (const auto& [in, out] : {std::pair{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}, {C, V}}) {
    need(linear_forward_scratch_floats(N, in, out, nar));
    need(linear_backward_scratch_floats(N, in, out, nar));
  }
  need(attention_forward_scratch_floats(T, C, nar));
  need(attention_backward_scratch_floats(T, C, nar));
  need(layernorm_backward_scratch_floats(N, C));
  need(embedding_backward_scratch_floats(B, T, C));
  Bump s;
  ScratchLayout l{};
  l.d_x = s.take(N * C, t);
  l.d_branch = s.take(N * C, t);
  l.d_c = s.take(N * C, t);
  l.d_qkv = s.take(N * 3 * C, t);
  l.d_h = s.take(N * 4 * C, t);
  l.d_logits = s.take(N * V, t);
  l.op_floats = s.take(floats, sizeof(float));
  l.op_ints = s.take(embedding_backward_scratch_ints(B, T, V), sizeof(int32_t));
  l.total = s.at;
  l.op_float_count = floats;
  return l;
}

std::size_t activation_bytes(const GptConfig& cfg, int64_t B, Precision p) {
  return activation_layout(cfg, B, p).total;
}

std::size_t scratch_bytes(const GptConfig& cfg, int64_t B, Precision p) { return scratch_layout(cfg, B, p).total; }

}  // namespace zt::model
