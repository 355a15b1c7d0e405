// kernels/embedding.h — token + position embedding, forward and backward.
//
//   forward:  x[b,t,:] = wte[token(b,t), :] + wpe[t, :]     (added in float, rounded once to T)
//   backward: dwpe[t,:] = sum_b dx[b,t,:]
//             dwte[v,:] = head_part[v,:] + sum_{(b,t): token(b,t) = v} dx[b,t,:]
// Each sum is the canonical tree over its positions taken in position order, in FP32. The tied
// head's contribution to wte arrives first (backward runs from the loss), already rounded to T in
// dwte; the embedding contribution is added to it in FP32 and the total rounded once more. Rows
// of tokens absent from the batch keep the head's part unchanged. The backward needs no parameter
// values, only the token ids. Not here: the head itself (a linear op with W = wte, no bias).
// The per-element work and the grouping are ZT_HD, run by the ops (ops/embedding_items.h): one
// GPU thread per output element forward, per (t, c) of dwpe and per (v, c) of dwte backward.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/check.h"
#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/residual.h"
#include "kernels/row_sum.h"
#include "kernels/tokens.h"

namespace zt::kernels {

/// Look up and add the embeddings.
/// @param out [B,T,C] result (written). @param tokens [B,T] input ids, each in [0, V).
/// @param wte [V,C] token table. @param wpe [>=T,C] position table.
/// @param vocab V, for the range check. @param C the width.
template <typename T>
void embedding_forward(T* out, const TokenView& tokens, const T* wte, const T* wpe, int64_t vocab, int64_t C) {
  // positions are independent: the rank's threads take blocks of them (core/cpu_pool.h); a bad id
  // is reported for the lowest position, as the serial loop would
  parallel_for(tokens.rows * tokens.cols, row_grain(C), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t b = n / tokens.cols, t = n % tokens.cols;
      const int32_t id = tokens.at(b, t);
      ZT_CHECK(id >= 0 && id < vocab, "token ", id, " at (", b, ",", t, ") is outside [0,", vocab, ")");
      T* o = out + n * C;
      const T* e = wte + static_cast<int64_t>(id) * C;
      const T* p = wpe + t * C;
      for (int64_t c = 0; c < C; ++c) o[c] = add_rounded(e[c], p[c]);
    }
  });
}

/// One output element of the forward (the GPU thread's body): out[n, c] for position n = b T + t.
/// A token outside [0, V) — an error on the CPU — gives NaN instead of a read out of bounds.
/// @param out [B,T,C] (element (n, c) written). @param tokens [B,T] ids. @param wte [V,C].
/// @param wpe [>=T,C]. @param vocab V. @param C width. @param n the position. @param c the column.
template <typename T>
ZT_HD void embedding_forward_element(T* out, const TokenView& tokens, const T* wte, const T* wpe, int64_t vocab,
                                     int64_t C, int64_t n, int64_t c) {
  const int32_t id = tokens.flat(n);
  const int64_t t = n % tokens.cols;
  out[n * C + c] = id >= 0 && id < vocab ? add_rounded(wte[static_cast<int64_t>(id) * C + c], wpe[t * C + c])
                                         : from_f<T>(bit_cast_hd<float>(0x7fc00000u));
}

/// Floats of scratch embedding_backward needs. @param B batch. @param Tc context. @param C width.
/// @return the count.
inline int64_t embedding_backward_scratch_floats(int64_t B, int64_t Tc, int64_t C) { return B * Tc * C; }
/// int32 scratch slots embedding_backward needs. @param B batch. @param Tc context.
/// @param vocab V. @return the count.
inline int64_t embedding_backward_scratch_ints(int64_t B, int64_t Tc, int64_t vocab) { return B * Tc + vocab + 1; }

/// Group the positions by token, each group in increasing position order (a counting sort): the
/// positions holding token v are order[start[v] .. start[v+1]). Sequential by nature; on the GPU
/// one thread runs it (it is O(N + V), small next to the sums it orders). Ids outside [0, V) are
/// left out of every group (the forward has already reported them).
/// @param start [V+1] group boundaries (written). @param order [N] positions (written).
/// @param tokens [B,T] the input ids. @param vocab V.
ZT_HD void embedding_group_positions(int32_t* start, int32_t* order, const TokenView& tokens, int64_t vocab) {
  const int64_t N = tokens.rows * tokens.cols;
  const auto valid = [&](int32_t id) { return id >= 0 && id < vocab; };
  for (int64_t v = 0; v <= vocab; ++v) start[v] = 0;
  for (int64_t n = 0; n < N; ++n)
    if (valid(tokens.flat(n))) ++start[tokens.flat(n) + 1];
  for (int64_t v = 0; v < vocab; ++v) start[v + 1] += start[v];
  for (int64_t n = 0; n < N; ++n)
    if (valid(tokens.flat(n))) order[start[tokens.flat(n)]++] = static_cast<int32_t>(n);
  for (int64_t v = vocab; v > 0; --v) start[v] = start[v - 1];
  start[0] = 0;
}

