// kernels/parallel_linear.h — the two Linear layers of tensor parallelism (Megatron-LM, Shoeybi
// et al. 2019), written for any number of column or row blocks, so that one device with Q blocks
// and N_m devices with Q/N_m blocks each run the same GEMM calls.
//
// A Linear y = x W^T + b (W [out, in]) split into Q blocks two ways:
//   column-parallel: block j owns out/Q output features: y_j = x W_j^T + b_j, W_j [out/Q, in].
//     Nothing is summed: every output element is one block's. Its backward sums: the input
//     gradient dx = Σ_j dy_j W_j over blocks (a sum over all Q blocks, some of them elsewhere).
//   row-parallel: block j owns in/Q input features: y = Σ_j x_j W_j^T + b, W_j [out, in/Q].
//     The forward sums over blocks; its backward does not (dx_j = dy W_j, dW_j = dy^T x_j).
// Every sum over blocks is FP32 and follows the canonical tree over the Q blocks: the blocks held
// here are summed along their subtree (they are an aligned, contiguous run of Q/N_m blocks, Q and
// N_m powers of two), and `finish_sum` completes the tree over whoever holds the rest (a
// deterministic all-reduce over the model-parallel group, or nothing on one device). The bias is
// added after the sum, once, and the result rounded once to T — so a layer with one block makes
// exactly linear.h's calls and bits.
//
// The bits are independent of N_m because each block's GEMM is the same call (M, N, K, transposes,
// contiguous operands with the same leading dimensions) whoever runs it, and OpenBLAS gives the
// same bits for the same call on the same values (tests/kernels/test_parallel_linear.cc checks it
// for this build's kernel, buffer addresses varied). Operands that are strided in the caller's
// layout are copied into contiguous FP32 scratch first.
//
// Layouts (the caller's): a column-parallel output of G groups (c_attn: q, k, v; c_fc: 1) is
// [N, G · J · outb] with group g's block j at columns (g·J + j)·outb; W_j's rows are the groups'
// rows of block j, group by group ([q_j; k_j; v_j] for c_attn). A row-parallel input is
// [N, J · inb], block j at columns j·inb. J = blocks held here; outb, inb per block and group.
// These kernels know no ranks: which blocks are "here" is the caller's, and so is finish_sum.
// The rank's threads (core/cpu_pool.h) split the GEMMs by tiles of C and the copies, casts and
// bias epilogues by rows or elements; none of them splits a sum, so the bits do not depend on T.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "kernels/blas.h"
#include "kernels/cast.h"
#include "kernels/linear.h"
#include "kernels/row_sum.h"

