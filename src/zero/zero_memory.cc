// zero/zero_memory.cc — closed forms of a ZeRO rank's ledger (see zero_memory.h).
#include "zero/zero_memory.h"

#include "model/workspace.h"

namespace zt::zero {

ModelStateBytes predicted_model_states(const ZeroPlan& p) {
  const bool fp32 = p.shape.precision == model::Precision::fp32;
  const StateWidths widths = state_widths(fp32, 4, p.shape.optimizer_k);
  return model_states_bytes(sharding_description(p.layout, p.stage), widths, p.layout.rank);
}

std::map<std::string, std::size_t> predict_zero_memory(const ZeroPlan& p) {
  std::map<std::string, std::size_t> m;
  const Layout& l = p.layout;
  const bool fp32 = p.shape.precision == model::Precision::fp32;
  const std::size_t t = model::bytes_of(p.shape.precision);
  m[train::category::params] = l.total(p.spec.params) * t;
  if (!fp32) m[train::category::master] = l.total(p.spec.optimizer) * 4;
  m[train::category::optimizer] = l.total(p.spec.optimizer) * static_cast<std::size_t>(p.shape.optimizer_k - 4);
  const auto B = static_cast<int64_t>(p.shape.micro_batch);
  m[train::category::activations] = model::activation_bytes(p.shape.model, B, p.shape.precision);
  m[train::category::scratch] = model::scratch_bytes(p.shape.model, B, p.shape.precision);
  const auto tokens = p.shape.micro_batch * static_cast<std::size_t>(p.shape.model.context);
  m[train::category::batch] = (tokens + p.shape.micro_batch) * sizeof(int32_t);
  m[train::category::norm_blocks] = p.norm_floats * sizeof(float);
  return m;
}

}  // namespace zt::zero
