// ops/parallel_linear_items.h — the parts of tensor parallelism's split Linears
// (kernels/parallel_linear.h) that are not GEMMs, as item ops (device/item_grid.h): moving block j's
// columns out of and into the block-interleaved layout, the canonical sum over the J blocks'
// partial sums, and the bias gradient of an FP32 copy. One thread per element or column; each body
// makes the CPU kernel's operations on one element (a widening, an addition and one rounding, or
// one canonical chain), so the device's split Linears round exactly as the host's.
//
// Layout (kernels/parallel_linear.h): a column-parallel output of G groups is [N, G·J·outb] with
// group g's block j at columns (g·J + j)·outb; a row-parallel input is the same with G = 1 and
// outb = inb. Not here: the GEMMs (gemm/), which blocks are held (the caller's), the sum across
// ranks (the caller's FinishBlockSum).
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/linear.h"
#include "kernels/row_sum.h"

namespace zt::ops {

using kernels::canonical_sum_f;
using kernels::from_f;
using kernels::linear_bias_element;
using kernels::to_f;

/// Where element e of block j's contiguous [N, G·outb] copy lies in the interleaved [N, G·J·outb]
/// layout: row i = e / (G·outb), column c = g·outb + k there goes to (g·J + j)·outb + k.
/// @param e the element. @param G groups. @param J blocks. @param j the block. @param outb per
/// block and group. @return its flat index in the interleaved layout.
ZT_HD int64_t interleaved_index(int64_t e, int64_t G, int64_t J, int64_t j, int64_t outb) {
  const int64_t ob = G * outb, i = e / ob, c = e % ob;
  return i * G * J * outb + (c / outb * J + j) * outb + c % outb;
}

/// Block j's columns of every group, side by side and widened: item e = i·(G·outb) + c computes
/// dst[i, c] = src[i, (g·J + j)·outb + k] with c = g·outb + k (the CPU's gather into FP32 scratch).
template <typename T>
struct BlockColumnsWiden {
  float* dst = nullptr;    ///< [N, G·outb] (written)
  const T* src = nullptr;  ///< [N, G·J·outb]
  int64_t N = 0;           ///< rows
  int64_t G = 1;           ///< groups (c_attn: q, k, v)
  int64_t J = 1;           ///< blocks in src
  int64_t j = 0;           ///< the block
  int64_t outb = 0;        ///< columns per block and group
  /// @return N G outb, one thread per gathered element.
  ZT_HD int64_t items() const { return N * G * outb; }
  /// @param e the element's flat index in dst.
  ZT_HD void operator()(int64_t e) const { dst[e] = to_f(src[interleaved_index(e, G, J, j, outb)]); }
};

/// The reverse with the bias epilogue: item e = i·(G·outb) + c computes
/// dst[i, (g·J + j)·outb + k] = round(acc[i, c] + b[c]) (kernels::linear_bias_element; b may be null).
template <typename T>
struct BlockColumnsNarrow {
  T* dst = nullptr;            ///< [N, G·J·outb] (block j's columns written)
  const float* acc = nullptr;  ///< [N, G·outb] block j's FP32 result
  const T* b = nullptr;        ///< [G·outb] block j's bias, or null
  int64_t N = 0;               ///< rows
  int64_t G = 1;               ///< groups
  int64_t J = 1;               ///< blocks in dst
  int64_t j = 0;               ///< the block
  int64_t outb = 0;            ///< columns per block and group
  /// @return N G outb, one thread per element of the block.
  ZT_HD int64_t items() const { return N * G * outb; }
  /// @param e the element's flat index in acc.
  ZT_HD void operator()(int64_t e) const {
    dst[interleaved_index(e, G, J, j, outb)] = linear_bias_element(acc[e], b, e % (G * outb));
  }
};

/// The sum over blocks of the blocks held here, in place: item e computes partials[e] = the
/// canonical sum of partials[j·n + e] over j = 0..J-1 (the canonical tree over the J blocks, as
/// kernels::canonical_rows_sum_inplace forms it row by row: the same tree per element).
struct BlockSumElements {
  float* partials = nullptr;  ///< J × [n]; the sum is written over block 0
  int64_t n = 0;              ///< floats per block
  int64_t J = 1;              ///< blocks
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param e the element.
  ZT_HD void operator()(int64_t e) const {
    partials[e] = canonical_sum_f(static_cast<std::size_t>(J),
                                  [&](std::size_t k) { return partials[static_cast<int64_t>(k) * n + e]; });
  }
};

/// Bias gradient of an FP32 copy of dy: item c computes db[c] = the canonical sum over the N rows
/// of dy_f[:, c], rounded once (the split Linears' db: their dy is already gathered into FP32).
template <typename T>
struct BiasGradColumnsF {
  T* db = nullptr;              ///< [out] (written)
  const float* dy_f = nullptr;  ///< [N, out]
  int64_t N = 0;                ///< rows
  int64_t out = 0;              ///< width
  /// @return out, one thread per column.
  ZT_HD int64_t items() const { return out; }
  /// @param c the column.
  ZT_HD void operator()(int64_t c) const {
    db[c] = from_f<T>(canonical_sum_f(static_cast<std::size_t>(N),
                                      [&](std::size_t i) { return dy_f[static_cast<int64_t>(i) * out + c]; }));
  }
};

}  // namespace zt::ops
