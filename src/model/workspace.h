// model/workspace.h — the caller-provided memory a GPT needs for one micro-batch, and its exact
// size, so that a memory ledger can predict every byte before anything runs.
//
// Two buffers, three with activation checkpointing. ACTIVATIONS: written by forward and read by
// backward (what backward needs is cached there: every layer's inputs to its GEMMs, LayerNorm
// statistics, attention probabilities, logits, per-token losses). SCRATCH: temporaries of either
// pass (activation gradients, FP32 staging for GEMMs and sums); nothing in it survives a call.
// With checkpointing (Chen et al. 2016; Megatron's and DeepSpeed's per-block granularity) each
// block's input x_l, l = 0..L-1, is the only per-block state forward keeps, in CHECKPOINTS (or
// wherever the caller's CheckpointKeeper keeps them: model/checkpoint_keeper.h); ACTIVATIONS then
// hold one buffer of the residual stream, one block's tensors, which backward recomputes block by
// block, and the head's. With model parallelism the split tensors (qkv,
// attention output and probabilities, the MLP hidden layer) are this rank's heads and hidden units
// only; the residual stream and LayerNorm outputs are replicated. A pipeline stage
// (ModelOptions::stage) holds only its own blocks' tensors: x0 is then the stage's input (the
// embedding's output on the first stage, the activation received from the previous stage on the
// others), the head's tensors exist on the last stage only, and the embedding's scratch on the
// first only. Every region starts on a
// 64-byte boundary; the sizes below include that alignment padding, and are exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/gpt_config.h"
#include "model/pipe_stage.h"
#include "model/precision.h"
#include "model/tensor_parallel.h"

