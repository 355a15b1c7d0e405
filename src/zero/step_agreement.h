// zero/step_agreement.h — what the ranks of a ZeRO step agree on besides gradients and parameters:
// whether the step is skipped (a non-finite gradient anywhere) and the gradient norm's block sums
// in the one-device order.
//
// With S_o every data-parallel rank holds another part of the reduced gradient, and with model
// parallelism every model-parallel rank other blocks; the loss scaler's decision and the norm are
// still the one-device ones because the flags are combined by a max and the block sums are
// gathered into the canonical tree's order (optim/grad_norm.h) before anyone sums them. With a
// pipeline every stage holds other units: its flag joins the max over the pipeline group, and the
// stages' block sums, each already in order, are concatenated in stage order — the units' order,
// since stage s holds the units after stage s-1's. Not here:
// computing a rank's own flags and sums (step/owned_slice.h), deciding the step (train/step_decision.h).
#pragma once

#include <vector>

#include "collective/collective.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// Whether any rank of the job saw a non-finite gradient (max of 0/1 flags, so no NaN ever meets
/// the max). @param plan this rank's plan. @param dp the data-parallel group. @param mp the
/// model-parallel group (null: N_m = 1). @param local this rank's flag. @param pp the pipeline
/// group (null: N_p = 1). @return the job's.
bool agree_nonfinite(const ZeroPlan& plan, Collective& dp, Collective* mp, bool local, Collective* pp = nullptr);

/// The norm's block sums of the whole model in canonical order: a rank holding shards has the sums
/// of its own blocks and all-gathers everyone's (all_gather_v: shards differ in real elements); a
/// rank holding whole units has them all; then the model-parallel ranks' (zero/mp_gather.h).
/// @param plan this rank's plan. @param dp the data-parallel group. @param mp the model-parallel
/// group (null: N_m = 1). @param local this rank's sums, its units in order. @param pp the
/// pipeline group (null: N_p = 1): the stages exchange their counts, then their sums.
/// @return every block sum, in the one-device tree's order.
std::vector<float> gather_norm_block_sums(const ZeroPlan& plan, Collective& dp, Collective* mp,
                                          const std::vector<float>& local, Collective* pp = nullptr);

}  // namespace zt::zero
