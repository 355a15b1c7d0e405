// kernels/row_sum.h — sums over positions in the project's one canonical order.
//
// Bias and LayerNorm gradients, the embedding gradient and every per-row reduction (LayerNorm
// mean and variance, softmax denominators) sum in the order of reduce/canonical_tree.h: the
// aligned pairwise tree over the leaves in position order. That order is fixed by the leaf count
// alone, so it does not depend on threads, blocking or vector width. This file only adapts the
// tree to two shapes of leaves (scalars, and whole rows added element-wise); it decides no order.
// The scalar form is ZT_HD (a fixed-size state, no recursion), so a CUDA thread sums a row or a
// column in exactly the CPU's order; the row form stays host-only (the CPU's fast path for column
// sums, whose per-column twin on the GPU is canonical_sum_f over a column's leaves: same tree).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/cpu_pool.h"
#include "fp/hd.h"
#include "reduce/canonical_tree.h"

namespace zt::kernels {

/// The canonical tree over floats that arrive one at a time, in a fixed-size state: partial sums
/// of aligned perfect blocks, merged like a binary counter (the carry of leaf k merges as many
/// blocks as k has trailing one bits), then combined left to right by finish(). That is
/// reduce/canonical_tree.h's tree over the pushed leaves, without recursion or heap memory, so it
/// runs in a CUDA thread as well as on the CPU (ZT_HD). Leaves may also be pushed as sums of
/// aligned perfect blocks of 2^k leaves (push_block), provided every block pushed before a
/// smaller one has a size that the counter can merge: see canonical_sum_f.
struct CanonicalSumF {
  float partial[64];   ///< partial[0..top): perfect-block sums, largest (leftmost) first
  int top = 0;         ///< how many partial sums are alive
  uint64_t units = 0;  ///< blocks pushed so far through push()

  /// Add the next leaf (or the next block of the counter's unit size).
  /// @param v its value.
  ZT_HD void push(float v) {
    for (uint64_t carry = units++; carry & 1; carry >>= 1) v = partial[--top] + v;  // earlier block on the left
    partial[top++] = v;
  }
  /// Append a trailing block smaller than the counter's unit, after the last push(): it starts a
  /// new partial of its own and is never merged. @param v the block's (perfect-tree) sum.
  ZT_HD void append_tail(float v) { partial[top++] = v; }
  /// The canonical sum of everything pushed: the partials combined left to right.
  /// @return that sum; +0 when nothing was pushed (the empty sum).
  ZT_HD float finish() const {
    if (top == 0) return 0.0f;
    float total = partial[0];
    for (int k = 1; k < top; ++k) total = total + partial[k];
    return total;
  }
};

/// Canonical float sum of leaf(0) .. leaf(n-1); +0 for n = 0.
///
/// Same tree, fewer steps: the aligned blocks of n of 8 or more leaves are unions of aligned
/// 8-blocks, and a perfect block of 8s leaves is the perfect tree over s perfect 8-blocks; so the
/// leaves are taken eight at a time as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)) (the bottom three
/// levels of the same tree, no new order) and counted in units of 8. The n mod 8 leaves left over
/// form, by the binary digits of n mod 8, a 4-block, a 2-block and a single leaf, in that order:
/// each is a block of its own in the canonical tree, appended after the 8-unit blocks.
/// tests/kernels/test_row_sum.cc checks this bitwise against canonical_reduce for every n up to
/// 1100. ZT_HD: the GPU kernels' rows and columns call it with leaf functors of their own.
/// @param n the number of leaves. @param leaf leaf(i) returns the i-th float.
/// @return the sum along the canonical tree.
template <typename Leaf>
ZT_HD float canonical_sum_f(std::size_t n, const Leaf& leaf) {
  CanonicalSumF acc;
  const std::size_t whole = n - n % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const float a = (leaf(i) + leaf(i + 1)) + (leaf(i + 2) + leaf(i + 3));
    const float b = (leaf(i + 4) + leaf(i + 5)) + (leaf(i + 6) + leaf(i + 7));
    acc.push(a + b);
  }
  std::size_t i = whole;
  if (n & 4) {
    acc.append_tail((leaf(i) + leaf(i + 1)) + (leaf(i + 2) + leaf(i + 3)));
    i += 4;
  }
  if (n & 2) {
    acc.append_tail(leaf(i) + leaf(i + 1));
    i += 2;
  }
  if (n & 1) acc.append_tail(leaf(i));
  return acc.finish();
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

/// The column sums of a row-major [n, cols] matrix, in place (canonical_rows_sum_inplace over
/// rows 0..n-1 in order), the rank's threads taking contiguous blocks of columns
/// (core/cpu_pool.h): a column's tree is the same whichever thread forms it, so the bits do not
/// depend on the thread count. @param base the matrix (overwritten). @param cols its width.
/// @param n its rows (>= 1). @return row 0, which holds the sums.
inline float* canonical_columns_sum_inplace(float* base, int64_t cols, int64_t n) {
  // a part gets at least 16 columns (a cache line of floats per row) and ~32k of the leaves
  const int64_t grain = std::max<int64_t>(16, (int64_t{1} << 15) / (n > 0 ? n : 1));
  parallel_for(cols, grain, [&](int64_t c0, int64_t c1) {
    canonical_rows_sum_inplace(base + c0, cols, c1 - c0, static_cast<std::size_t>(n), [](std::size_t i) { return i; });
  });
  return base;
}

}  // namespace zt::kernels
