// model/tensor_parallel.h — which part of the model one model-parallel (MP) rank holds.
//
// Megatron-LM's tensor parallelism (Shoeybi et al. 2019; the ZeRO paper's Sec. 8 analyses it):
// in every transformer block the attention's QKV projection (c_attn) and the MLP's first layer
// (c_fc) are column-parallel — each MP rank owns H/N_m heads and 4C/N_m hidden units — and the two
// output projections (attn.c_proj, mlp.c_proj) are row-parallel, their partial outputs summed over
// the MP group. LayerNorms, embeddings, the tied head and the row-parallel biases are replicated.
//
// This project computes those layers in Q = GptConfig::mp_blocks blocks on ANY number of ranks
// (kernels/parallel_linear.h): one device runs all Q blocks, each of N_m ranks Q/N_m contiguous
// blocks. Sums over blocks follow the canonical tree over the Q blocks, so the bits depend on Q,
// not on N_m. Rank m holds blocks [m·Q/N_m, (m+1)·Q/N_m). This file describes that placement; it
// does no arithmetic and no communication.
#pragma once

#include <cstdint>

#include "model/gpt_config.h"

namespace zt::model {

/// One rank's place in the model-parallel group.
struct MpPlacement {
  int64_t size = 1;  ///< N_m, ranks sharing each block's split layers
  int64_t rank = 0;  ///< m, this rank's index in the MP group
};

/// Blocks one MP rank holds. @param cfg the model (Q). @param mp the placement. @return Q / N_m.
inline int64_t local_blocks(const GptConfig& cfg, const MpPlacement& mp) { return cfg.mp_blocks / mp.size; }
/// First block this MP rank holds. @param cfg the model. @param mp the placement. @return m·Q/N_m.
inline int64_t first_block(const GptConfig& cfg, const MpPlacement& mp) { return mp.rank * local_blocks(cfg, mp); }

/// zt::Error (one line) unless N_m >= 1 divides Q and 0 <= m < N_m.
/// @param cfg the model (validated). @param mp the placement.
void validate(const GptConfig& cfg, const MpPlacement& mp);

}  // namespace zt::model
