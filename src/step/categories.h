// step/categories.h — the arena ledger's category names for the model states and the residual
// states every training loop allocates, and the one rule that names a gradient accumulator's
// buffers.
//
// The single-rank loop (train/), the ZeRO engine (zero/), the offload tiers (offload/) and the
// predictions of their memory (train/memory_plan.h, predict/) all allocate or predict under these
// names, so a measured peak and its prediction meet under one key. Names only: nothing allocates.
#pragma once

#include <cstddef>

namespace zt::step {

/// Ledger category names (one per kind of buffer).
namespace category {
inline constexpr const char* params = "params";                                  ///< compute copy (fp32: the master)
inline constexpr const char* master = "master";                                  ///< FP32 master copy
inline constexpr const char* optimizer = "optimizer";                            ///< Adam m, v / SGD momentum
inline constexpr const char* grads = "grads";                                    ///< gradient storage, width s_g
inline constexpr const char* grad_staging = "grad_staging";                      ///< 16-bit model output when s_g = 4
inline constexpr const char* accum_partials = "accum_partials";                  ///< FP32 canonical-tree partials
inline constexpr const char* activations = "activations";                        ///< what backward needs
inline constexpr const char* activation_checkpoints = "activation_checkpoints";  ///< block inputs kept by checkpointing
inline constexpr const char* scratch = "scratch";                                ///< per-op temporaries
inline constexpr const char* batch = "batch";                                    ///< one micro-batch of token ids
inline constexpr const char* norm_blocks = "norm_blocks";                        ///< block sums + one block of FP32
inline constexpr const char* eval = "eval";                                      ///< argmax predictions
inline constexpr const char* diagnostics = "diagnostics";  ///< 16-bit snapshot for the stall metric
}  // namespace category

/// The ledger category of a new buffer of a canonical gradient accumulator (optim/grad_accumulator.h),
/// the one rule for the engines and their predicted traces. The first buffer alive in a step survives
/// every merge (it holds the leftmost leaves): where the accumulator is the step's gradient storage
/// (the ZeRO engine, S_g's extent) that buffer is `grads` and the others are the canonical tree's
/// extra partial sums, `accum_partials`; the reference loop keeps its storage in a buffer of its own,
/// so every buffer of its accumulator is a partial sum.
/// @param live_partials buffers the accumulator holds before this one (its live_partials()).
/// @param holds_storage whether the accumulator's first buffer is the step's gradient storage.
/// @return the category.
inline const char* accumulator_category(std::size_t live_partials, bool holds_storage) {
  return holds_storage && live_partials == 0 ? category::grads : category::accum_partials;
}

/// The four model-state categories, whose peaks add up to model_states_bytes.
/// @return their names.
inline const char* const* model_state_categories() {
  static const char* const names[] = {category::params, category::grads, category::master, category::optimizer,
                                      nullptr};
  return names;
}

}  // namespace zt::step
