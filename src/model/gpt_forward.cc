// model/gpt_forward.cc — the GPT's construction, forward pass and prediction helpers.
// The backward pass is in gpt_backward.cc; the op formulas are in kernels/*.h. Every access to a
// tensor is an op of ops() (model/model_ops.h); here only addresses are computed.
#include <vector>

#include "core/check.h"
#include "model/gpt.h"

namespace zt::model {

template <typename T>
Gpt<T>::Gpt(const GptConfig& cfg, int64_t micro_batch, const ModelOptions& options, ModelParallelSum mp_sum)
    : cfg_(cfg),
      B_(micro_batch),
      opts_(options),
      mp_sum_(options.mp.size > 1 ? std::move(mp_sum) : ModelParallelSum{}),
      manifest_(make_storage_manifest(cfg, options.mp)),
      J_(local_blocks(cfg, options.mp)),
      first_(options.stage.begin),
      end_(stage_end(cfg, options.stage)),
      embedding_(runs_embedding(options.stage)),
      head_(runs_head(cfg, options.stage)),
      act_(activation_layout(cfg, micro_batch, precision_of<T>(), options)),
      scr_(scratch_layout(cfg, micro_batch, precision_of<T>(), options)) {
  ZT_CHECK(options.mp.size == 1 || mp_sum_, "a model split over ", options.mp.size,
           " model-parallel ranks needs a way to complete its sums");
}

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
  ZT_CHECK(!act_.checkpointing || opts_.external_checkpoints ||
               (ws.checkpoints && ws.checkpoint_size >= act_.checkpoint_total),
           "checkpoint workspace of ", ws.checkpoint_size, " bytes, need ", act_.checkpoint_total);
  ZT_CHECK(!opts_.external_checkpoints || keeper_, "external checkpoints, but no CheckpointKeeper was set");
}

template <typename T>
ModelOps<T>& Gpt<T>::ops() const {
  return ops_ ? *ops_ : host_model_ops<T>();
}

template <typename T>
T* Gpt<T>::block_input(const Workspace& ws, int64_t l) const {
  char* acts = static_cast<char*>(ws.activations);
  // checkpointing: one stream buffer; otherwise the stage's input x0 and each block's output, all kept
  const std::size_t at = act_.checkpointing ? act_.x
                         : l == first_      ? act_.x0
                                            : act_.layers[static_cast<std::size_t>(l - 1)].res2;
  return reinterpret_cast<T*>(acts + at);
}

template <typename T>
T* Gpt<T>::stage_output_grad(const Workspace& ws) const {
  return reinterpret_cast<T*>(static_cast<char*>(ws.scratch) + scr_.d_x);
}

template <typename T>
T* Gpt<T>::tied_head_grad(const Workspace& ws) const {
  ZT_CHECK(tied_across_stages(cfg_, opts_.stage), "wte's head gradient crosses stages only when the head and the ",
           "embedding run on different stages");
  return reinterpret_cast<T*>(static_cast<char*>(ws.scratch) + scr_.tied_head_grad);
}

template <typename T>
std::unique_ptr<CheckpointKeeper<T>> Gpt<T>::default_keeper(const Workspace& ws) const {
  return std::make_unique<FullCheckpoints<T>>(ops(), static_cast<T*>(ws.checkpoints),
                                              static_cast<std::size_t>(B_ * cfg_.context * cfg_.width),
                                              act_.checkpoint_stride);
}

