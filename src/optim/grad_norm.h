// optim/grad_norm.h — the global gradient norm from fixed-size blocks, and norm clipping.
//
// A norm is a sum over all gradient elements, so its bits depend on the order of the additions.
// To make a sharded run (chapter 6) produce the single-device norm bit for bit, the order is fixed by the
// DATA LAYOUT, never by who holds what:
//   1. every flat unit is cut into blocks of b elements (b a power of two, default 256) starting
//      at the unit's first element; the last block of a unit may be partial and is its own block;
//   2. a block's sum of squares is the canonical tree (reduce/canonical_tree.h) over its elements'
//      squares, in FP32 — a perfect tree for a full block;
//   3. the block sums of all units, in canonical order (unit 0's blocks in position order, then
//      unit 1's, ...), are combined by the canonical tree; the norm is the FP32 square root.
// Padding is never part of a block (a partial block stops at the unit's last real element) and a
// block made only of padding does not exist. A rank's shard starts at a multiple of b within its
// unit and is padded to a multiple of b, so the rank computes exactly the blocks it holds; the
// caller gathers the block sums, puts them in canonical order and combines them.
//
// Clipping (Pascanu et al. 2013): if the norm is finite and above max_norm, every gradient is
// multiplied by c = max_norm / norm (one float division, computed once); otherwise nothing
// changes. A non-finite norm is reported, not clipped: the loop skips (fp16) or fails.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "fp/hd.h"

namespace zt {

/// Default block size b of the gradient norm, in elements.
inline constexpr std::size_t kDefaultNormBlock = 256;

/// Number of blocks that cover `real_elements` elements: ceil(real / b).
/// @param real_elements non-padding elements (from a block boundary). @param block b.
/// @return the count.
std::size_t norm_block_count(std::size_t real_elements, std::size_t block);

/// Non-padding elements of a shard [shard_first, shard_first + shard_numel) of a unit with
/// unit_numel real elements: clamp(unit_numel − shard_first, 0, shard_numel).
/// @param unit_numel real elements of the unit. @param shard_first the shard's first index in
/// the unit. @param shard_numel the shard's size including padding. @return the count.
std::size_t shard_real_elements(std::size_t unit_numel, std::size_t shard_first, std::size_t shard_numel);

/// Sum of squares of one block along the canonical tree, in FP32.
/// @param x the block's elements. @param count how many (1..b). @return Σ x_i².
float block_sum_of_squares(const float* x, std::size_t count);

/// Block sums of a span that starts at a block boundary of its unit: writes
/// norm_block_count(real_elements, block) sums to out. zt::Error unless block is a power of two.
/// @param x the span (a whole unit, or a rank's shard). @param real_elements its non-padding
/// elements (the rest is padding and is ignored). @param block b. @param out destination.
/// @return the number of sums written.
std::size_t norm_block_sums(const float* x, std::size_t real_elements, std::size_t block, float* out);

/// Total sum of squares from block sums in canonical order (0 for no blocks).
/// @param block_sums the sums. @return their canonical-tree sum.
float combine_norm_blocks(std::span<const float> block_sums);

/// Reorder block sums gathered rank by rank (each rank's sums unit by unit) into canonical order
/// (unit by unit; within a unit, rank order is position order).
/// @param gathered the concatenation over ranks. @param blocks_per_rank_unit [rank][unit] counts.
/// @return the sums in canonical order.
std::vector<float> canonical_block_order(std::span<const float> gathered,
                                         const std::vector<std::vector<std::size_t>>& blocks_per_rank_unit);

/// The single-device global norm of gradients held as whole units (each span a unit's real
/// elements). @param units the units in canonical order. @param block b. @return the L2 norm.
float global_grad_norm(const std::vector<std::span<const float>>& units, std::size_t block);

/// What clipping decided for one step.
struct ClipDecision {
  float norm = 0;         ///< the global norm
  bool finite = true;     ///< whether the norm is finite
  bool clipped = false;   ///< whether norm > max_norm (and finite, and clipping enabled)
  float coefficient = 1;  ///< max_norm / norm when clipped, else 1
};

/// Decide clipping. @param norm the global norm. @param max_norm the threshold (<= 0: disabled).
/// @return the decision.
ClipDecision clip_decision(float norm, float max_norm);

/// One element scaled by the clip coefficient (shared by CPU and CUDA).
/// @param g gradient. @param coefficient c. @return g · c.
ZT_HD float clip_element(float g, float coefficient) { return g * coefficient; }

/// Apply a decision to a span (no-op unless clipped). @param g gradients (in place).
/// @param n count. @param decision the step's decision.
void apply_clip(float* g, std::size_t n, const ClipDecision& decision);

}  // namespace zt
