// model/gpt.h — the GPT-2-style decoder: forward (loss sum), backward (unit gradients), argmax.
//
// Architecture (GPT-2 / nanoGPT): x = wte[token] + wpe[t]; L pre-LayerNorm blocks
//   x = x + c_proj(attn(c_attn(ln_1(x))));   x = x + c_proj(gelu(c_fc(ln_2(x))))
// then logits = ln_f(x) wte^T (the head is tied to wte) and per-position cross-entropy. No dropout.
//
// Written once, templated on the compute type T (float, fp16, bf16), with one rounding rule: a
// GEMM reads T values and accumulates in FP32; an element-wise op reads T values and computes in
// FP32; every STORED result (activation, activation gradient, parameter gradient) is rounded once
// to T; the loss and the cached statistics stay FP32. Per op, see kernels/*.h.
//
// The model holds no parameters, gradients or activations: parameters and gradients come unit by
// unit through a ParamProvider (param_provider.h, which also gives the exact call order), and
// activations and temporaries live in a caller-provided Workspace (workspace.h). One instance
// serves any number of micro-batches of its size B.
//
// Tensor parallelism (model/tensor_parallel.h): with mp_blocks Q > 1 every block's c_attn and c_fc
// are column-parallel and its two c_proj row-parallel Linears over Q blocks
// (kernels/parallel_linear.h), of which this instance holds the ones its MpPlacement gives it.
// The model knows no communication: where a sum over blocks held elsewhere must be completed (the
// two row-parallel outputs in forward, the two column-parallel input gradients in backward) it
// calls the caller's ModelParallelSum, Megatron's g and f operators. With activation
// checkpointing, forward keeps only each block's input and backward recomputes the block first;
// recomputation runs the same calls on the same values, so it changes no bit.
//
// Pipeline stages (ModelOptions::stage, model/pipe_stage.h): an instance may run a contiguous run
// of blocks only. Forward then starts from stage_input() (filled by the caller) unless the stage
// runs the embedding, and stops at stage_output() unless it runs the head; backward starts from
// stage_output_grad() (filled by the caller) unless it runs the head, and leaves
// stage_input_grad() unless it runs the embedding. The tied wte's head part travels through
// tied_head_grad(). Each stage makes the single-device calls of its blocks on the same values, so
// a pipeline computes the same bits as one device (the caller moves the tensors between stages).
//
// Where it computes: every operation on activations, parameters, gradients and scratch goes
// through a ModelOps (model/model_ops.h), and the model itself only computes addresses. By default
// those are the ops on the host runtime (host_model_ops(): host memory, the rank's CPU pool);
// set_ops() gives a device runtime's, and then the Workspace, the ParamProvider's pointers and the
// checkpoints are device memory while the same forward and backward run unchanged.
#pragma once

#include <cstdint>

#include <functional>
#include <memory>
#include <vector>

#include "kernels/parallel_linear.h"
#include "kernels/tokens.h"
#include "model/checkpoint_keeper.h"
#include "model/gpt_config.h"
#include "model/manifest.h"
#include "model/model_ops.h"
#include "model/param_provider.h"
#include "model/precision.h"
#include "model/workspace.h"

namespace zt::model {

/// Inputs of a [B, T+1] token batch: columns 0..T-1.
/// @param batch B rows of T+1 ids. @param B rows. @param T context.
/// @return the view.
inline kernels::TokenView batch_inputs(const int32_t* batch, int64_t B, int64_t T) { return {batch, B, T, T + 1}; }
/// Targets of a [B, T+1] token batch: columns 1..T.
/// @param batch B rows of T+1 ids. @param B rows. @param T context.
/// @return the view.
inline kernels::TokenView batch_targets(const int32_t* batch, int64_t B, int64_t T) { return {batch + 1, B, T, T + 1}; }

/// Completes a sum over tensor-parallel blocks across the model-parallel group (see above): given
/// this rank's FP32 partial sum, returns with the sum over all blocks in place.
using ModelParallelSum = kernels::FinishBlockSum;

/// One block's parameters (or gradient slots) as the kernels see them: the replicated tensors,
/// and per tensor-parallel block held here, the split ones. P is `const T` or `T`.
template <typename P>
struct LayerTensors {
  P* ln_1_w = nullptr;          ///< ln_1.weight [C]
  P* ln_1_b = nullptr;          ///< ln_1.bias [C]
  P* attn_proj_b = nullptr;     ///< attn.c_proj.bias [C] (row-parallel: replicated)
  P* ln_2_w = nullptr;          ///< ln_2.weight [C]
  P* ln_2_b = nullptr;          ///< ln_2.bias [C]
  P* mlp_proj_b = nullptr;      ///< mlp.c_proj.bias [C] (row-parallel: replicated)
  std::vector<P*> attn_w;       ///< per block: c_attn rows [q_j; k_j; v_j], [3C/Q, C]
  std::vector<P*> attn_b;       ///< per block: c_attn bias [3C/Q]
  std::vector<P*> attn_proj_w;  ///< per block: attn.c_proj columns, [C, C/Q]
  std::vector<P*> fc_w;         ///< per block: c_fc rows, [4C/Q, C]
  std::vector<P*> fc_b;         ///< per block: c_fc bias [4C/Q]
  std::vector<P*> mlp_proj_w;   ///< per block: mlp.c_proj columns, [C, 4C/Q]
};

/// A GPT of a given configuration and micro-batch size, computing in T.
template <typename T>
class Gpt {
 public:
  /// @param cfg the configuration (validated). @param micro_batch B, sequences per call.
  /// @param options this rank's model-parallel placement and checkpointing.
  /// @param mp_sum completes sums over blocks held elsewhere (needed when options.mp.size > 1).
  Gpt(const GptConfig& cfg, int64_t micro_batch, const ModelOptions& options = {}, ModelParallelSum mp_sum = {});

