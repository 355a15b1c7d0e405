// model/param_provider.h — how the model gets its parameters and hands back its gradients,
// one unit at a time. The model owns no parameter or gradient storage.
//
// Call sequence of one micro-batch (units: 0 = embeddings, 1..L = blocks, L+1 = ln_f):
//   forward:  acquire(0) release(0) | acquire(l) release(l) for l = 1..L |
//             acquire(L+1) release(L+1) | acquire(0) release(0)        (the tied head reads wte)
//   backward: acquire(0) grad(0) release(0)                            (head: wte's first part)
//             acquire(L+1) grad(L+1) grad_done(L+1) release(L+1)
//             acquire(l) grad(l) grad_done(l) release(l) for l = L..1
//             grad_done(0)          (embeddings: added into the grad(0) slot taken at the head;
//                                    they need token ids, not parameter values)
// A pointer from acquire(u) is valid until release(u); a pointer from grad(u) until grad_done(u)
// (for unit 0 that spans the whole backward). Both point at the unit's own dense layout
// (ParamInfo::offset_in_unit). The model OVERWRITES every element of grad(u) with this
// micro-batch's gradient in the compute type; summing micro-batches is the caller's job.
// grad_done(u) means the unit's gradient is final: a ZeRO stage may reduce it right away.
// For wte the head's contribution is written first and the embedding's added last, in FP32,
// rounded once (kernels/embedding.h).
// Before each grad_done(u), param_grad_done(p) is called for every parameter p of unit u as soon
// as its gradient is final, in the order backward finishes them: ln_f.weight, ln_f.bias; per
// block (local order) c_proj.w/b of the MLP, c_fc.w/b, ln_2.w/b, attn.c_proj.w/b, c_attn.w/b,
// ln_1.w/b; then wpe, wte.
#pragma once

#include "model/manifest.h"

namespace zt::model {

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
  /// @param unit the unit index. @return its parameters.
  const T* acquire(int unit) override { return params_ + manifest_.units.at(unit).offset; }
  /// @param unit the unit index (nothing to do).
  void release(int unit) override { (void)unit; }
  /// @param unit the unit index. @return its gradient slot.
  T* grad(int unit) override { return grads_ + manifest_.units.at(unit).offset; }
  /// @param unit the unit index (nothing to do).
  void grad_done(int unit) override { (void)unit; }

 private:
  const Manifest& manifest_;
  const T* params_;
  T* grads_;
};

}  // namespace zt::model
