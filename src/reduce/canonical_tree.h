// reduce/canonical_tree.h — the one summation order this project uses wherever order matters.
//
// The aligned pairwise tree over n leaves taken in order: split n into aligned power-of-two blocks
// following its binary digits from the top (n = 6 -> [0,4) [4,6); n = 3 -> [0,2) [2,3)), sum each
// block as a perfect binary tree, then combine the block sums from left to right:
//   n = 4: (x0+x1)+(x2+x3)     n = 3: (x0+x1)+x2     n = 6: ((x0+x1)+(x2+x3))+(x4+x5)
//
// Why this tree. (1) Its rounding error grows like log2(n), not n as for the running sum.
// (2) It composes: if N holders each own an aligned block of A = 2^k consecutive leaves, the tree
// over all N*A leaves is exactly "each holder sums its block as a perfect tree, then the N block
// sums are combined by the tree over N leaves" (N*A's binary digits are N's shifted by k). So one
// rank accumulating every micro-batch and N ranks each accumulating A of them, then reducing over
// ranks, add the same numbers in the same order: bitwise world-size invariance (chapter 6).
//
// Collectives (reduce over ranks), gradient accumulation (over micro-batches), losses and norms
// (over blocks) all call this file; nothing else in the project decides an order of summation.
// It is not a parallel or vectorised reduction: callers vectorise across independent elements.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "core/check.h"

namespace zt {

/// Sum of the perfect binary tree over leaves [first, first + size), size a power of two.
/// @param first index of the first leaf. @param size number of leaves (a power of two).
/// @param leaf leaf(i) returns leaf i. @param add add(a, b) returns a + b in the caller's type.
/// @return the tree's sum.
template <typename Leaf, typename Add>
auto perfect_tree_reduce(std::size_t first, std::size_t size, const Leaf& leaf, const Add& add)
    -> decltype(leaf(first)) {
  if (size == 1) return leaf(first);
  const std::size_t half = size / 2;
  return add(perfect_tree_reduce(first, half, leaf, add), perfect_tree_reduce(first + half, half, leaf, add));
}

/// Reduce leaves 0..n-1 along the canonical aligned pairwise tree (n >= 1).
/// @param n number of leaves. @param leaf leaf(i) returns leaf i.
/// @param add add(a, b) returns a + b; a is always the earlier (left) operand.
/// @return the canonical sum.
template <typename Leaf, typename Add>
auto canonical_reduce(std::size_t n, const Leaf& leaf, const Add& add) -> decltype(leaf(0)) {
  ZT_CHECK(n >= 1, "canonical_reduce: no leaves");
  std::size_t block = std::size_t{1} << (8 * sizeof(std::size_t) - 1);
  while (!(n & block)) block >>= 1;
  auto total = perfect_tree_reduce(0, block, leaf, add);
  for (std::size_t first = block, b = block >> 1; b != 0; b >>= 1) {
    if (n & b) {
      total = add(std::move(total), perfect_tree_reduce(first, b, leaf, add));
      first += b;
    }
  }
  return total;
}

/// Canonical sum of a list of values of an arithmetic type T (accumulated in T).
/// @param values the leaves in order (at least one). @return the canonical sum.
template <typename T>
T canonical_sum(const std::vector<T>& values) {
  return canonical_reduce(
      values.size(), [&](std::size_t i) { return values[i]; }, [](T a, T b) { return a + b; });
}

/// Streaming form of the canonical tree: leaves arrive one at a time (micro-batches in order)
/// and are merged like a binary counter, so at most floor(log2(n)) + 1 partial sums are alive
/// at once. finish() returns exactly canonical_reduce over the pushed leaves.
///
/// T is any value type (a float, or a buffer); merge(left, right) must add `right` into `left`
/// (left holds the earlier leaves). Buffers are moved, never copied, so a caller that accounts
/// for memory sees each partial sum as one live buffer.
template <typename T, typename Merge>
class CanonicalAccumulator {
 public:
  /// @param merge merge(T& left, T&& right) sets left = left + right.
  explicit CanonicalAccumulator(Merge merge) : merge_(std::move(merge)) {}

  /// Add the next leaf. @param leaf the leaf value (moved in).
  void push(T leaf) {
    std::size_t size = 1;
    while (!partials_.empty() && partials_.back().second == size) {
      merge_(partials_.back().first, std::move(leaf));
      leaf = std::move(partials_.back().first);
      partials_.pop_back();
      size *= 2;
    }
    partials_.emplace_back(std::move(leaf), size);
  }

  /// Combine what is left, largest (leftmost) block first, and reset.
  /// @return the canonical sum of every pushed leaf.
  T finish() {
    ZT_CHECK(!partials_.empty(), "CanonicalAccumulator: nothing pushed");
    T total = std::move(partials_.front().first);
    for (std::size_t i = 1; i < partials_.size(); ++i) merge_(total, std::move(partials_[i].first));
    partials_.clear();
    return total;
  }

  /// Number of partial sums alive now (the binary weight of the leaf count).
  /// @return the count.
  std::size_t live_partials() const { return partials_.size(); }

 private:
  Merge merge_;
  std::vector<std::pair<T, std::size_t>> partials_;
};

/// The most partial sums CanonicalAccumulator keeps alive over n leaves: floor(log2 n) + 1.
/// @param n number of leaves (>= 1). @return that bound, used by memory predictions.
inline std::size_t canonical_max_live_partials(std::size_t n) {
  std::size_t k = 0;
  while ((std::size_t{1} << (k + 1)) <= n) ++k;
  return k + 1;
}

}  // namespace zt