  /// Run the forward pass and cache what backward needs in ws.activations.
  /// @param params the parameter provider. @param inputs [B,T] ids. @param targets [B,T] ids.
  /// @param ws the workspace. @return the SUM of the B*T per-position FP32 losses, added along
  /// the canonical tree in position order (divide by the global token count once, outside); 0 on
  /// a pipeline stage before the last, which has no loss.
  float forward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                const Workspace& ws);

  /// Run the backward pass of the last forward on the same workspace and tokens.
  /// @param params the parameter provider (gradients are written through grad()).
  /// @param inputs [B,T] ids. @param targets [B,T] ids.
  /// @param grad_scale the seed gradient of every position's loss (e.g. loss_scale / tokens).
  /// @param ws the workspace used by forward.
  void backward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                float grad_scale, const Workspace& ws);

  // ---- pipeline stages: the tensors that cross a stage boundary (see above) ----
  /// The stage's input x_begin [B*T, C] in ws's activations: a stage after the first receives the
  /// previous stage's output here before forward. @param ws the workspace. @return the region.
  T* stage_input(const Workspace& ws) const { return block_input(ws, first_); }
  /// After forward on a stage before the last: its output x_end [B*T, C], to be sent; it stays
  /// until the next forward on ws. @param ws the workspace. @return the region.
  const T* stage_output(const Workspace& ws) const { return block_input(ws, end_); }
  /// The gradient of the stage's output [B*T, C], in ws's scratch: a stage before the last receives
  /// it here right before backward. @param ws the workspace. @return the region.
  T* stage_output_grad(const Workspace& ws) const;
  /// After backward on a stage after the first: the gradient of its input [B*T, C], to be sent (in
  /// scratch: it stays until the next forward or backward that uses the scratch). The same region
  /// as stage_output_grad(). @param ws the workspace. @return the region.
  const T* stage_input_grad(const Workspace& ws) const { return stage_output_grad(ws); }
  /// wte's gradient from the tied head [V, C] in ws's scratch, where wte crosses stages
  /// (tied_across_stages): the last stage leaves it here in backward (it stays like
  /// stage_input_grad()); the first stage reads it from here in backward, filled by the caller,
  /// before adding the embedding's part. @param ws the workspace. @return the region.
  T* tied_head_grad(const Workspace& ws) const;

  /// Argmax of every position's logits from the last forward (lowest index among ties).
  /// @param ws the workspace used by forward. @param out B*T predicted ids (written).
  void predictions(const Workspace& ws, int32_t* out) const;

  /// Per-position FP32 losses of the last forward, in the ops' memory (device memory when the
  /// ops are a device's: copy them out, never read them there).
  /// @param ws the workspace used by forward. @return B*T losses in position order.
  const float* token_losses(const Workspace& ws) const;

  /// Run every later operation through `ops` (kept by pointer; it must outlive every forward,
  /// backward and predictions() call); null returns to the host runtime's, the default.
  /// @param ops the ops, or null.
  void set_ops(ModelOps<T>* ops) { ops_ = ops; }
  /// The ops every operation goes through. @return set_ops()'s, else host_model_ops().
  ModelOps<T>& ops() const;

  /// The configuration. @return it.
  const GptConfig& config() const { return cfg_; }
  /// The storage manifest of this rank (model/manifest.h). @return it.
  const Manifest& manifest() const { return manifest_; }
  /// Placement and checkpointing. @return them.
  const ModelOptions& options() const { return opts_; }
  /// Where the checkpoints go when options().external_checkpoints is set (kept by pointer; it must
  /// outlive every forward and backward). @param keeper the caller's keeper.
  void set_checkpoint_keeper(CheckpointKeeper<T>* keeper) { keeper_ = keeper; }
  /// The micro-batch size B. @return it.
  int64_t micro_batch() const { return B_; }

 private:
  void check(const kernels::TokenView& inputs, const kernels::TokenView& targets, const Workspace& ws) const;
  template <typename P>
  LayerTensors<P> layer_tensors(int layer, const std::vector<P*>& unit_ptrs) const;
  void block_forward(int layer, const LayerTensors<const T>& p, const T* x_in, char* acts, float* fs);
  void block_backward(ParamProvider<T>& params, int layer, const LayerTensors<const T>& p, const LayerTensors<T>& g,
                      const T* x_in, char* acts, char* scr, float* fs);
  T* head_backward(ParamProvider<T>& params, const kernels::TokenView& tg, float grad_scale, const Workspace& ws,
                   float* fs);
  T* block_input(const Workspace& ws, int64_t l) const;  // x_l, block l's input ([N,C]); x_L after the last
  std::unique_ptr<CheckpointKeeper<T>> default_keeper(const Workspace& ws) const;

  GptConfig cfg_;
  int64_t B_;
  ModelOptions opts_;
  ModelParallelSum mp_sum_;                // empty when every block is here
  CheckpointKeeper<T>* keeper_ = nullptr;  // external checkpoints (options().external_checkpoints)
  ModelOps<T>* ops_ = nullptr;             // null: host_model_ops<T>() (a pointer: a Gpt stays copyable)
  Manifest manifest_;
  int64_t J_;              // tensor-parallel blocks held here
  int64_t first_, end_;    // the blocks run here, [first_, end_) (model/pipe_stage.h)
  bool embedding_, head_;  // the stage runs the embedding / ln_f, the head and the loss
  ActivationLayout act_;
  ScratchLayout scr_;
};

extern template class Gpt<float>;
extern template class Gpt<fp16>;
extern template class Gpt<bf16>;

}  // namespace zt::model
