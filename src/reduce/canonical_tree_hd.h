// reduce/canonical_tree_hd.h — the canonical aligned pairwise tree (canonical_tree.h) in a form a
// CUDA thread can run: no recursion, no allocation, no exceptions, leaves taken one at a time.
//
// It is CanonicalAccumulator's binary counter written over a fixed stack: leaf j is pushed as a
// block of one, and while the top of the stack holds a block of the same size the two are merged
// (top on the left), so after j leaves the stack holds the aligned power-of-two blocks of j's
// binary digits, largest first; at the end they are combined from left to right. That is exactly
// canonical_reduce's tree, operand for operand (tests/reduce checks the two trees' shapes agree
// for every n up to 100, and the [ch13] collective tests check the bits).
// It is not a second definition of the order: canonical_tree.h stays the definition; this file
// only evaluates the same tree with at most 33 partial sums alive (n < 2^32 leaves).
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt {

/// Reduce leaves 0..n-1 along the canonical aligned pairwise tree, iteratively (host or device).
/// @param n number of leaves, 1 <= n < 2^32 (n = 0 gives T(); no error can be raised on a device).
/// @param leaf leaf(i) returns leaf i as a T.
/// @param add add(a, b) returns a + b; a is always the earlier (left) operand.
/// @return the canonical sum, equal to canonical_reduce(n, leaf, add) operation for operation.
template <typename T, typename Leaf, typename Add>
ZT_HD T canonical_reduce_hd(uint32_t n, const Leaf& leaf, const Add& add) {
  T partial[33];
  uint32_t size[33];
  int top = 0;  // number of blocks on the stack
  for (uint32_t j = 0; j < n; ++j) {
    T value = leaf(j);
    uint32_t s = 1;
    while (top > 0 && size[top - 1] == s) {  // merge equal blocks: the earlier one is the left operand
      value = add(partial[top - 1], value);
      s *= 2;
      --top;
    }
    partial[top] = value;
    size[top] = s;
    ++top;
  }
  if (top == 0) return T();
  T total = partial[0];
  for (int b = 1; b < top; ++b) total = add(total, partial[b]);
  return total;
}

}  // namespace zt
