// zero/mp_gather.h — the two all-gathers over the model-parallel group that put this rank's part
// of a whole-model quantity back into one-device order: the gradient norm's block sums, and a
// per-parameter state (master weights, gradients) for --verify and the dumps.
//
// Why a file of their own: with N_m > 1 each model-parallel rank stores its own slice of every
// tensor-parallel unit and a copy of the replicated ones (model/manifest.h). The one-device norm
// tree and the one-device parameter order need everyone's parts, each in its place; that mapping
// is the whole content here. Not here: the data-parallel gathers (a rank's shards within its own
// units), which are zero/step_agreement.cc and zero/dense_readback.h; ordering the sums of a tree
// (optim/grad_norm.h).
#pragma once

#include <vector>

#include "collective/collective.h"
#include "model/gpt_config.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// The norm's block sums over the whole model in the one-device unit order (UnitInfo::global_index):
/// every model-parallel rank contributes the block sums of its tensor-parallel units, rank 0 those
/// of the replicated units (the same bits on every rank), all-gathered and reordered, so the tree
/// over them is the one-device tree with the same Q.
/// @param mp the model-parallel group. @param plan this rank's plan (manifest, placement).
/// @param block the norm block size b. @param ours this rank's block sums, its units in storage
/// order. @return the block sums of every unit of the model, in one-device order.
std::vector<float> gather_mp_norm_block_sums(Collective& mp, const ZeroPlan& plan, std::size_t block,
                                             const std::vector<float>& ours);

/// A per-parameter state in the model's canonical order: every model-parallel rank's dense part
/// (its stored units) all-gathered, each mapped back through its storage manifest.
/// @param mp the model-parallel group (null when N_m = 1). @param plan this rank's plan.
/// @param model the model's shape. @param stored this rank's part, dense in storage order.
/// @return the whole state, param_count(model) values in canonical order.
std::vector<float> gather_mp_canonical(Collective* mp, const ZeroPlan& plan, const model::GptConfig& model,
                                       const std::vector<float>& stored);

}  // namespace zt::zero