/// One element of the position table's gradient (the GPU thread's body): dwpe[t, c] = the
/// canonical sum over b of dx[b, t, c], the tree embedding_backward forms a row at a time.
/// @param dwpe [>=T,C] (element (t, c) written). @param dx [B,T,C]. @param B batch.
/// @param Tc context. @param C width. @param t the position. @param c the column.
template <typename T>
ZT_HD void embedding_dwpe_element(T* dwpe, const T* dx, int64_t B, int64_t Tc, int64_t C, int64_t t, int64_t c) {
  dwpe[t * C + c] = from_f<T>(canonical_sum_f(static_cast<std::size_t>(B), [&](std::size_t b) {
    return to_f(dx[(static_cast<int64_t>(b) * Tc + t) * C + c]);
  }));
}

/// One element of the token table's gradient (the GPU thread's body): dwte[v, c] plus the
/// canonical sum over the positions of token v, in position order (from embedding_group_positions),
/// rounded once; left unchanged when v does not occur.
/// @param dwte [V,C] (element (v, c) updated). @param dx [B,T,C]. @param start [V+1] and
/// @param order [N] the groups. @param C width. @param v the token. @param c the column.
template <typename T>
ZT_HD void embedding_dwte_element(T* dwte, const T* dx, const int32_t* start, const int32_t* order, int64_t C,
                                  int64_t v, int64_t c) {
  const int32_t first = start[v], count = start[v + 1] - start[v];
  if (count == 0) return;
  const float s = canonical_sum_f(static_cast<std::size_t>(count), [&](std::size_t i) {
    return to_f(dx[static_cast<int64_t>(order[first + static_cast<int64_t>(i)]) * C + c]);
  });
  dwte[v * C + c] = from_f<T>(to_f(dwte[v * C + c]) + s);
}

/// Gradients of the embedding tables (see the file comment for the order of every sum).
/// @param dwte [V,C]: on entry the head's contribution, on exit the full gradient.
/// @param dwpe [>=T,C]: rows 0..T-1 written. @param dx [B,T,C] gradient of the output.
/// @param tokens [B,T] the input ids. @param vocab V. @param C width.
/// @param scratch embedding_backward_scratch_floats() floats.
/// @param iscratch embedding_backward_scratch_ints() ints.
template <typename T>
void embedding_backward(T* dwte, T* dwpe, const T* dx, const TokenView& tokens, int64_t vocab, int64_t C,
                        float* scratch, int32_t* iscratch) {
  const int64_t B = tokens.rows, Tc = tokens.cols, N = B * Tc;
  // The sums a whole row at a time (vectorisable), the trees of embedding_dwpe_element and
  // embedding_dwte_element.
  // Each position t (and below, each token v) sums its own rows of the scratch: the rank's threads
  // take blocks of them (core/cpu_pool.h), every sum's tree unchanged.
  widen_into(scratch, dx, N * C);
  parallel_for(Tc, row_grain(B * C), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const float* s = canonical_rows_sum_inplace(scratch, C, C, static_cast<std::size_t>(B),
                                                  [&](std::size_t b) { return b * Tc + t; });
      narrow(dwpe + t * C, s, static_cast<std::size_t>(C));
    }
  });
  int32_t* start = iscratch;              // [V+1] group boundaries
  int32_t* order = iscratch + vocab + 1;  // [N] positions grouped by token
  embedding_group_positions(start, order, tokens, vocab);
  widen_into(scratch, dx, N * C);
  parallel_for(vocab, std::max<int64_t>(1, vocab * row_grain(C) / std::max<int64_t>(N, 1)),
               [&](int64_t v0, int64_t v1) {
                 for (int64_t v = v0; v < v1; ++v) {
                   const int32_t first = start[v], count = start[v + 1] - start[v];
                   if (count == 0) continue;
                   const float* s = canonical_rows_sum_inplace(scratch, C, C, static_cast<std::size_t>(count),
                                                               [&](std::size_t i) { return order[first + i]; });
                   T* g = dwte + v * C;
                   for (int64_t c = 0; c < C; ++c) g[c] = from_f<T>(to_f(g[c]) + s[c]);
                 }
               });
}

}  // namespace zt::kernels
