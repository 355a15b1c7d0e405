// model/gpt_backward.cc — the GPT's backward pass: the forward's ops in reverse, unit by unit,
// in the call order documented in param_provider.h.
//
// Activation gradients live in the scratch regions of workspace.h, rounded to T when stored.
// Within a block, the residual stream's gradient d_x flows through unchanged and each branch's
// gradient (a LayerNorm input gradient) is joined to it by residual_grad_join (FP32 add, one
// rounding): d_res1 = d_res2 + dLN2, d_x_in = d_res1 + dLN1. Every access to a tensor is an op of
// ops() (model/model_ops.h), as in the forward.
#include "core/check.h"
#include "model/gpt.h"

namespace zt::model {

template <typename T>
void Gpt<T>::block_backward(ParamProvider<T>& params, int layer, const LayerTensors<const T>& p,
                            const LayerTensors<T>& g, const T* x_in, char* acts, char* scr, float* fs) {
  using kernels::LinearBlock, kernels::LinearBlockGrad;
  ModelOps<T>& op = ops();
  const LayerActivations& a = act_.layers[static_cast<std::size_t>(layer)];
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const auto sc = [&](std::size_t off) { return reinterpret_cast<T*>(scr + off); };
  const int64_t C = cfg_.width, N = B_ * cfg_.context, Bk = cfg_.mp_blocks;
  const int64_t Cm = C / opts_.mp.size, Hm = cfg_.heads / opts_.mp.size, Cb = C / Bk;
  T* d_x = sc(scr_.d_x);  // on entry: gradient of this block's output (res2)
  T* d_branch = sc(scr_.d_branch);
  T* d_c = sc(scr_.d_c);
  T* d_h = sc(scr_.d_h);
  T* d_qkv = sc(scr_.d_qkv);
  std::vector<LinearBlock<T>> attn(J_), attn_proj(J_), fc(J_), mlp_proj(J_);
  std::vector<LinearBlockGrad<T>> g_attn(J_), g_attn_proj(J_), g_fc(J_), g_mlp_proj(J_);
  for (int64_t j = 0; j < J_; ++j) {
    attn[j] = {p.attn_w[j], p.attn_b[j]}, g_attn[j] = {g.attn_w[j], g.attn_b[j]};
    attn_proj[j] = {p.attn_proj_w[j], nullptr}, g_attn_proj[j] = {g.attn_proj_w[j], nullptr};
    fc[j] = {p.fc_w[j], p.fc_b[j]}, g_fc[j] = {g.fc_w[j], g.fc_b[j]};
    mlp_proj[j] = {p.mlp_proj_w[j], nullptr}, g_mlp_proj[j] = {g.mlp_proj_w[j], nullptr};
  }
  // mp_blocks 1: the one unit's parameters finish pairwise, from its end towards its start, and
  // a ZeRO stage may start reducing them at once; split blocks report after the whole block
  // (local parameter k of the unit is manifest parameter first + k, canonical order)
  const bool one_unit = Bk == 1;
  const int first =
      manifest_.units[static_cast<std::size_t>(manifest_.layer_units[static_cast<std::size_t>(layer)][0])].first_param;
  const auto done = [&](int k0) {
    if (!one_unit) return;
    params.param_grad_done(first + k0);
    params.param_grad_done(first + k0 + 1);
  };
  // MLP branch: res2 = res1 + c_proj(gelu(c_fc(ln_2(res1))))
  op.row_parallel_backward(d_h, g_mlp_proj, g.mlp_proj_b, d_x, at(a.gelu), mlp_proj, N, 4 * Cb, C, fs);
  done(10);
  op.gelu_backward(d_h, d_h, at(a.fc), N * 4 * Cm);
  op.column_parallel_backward(d_c, g_fc, d_h, at(a.ln2), fc, N, C, 1, 4 * Cb, mp_sum_, fs);  // f: sum of dx
  done(8);
  op.layernorm_backward(d_branch, g.ln_2_w, g.ln_2_b, d_c, at(a.res1), stat(a.ln2_mean), stat(a.ln2_rstd), p.ln_2_w, N,
                        C, fs);
  done(6);
  op.residual_grad_join(d_x, d_branch, N * C);  // now the gradient of res1
  // attention branch: res1 = x_in + c_proj(attn(c_attn(ln_1(x_in))))
  op.row_parallel_backward(d_c, g_attn_proj, g.attn_proj_b, d_x, at(a.att_y), attn_proj, N, Cb, C, fs);
  done(4);
  op.attention_backward(d_qkv, d_c, at(a.qkv), at(a.att_p), B_, cfg_.context, Cm, Hm, fs);
  op.column_parallel_backward(d_c, g_attn, d_qkv, at(a.ln1), attn, N, C, 3, Cb, mp_sum_, fs);  // f: sum of dx
  done(2);
  op.layernorm_backward(d_branch, g.ln_1_w, g.ln_1_b, d_c, x_in, stat(a.ln1_mean), stat(a.ln1_rstd), p.ln_1_w, N, C,
                        fs);
  done(0);
  op.residual_grad_join(d_x, d_branch, N * C);  // now the gradient of x_in
}

// Head: logits = lnf wte^T, then ln_f. Its wte gradient is written into grad(0) now; the
// embedding's part is added at the very end (kernels/embedding.h), so grad(0) stays open across
// the backward (returned). On a last stage without the embedding the head's part goes to
// tied_head_grad() instead, for the first stage to add to; a stage before the last starts from
// the gradient received in d_x.
template <typename T>
T* Gpt<T>::head_backward(ParamProvider<T>& params, const kernels::TokenView& tg, float grad_scale, const Workspace& ws,
                         float* fs) {
  ModelOps<T>& op = ops();
  char* acts = static_cast<char*>(ws.activations);
  char* scr = static_cast<char*>(ws.scratch);
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const auto sc = [&](std::size_t off) { return reinterpret_cast<T*>(scr + off); };
  const int64_t V = cfg_.vocab, C = cfg_.width, N = B_ * cfg_.context;
  const int ln_f = static_cast<int>(manifest_.units.size()) - 1;
  T* d_logits = sc(scr_.d_logits);
  op.cross_entropy_backward(d_logits, at(act_.logits), stat(act_.ce_max), stat(act_.ce_sum), tg, V, grad_scale);
  const T* wte = params.acquire(0);
  T* g0 = embedding_ ? params.grad(0) : tied_head_grad(ws);
  op.linear_backward(sc(scr_.d_c), g0, static_cast<T*>(nullptr), d_logits, at(act_.lnf), wte, N, C, V, fs);
  params.release(0);

  const T* lnf = params.acquire(ln_f);
  T* g_lnf = params.grad(ln_f);
  op.layernorm_backward(sc(scr_.d_x), g_lnf, g_lnf + C, sc(scr_.d_c), block_input(ws, static_cast<int64_t>(end_)),
                        stat(act_.lnf_mean), stat(act_.lnf_rstd), lnf, N, C, fs);
  const int lnf_first = manifest_.units[static_cast<std::size_t>(ln_f)].first_param;
  params.param_grad_done(lnf_first);
  params.param_grad_done(lnf_first + 1);
  params.grad_done(ln_f);
  params.release(ln_f);
  return g0;
}

template <typename T>
void Gpt<T>::backward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                      float grad_scale, const Workspace& ws) {
  check(inputs, targets, ws);
  ModelOps<T>& op = ops();
  char* acts = static_cast<char*>(ws.activations);
  char* scr = static_cast<char*>(ws.scratch);
  float* fs = reinterpret_cast<float*>(scr + scr_.op_floats);
  const auto sc = [&](std::size_t off) { return reinterpret_cast<T*>(scr + off); };
  const int64_t V = cfg_.vocab, C = cfg_.width;
  const int L = static_cast<int>(end_);  // == cfg_.layers on the stage that runs the head
  std::unique_ptr<CheckpointKeeper<T>> own;
  CheckpointKeeper<T>* keeper = keeper_;
  if (act_.checkpointing && !keeper) keeper = (own = default_keeper(ws)).get();
  // staged again rather than kept from the forward: the ops' copies live until the next tokens()
  // call, and another model may share the ops in between
  const kernels::TokenView in = op.tokens(TokenGrid::inputs, inputs);
  const kernels::TokenView tg = op.tokens(TokenGrid::targets, targets);

  T* g0 = head_ ? head_backward(params, tg, grad_scale, ws, fs) : nullptr;  // grad(0), open until the end

  for (int l = L - 1; l >= first_; --l) {
    const auto& units = manifest_.layer_units[static_cast<std::size_t>(l)];
    std::vector<const T*> p_ptrs;
    std::vector<T*> g_ptrs;
    for (int u : units) p_ptrs.push_back(params.acquire(u));
    for (int u : units) g_ptrs.push_back(params.grad(u));
    const LayerTensors<const T> p = layer_tensors(l, p_ptrs);
    T* x_in = block_input(ws, l);
    // checkpointing: forward kept only x_in; restore it and recompute the block's activations
    // (the same calls on the same values: the same bits)
    if (keeper) {
      keeper->restore(static_cast<int>(l - first_), x_in);
      block_forward(l, p, x_in, acts, fs);
    }
    block_backward(params, l, p, layer_tensors(l, g_ptrs), x_in, acts, scr, fs);
    for (int u : units) {
      if (cfg_.mp_blocks > 1) {  // split blocks: each unit's parameters, from its end towards its start
        const auto& info = manifest_.units[static_cast<std::size_t>(u)];
        for (int k = info.num_params - 1; k >= 0; --k) params.param_grad_done(info.first_param + k);
      }
      params.grad_done(u);
    }
    for (int u : units) params.release(u);
  }

  if (!embedding_) return;  // the gradient of the stage's input is in stage_input_grad()
  if (!head_) {             // the first stage of several: the head's part, received, goes in first
    g0 = params.grad(0);
    op.copy(g0, tied_head_grad(ws), static_cast<std::size_t>(V * C) * sizeof(T));
  }
  int32_t* is = reinterpret_cast<int32_t*>(scr + scr_.op_ints);
  op.embedding_backward(g0, g0 + V * C, static_cast<const T*>(sc(scr_.d_x)), in, V, C, fs, is);
  params.param_grad_done(1);  // wpe
  params.param_grad_done(0);  // wte
  params.grad_done(0);
}

// Gpt<T> is explicitly instantiated in gpt_forward.cc; the members defined here are instantiated
// here, one by one.
#define ZT_GPT_BACKWARD_INSTANCE(T)                                                                                  \
  template void Gpt<T>::block_backward(ParamProvider<T>&, int, const LayerTensors<const T>&, const LayerTensors<T>&, \
                                       const T*, char*, char*, float*);                                              \
  template T* Gpt<T>::head_backward(ParamProvider<T>&, const kernels::TokenView&, float, const Workspace&, float*);  \
  template void Gpt<T>::backward(ParamProvider<T>&, const kernels::TokenView&, const kernels::TokenView&, float,     \
                                 const Workspace&);
ZT_GPT_BACKWARD_INSTANCE(float)
ZT_GPT_BACKWARD_INSTANCE(fp16)
ZT_GPT_BACKWARD_INSTANCE(bf16)
#undef ZT_GPT_BACKWARD_INSTANCE

}  // namespace zt::model
