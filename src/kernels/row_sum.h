// kernels/row_sum.h — sums over positions in the project's one canonical order.
//
// Bias and LayerNorm gradients, the embedding gradient and every per-row reduction (LayerNorm
// mean and variance, softmax denominators) sum in the order of reduce/canonical_tree.h: the
// aligned pairwise tree over the leaves in position order. That order is fixed by the leaf count
// alone, so it does not depend on threads, blocking or vector width. This file only adapts the
// tree to two shapes of leaves (scalars, and whole rows added element-wise); it decides no order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reduce/canonical_tree.h"

namespace zt::kernels {

/// Canonical float sum of leaf(0) .. leaf(n-1), n >= 1.
///
/// Same tree, fewer calls: when n is a multiple of 8, the aligned blocks of n are those of n/8
/// scaled by 8, and each perfect block of 8s leaves is the perfect tree over s perfect 8-blocks;
/// so the canonical tree over n leaves equals the canonical tree over the n/8 sums
/// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Those are written out here (the bottom three levels of
/// the same tree, no new order) so the recursion runs over an eighth of the leaves.
/// tests/kernels/test_row_sum.cc checks the two bitwise for every n up to 1100.
/// @param n the number of leaves. @param leaf leaf(i) returns the i-th float.
/// @return the sum along the canonical tree.
template <typename Leaf>
float canonical_sum_f(std::size_t n, const Leaf& leaf) {
  const auto add = [](float a, float b) { return a + b; };
  if (n % 8 == 0) {
    return canonical_reduce(
        n / 8,
        [&](std::size_t j) -> float {
          const std::size_t i = 8 * j;
          const float a = (leaf(i) + leaf(i + 1)) + (leaf(i + 2) + leaf(i + 3));
          const float b = (leaf(i + 4) + leaf(i + 5)) + (leaf(i + 6) + leaf(i + 7));
          return a + b;
        },
        add);
  }
  return canonical_reduce(
      n, [&](std::size_t i) -> float { return leaf(i); }, add);
}

/// Sum n rows of `cols` floats along the canonical tree, element by element, IN PLACE: the rows
/// are base + row_of(i) * stride for i = 0..n-1 (in that leaf order); each internal node of the
/// tree is written into the first row of its left subtree, so the inputs are overwritten.
/// @param base start of the row storage. @param stride floats between consecutive rows.
/// @param cols floats per row. @param n number of rows (>= 1).
/// @param row_of row_of(i) gives the storage row of leaf i.
/// @return the row holding the sum (base + row_of(0) * stride).
template <typename RowOf>
float* canonical_rows_sum_inplace(float* base, int64_t stride, int64_t cols, std::size_t n, const RowOf& row_of) {
  return canonical_reduce(
      n, [&](std::size_t i) -> float* { return base + static_cast<int64_t>(row_of(i)) * stride; },
      [cols](float* a, float* b) {
        for (int64_t c = 0; c < cols; ++c) a[c] += b[c];
        return a;
      });
}

}  // namespace zt::kernels