namespace zt::kernels {

/// Completes a sum over blocks: called with this device's FP32 partial sum (its blocks, summed
/// along their subtree) and returns with the sum over every block in the same place.
using FinishBlockSum = std::function<void(float* partial, std::size_t n)>;

namespace detail {

// rows [N, w] of a strided matrix (columns [col, col + w) of rows of length ld) into contiguous
// FP32 [N, w]
template <typename T>
void gather_cols_f(float* dst, const T* src, int64_t N, int64_t ld, int64_t col, int64_t w) {
  parallel_for(N, row_grain(w), [&](int64_t lo, int64_t hi) {  // rows split over the rank's threads
    for (int64_t i = lo; i < hi; ++i) widen_into(dst + i * w, src + i * ld + col, w);
  });
}

// the canonical tree over J partial sums of n floats each, in place; the result is partials[0]
inline void sum_blocks_inplace(float* partials, std::size_t n, int64_t J) {
  if (J > 1)
    canonical_rows_sum_inplace(partials, static_cast<int64_t>(n), static_cast<int64_t>(n), static_cast<std::size_t>(J),
                               [](std::size_t j) { return j; });
}

}  // namespace detail

/// One block's weights of a parallel Linear (row-major, contiguous).
template <typename T>
struct LinearBlock {
  const T* W = nullptr;  ///< column-parallel [G·outb, in]; row-parallel [out, inb]
  const T* b = nullptr;  ///< column-parallel [G·outb], or nullptr; row-parallel: unused
};

/// Gradient slots of one block (written).
template <typename T>
struct LinearBlockGrad {
  T* dW = nullptr;  ///< as LinearBlock::W
  T* db = nullptr;  ///< column-parallel [G·outb], or nullptr
};

/// Floats of scratch column_parallel_forward needs (linear.h's count for one block).
/// @param N rows. @param in input width. @param G groups. @param outb outputs per block and group.
/// @param narrow_type true for a 16-bit compute type. @return the count.
inline int64_t column_parallel_forward_floats(int64_t N, int64_t in, int64_t G, int64_t outb, bool narrow_type) {
  const int64_t ob = G * outb;
  return N * ob + (narrow_type ? N * in + ob * in : 0);
}
/// Floats of scratch column_parallel_backward needs (linear.h's count for one block).
/// @param N rows. @param in input width. @param G groups. @param outb per block and group.
/// @param J blocks held here. @param narrow_type true for a 16-bit compute type. @return the count.
inline int64_t column_parallel_backward_floats(int64_t N, int64_t in, int64_t G, int64_t outb, int64_t J,
                                               bool narrow_type) {
  const int64_t ob = G * outb;
  return N * ob + (narrow_type ? 2 * ob * in + N * in : 0) + (J > 1 || narrow_type ? J * N * in : 0);
}
/// Floats of scratch row_parallel_forward needs (linear.h's count for one block).
/// @param N rows. @param inb inputs per block. @param out output width. @param J blocks held here.
/// @param narrow_type true for a 16-bit compute type. @return the count.
inline int64_t row_parallel_forward_floats(int64_t N, int64_t inb, int64_t out, int64_t J, bool narrow_type) {
  return J * N * out + (narrow_type || J > 1 ? N * inb : 0) + (narrow_type ? out * inb : 0);
}
/// Floats of scratch row_parallel_backward needs (linear.h's count for one block).
/// @param N rows. @param inb inputs per block. @param out output width. @param J blocks held here.
/// @param narrow_type true for a 16-bit compute type. @return the count.
inline int64_t row_parallel_backward_floats(int64_t N, int64_t inb, int64_t out, int64_t J, bool narrow_type) {
  return N * out + (narrow_type ? 2 * out * inb : 0) + (narrow_type || J > 1 ? 2 * N * inb : 0);
}

/// Column-parallel forward: y_j = x W_j^T + b_j for the J blocks here.
/// @param y [N, G·J·outb] (written, layout above). @param x [N, in]. @param blocks J blocks.
/// @param N rows. @param in input width. @param G groups. @param outb outputs per block and group.
/// @param scratch column_parallel_forward_floats() floats.
template <typename T>
void column_parallel_forward(T* y, const T* x, const std::vector<LinearBlock<T>>& blocks, int64_t N, int64_t in,
                             int64_t G, int64_t outb, float* scratch) {
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const auto J = static_cast<int64_t>(blocks.size());
  const int64_t ob = G * outb, ld = G * J * outb;
  float* y_f = scratch;
  float* x_stage = y_f + N * ob;
  float* W_stage = x_stage + (kNarrow ? N * in : 0);
  const float* x_f = widen(x, static_cast<std::size_t>(N * in), x_stage);
  for (int64_t j = 0; j < J; ++j) {
    const float* W_f = widen(blocks[j].W, static_cast<std::size_t>(ob * in), W_stage);
    gemm_f32(false, true, N, ob, in, x_f, in, W_f, in, y_f, ob);
    // group g's outb columns go to column (g·J + j)·outb of y (one run per row when J = 1)
    if (J == 1)
      bias_narrow_rows(y, ld, 0, y_f, blocks[j].b, N, 1, ob);
    else
      bias_narrow_rows(y + j * outb, ld, J * outb, y_f, blocks[j].b, N, G, outb);
  }
}

/// Column-parallel backward: dW_j = dy_j^T x, db_j = Σ_rows dy_j, and the input gradient
/// dx = Σ over all Q blocks of dy_j W_j (this device's blocks, then finish_sum).
/// @param dx [N, in] (written). @param grads J gradient slots. @param dy [N, G·J·outb].
/// @param x [N, in] forward input. @param blocks J blocks. @param N rows. @param in input width.
/// @param G groups. @param outb per block and group. @param finish_sum completes the block sum
/// (may be empty: every block is here). @param scratch column_parallel_backward_floats() floats.
template <typename T>
void column_parallel_backward(T* dx, const std::vector<LinearBlockGrad<T>>& grads, const T* dy, const T* x,
                              const std::vector<LinearBlock<T>>& blocks, int64_t N, int64_t in, int64_t G, int64_t outb,
                              const FinishBlockSum& finish_sum, float* scratch) {
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const auto J = static_cast<int64_t>(blocks.size());
  const int64_t ob = G * outb, ld = G * J * outb;
  float* dy_f = scratch;  // a private copy: the bias sum consumes it
  float* W_stage = dy_f + N * ob;
  float* x_stage = W_stage + (kNarrow ? ob * in : 0);
  float* dW_stage = x_stage + (kNarrow ? N * in : 0);
  float* partials = dW_stage + (kNarrow ? ob * in : 0);             // J × [N, in]
  if (J == 1 && !kNarrow) partials = reinterpret_cast<float*>(dx);  // as linear.h: straight into dx
  const float* x_f = widen(x, static_cast<std::size_t>(N * in), x_stage);
  for (int64_t j = 0; j < J; ++j) {
    if (J == 1) {  // every group's columns are already side by side
      widen_into(dy_f, dy, N * ob);
    } else {
      parallel_for(N, row_grain(ob), [&](int64_t lo, int64_t hi) {  // block j's columns of every group
        for (int64_t i = lo; i < hi; ++i)
          for (int64_t g = 0; g < G; ++g) widen_into(dy_f + i * ob + g * outb, dy + i * ld + (g * J + j) * outb, outb);
      });
    }
    const float* W_f = widen(blocks[j].W, static_cast<std::size_t>(ob * in), W_stage);
    float* dW_f = kNarrow ? dW_stage : reinterpret_cast<float*>(grads[j].dW);
    gemm_f32(false, false, N, in, ob, dy_f, ob, W_f, in, partials + j * N * in, in);
    gemm_f32(true, false, ob, in, N, dy_f, ob, x_f, in, dW_f, in);
    narrow(grads[j].dW, dW_f, static_cast<std::size_t>(ob * in));
    if (grads[j].db) {
      const float* s = canonical_columns_sum_inplace(dy_f, ob, N);
      narrow(grads[j].db, s, static_cast<std::size_t>(ob));
    }
  }
  detail::sum_blocks_inplace(partials, static_cast<std::size_t>(N * in), J);
  if (finish_sum) finish_sum(partials, static_cast<std::size_t>(N * in));
  narrow(dx, partials, static_cast<std::size_t>(N * in));
}

/// Row-parallel forward: y = Σ over all Q blocks of x_j W_j^T, plus b, rounded once.
/// @param y [N, out] (written). @param x [N, J·inb] (block j at columns j·inb). @param blocks J
/// blocks (W_j [out, inb]). @param b [out] or nullptr (added after the full sum).
/// @param N rows. @param inb inputs per block. @param out output width.
/// @param finish_sum completes the block sum (may be empty).
/// @param scratch row_parallel_forward_floats() floats.
template <typename T>
void row_parallel_forward(T* y, const T* x, const std::vector<LinearBlock<T>>& blocks, const T* b, int64_t N,
                          int64_t inb, int64_t out, const FinishBlockSum& finish_sum, float* scratch) {
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const auto J = static_cast<int64_t>(blocks.size());
  float* partials = scratch;  // J × [N, out]
  float* x_stage = partials + J * N * out;
  float* W_stage = x_stage + (kNarrow || J > 1 ? N * inb : 0);
  for (int64_t j = 0; j < J; ++j) {
    const float* x_f = x_stage;
    if (J == 1)
      x_f = widen(x, static_cast<std::size_t>(N * inb), x_stage);  // contiguous already
    else
      detail::gather_cols_f(x_stage, x, N, J * inb, j * inb, inb);
    const float* W_f = widen(blocks[j].W, static_cast<std::size_t>(out * inb), W_stage);
    gemm_f32(false, true, N, out, inb, x_f, inb, W_f, inb, partials + j * N * out, out);
  }
  detail::sum_blocks_inplace(partials, static_cast<std::size_t>(N * out), J);
  if (finish_sum) finish_sum(partials, static_cast<std::size_t>(N * out));
  bias_narrow_rows(y, out, 0, partials, b, N, 1, out);
}

/// Row-parallel backward: dx_j = dy W_j, dW_j = dy^T x_j, db = Σ_rows dy (no sum over blocks).
/// @param dx [N, J·inb] (written, block j at columns j·inb). @param grads J slots (dW_j).
/// @param db [out] (written) or nullptr. @param dy [N, out]. @param x [N, J·inb] forward input.
/// @param blocks J blocks. @param N rows. @param inb per block. @param out output width.
/// @param scratch row_parallel_backward_floats() floats.
template <typename T>
void row_parallel_backward(T* dx, const std::vector<LinearBlockGrad<T>>& grads, T* db, const T* dy, const T* x,
                           const std::vector<LinearBlock<T>>& blocks, int64_t N, int64_t inb, int64_t out,
                           float* scratch) {
  constexpr bool kNarrow = !std::is_same_v<T, float>;
  const auto J = static_cast<int64_t>(blocks.size());
  const bool staged = kNarrow || J > 1;  // x and dx go through contiguous FP32 copies
  float* dy_f = scratch;                 // a private copy: the bias sum consumes it
  float* W_stage = dy_f + N * out;
  float* x_stage = W_stage + (kNarrow ? out * inb : 0);
  float* dx_stage = x_stage + (staged ? N * inb : 0);
  float* dW_stage = dx_stage + (staged ? N * inb : 0);
  widen_into(dy_f, dy, N * out);
  for (int64_t j = 0; j < J; ++j) {
    const float* W_f = widen(blocks[j].W, static_cast<std::size_t>(out * inb), W_stage);
    const float* x_f = x_stage;
    if (J == 1)
      x_f = widen(x, static_cast<std::size_t>(N * inb), x_stage);
    else
      detail::gather_cols_f(x_stage, x, N, J * inb, j * inb, inb);
    float* dx_f = staged ? dx_stage : reinterpret_cast<float*>(dx);
    float* dW_f = kNarrow ? dW_stage : reinterpret_cast<float*>(grads[j].dW);
    gemm_f32(false, false, N, inb, out, dy_f, out, W_f, inb, dx_f, inb);
    gemm_f32(true, false, out, inb, N, dy_f, out, x_f, inb, dW_f, inb);
    if (J == 1) {
      narrow(dx, dx_f, static_cast<std::size_t>(N * inb));  // contiguous: one split over the elements
    } else {
      parallel_for(N, row_grain(inb), [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          narrow(dx + i * J * inb + j * inb, dx_f + i * inb, static_cast<std::size_t>(inb));
      });
    }
    narrow(grads[j].dW, dW_f, static_cast<std::size_t>(out * inb));
  }
  if (db) {
    const float* s = canonical_columns_sum_inplace(dy_f, out, N);
    narrow(db, s, static_cast<std::size_t>(out));
  }
}

}  // namespace zt::kernels
