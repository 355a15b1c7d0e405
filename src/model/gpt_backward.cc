// model/gpt_backward.cc — the GPT's backward pass: the forward's ops in reverse, unit by unit,
// in the call order documented in param_provider.h.
//
// Activation gradients live in the scratch regions of workspace.h, rounded to T when stored.
// Within a block, the residual stream's gradient d_x flows through unchanged and each branch's
// gradient (a LayerNorm input gradient) is joined to it by residual_grad_join (FP32 add, one
// rounding): d_res1 = d_res2 + dLN2, d_x_in = d_res1 + dLN1.
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
void Gpt<T>::block_backward(ParamProvider<T>& params, int layer, const T* p, T* g, const T* x_in, char* acts, char* scr,
                            float* fs) {
  using namespace kernels;
  const LayerActivations& a = act_.layers[static_cast<std::size_t>(layer)];
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const auto sc = [&](std::size_t off) { return reinterpret_cast<T*>(scr + off); };
  const int64_t C = cfg_.width, N = B_ * cfg_.context;
  const BlockOffsets& o = block_;
  T* d_x = sc(scr_.d_x);  // on entry: gradient of this block's output (res2)
  T* d_branch = sc(scr_.d_branch);
  T* d_c = sc(scr_.d_c);
  T* d_h = sc(scr_.d_h);
  T* d_qkv = sc(scr_.d_qkv);
  // local parameter k of this block is manifest parameter first + k (canonical order)
  const int first = manifest_.units[static_cast<std::size_t>(layer + 1)].first_param;
  const auto done = [&](int k0) {
    params.param_grad_done(first + k0);
    params.param_grad_done(first + k0 + 1);
  };
  // MLP branch: res2 = res1 + c_proj(gelu(c_fc(ln_2(res1))))
  linear_backward(d_h, g + o.mlp_proj_w, g + o.mlp_proj_b, d_x, at(a.gelu), p + o.mlp_proj_w, N, 4 * C, C, fs);
  done(10);
  gelu_backward(d_h, d_h, at(a.fc), N * 4 * C);
  linear_backward(d_c, g + o.fc_w, g + o.fc_b, d_h, at(a.ln2), p + o.fc_w, N, C, 4 * C, fs);
  done(8);
  layernorm_backward(d_branch, g + o.ln_2_w, g + o.ln_2_b, d_c, at(a.res1), stat(a.ln2_mean), stat(a.ln2_rstd),
                     p + o.ln_2_w, N, C, fs);
  done(6);
  residual_grad_join(d_x, d_branch, N * C);  // now the gradient of res1
  // attention branch: res1 = x_in + c_proj(attn(c_attn(ln_1(x_in))))
  linear_backward(d_c, g + o.attn_proj_w, g + o.attn_proj_b, d_x, at(a.att_y), p + o.attn_proj_w, N, C, C, fs);
  done(4);
  attention_backward(d_qkv, d_c, at(a.qkv), at(a.att_p), B_, cfg_.context, C, cfg_.heads, fs);
  linear_backward(d_c, g + o.attn_w, g + o.attn_b, d_qkv, at(a.ln1), p + o.attn_w, N, C, 3 * C, fs);
  done(2);
  layernorm_backward(d_branch, g + o.ln_1_w, g + o.ln_1_b, d_c, x_in, stat(a.ln1_mean), stat(a.ln1_rstd), p + o.ln_1_w,
                     N, C, fs);
  done(0);
  residual_grad_join(d_x, d_branch, N * C);  // now the gradient of x_in
}

template <typename T>
void Gpt<T>::backward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                      float grad_scale, const Workspace& ws) {
  using namespace kernels;
  check(inputs, targets, ws);
  char* acts = static_cast<char*>(ws.activations);
  char* scr = static_cast<char*>(ws.scratch);
  float* fs = reinterpret_cast<float*>(scr + scr_.op_floats);
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const auto sc = [&](std::size_t off) { return reinterpret_cast<T*>(scr + off); };
  const int64_t V = cfg_.vocab, C = cfg_.width, N = B_ * cfg_.context;
  const int L = static_cast<int>(cfg_.layers);
  const auto last_x = [&]() { return at(act_.layers[static_cast<std::size_t>(L - 1)].res2); };

  // Head: logits = lnf wte^T. Its wte gradient is written into grad(0) now; the embedding's part
  // is added at the very end (kernels/embedding.h), so grad(0) stays open across the backward.
  T* d_logits = sc(scr_.d_logits);
  cross_entropy_backward(d_logits, at(act_.logits), stat(act_.ce_max), stat(act_.ce_sum), targets, V, grad_scale);
  const T* wte = params.acquire(0);
  T* g0 = params.grad(0);
  linear_backward(sc(scr_.d_c), g0, static_cast<T*>(nullptr), d_logits, at(act_.lnf), wte, N, C, V, fs);
  params.release(0);

  const T* lnf = params.acquire(L + 1);
  T* g_lnf = params.grad(L + 1);
  layernorm_backward(sc(scr_.d_x), g_lnf, g_lnf + C, sc(scr_.d_c), last_x(), stat(act_.lnf_mean), stat(act_.lnf_rstd),
                     lnf, N, C, fs);
  const int lnf_first = manifest_.units[static_cast<std::size_t>(L + 1)].first_param;
  params.param_grad_done(lnf_first);
  params.param_grad_done(lnf_first + 1);
  params.grad_done(L + 1);
  params.release(L + 1);

  for (int l = L - 1; l >= 0; --l) {
    const T* p = params.acquire(l + 1);
    T* g = params.grad(l + 1);
    const T* x_in = l == 0 ? at(act_.x0) : at(act_.layers[static_cast<std::size_t>(l - 1)].res2);
    block_backward(params, l, p, g, x_in, acts, scr, fs);
    params.grad_done(l + 1);
    params.release(l + 1);
  }

  int32_t* is = reinterpret_cast<int32_t*>(scr + scr_.op_ints);
  embedding_backward(g0, g0 + V * C, static_cast<const T*>(sc(scr_.d_x)), inputs, V, C, fs, is);
  params.param_grad_done(1);  // wpe
  params.param_grad_done(0);  // wte
  params.grad_done(0);
}

// Gpt<T> is explicitly instantiated in gpt_forward.cc; the members defined here are instantiated
// here, one by one.
#define ZT_GPT_BACKWARD_INSTANCE(T)                                                                              \
  template void Gpt<T>::block_backward(ParamProvider<T>&, int, const T*, T*, const T*, char*, char*, float*);    \
  template void Gpt<T>::backward(ParamProvider<T>&, const kernels::TokenView&, const kernels::TokenView&, float, \
                                 const Workspace&);
ZT_GPT_BACKWARD_INSTANCE(float)
ZT_GPT_BACKWARD_INSTANCE(fp16)
ZT_GPT_BACKWARD_INSTANCE(bf16)
#undef ZT_GPT_BACKWARD_INSTANCE

}  // namespace zt::model
