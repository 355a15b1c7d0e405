// ref_gpt_double.h — an independent float64 GPT-2 forward pass, for checking the real model.
//
// Written separately from src/model and src/kernels (plain nested loops, libm's exp/tanh/log/
// sqrt, its own walk over the canonical parameter order), so a shared mistake is unlikely. It is
// slow and only meant for tiny configurations. Gradients come from central differences of it.
#pragma once

#include <cstdint>
#include <vector>

namespace zt_test {

/// Sizes of the reference model (same meaning as zt::model::GptConfig).
struct RefGptConfig {
  int V, T, L, H, C;
};

/// Sum over the B*T positions of the cross-entropy loss.
/// @param cfg sizes. @param params all parameters in canonical order, dense.
/// @param batch [B, T+1] token ids (inputs columns 0..T-1, targets 1..T). @param B sequences.
/// @return the loss sum.
double ref_gpt_loss_sum(const RefGptConfig& cfg, const std::vector<double>& params, const std::vector<int32_t>& batch,
                        int B);

}  // namespace zt_test
