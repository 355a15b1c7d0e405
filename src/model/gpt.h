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
#pragma once

#include <cstdint>

#include "kernels/tokens.h"
#include "model/gpt_config.h"
#include "model/manifest.h"
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

/// A GPT of a given configuration and micro-batch size, computing in T.
template <typename T>
class Gpt {
 public:
  /// @param cfg the configuration (validated). @param micro_batch B, sequences per call.
  Gpt(const GptConfig& cfg, int64_t micro_batch);

  /// Run the forward pass and cache what backward needs in ws.activations.
  /// @param params the parameter provider. @param inputs [B,T] ids. @param targets [B,T] ids.
  /// @param ws the workspace. @return the SUM of the B*T per-position FP32 losses, added along
  /// the canonical tree in position order (divide by the global token count once, outside).
  float forward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                const Workspace& ws);

  /// Run the backward pass of the last forward on the same workspace and tokens.
  /// @param params the parameter provider (gradients are written through grad()).
  /// @param inputs [B,T] ids. @param targets [B,T] ids.
  /// @param grad_scale the seed gradient of every position's loss (e.g. loss_scale / tokens).
  /// @param ws the workspace used by forward.
  void backward(ParamProvider<T>& params, const kernels::TokenView& inputs, const kernels::TokenView& targets,
                float grad_scale, const Workspace& ws);

  /// Argmax of every position's logits from the last forward (lowest index among ties).
  /// @param ws the workspace used by forward. @param out B*T predicted ids (written).
  void predictions(const Workspace& ws, int32_t* out) const;

  /// Per-position FP32 losses of the last forward. @param ws the workspace used by forward.
  /// @return B*T losses in position order.
  const float* token_losses(const Workspace& ws) const;

  /// The configuration. @return it.
  const GptConfig& config() const { return cfg_; }
  /// The manifest. @return it.
  const Manifest& manifest() const { return manifest_; }
  /// The micro-batch size B. @return it.
  int64_t micro_batch() const { return B_; }

 private:
  void check(const kernels::TokenView& inputs, const kernels::TokenView& targets, const Workspace& ws) const;
  void block_forward(int layer, const T* p, const T* x_in, char* acts, float* fs);
  void block_backward(ParamProvider<T>& params, int layer, const T* p, T* g, const T* x_in, char* acts, char* scr,
                      float* fs);

  GptConfig cfg_;
  int64_t B_;
  Manifest manifest_;
  BlockOffsets block_;
  ActivationLayout act_;
  ScratchLayout scr_;
};

extern template class Gpt<float>;
extern template class Gpt<fp16>;
extern template class Gpt<bf16>;

}  // namespace zt::model
