// model/workspace.h — the caller-provided memory a GPT needs for one micro-batch, and its exact
// size, so that a memory ledger can predict every byte before anything runs.
//
// Two buffers. ACTIVATIONS: written by forward and read by backward (what backward needs is
// cached there: every layer's inputs to its GEMMs, LayerNorm statistics, attention probabilities,
// logits, per-token losses). SCRATCH: temporaries of either pass (activation gradients, FP32
// staging for GEMMs and sums); nothing in it survives a call. Every region starts on a 64-byte
// boundary; the sizes below include that alignment padding, and are exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/gpt_config.h"
#include "model/precision.h"

namespace zt::model {

/// Caller-owned memory for one model instance and micro-batch size.
struct Workspace {
  void* activations = nullptr;      ///< activation_bytes() bytes, 64-byte aligned
  std::size_t activation_size = 0;  ///< its size in bytes (checked)
  void* scratch = nullptr;          ///< scratch_bytes() bytes, 64-byte aligned
  std::size_t scratch_size = 0;     ///< its size in bytes (checked)
};

/// Bytes of the activation buffer. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @return the exact size.
std::size_t activation_bytes(const GptConfig& cfg, int64_t B, Precision p);

/// Bytes of the scratch buffer. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @return the exact size.
std::size_t scratch_bytes(const GptConfig& cfg, int64_t B, Precision p);

/// Byte offsets of one layer's cached activations (T-typed unless marked FP32).
struct LayerActivations {
  std::size_t ln1;       ///< ln_1 output [N,C]
  std::size_t ln1_mean;  ///< ln_1 mean [N], FP32
  std::size_t ln1_rstd;  ///< ln_1 1/std [N], FP32
  std::size_t qkv;       ///< c_attn output [N,3C]
  std::size_t att_p;     ///< attention probabilities [B,H,T,T]
  std::size_t att_y;     ///< attention output [N,C]
  std::size_t res1;      ///< residual stream after attention [N,C]
  std::size_t ln2;       ///< ln_2 output [N,C]
  std::size_t ln2_mean;  ///< ln_2 mean [N], FP32
  std::size_t ln2_rstd;  ///< ln_2 1/std [N], FP32
  std::size_t fc;        ///< c_fc output (GELU input) [N,4C]
  std::size_t gelu;      ///< GELU output [N,4C]
  std::size_t res2;      ///< residual stream after the MLP: the block's output [N,C]
};

/// Byte offsets of every cached activation in the activation buffer.
struct ActivationLayout {
  std::size_t x0;                        ///< embedding output [N,C]
  std::vector<LayerActivations> layers;  ///< one per block
  std::size_t lnf;                       ///< ln_f output [N,C]
  std::size_t lnf_mean;                  ///< ln_f mean [N], FP32
  std::size_t lnf_rstd;                  ///< ln_f 1/std [N], FP32
  std::size_t logits;                    ///< head output [N,V]
  std::size_t ce_max;                    ///< per-row max logit [N], FP32
  std::size_t ce_sum;                    ///< per-row softmax denominator [N], FP32
  std::size_t losses;                    ///< per-position loss [N], FP32
  std::size_t total;                     ///< activation_bytes()
};

/// Byte offsets of the scratch regions.
struct ScratchLayout {
  std::size_t d_x;         ///< gradient of the residual stream [N,C], T
  std::size_t d_branch;    ///< a LayerNorm's input gradient before the join [N,C], T
  std::size_t d_c;         ///< gradient of an [N,C] op output (ln out, attention out), T
  std::size_t d_qkv;       ///< gradient of qkv [N,3C], T
  std::size_t d_h;         ///< gradient of the MLP hidden layer [N,4C], T
  std::size_t d_logits;    ///< gradient of the logits [N,V], T
  std::size_t op_floats;   ///< FP32 staging shared by all ops (the largest need)
  std::size_t op_ints;     ///< int32 staging (embedding backward)
  std::size_t total;       ///< scratch_bytes()
  int64_t op_float_count;  ///< floats available at op_floats
};

/// The activation layout. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @return offsets and total.
ActivationLayout activation_layout(const GptConfig& cfg, int64_t B, Precision p);

/// The scratch layout. @param cfg the configuration. @param B micro-batch size.
/// @param p compute type. @return offsets and total.
ScratchLayout scratch_layout(const GptConfig& cfg, int64_t B, Precision p);

}  // namespace zt::model
