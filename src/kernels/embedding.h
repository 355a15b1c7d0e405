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
#pragma once

#include <cstdint>
#include <cstring>

#include "core/check.h"
#include "kernels/cast.h"
#include "kernels/row_sum.h"
#include "kernels/tokens.h"

namespace zt::kernels {

/// Look up and add the embeddings.
/// @param out [B,T,C] result (written). @param tokens [B,T] input ids, each in [0, V).
/// @param wte [V,C] token table. @param wpe [>=T,C] position table.
/// @param vocab V, for the range check. @param C the width.
template <typename T>
void embedding_forward(T* out, const TokenView& tokens, const T* wte, const T* wpe, int64_t vocab, int64_t C) {
  for (int64_t b = 0; b < tokens.rows; ++b) {
    for (int64_t t = 0; t < tokens.cols; ++t) {
      const int32_t id = tokens.at(b, t);
      ZT_CHECK(id >= 0 && id < vocab, "token ", id, " at (", b, ",", t, ") is outside [0,", vocab, ")");
      T* o = out + (b * tokens.cols + t) * C;
      const T* e = wte + static_cast<int64_t>(id) * C;
      const T* p = wpe + t * C;
      for (int64_t c = 0; c < C; ++c) o[c] = from_f<T>(to_f(e[c]) + to_f(p[c]));
    }
  }
}

/// Floats of scratch embedding_backward needs. @param B batch. @param Tc context. @param C width.
/// @return the count.
inline int64_t embedding_backward_scratch_floats(int64_t B, int64_t Tc, int64_t C) { return B * Tc * C; }
/// int32 scratch slots embedding_backward needs. @param B batch. @param Tc context.
/// @param vocab V. @return the count.
inline int64_t embedding_backward_scratch_ints(int64_t B, int64_t Tc, int64_t vocab) { return B * Tc + vocab + 1; }

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
  for (int64_t n = 0; n < N * C; ++n) scratch[n] = to_f(dx[n]);
  for (int64_t t = 0; t < Tc; ++t) {
    const float* s = canonical_rows_sum_inplace(scratch, C, C, static_cast<std::size_t>(B),
                                                [&](std::size_t b) { return b * Tc + t; });
    narrow(dwpe + t * C, s, static_cast<std::size_t>(C));
  }
  // Group positions by token, each group in increasing position order (a counting sort).
  int32_t* start = iscratch;              // [V+1] group boundaries
  int32_t* order = iscratch + vocab + 1;  // [N] positions grouped by token
  for (int64_t v = 0; v <= vocab; ++v) start[v] = 0;
  for (int64_t n = 0; n < N; ++n) ++start[tokens.flat(n) + 1];
  for (int64_t v = 0; v < vocab; ++v) start[v + 1] += start[v];
  for (int64_t n = 0; n < N; ++n) order[start[tokens.flat(n)]++] = static_cast<int32_t>(n);
  for (int64_t v = vocab; v > 0; --v) start[v] = start[v - 1];
  start[0] = 0;
  for (int64_t n = 0; n < N * C; ++n) scratch[n] = to_f(dx[n]);
  for (int64_t v = 0; v < vocab; ++v) {
    const int32_t first = start[v], count = start[v + 1] - start[v];
    if (count == 0) continue;
    const float* s = canonical_rows_sum_inplace(scratch, C, C, static_cast<std::size_t>(count),
                                                [&](std::size_t i) { return order[first + i]; });
    T* g = dwte + v * C;
    for (int64_t c = 0; c < C; ++c) g[c] = from_f<T>(to_f(g[c]) + s[c]);
  }
}

}  // namespace zt::kernels
