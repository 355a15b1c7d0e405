// model/workspace.cc — the activation and scratch layouts: one bump allocator each, 64-byte aligned.
#include "model/workspace.h"

#include <algorithm>

#include "core/check.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/parallel_linear.h"

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

ActivationLayout activation_layout(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o) {
  validate(cfg);
  validate(cfg, o.mp);
  validate(cfg, o.stage);
  ZT_CHECK(B > 0, "micro-batch size must be positive, got ", B);
  const int64_t T = cfg.context, C = cfg.width, N = B * T;
  const int64_t first = o.stage.begin, end = stage_end(cfg, o.stage);
  const int64_t Cm = C / o.mp.size, Hm = cfg.heads / o.mp.size;  // this rank's part of the split tensors
  const std::size_t t = bytes_of(p), f = sizeof(float);
  Bump a;
  ActivationLayout l;
  l.checkpointing = o.checkpoint_activations;
  const auto block = [&]() {
    LayerActivations la{};
    la.ln1 = a.take(N * C, t);
    la.ln1_mean = a.take(N, f);
    la.ln1_rstd = a.take(N, f);
    la.qkv = a.take(N * 3 * Cm, t);
    la.att_p = a.take(B * Hm * T * T, t);
    la.att_y = a.take(N * Cm, t);
    la.res1 = a.take(N * C, t);
    la.ln2 = a.take(N * C, t);
    la.ln2_mean = a.take(N, f);
    la.ln2_rstd = a.take(N, f);
    la.fc = a.take(N * 4 * Cm, t);
    la.gelu = a.take(N * 4 * Cm, t);
    la.res2 = a.take(N * C, t);
    return la;
  };
  if (o.checkpoint_activations) {
    // the stream buffer; with external checkpoints it takes an all-gather of N_m equal slices
    const int64_t slices = o.external_checkpoints ? (N * C + o.mp.size - 1) / o.mp.size * o.mp.size : N * C;
    l.x = a.take(slices, t);
    l.x0 = l.x;
    const LayerActivations slot = block();  // one block's tensors, recomputed for each block
    l.layers.assign(static_cast<std::size_t>(cfg.layers), slot);
    const std::size_t stride_bytes = (static_cast<std::size_t>(N * C) * t + kAlign - 1) / kAlign * kAlign;
    l.checkpoint_stride = stride_bytes / t;
    l.checkpoint_total = o.external_checkpoints ? 0 : static_cast<std::size_t>(end - first) * stride_bytes;
  } else {
    l.x0 = a.take(N * C, t);
    l.layers.assign(static_cast<std::size_t>(cfg.layers), LayerActivations{});
    for (int64_t i = first; i < end; ++i) l.layers[static_cast<std::size_t>(i)] = block();
  }
  l.head = runs_head(cfg, o.stage);
  if (!l.head) {  // a stage before the last: its output is its last block's res2 (or the stream buffer)
    l.lnf = l.lnf_mean = l.lnf_rstd = l.logits = l.ce_max = l.ce_sum = l.losses = 0;
    l.total = a.at;
    return l;
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

ScratchLayout scratch_layout(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o) {
  validate(cfg);
  validate(cfg, o.mp);
  validate(cfg, o.stage);
  ZT_CHECK(B > 0, "micro-batch size must be positive, got ", B);
  const int64_t T = cfg.context, C = cfg.width, V = cfg.vocab, N = B * T;
  const bool head = runs_head(cfg, o.stage), embedding = runs_embedding(o.stage);
  const int64_t Cm = C / o.mp.size, Cb = C / cfg.mp_blocks, J = local_blocks(cfg, o.mp);
  const bool nar = p != Precision::fp32;
  const std::size_t t = bytes_of(p);
  int64_t floats = 0;
  const auto need = [&](int64_t n) { floats = std::max(floats, n); };
  using namespace kernels;
  // the split Linears (kernels/parallel_linear.h; with one block these are linear.h's counts)
  need(column_parallel_forward_floats(N, C, 3, Cb, nar));  // c_attn
  need(column_parallel_backward_floats(N, C, 3, Cb, J, nar));
  need(column_parallel_forward_floats(N, C, 1, 4 * Cb, nar));  // c_fc
  need(column_parallel_backward_floats(N, C, 1, 4 * Cb, J, nar));
  need(row_parallel_forward_floats(N, Cb, C, J, nar));  // attn.c_proj
  need(row_parallel_backward_floats(N, Cb, C, J, nar));
  need(row_parallel_forward_floats(N, 4 * Cb, C, J, nar));  // mlp.c_proj
  need(row_parallel_backward_floats(N, 4 * Cb, C, J, nar));
  if (head) {  // the tied head
    need(linear_forward_scratch_floats(N, C, V, nar));
    need(linear_backward_scratch_floats(N, C, V, nar));
  }
  need(attention_forward_scratch_floats(T, Cm, nar));
  need(attention_backward_scratch_floats(T, Cm, nar));
  need(layernorm_backward_scratch_floats(N, C));
  if (embedding) need(embedding_backward_scratch_floats(B, T, C));
  Bump s;
  ScratchLayout l{};
  l.d_x = s.take(N * C, t);
  l.d_branch = s.take(N * C, t);
  l.d_c = s.take(N * C, t);
  l.d_qkv = s.take(N * 3 * Cm, t);
  l.d_h = s.take(N * 4 * Cm, t);
  l.d_logits = s.take(head ? N * V : 0, t);
  l.tied_head_grad = s.take(tied_across_stages(cfg, o.stage) ? V * C : 0, t);
  l.op_floats = s.take(floats, sizeof(float));
  l.op_ints = s.take(embedding ? embedding_backward_scratch_ints(B, T, V) : 0, sizeof(int32_t));
  l.total = s.at;
  return l;
}

std::size_t activation_bytes(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o) {
  return activation_layout(cfg, B, p, o).total;
}

std::size_t checkpoint_bytes(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o) {
  return activation_layout(cfg, B, p, o).checkpoint_total;
}

std::size_t scratch_bytes(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o) {
  return scratch_layout(cfg, B, p, o).total;
}

}  // namespace zt::model