// The tensors of block `layer` from the pointers of its units (in manifest_.layer_units order):
// one unit in canonical order for mp_blocks 1 (ln_1 w b, c_attn w b, attn.c_proj w b, ln_2 w b,
// c_fc w b, mlp.c_proj w b); else the replicated unit (ln_1 w b, attn.c_proj b, ln_2 w b,
// mlp.c_proj b) and one unit per block held here (c_attn w b, attn.c_proj w, c_fc w b, mlp.c_proj w).
template <typename T>
template <typename P>
LayerTensors<P> Gpt<T>::layer_tensors(int layer, const std::vector<P*>& ptrs) const {
  const auto& ids = manifest_.layer_units[static_cast<std::size_t>(layer)];
  ZT_CHECK(ptrs.size() == ids.size(), "block ", layer, ": ", ptrs.size(), " unit pointers for ", ids.size(), " units");
  // parameter k of the layer's i-th unit
  const auto param = [&](std::size_t i, int k) {
    const int first = manifest_.units[static_cast<std::size_t>(ids[i])].first_param;
    return ptrs[i] + manifest_.params[static_cast<std::size_t>(first + k)].offset_in_unit;
  };
  LayerTensors<P> v;
  if (cfg_.mp_blocks == 1) {
    v.ln_1_w = param(0, 0), v.ln_1_b = param(0, 1), v.attn_proj_b = param(0, 5);
    v.ln_2_w = param(0, 6), v.ln_2_b = param(0, 7), v.mlp_proj_b = param(0, 11);
    v.attn_w = {param(0, 2)}, v.attn_b = {param(0, 3)}, v.attn_proj_w = {param(0, 4)};
    v.fc_w = {param(0, 8)}, v.fc_b = {param(0, 9)}, v.mlp_proj_w = {param(0, 10)};
    return v;
  }
  v.ln_1_w = param(0, 0), v.ln_1_b = param(0, 1), v.attn_proj_b = param(0, 2);
  v.ln_2_w = param(0, 3), v.ln_2_b = param(0, 4), v.mlp_proj_b = param(0, 5);
  for (std::size_t i = 1; i < ids.size(); ++i) {
    v.attn_w.push_back(param(i, 0)), v.attn_b.push_back(param(i, 1)), v.attn_proj_w.push_back(param(i, 2));
    v.fc_w.push_back(param(i, 3)), v.fc_b.push_back(param(i, 4)), v.mlp_proj_w.push_back(param(i, 5));
  }
  return v;
}

template <typename T>
void Gpt<T>::block_forward(int layer, const LayerTensors<const T>& p, const T* x_in, char* acts, float* fs) {
  using kernels::LinearBlock;
  ModelOps<T>& op = ops();
  const LayerActivations& a = act_.layers[static_cast<std::size_t>(layer)];
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const int64_t C = cfg_.width, N = B_ * cfg_.context, Bk = cfg_.mp_blocks;
  const int64_t Cm = C / opts_.mp.size, Hm = cfg_.heads / opts_.mp.size, Cb = C / Bk;
  std::vector<LinearBlock<T>> attn(J_), attn_proj(J_), fc(J_), mlp_proj(J_);
  for (int64_t j = 0; j < J_; ++j) {
    attn[j] = {p.attn_w[j], p.attn_b[j]};
    attn_proj[j] = {p.attn_proj_w[j], nullptr};
    fc[j] = {p.fc_w[j], p.fc_b[j]};
    mlp_proj[j] = {p.mlp_proj_w[j], nullptr};
  }
  op.layernorm_forward(at(a.ln1), stat(a.ln1_mean), stat(a.ln1_rstd), x_in, p.ln_1_w, p.ln_1_b, N, C);
  op.column_parallel_forward(at(a.qkv), at(a.ln1), attn, N, C, 3, Cb, fs);  // QKV of the heads here
  op.attention_forward(at(a.att_y), at(a.att_p), at(a.qkv), B_, cfg_.context, Cm, Hm, fs);
  op.row_parallel_forward(at(a.res1), at(a.att_y), attn_proj, p.attn_proj_b, N, Cb, C, mp_sum_, fs);  // g: sum
  op.residual_forward(at(a.res1), x_in, at(a.res1), N * C);
  op.layernorm_forward(at(a.ln2), stat(a.ln2_mean), stat(a.ln2_rstd), at(a.res1), p.ln_2_w, p.ln_2_b, N, C);
  op.column_parallel_forward(at(a.fc), at(a.ln2), fc, N, C, 1, 4 * Cb, fs);  // hidden units here
  op.gelu_forward(at(a.gelu), at(a.fc), N * 4 * Cm);
  op.row_parallel_forward(at(a.res2), at(a.gelu), mlp_proj, p.mlp_proj_b, N, 4 * Cb, C, mp_sum_, fs);  // g: sum
  op.residual_forward(at(a.res2), at(a.res1), at(a.res2), N * C);
}