namespace zt::model {

/// How one model instance runs, beyond its shape.
struct ModelOptions {
  MpPlacement mp;                       ///< this rank's model-parallel placement
  bool checkpoint_activations = false;  ///< keep only each block's input; recompute in backward
  /// The checkpoints are kept elsewhere (a CheckpointKeeper the caller sets, e.g. ZeRO-R's P_a):
  /// no checkpoint buffer in the workspace, and the residual-stream buffer has room for a
  /// model-parallel all-gather of equal slices, N_m · ceil(N C / N_m) values.
  bool external_checkpoints = false;
  /// The blocks this instance runs (pipeline parallelism, model/pipe_stage.h); the default, every
  /// block. The layouts then hold only the stage's blocks, and the head's tensors only on the last
  /// stage.
  PipeStage stage{};
};

/// Caller-owned memory for one model instance and micro-batch size.
struct Workspace {
  void* activations = nullptr;      ///< activation_bytes() bytes, 64-byte aligned
  std::size_t activation_size = 0;  ///< its size in bytes (checked)
  void* scratch = nullptr;          ///< scratch_bytes() bytes, 64-byte aligned
  std::size_t scratch_size = 0;     ///< its size in bytes (checked)
  void* checkpoints = nullptr;      ///< checkpoint_bytes() bytes (checkpointing only), 64-byte aligned
  std::size_t checkpoint_size = 0;  ///< its size in bytes (checked)
};

/// Bytes of the activation buffer. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @param o placement and checkpointing. @return the exact size.
std::size_t activation_bytes(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o = {});

/// Bytes of the checkpoint buffer (0 without checkpointing). @param cfg the configuration.
/// @param B micro-batch size. @param p compute type. @param o placement and checkpointing.
/// @return the exact size.
std::size_t checkpoint_bytes(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o = {});

/// Bytes of the scratch buffer. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @param o placement and checkpointing. @return the exact size.
std::size_t scratch_bytes(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o = {});

/// Byte offsets of one layer's cached activations (T-typed unless marked FP32).
struct LayerActivations {
  std::size_t ln1;       ///< ln_1 output [N,C]
  std::size_t ln1_mean;  ///< ln_1 mean [N], FP32
  std::size_t ln1_rstd;  ///< ln_1 1/std [N], FP32
  std::size_t qkv;       ///< c_attn output [N,3C] (model parallel: [N,3C/N_m], this rank's heads)
  std::size_t att_p;     ///< attention probabilities [B,H,T,T] (model parallel: H/N_m heads)
  std::size_t att_y;     ///< attention output [N,C] (model parallel: [N,C/N_m])
  std::size_t res1;      ///< residual stream after attention [N,C]
  std::size_t ln2;       ///< ln_2 output [N,C]
  std::size_t ln2_mean;  ///< ln_2 mean [N], FP32
  std::size_t ln2_rstd;  ///< ln_2 1/std [N], FP32
  std::size_t fc;        ///< c_fc output (GELU input) [N,4C] (model parallel: [N,4C/N_m])
  std::size_t gelu;      ///< GELU output [N,4C] (model parallel: [N,4C/N_m])
  std::size_t res2;      ///< residual stream after the MLP: the block's output [N,C]
};

/// Byte offsets of every cached activation in the activation buffer.
struct ActivationLayout {
  std::size_t x0;  ///< the stage's input [N,C]: the embedding output on the first (checkpointing: = x)
  /// One per block of the model, by block index; only the stage's blocks have regions
  /// (checkpointing: all the same slot).
  std::vector<LayerActivations> layers;
  bool head = true;      ///< the regions below exist (the stage runs the head)
  std::size_t lnf;       ///< ln_f output [N,C]
  std::size_t lnf_mean;  ///< ln_f mean [N], FP32
  std::size_t lnf_rstd;  ///< ln_f 1/std [N], FP32
  std::size_t logits;    ///< head output [N,V]
  std::size_t ce_max;    ///< per-row max logit [N], FP32
  std::size_t ce_sum;    ///< per-row softmax denominator [N], FP32
  std::size_t losses;    ///< per-position loss [N], FP32
  std::size_t total;     ///< activation_bytes()
  /// Checkpointing: the residual stream x_l [N,C], one buffer: the input of the block being
  /// computed (forward) or recomputed (backward); after forward it holds x_L, ln_f's input.
  std::size_t x = 0;
  bool checkpointing = false;         ///< the layout is checkpointing's
  std::size_t checkpoint_stride = 0;  ///< values between consecutive full checkpoints
  std::size_t checkpoint_total = 0;   ///< checkpoint_bytes(): one full checkpoint per block of the stage
};

/// Byte offsets of the scratch regions.
struct ScratchLayout {
  std::size_t d_x;       ///< gradient of the residual stream [N,C], T
  std::size_t d_branch;  ///< a LayerNorm's input gradient before the join [N,C], T
  std::size_t d_c;       ///< gradient of an [N,C] op output (ln out, attention out), T
  std::size_t d_qkv;     ///< gradient of qkv [N,3C] (model parallel: [N,3C/N_m]), T
  std::size_t d_h;       ///< gradient of the MLP hidden layer [N,4C] (model parallel: [N,4C/N_m]), T
  std::size_t d_logits;  ///< gradient of the logits [N,V], T (the last stage only)
  /// wte's gradient from the tied head [V,C], T, on a stage where wte crosses stages
  /// (tied_across_stages): the last stage leaves it here, the first stage reads it.
  std::size_t tied_head_grad;
  std::size_t op_floats;  ///< FP32 staging shared by all ops (the largest need)
  std::size_t op_ints;    ///< int32 staging (embedding backward)
  std::size_t total;      ///< scratch_bytes()
};

/// The activation layout. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @param o placement and checkpointing. @return offsets and totals.
ActivationLayout activation_layout(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o = {});

/// The scratch layout. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @param o placement and checkpointing. @return offsets and total.
ScratchLayout scratch_layout(const GptConfig& cfg, int64_t B, Precision p, const ModelOptions& o = {});

}  // namespace zt::model
