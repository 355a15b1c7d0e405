// schedule/buckets.h — constant-size buffers (C_B, ZeRO paper Sec. 6.2) as data: how a unit's
// gradient is cut into buckets, in which order they go, which may go once backward has finished part
// of the unit, what each rank receives of a bucket's uneven reduce-scatter, and where a unit's
// reduction lands.
//
// The rules, written once:
//   bucket size  --bucket-mb of the reduce dtype when the reduction is a reduce-scatter (stage 2's
//                buckets), else the whole unit (one all-reduce);
//   issue order  last bucket first: backward finishes a unit's parameters from its end to its start
//                (model/param_provider.h), so the last bucket is final first;
//   ready rule   once every element >= `from` is final, every bucket starting at or after `from`
//                may go;
//   in flight    at most kBucketsInFlight bucket buffers exist at once (one travelling while the
//                next fills), so the buffers are bounded by the bucket size, not by a unit's or the
//                model's — the point of C_B;
//   landing      a reduce-scatter delivers this rank's part of [a, z) into its shard: a 16-bit wire
//                shard (--reduce-dtype compute) or the unit's next FP32 accumulator leaf; without
//                gradient sharding the whole unit is all-reduced in place, 16-bit or FP32.
// zero/step_program.cc writes a step's reductions along these (run by zero/step_interpreter.h),
// predict/zero_trace.cc walks that program's buffers as arena tokens, predict/zero_memory.cc
// computes C_B's closed form from them. Nothing here allocates, communicates or decides the
// schedule of micro-batches (zero/zero_plan.h does).
#pragma once

#include <cstddef>
#include <vector>

namespace zt::schedule {

/// C_B: reduce-scatter bucket buffers that exist at once (one travelling while the next fills).
inline constexpr std::size_t kBucketsInFlight = 2;

/// A range [begin, end) of a padded unit's elements.
struct Range {
  std::size_t begin = 0;  ///< first element
  std::size_t end = 0;    ///< one past the last
  /// @return end - begin.
  std::size_t size() const { return end - begin; }
};

/// One unit's buckets.
struct UnitBuckets {
  std::size_t bucket = 0;          ///< elements per bucket (the unit's last one may be shorter)
  std::vector<Range> issue_order;  ///< the buckets, last bucket of the unit first
};

/// Cut a unit into buckets. @param full the padded unit's elements (full_u).
/// @param bucket_elements elements per bucket; 0: one bucket, the whole unit.
/// @return the unit's buckets in issue order.
UnitBuckets unit_buckets(std::size_t full, std::size_t bucket_elements);

/// The order of a unit's buckets when the whole unit is reduced at once (after the last micro-batch
/// with gradient accumulation): element order, the reverse of the backward's issue order.
/// @param b the unit's buckets. @return its ranges, first element first.
inline std::vector<Range> sync_order(const UnitBuckets& b) { return {b.issue_order.rbegin(), b.issue_order.rend()}; }

/// The ready rule: how many buckets of the issue order may have gone once every element at or after
/// `from` is final (they are a prefix of the issue order). @param b the unit's buckets.
/// @param from the first final element (0: the whole unit). @return the count.
std::size_t buckets_ready(const UnitBuckets& b, std::size_t from);

/// C_B's closed form for one unit: the most elements its bucket buffers hold at once — the largest
/// sum of kBucketsInFlight consecutive buckets of the issue order (at most kBucketsInFlight ×
/// bucket). @param b the unit's buckets. @return elements.
std::size_t bucket_window(const UnitBuckets& b);

/// What an uneven reduce-scatter of a range delivers.
struct RangeScatter {
  std::vector<std::size_t> counts;  ///< per rank q: elements of the range inside q's shard
  std::size_t at = 0;               ///< where this rank's part starts within its shard
};

/// The uneven reduce-scatter of range r of a unit: rank q receives the part of r inside its shard
/// [q shard, (q+1) shard), so buckets need not align with shards. @param r the range.
/// @param shard shard_u. @param world N. @param rank this rank. @return counts and landing offset.
RangeScatter reduce_scatter_counts(Range r, std::size_t shard, std::size_t world, std::size_t rank);

/// Where a unit's per-micro-batch reduction lands, derived once from the plan.
enum class Landing {
  wire16_shard,       ///< reduce-scatter into a 16-bit shard-sized wire buffer (--reduce-dtype compute)
  leaf32_shard,       ///< reduce-scatter into the unit's next FP32 accumulator leaf (no buffer of its own)
  all_reduce_unit16,  ///< the whole unit all-reduced in place in a 16-bit buffer
  all_reduce_unit32,  ///< the whole unit all-reduced in place in an FP32 buffer
};

/// @param reduce_scatters the reduction delivers only this rank's shard (S_o).
/// @param compute_type gradients travel and are summed as 16-bit values. @return the landing.
Landing landing(bool reduce_scatters, bool compute_type);

/// @param l a landing. @return whether it is a reduce-scatter into this rank's shard.
inline bool scatters(Landing l) { return l == Landing::wire16_shard || l == Landing::leaf32_shard; }
/// @param l a landing. @return whether its buffers are 16-bit (the compute type).
inline bool wire16(Landing l) { return l == Landing::wire16_shard || l == Landing::all_reduce_unit16; }

}  // namespace zt::schedule
