// model/gpt_forward.cc — the GPT's construction, forward pass and prediction helpers.
// The backward pass is in gpt_backward.cc; the op formulas are in kernels/*.h.
#include <cstring>

#include "core/check.h"
#include "kernels/attention.h"
#include "kernels/cross_entropy.h"
#include "kernels/embedding.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/residual.h"
#include "model/gpt.h"

namespace zt::model {

template <typename T>
Gpt<T>::Gpt(const GptConfig& cfg, int64_t micro_batch)
    : cfg_(cfg),
      B_(micro_batch),
      manifest_(make_manifest(cfg)),
      block_(block_offsets(cfg.width)),
      act_(activation_layout(cfg, micro_batch, precision_of<T>())),
      scr_(scratch_layout(cfg, micro_batch, precision_of<T>())) {}

template <typename T>
void Gpt<T>::check(const kernels::TokenView& inputs, const kernels::TokenView& targets, const Workspace& ws) const {
  ZT_CHECK(inputs.rows == B_ && inputs.cols == cfg_.context, "inputs are [", inputs.rows, ",", inputs.cols,
           "], the model expects [", B_, ",", cfg_.context, "]");
  ZT_CHECK(targets.rows == B_ && targets.cols == cfg_.context, "targets are [", targets.rows, ",", targets.cols,
           "], the model expects [", B_, ",", cfg_.context, "]");
  ZT_CHECK(ws.activations && ws.activation_size >= act_.total, "activation workspace of ", ws.activation_size,
           " bytes, need ", act_.total);
  ZT_CHECK(ws.scratch && ws.scratch_size >= scr_.total, "scratch workspace of ", ws.scratch_size, " bytes, need ",
           scr_.total);
}

template <typename T>
void Gpt<T>::block_forward(int layer, const T* p, const T* x_in, char* acts, float* fs) {
  using namespace kernels;
  const LayerActivations& a = act_.layers[static_cast<std::size_t>(layer)];
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const int64_t C = cfg_.width, N = B_ * cfg_.context;
  const BlockOffsets& o = block_;
  layernorm_forward(at(a.ln1), stat(a.ln1_mean), stat(a.ln1_rstd), x_in, p + o.ln_1_w, p + o.ln_1_b, N, C);
  linear_forward(at(a.qkv), at(a.ln1), p + o.attn_w, p + o.attn_b, N, C, 3 * C, fs);
  attention_forward(at(a.att_y), at(a.att_p), at(a.qkv), B_, cfg_.context, C, cfg_.heads, fs);
  linear_forward(at(a.res1), at(a.att_y), p + o.attn_proj_w, p + o.attn_proj_b, N, C, C, fs);
  residual_forward(at(a.res1), x_in, at(a.res1), N * C);
  layernorm_forward(at(a.ln2), stat(a.ln2_mean), stat(a.ln2_rstd), at(a.res1), p + o.ln_2_w, p + o.ln_2_b, N, C);
  linear_forward(at(a.fc), at(a.ln2), p + o.fc_w, p + o.fc_b, N, C, 4 * C, fs);
  gelu_forward(at(a.gelu), at(a.fc), N * 4 * C);
  linear_forward(at(a.res2), at(a.gelu), p + o.mlp_proj_w, p + o.mlp_proj_b, N, 4 * C, C, fs);
  residual_forward(at(a.res2), at(a.res1), at(a.res2), N * C);
}

template <typename T>
float Gpt<T>::forward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                      const Workspace& ws) {
  using namespace kernels;
  check(inputs, targets, ws);
  char* acts = static_cast<char*>(ws.activations);
  float* fs = reinterpret_cast<float*>(static_cast<char*>(ws.scratch) + scr_.op_floats);
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const int64_t V = cfg_.vocab, C = cfg_.width, N = B_ * cfg_.context;
  const int L = static_cast<int>(cfg_.layers);

  const T* emb = params.acquire(0);
  embedding_forward(at(act_.x0), inputs, emb, emb + V * C, V, C);
  params.release(0);
  const T* x = at(act_.x0);
  for (int l = 0; l < L; ++l) {
    block_forward(l, params.acquire(l + 1), x, acts, fs);
    params.release(l + 1);
    x = at(act_.layers[static_cast<std::size_t>(l)].res2);
  }
  const T* lnf = params.acquire(L + 1);
  layernorm_forward(at(act_.lnf), stat(act_.lnf_mean), stat(act_.lnf_rstd), x, lnf, lnf + C, N, C);
  params.release(L + 1);
  const T* wte = params.acquire(0);
  linear_forward(at(act_.logits), at(act_.lnf), wte, static_cast<const T*>(nullptr), N, C, V, fs);
  params.release(0);
  float* losses = stat(act_.losses);
  cross_entropy_forward(losses, stat(act_.ce_max), stat(act_.ce_sum), at(act_.logits), targets, V);
  return canonical_sum_f(static_cast<std::size_t>(N), [&](std::size_t n) { return losses[n]; });
}

template <typename T>
void Gpt<T>::predictions(const Workspace& ws, int32_t* out) const {
  const char* acts = static_cast<const char*>(ws.activations);
  kernels::argmax_rows(out, reinterpret_cast<const T*>(acts + act_.logits), B_ * cfg_.context, cfg_.vocab);
}

template <typename T>
const float* Gpt<T>::token_losses(const Workspace& ws) const {
  return reinterpret_cast<const float*>(static_cast<const char*>(ws.activations) + act_.losses);
}

template class Gpt<float>;
template class Gpt<fp16>;
template class Gpt<bf16>;

}  // namespace zt::model
