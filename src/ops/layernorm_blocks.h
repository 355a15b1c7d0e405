// ops/layernorm_blocks.h — LayerNorm (kernels/layernorm.h) as block ops (device/block_launch.h):
// a block per row forward and for the input gradient, a block per tile of columns for the gain and
// bias gradients. Each row's mean, variance and gradient means, and each column's sums over the
// rows, are the canonical tree formed by the block's threads together (ops/block_reduce.h), so
// every value is the CPU kernel's, bit for bit; the element-wise expressions are the row
// functions' own, written out per element.
// Not here: the CPU kernel (kernels/layernorm.h), which stays the host's path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/block_launch.h"
#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/layernorm.h"
#include "ops/block_reduce.h"

namespace zt::ops {

/// Forward: block i normalises row i (kernels::layernorm_forward_row's values).
template <typename T>
struct LayerNormForwardBlocks {
  T* out = nullptr;       ///< [N,C] (written)
  float* mean = nullptr;  ///< [N] FP32 cache (written)
  float* rstd = nullptr;  ///< [N] FP32 cache (written)
  const T* in = nullptr;  ///< [N,C]
  const T* w = nullptr;   ///< [C] gain
  const T* b = nullptr;   ///< [C] bias
  int64_t N = 0;          ///< rows
  int64_t C = 0;          ///< width
  /// @return N, a block per row.
  ZT_HD int64_t blocks() const { return N; }
  /// The host form: the CPU kernel, a row at a time (the same sums). Host only.
  void host() const { kernels::layernorm_forward(out, mean, rstd, in, w, b, N, C); }
  /// @return the arithmetic: 8 flops per element (two sums, a square, the normalisation).
  double flops() const { return 8.0 * static_cast<double>(N) * static_cast<double>(C); }
  /// @return the row's canonical-sum units.
  ZT_HD std::size_t shared_floats() const { return canonical_sum_floats(static_cast<std::size_t>(C)); }
  /// @param blk the block. @param i its row.
  template <typename Block>
  ZT_HD void operator()(Block& blk, int64_t i) const {
    using kernels::to_f;
    const T* x = in + i * C;
    const auto n = static_cast<std::size_t>(C);
    const float mu = block_canonical_sum(blk, blk.shared(), n, [&](std::size_t c) { return to_f(x[c]); }) / C;
    const float var = block_canonical_sum(blk, blk.shared(), n,
                                          [&](std::size_t c) {
                                            const float d = to_f(x[c]) - mu;
                                            return d * d;
                                          }) /
                      C;
    const float r = 1.0f / sqrtf(var + kernels::kLayerNormEps);
    blk.each([&](uint32_t t) {
      if (t == 0) {
        mean[i] = mu;
        rstd[i] = r;
      }
      for (int64_t c = t; c < C; c += blk.threads())
        out[i * C + c] = kernels::from_f<T>((to_f(x[c]) - mu) * r * to_f(w[c]) + to_f(b[c]));
    });
  }
};

/// Backward, input gradient: block i computes row i of din (kernels::layernorm_backward_row's values).
template <typename T>
struct LayerNormBackwardBlocks {
  T* din = nullptr;             ///< [N,C] (written)
  const T* dout = nullptr;      ///< [N,C]
  const T* in = nullptr;        ///< [N,C] the forward input
  const float* mean = nullptr;  ///< [N] forward cache
  const float* rstd = nullptr;  ///< [N] forward cache
  const T* w = nullptr;         ///< [C] gain
  int64_t N = 0;                ///< rows
  int64_t C = 0;                ///< width
  /// @return N, a block per row.
  ZT_HD int64_t blocks() const { return N; }
  /// The host form: the CPU kernel, a row at a time (the same sums). Host only.
  void host() const { kernels::layernorm_backward_input(din, dout, in, mean, rstd, w, N, C); }
  /// @return the arithmetic: 10 flops per element (g, xhat, two sums, the gradient).
  double flops() const { return 10.0 * static_cast<double>(N) * static_cast<double>(C); }
  /// @return the row's canonical-sum units.
  ZT_HD std::size_t shared_floats() const { return canonical_sum_floats(static_cast<std::size_t>(C)); }
  /// @param blk the block. @param i its row.
  template <typename Block>
  ZT_HD void operator()(Block& blk, int64_t i) const {
    using kernels::to_f;
    const T* x = in + i * C;
    const T* dy = dout + i * C;
    const float mu = mean[i], r = rstd[i];
    const auto n = static_cast<std::size_t>(C);
    const auto xhat = [&](std::size_t c) { return (to_f(x[c]) - mu) * r; };
    const auto g = [&](std::size_t c) { return to_f(dy[c]) * to_f(w[c]); };
    const float mean_g = block_canonical_sum(blk, blk.shared(), n, g) / C;
    const float mean_gx = block_canonical_sum(blk, blk.shared(), n, [&](std::size_t c) { return g(c) * xhat(c); }) / C;
    blk.each([&](uint32_t t) {
      for (std::size_t c = t; c < n; c += blk.threads())
        din[i * C + static_cast<int64_t>(c)] = kernels::from_f<T>(r * (g(c) - mean_g - xhat(c) * mean_gx));
    });
  }
};

/// Backward, gain and bias gradients: block k sums the columns [k W, k W + W) over the N rows,
/// dw[c] = sum_rows dy xhat and db[c] = sum_rows dy, each column its own canonical tree
/// (kernels::layernorm_param_grad_column's values), the tile's columns side by side in shared
/// memory so that neighbouring threads read neighbouring columns of a row (ops/block_reduce.h's
/// block_canonical_sums). W is 32 where the trees fit, fewer for very many rows.
template <typename T>
struct LayerNormParamGradTiles {
  T* dw = nullptr;                ///< [C] (written)
  T* db = nullptr;                ///< [C] (written)
  const T* dout = nullptr;        ///< [N,C]
  const T* in = nullptr;          ///< [N,C] the forward input
  const float* mean = nullptr;    ///< [N] forward cache
  const float* rstd = nullptr;    ///< [N] forward cache
  int64_t N = 0;                  ///< rows
  int64_t C = 0;                  ///< width
  float* host_scratch = nullptr;  ///< the host form's 2 N C floats (the leaves, a row at a time); unused by blocks
  /// The host form: the CPU kernel, the leaves a row at a time then the column sums a row at a
  /// time (the same tree per column). Host only.
  void host() const { kernels::layernorm_backward_params(dw, db, dout, in, mean, rstd, N, C, host_scratch); }
  /// @return the columns of one tile: as many column trees as fit in shared memory, 1 .. 32.
  ZT_HD int64_t tile() const {
    const auto per = static_cast<int64_t>(canonical_sum_floats(static_cast<std::size_t>(N)));
    const int64_t fit = static_cast<int64_t>(device::kMaxSharedFloats) / per;
    return fit < 1 ? 1 : (fit > 32 ? 32 : fit);
  }
  /// @return the arithmetic: 6 flops per element (xhat, dy xhat, two sums).
  double flops() const { return 6.0 * static_cast<double>(N) * static_cast<double>(C); }
  /// @return ceil(C / tile()), a block per tile.
  ZT_HD int64_t blocks() const { return (C + tile() - 1) / tile(); }
  /// @return the tile's canonical-sum units.
  ZT_HD std::size_t shared_floats() const { return canonical_sums_floats(tile(), static_cast<std::size_t>(N)); }
  /// @param blk the block. @param k its tile.
  template <typename Block>
  ZT_HD void operator()(Block& blk, int64_t k) const {
    using kernels::to_f;
    const int64_t c0 = k * tile(), W = c0 + tile() < C ? tile() : C - c0;
    const auto rows = static_cast<std::size_t>(N);
    const auto at = [&](int64_t c, std::size_t i) { return static_cast<int64_t>(i) * C + c0 + c; };
    block_canonical_sums(
        blk, blk.shared(), W, rows,
        [&](int64_t c, std::size_t i) {
          const int64_t e = at(c, i);
          return to_f(dout[e]) * ((to_f(in[e]) - mean[i]) * rstd[i]);
        },
        [&](int64_t c, float sum) { dw[c0 + c] = kernels::from_f<T>(sum); });
    block_canonical_sums(
        blk, blk.shared(), W, rows, [&](int64_t c, std::size_t i) { return to_f(dout[at(c, i)]); },
        [&](int64_t c, float sum) { db[c0 + c] = kernels::from_f<T>(sum); });
  }
};

}  // namespace zt::ops
