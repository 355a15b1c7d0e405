// model/param_provider.h — how the model gets its parameters and hands back its gradients,
// one unit at a time. The model owns no parameter or gradient storage.
//
// Call sequence of one micro-batch (units: 0 = embeddings, then block l's units U_l — one unit
// "h.l" for mp_blocks 1, else "h.l" and one unit per tensor-parallel block held here
// (model/manifest.h) —, ln_f last), written out by provider_calls():
//   forward:  acquire(0) release(0) | acquire(U_l) release(U_l) for l = 0..L-1 |
//             acquire(ln_f) release(ln_f) | acquire(0) release(0)     (the tied head reads wte)
//   backward: acquire(0) grad(0) release(0)                            (head: wte's first part)
//             acquire(ln_f) grad(ln_f) grad_done(ln_f) release(ln_f)
//             acquire(U_l) grad(U_l) grad_done(U_l) release(U_l) for l = L-1..0
//             grad_done(0)          (embeddings: added into the grad(0) slot taken at the head;
//                                    they need token ids, not parameter values)
// where "acquire(U_l)" is acquire(u) for every u of U_l in order, and so on. With activation
// checkpointing the backward recomputes block l's forward between acquire(U_l) and grad(U_l):
// the same acquires, no more.
// A pointer from acquire(u) is valid until release(u); a pointer from grad(u) until grad_done(u)
// (for unit 0 that spans the whole backward). Both point at the unit's own dense layout
// (ParamInfo::offset_in_unit). The model OVERWRITES every element of grad(u) with this
// micro-batch's gradient in the compute type; summing micro-batches is the caller's job.
// grad_done(u) means the unit's gradient is final: a ZeRO stage may reduce it right away.
// For wte the head's contribution is written first and the embedding's added last, in FP32,
// rounded once (kernels/embedding.h).
// Before each grad_done(u), param_grad_done(p) is called for every parameter p of unit u once its
// gradient is final: for mp_blocks 1 as soon as backward finishes it, in the order ln_f.weight,
// ln_f.bias; per block (local order) c_proj.w/b of the MLP, c_fc.w/b, ln_2.w/b, attn.c_proj.w/b,
// c_attn.w/b, ln_1.w/b; then wpe, wte; for split blocks after the block's backward, each unit's
// parameters from its last to its first. Either way a unit's parameters finish from its end
// towards its start. provider_calls() lists these calls too, where they happen.
// A pipeline stage (model/pipe_stage.h) makes the calls of the parts it runs, in the same order:
// the embedding's only on the first stage, the blocks of its own run, ln_f's and the head's only
// on the last. A last stage without the embedding reads wte through acquire(0) (only wte's V·C
// values are read) but takes no grad(0): the head's part goes to Gpt::tied_head_grad(). A first
// stage without the head takes grad(0) at the end of backward, where the head's part is copied in
// before the embedding's is added.
#pragma once

#include <vector>

#include "model/manifest.h"
#include "model/pipe_stage.h"

namespace zt::model {

/// One call of the provider protocol (provider_calls), param_grad_done included: the memory
/// prediction replays a micro-batch's calls, and stage 2's buckets start at param_grad_done.
struct ProviderCall {
  /// The calls of the protocol.
  enum class Kind { acquire, release, grad, grad_done, param_grad_done };
  Kind kind;       ///< which call
  int unit;        ///< on which unit (param_grad_done: the unit holding the parameter)
  int param = -1;  ///< param_grad_done: the parameter's index in Manifest::params; else -1
};

/// The provider calls of one micro-batch (forward then backward), as listed above.
/// @param manifest the model's storage manifest. @param stage the blocks run (default: all).
/// @return them in order.
std::vector<ProviderCall> provider_calls(const Manifest& manifest, const PipeStage& stage = {});
/// How many of provider_calls() are the forward's: an acquire and a release per unit it reads.
/// @param manifest the manifest. @param stage the blocks run (default: all). @return the count.
std::size_t forward_call_count(const Manifest& manifest, const PipeStage& stage = {});

/// The interface through which forward and backward reach parameters and gradients.
template <typename T>
class ParamProvider {
 public:
  virtual ~ParamProvider() = default;
  /// Make unit `unit`'s compute-type parameters available.
  /// @param unit the unit index. @return its parameters in the unit's dense layout.
  virtual const T* acquire(int unit) = 0;
  /// The model is done reading the unit's parameters (until the next acquire).
  /// @param unit the unit index.
  virtual void release(int unit) = 0;
  /// Where the model writes the unit's micro-batch gradient.
  /// @param unit the unit index. @return room for the unit's elements, dense layout.
  virtual T* grad(int unit) = 0;
  /// The unit's gradient for this micro-batch is complete. @param unit the unit index.
  virtual void grad_done(int unit) = 0;
  /// Optional finer notice: parameter `param` (its manifest index) has its final gradient for
  /// this micro-batch in the grad() slot of its unit, earlier than grad_done(unit). Lets a
  /// bucketed reduction start on part of a unit. The default ignores it.
  /// @param param the parameter's index in Manifest::params.
  virtual void param_grad_done(int param) { (void)param; }
};

/// The single-rank provider: parameters and gradients are two dense buffers in canonical layout.
/// It owns neither buffer; acquire/release/grad_done do nothing.
template <typename T>
class DenseParamProvider final : public ParamProvider<T> {
 public:
  /// @param manifest the model's manifest (kept by reference).
  /// @param params param_count compute-type values, canonical layout.
  /// @param grads param_count compute-type values, canonical layout (written by backward).
  DenseParamProvider(const Manifest& manifest, const T* params, T* grads)
      : manifest_(manifest), params_(params), grads_(grads) {}
  const T* acquire(int unit) override { return params_ + manifest_.units.at(unit).offset; }
  void release(int unit) override { (void)unit; }
  T* grad(int unit) override { return grads_ + manifest_.units.at(unit).offset; }
  void grad_done(int unit) override { (void)unit; }

 private:
  const Manifest& manifest_;
  const T* params_;
  T* grads_;
};

}  // namespace zt::model
