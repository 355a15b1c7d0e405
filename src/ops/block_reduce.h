// ops/block_reduce.h — the two reductions a block op makes over a row, done by the block's threads
// together and giving the bits of the one-thread loops they replace: the canonical sum
// (kernels/row_sum.h's canonical_sum_f) and the first maximum (a left-to-right scan with `>`).
//
// The canonical sum in parallel. canonical_sum_f takes the leaves eight at a time as
// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)) and treats those u = n/8 unit sums as the leaves of the
// canonical tree (reduce/canonical_tree.h); the n mod 8 leaves left over are a 4-, a 2- and a
// 1-block appended after them. A fixed tree is parallel by nature, level by level:
//   phase 0       thread t forms the unit sums t, t + P, t + 2P, ... into shared memory;
//   level w       (w = 1, 2, 4, ...) units[a] = units[a] + units[a + w] for every a that is a
//                 multiple of 2w with a + 2w <= u: such a pair lies inside one of the aligned
//                 perfect blocks the binary digits of u cut [0, u) into, so after the last level
//                 each perfect block's sum sits at its first unit;
//   finish        the perfect blocks' sums, largest (leftmost) first, then the 4-, 2- and 1-block,
//                 combined left to right: CanonicalSumF::finish's order.
// Every addition is one of the canonical tree's, with the same operands on the same side, so the
// bits are canonical_sum_f's whatever the thread count; tests/ops checks it for every n up to 1100
// and shows that the classic halving reduction (units[t] += units[t + half]) gives other bits.
//
// The first maximum in parallel. A scan `m = x > m ? x : m` from -inf keeps the first element of
// the largest value and skips NaN. Each thread scans its own elements (t, t + P, ...) the same way
// and remembers where its maximum was; the block then takes the largest value and, among equal
// values (+0 and -0 compare equal but differ in bits), the smallest position: the scan's answer.
// Not here: which leaves a row has (the ops' business), or any reduction across blocks.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fp/hd.h"

