// collective/padding.h — explicit padding and partitioning of buffers over N ranks.
//
// Reduce-scatter and all-gather split a buffer of N*shard elements into N equal shards; a
// length that does not divide by N is never padded silently. Callers choose one of:
//  - pad: allocate padded_count(n, N) elements, zero the tail, and use shard_count(padded, N);
//    padding_of(n, N) says how many elements were added (to report them);
//  - uneven: balanced_counts(n, N) gives per-rank counts for reduce_scatter_v / all_gather_v
//    (the first n % N ranks get one element more), no padding at all; total_of and offsets_of
//    read such counts back.
// This header is arithmetic only; it allocates nothing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/check.h"

namespace zt {

/// Smallest multiple of world that is >= n. @param n element count. @param world ranks (>= 1).
/// @return the padded count.
inline std::size_t padded_count(std::size_t n, std::size_t world) {
  ZT_CHECK(world >= 1, "padded_count: world size must be >= 1, got ", world);
  return (n + world - 1) / world * world;
}

/// Number of padding elements padded_count adds. @param n element count. @param world ranks.
/// @return padded_count(n, world) - n.
inline std::size_t padding_of(std::size_t n, std::size_t world) { return padded_count(n, world) - n; }

/// Shard length of a buffer that must already divide by world; a zt::Error names both sizes
/// otherwise. @param n element count (padded). @param world ranks. @param what the caller's name
/// for the buffer, used in the message. @return n / world.
inline std::size_t shard_count(std::size_t n, std::size_t world, const std::string& what = "buffer") {
  ZT_CHECK(world >= 1, what, ": world size must be >= 1, got ", world);
  ZT_CHECK(n % world == 0, what, ": ", n, " elements do not split evenly over ", world,
           " ranks (pad to padded_count = ", padded_count(n, world), ", or use the _v variant)");
  return n / world;
}

/// Shard length for an explicit padded length: checks padded >= n and padded % world == 0.
/// @param n real element count. @param padded the caller's padded length. @param world ranks.
/// @return padded / world.
inline std::size_t shard_count_padded(std::size_t n, std::size_t padded, std::size_t world) {
  ZT_CHECK(padded >= n, "padded length ", padded, " is smaller than the real length ", n);
  return shard_count(padded, world, "padded length");
}

/// Per-rank counts that split n as evenly as possible (no padding): rank r gets
/// n / world + (r < n % world). @param n element count. @param world ranks (>= 1).
/// @return world counts summing to n.
inline std::vector<std::size_t> balanced_counts(std::size_t n, std::size_t world) {
  ZT_CHECK(world >= 1, "balanced_counts: world size must be >= 1, got ", world);
  std::vector<std::size_t> counts(world, n / world);
  for (std::size_t r = 0; r < n % world; ++r) ++counts[r];
  return counts;
}

/// Total of per-rank counts: the elements of the whole buffer they split.
/// @param counts per-rank counts. @return their sum.
inline std::size_t total_of(const std::vector<std::size_t>& counts) {
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  return total;
}

/// Offsets of each rank's range for per-rank counts (exclusive prefix sum).
/// @param counts per-rank counts. @return offsets, same length.
inline std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> off(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) off[r] = off[r - 1] + counts[r - 1];
  return off;
}

}  // namespace zt
