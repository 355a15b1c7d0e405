// kernels/cross_entropy.h — softmax cross-entropy over V classes per position: forward (per-token
// FP32 loss) and backward (gradient of the logits, times a seed grad_scale).
//
//   m = max_j l_j     s = sum_j exp(l_j - m)     loss = m + log s - l_y
//   dl_j = grad_scale * (exp(l_j - m)/s - [j = y])
// The logits are the T-typed output of the head GEMM; everything here is FP32. m and s are
// cached so the backward recomputes exactly the forward's probabilities. s is a canonical tree
// sum; exp and log are kernels/math.h's (exp a chunk at a time through kernels/math_array.h,
// the same bits). Also the argmax of each row, for accuracy metrics.
// The per-row and per-logit work is ZT_HD, run by the ops (ops/cross_entropy_*.h) with the
// scalar exp_f: one GPU thread per position forward, one per logit backward.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/check.h"
#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/math.h"
#include "kernels/math_array.h"
#include "kernels/row_sum.h"
#include "kernels/tokens.h"

namespace zt::kernels {

/// Logits per chunk whose exp is evaluated at once (kernels/math_array.h) in a stack buffer.
inline constexpr std::size_t kCrossEntropyChunk = 256;

/// The largest of a row's V logits, in FP32, scanning left to right (shared by the CPU row loop
/// and the GPU row thread). @param l [V] the row. @param V classes (>= 1). @return the maximum.
template <typename T>
ZT_HD float logits_row_max(const T* l, int64_t V) {
  float m = to_f(l[0]);
  for (int64_t j = 1; j < V; ++j) m = to_f(l[j]) > m ? to_f(l[j]) : m;
  return m;
}

/// The loss of one position from its row's maximum, sum of exponentials and target logit.
/// @param m the row maximum. @param s sum_j exp(l_j - m). @param target_logit l_y.
/// @return m + log s - l_y.
ZT_HD float cross_entropy_loss_from(float m, float s, float target_logit) { return (m + log_f(s)) - target_logit; }

/// The FP32 gradient of one logit: grad_scale (p_j - [j = y]) with p_j = e / s.
/// @param e exp(l_j - m). @param s the row's sum of exponentials. @param is_target j = y.
/// @param grad_scale the seed gradient. @return the gradient, before rounding to T.
ZT_HD float cross_entropy_grad_from(float e, float s, bool is_target, float grad_scale) {
  const float p = e / s;
  return (p - (is_target ? 1.0f : 0.0f)) * grad_scale;
}

/// One position of the forward with the scalar exp (the GPU thread's body; the CPU kernel below
/// takes the same leaves a chunk at a time through exp_f_n). A target outside [0, V) — which the
/// CPU kernel reports as an error before it gets here — gives a NaN loss rather than a read out of
/// bounds, so a bad batch on the device is loud too.
/// @param loss the position's loss (written). @param row_max and @param row_sum the row's caches
/// (written). @param l [V] the row's logits. @param y the target id. @param V classes.
template <typename T>
ZT_HD void cross_entropy_forward_row(float& loss, float& row_max, float& row_sum, const T* l, int32_t y, int64_t V) {
  const float m = logits_row_max(l, V);
  const float s = canonical_sum_f(static_cast<std::size_t>(V), [&](std::size_t j) { return exp_f(to_f(l[j]) - m); });
  row_max = m;
  row_sum = s;
  loss = y >= 0 && y < V ? cross_entropy_loss_from(m, s, to_f(l[y])) : bit_cast_hd<float>(0x7fc00000u);
}

/// Per-position cross-entropy.
/// @param loss [N] FP32 per-position losses (written). @param row_max [N] cache (written).
/// @param row_sum [N] cache (written). @param logits [N,V]. @param targets [B,T] ids (N = B*T),
/// each in [0,V). @param V classes.
template <typename T>
void cross_entropy_forward(float* loss, float* row_max, float* row_sum, const T* logits, const TokenView& targets,
                           int64_t V) {
  const int64_t N = targets.rows * targets.cols;
  // positions are independent: the rank's threads take blocks of rows (core/cpu_pool.h); a bad
  // target is reported for the lowest position, as the serial loop would
  parallel_for(N, row_grain(V), [&](int64_t n0, int64_t n1) {
    float e[kCrossEntropyChunk];
    for (int64_t n = n0; n < n1; ++n) {
      const int32_t y = targets.flat(n);
      ZT_CHECK(y >= 0 && y < V, "target ", y, " at position ", n, " is outside [0,", V, ")");
      const T* l = logits + n * V;
      const float m = logits_row_max(l, V);
      // Leaf j is exp_f(l_j - m); the leaves are computed a chunk at a time through exp_f_n (same
      // bits) and handed to the tree from the chunk, so the sum's order is unchanged.
      std::size_t first = 0, end = 0;
      const auto leaf = [&](std::size_t j) {
        if (j < first || j >= end) {
          first = j - j % kCrossEntropyChunk;
          end = first + kCrossEntropyChunk < static_cast<std::size_t>(V) ? first + kCrossEntropyChunk
                                                                         : static_cast<std::size_t>(V);
          for (std::size_t q = first; q < end; ++q) e[q - first] = to_f(l[q]) - m;
          exp_f_n(e, e, end - first);
        }
        return e[j - first];
      };
      const float s = canonical_sum_f(static_cast<std::size_t>(V), leaf);
      row_max[n] = m;
      row_sum[n] = s;
      loss[n] = cross_entropy_loss_from(m, s, to_f(l[y]));
    }
  });
}

/// The gradient of one logit from the forward's caches (the GPU thread's body, one thread per
/// logit; the CPU kernel below takes the exponentials a chunk at a time, the same bits).
/// @param d the logit's gradient (written). @param l_j the logit. @param m and @param s the row's
/// caches. @param is_target whether j is the row's target. @param grad_scale the seed gradient.
template <typename T>
ZT_HD void cross_entropy_backward_element(T& d, T l_j, float m, float s, bool is_target, float grad_scale) {
  d = from_f<T>(cross_entropy_grad_from(exp_f(to_f(l_j) - m), s, is_target, grad_scale));
}

/// Gradient of grad_scale * (sum of the per-position losses) with respect to the logits.
/// @param dlogits [N,V] (written). @param logits [N,V]. @param row_max [N] and @param row_sum [N]
/// the forward caches. @param targets [B,T] ids. @param V classes.
/// @param grad_scale the seed gradient of every position's loss.
template <typename T>
void cross_entropy_backward(T* dlogits, const T* logits, const float* row_max, const float* row_sum,
                            const TokenView& targets, int64_t V, float grad_scale) {
  const int64_t N = targets.rows * targets.cols;
  parallel_for(N, row_grain(V), [&](int64_t n0, int64_t n1) {
    float e[kCrossEntropyChunk];
    for (int64_t n = n0; n < n1; ++n) {
      const int32_t y = targets.flat(n);
      const T* l = logits + n * V;
      T* d = dlogits + n * V;
      for (int64_t j0 = 0; j0 < V; j0 += static_cast<int64_t>(kCrossEntropyChunk)) {
        const int64_t len =
            V - j0 < static_cast<int64_t>(kCrossEntropyChunk) ? V - j0 : static_cast<int64_t>(kCrossEntropyChunk);
        for (int64_t q = 0; q < len; ++q) e[q] = to_f(l[j0 + q]) - row_max[n];
        exp_f_n(e, e, static_cast<std::size_t>(len));
        for (int64_t q = 0; q < len; ++q)
          d[j0 + q] = from_f<T>(cross_entropy_grad_from(e[q], row_sum[n], j0 + q == y, grad_scale));
      }
    }
  });
}

/// Index of the largest logit of each row (the lowest index among equals).
/// @param out [N] (written). @param logits [N,V]. @param N rows. @param V classes.
template <typename T>
void argmax_rows(int32_t* out, const T* logits, int64_t N, int64_t V) {
  for (int64_t n = 0; n < N; ++n) {
    const T* l = logits + n * V;
    int64_t best = 0;
    for (int64_t j = 1; j < V; ++j) best = to_f(l[j]) > to_f(l[best]) ? j : best;
    out[n] = static_cast<int32_t>(best);
  }
}

}  // namespace zt::kernels