namespace zt::ops {

/// Floats of shared memory block_canonical_sum needs for n leaves: one per unit of eight (at least one).
/// @param n the leaves. @return the count.
ZT_HD std::size_t canonical_sum_floats(std::size_t n) { return n / 8 > 0 ? n / 8 : 1; }

/// Floats of shared memory block_first_max needs: a value and a position per thread.
/// @param threads the block's threads. @return the count.
ZT_HD std::size_t first_max_floats(uint32_t threads) { return 2 * static_cast<std::size_t>(threads); }

/// The finish of a canonical sum of n leaves whose u = n/8 unit sums have been reduced level by
/// level (see the file comment): the perfect blocks' sums, largest first, then the 4-, 2- and
/// 1-blocks of the n mod 8 leaves after them, combined left to right.
/// @param u n / 8. @param n the leaves. @param unit unit(q) reads the reduced unit q.
/// @param leaf leaf(i) returns the i-th float. @return the sum; +0 for n = 0.
template <typename Unit, typename Leaf>
ZT_HD float canonical_finish(std::size_t u, std::size_t n, const Unit& unit, const Leaf& leaf) {
  float total = 0.0f;
  bool first = true;
  const auto add = [&](float v) {
    total = first ? v : total + v;
    first = false;
  };
  std::size_t at = 0;
  for (std::size_t bit = std::size_t{1} << (8 * sizeof(std::size_t) - 1); bit != 0; bit >>= 1)
    if (u & bit) {
      add(unit(at));
      at += bit;
    }
  std::size_t i = 8 * u;
  if (n & 4) {
    add((leaf(i) + leaf(i + 1)) + (leaf(i + 2) + leaf(i + 3)));
    i += 4;
  }
  if (n & 2) {
    add(leaf(i) + leaf(i + 1));
    i += 2;
  }
  if (n & 1) add(leaf(i));
  return total;
}

/// The sum of eight leaves from leaf(i) as canonical_sum_f's bottom three levels.
/// @param i the first. @param leaf leaf(i) returns the i-th float. @return the unit's sum.
template <typename Leaf>
ZT_HD float unit_of_eight(std::size_t i, const Leaf& leaf) {
  const float a = (leaf(i) + leaf(i + 1)) + (leaf(i + 2) + leaf(i + 3));
  const float b = (leaf(i + 4) + leaf(i + 5)) + (leaf(i + 6) + leaf(i + 7));
  return a + b;
}

/// The canonical sum of leaf(0) .. leaf(n-1) by a block (see the file comment); every thread gets
/// it. Starts with a barrier, so the shared memory may be reused from an earlier reduction.
/// @param blk the block. @param units canonical_sum_floats(n) floats of shared memory.
/// @param n the leaves. @param leaf leaf(i) returns the i-th float (read by several threads).
/// @return the sum along the canonical tree; +0 for n = 0.
template <typename Block, typename Leaf>
ZT_HD float block_canonical_sum(Block& blk, float* units, std::size_t n, const Leaf& leaf) {
  const std::size_t u = n / 8, P = blk.threads();
  blk.sync();
  blk.each([&](uint32_t t) {
    for (std::size_t q = t; q < u; q += P) units[q] = unit_of_eight(8 * q, leaf);
  });
  for (std::size_t w = 1; 2 * w <= u; w *= 2)
    blk.each([&](uint32_t t) {
      for (std::size_t a = 2 * w * t; a + 2 * w <= u; a += 2 * w * P) units[a] = units[a] + units[a + w];
    });
  return canonical_finish(
      u, n, [&](std::size_t q) { return units[q]; }, leaf);
}

/// Floats of shared memory block_canonical_sums needs for W columns of n leaves each.
/// @param W columns. @param n leaves per column. @return the count.
ZT_HD std::size_t canonical_sums_floats(int64_t W, std::size_t n) {
  return static_cast<std::size_t>(W) * canonical_sum_floats(n);
}

/// W canonical sums at once, column c of leaf(c, 0) .. leaf(c, n-1), each its own tree as in
/// block_canonical_sum; the units are laid out [n/8][W] so that neighbouring threads work on
/// neighbouring columns (on a GPU: neighbouring addresses of a row-major matrix). sink(c, sum)
/// receives column c's sum in the last phase, from one thread.
/// @param blk the block. @param units canonical_sums_floats(W, n) floats of shared memory.
/// @param W columns. @param n leaves per column. @param leaf leaf(c, i) returns column c's i-th float.
/// @param sink sink(c, sum), called once per column.
template <typename Block, typename Leaf, typename Sink>
ZT_HD void block_canonical_sums(Block& blk, float* units, int64_t W, std::size_t n, const Leaf& leaf,
                                const Sink& sink) {
  const std::size_t u = n / 8, P = blk.threads(), w_cols = static_cast<std::size_t>(W);
  blk.sync();
  blk.each([&](uint32_t t) {
    for (std::size_t e = t; e < u * w_cols; e += P) {
      const std::size_t c = e % w_cols;
      units[e] = unit_of_eight(8 * (e / w_cols), [&](std::size_t i) { return leaf(static_cast<int64_t>(c), i); });
    }
  });
  for (std::size_t w = 1; 2 * w <= u; w *= 2)
    blk.each([&](uint32_t t) {
      const std::size_t pairs = u / (2 * w);
      for (std::size_t e = t; e < pairs * w_cols; e += P) {
        const std::size_t a = 2 * w * (e / w_cols) * w_cols + e % w_cols;
        units[a] = units[a] + units[a + w * w_cols];
      }
    });
  blk.each([&](uint32_t t) {
    for (std::size_t c = t; c < w_cols; c += P) {
      const auto col = static_cast<int64_t>(c);
      sink(col, canonical_finish(
                    u, n, [&](std::size_t q) { return units[q * w_cols + c]; },
                    [&](std::size_t i) { return leaf(col, i); }));
    }
  });
}

/// The first maximum of value(0) .. value(n-1) by a block: what `m = -inf; for j: m = v_j > m ?
/// v_j : m` returns (NaN skipped; -inf when nothing is larger). Every thread gets it. Starts with a
/// barrier, so the shared memory may be reused.
/// @param blk the block. @param slots first_max_floats(threads) floats of shared memory.
/// @param n the values. @param value value(j) returns the j-th float.
/// @return that maximum.
template <typename Block, typename Value>
ZT_HD float block_first_max(Block& blk, float* slots, int64_t n, const Value& value) {
  const uint32_t P = blk.threads();
  blk.sync();
  blk.each([&](uint32_t t) {
    float m = -INFINITY;
    int32_t where = INT32_MAX;
    for (int64_t j = t; j < n; j += P) {
      const float v = value(j);
      if (v > m) {
        m = v;
        where = static_cast<int32_t>(j);
      }
    }
    slots[t] = m;
    slots[P + t] = bit_cast_hd<float>(where);
  });
  float m = -INFINITY;
  int32_t where = INT32_MAX;
  for (uint32_t t = 0; t < P; ++t) {
    const float v = slots[t];
    const int32_t w = bit_cast_hd<int32_t>(slots[P + t]);
    if (v > m || (v == m && w < where)) {
      m = v;
      where = w;
    }
  }
  return m;
}

}  // namespace zt::ops
