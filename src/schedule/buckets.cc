// schedule/buckets.cc — C_B's bucket schedule (see buckets.h).
#include "schedule/buckets.h"

#include <algorithm>

namespace zt::schedule {

UnitBuckets unit_buckets(std::size_t full, std::size_t bucket_elements) {
  UnitBuckets b;
  b.bucket = bucket_elements ? bucket_elements : full;
  const std::size_t count = b.bucket ? (full + b.bucket - 1) / b.bucket : 0;
  for (std::size_t k = count; k-- > 0;) b.issue_order.push_back({k * b.bucket, std::min(full, (k + 1) * b.bucket)});
  return b;
}

std::size_t buckets_ready(const UnitBuckets& b, std::size_t from) {
  std::size_t ready = 0;
  while (ready < b.issue_order.size() && b.issue_order[ready].begin >= from) ++ready;
  return ready;
}

std::size_t bucket_window(const UnitBuckets& b) {
  std::size_t peak = 0;
  for (std::size_t i = 0; i < b.issue_order.size(); ++i) {
    std::size_t live = 0;
    for (std::size_t k = i; k < std::min(b.issue_order.size(), i + kBucketsInFlight); ++k)
      live += b.issue_order[k].size();
    peak = std::max(peak, live);
  }
  return peak;
}

RangeScatter reduce_scatter_counts(Range r, std::size_t shard, std::size_t world, std::size_t rank) {
  RangeScatter s;
  for (std::size_t q = 0; q < world; ++q) {
    const std::size_t lo = std::max(r.begin, q * shard), hi = std::min(r.end, (q + 1) * shard);
    s.counts.push_back(hi > lo ? hi - lo : 0);
  }
  if (s.counts[rank]) s.at = std::max(r.begin, rank * shard) - rank * shard;
  return s;
}

Landing landing(bool reduce_scatters, bool compute_type) {
  if (reduce_scatters) return compute_type ? Landing::wire16_shard : Landing::leaf32_shard;
  return compute_type ? Landing::all_reduce_unit16 : Landing::all_reduce_unit32;
}

}  // namespace zt::schedule