template <typename T>
float Gpt<T>::forward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                      const Workspace& ws) {
  check(inputs, targets, ws);
  ModelOps<T>& op = ops();
  char* acts = static_cast<char*>(ws.activations);
  float* fs = reinterpret_cast<float*>(static_cast<char*>(ws.scratch) + scr_.op_floats);
  const auto at = [&](std::size_t off) { return reinterpret_cast<T*>(acts + off); };
  const auto stat = [&](std::size_t off) { return reinterpret_cast<float*>(acts + off); };
  const int64_t V = cfg_.vocab, C = cfg_.width, N = B_ * cfg_.context;
  const int L = static_cast<int>(end_);  // == cfg_.layers on the stage that runs the head
  const int ln_f = static_cast<int>(manifest_.units.size()) - 1;

  std::unique_ptr<CheckpointKeeper<T>> own;
  CheckpointKeeper<T>* keeper = keeper_;
  if (act_.checkpointing && !keeper) keeper = (own = default_keeper(ws)).get();
  // the ids where the ops read them (host data; on a device, staged copies)
  const kernels::TokenView in = op.tokens(TokenGrid::inputs, inputs);
  const kernels::TokenView tg = op.tokens(TokenGrid::targets, targets);
  if (embedding_) {  // a later stage's input was received into stage_input()
    const T* emb = params.acquire(0);
    op.embedding_forward(block_input(ws, first_), in, emb, emb + V * C, V, C);
    params.release(0);
  }
  for (int l = static_cast<int>(first_); l < end_; ++l) {
    const auto& units = manifest_.layer_units[static_cast<std::size_t>(l)];
    std::vector<const T*> ptrs;
    for (int u : units) ptrs.push_back(params.acquire(u));
    // checkpointing: block l's input is all it keeps (numbered within the stage)
    if (keeper) keeper->keep(static_cast<int>(l - first_), block_input(ws, l));
    block_forward(l, layer_tensors(l, ptrs), block_input(ws, l), acts, fs);
    for (int u : units) params.release(u);
    // with checkpointing the block's output becomes the stream buffer's next input; without, the
    // output already is the next block's input (block_input(l + 1) is this block's res2)
    if (act_.checkpointing)
      op.copy(block_input(ws, l + 1), at(act_.layers[static_cast<std::size_t>(l)].res2),
              static_cast<std::size_t>(N * C) * sizeof(T));
  }
  if (!head_) return 0.0f;  // the output is in stage_output() for the next stage
  const T* lnf = params.acquire(ln_f);
  op.layernorm_forward(at(act_.lnf), stat(act_.lnf_mean), stat(act_.lnf_rstd), block_input(ws, L), lnf, lnf + C, N, C);
  params.release(ln_f);
  const T* wte = params.acquire(0);
  op.linear_forward(at(act_.logits), at(act_.lnf), wte, static_cast<const T*>(nullptr), N, C, V, fs);
  params.release(0);
  float* losses = stat(act_.losses);
  op.cross_entropy_forward(losses, stat(act_.ce_max), stat(act_.ce_sum), at(act_.logits), tg, V);
  return op.loss_sum(losses, N);  // the canonical tree in position order, on the host
}

template <typename T>
void Gpt<T>::predictions(const Workspace& ws, int32_t* out) const {
  ZT_CHECK(head_, "predictions exist on the pipeline stage that runs the head");
  const char* acts = static_cast<const char*>(ws.activations);
  ops().argmax_rows(out, reinterpret_cast<const T*>(acts + act_.logits), B_ * cfg_.context, cfg_.vocab);
}

template <typename T>
const float* Gpt<T>::token_losses(const Workspace& ws) const {
  ZT_CHECK(head_, "the losses exist on the pipeline stage that runs the head");
  return reinterpret_cast<const float*>(static_cast<const char*>(ws.activations) + act_.losses);
}

template class Gpt<float>;
template class Gpt<fp16>;
template class Gpt<bf16>;
// the gradient-slot view, which backward (gpt_backward.cc) builds
template LayerTensors<float> Gpt<float>::layer_tensors(int, const std::vector<float*>&) const;
template LayerTensors<fp16> Gpt<fp16>::layer_tensors(int, const std::vector<fp16*>&) const;
template LayerTensors<bf16> Gpt<bf16>::layer_tensors(int, const std::vector<bf16*>&) const;

}  // namespace zt::model
