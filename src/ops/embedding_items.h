// ops/embedding_items.h — the token + position embedding as item ops (device/item_grid.h).
//
// Forward: one thread per output element. Backward: one thread per element of the position
// table's gradient (a sum over the batch), a single thread that groups the positions by token
// (the CPU's counting sort, sequential by nature), then one thread per element of the token
// table's gradient, summing its token's positions in the order the grouping gives. Three
// launches, in that order on one stream; the bodies are kernels/embedding.h's, the functions the
// CPU kernel's order is proven against.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/embedding.h"
#include "kernels/tokens.h"

namespace zt::ops {

using kernels::embedding_dwpe_element;
using kernels::embedding_dwte_element;
using kernels::embedding_forward_element;
using kernels::TokenView;

/// Forward: item e = n C + c computes out[n, c] (kernels::embedding_forward_element).
template <typename T>
struct EmbeddingForwardElements {
  T* out = nullptr;        ///< [B,T,C] (written)
  TokenView tokens;        ///< [B,T] ids
  const T* wte = nullptr;  ///< [V,C]
  const T* wpe = nullptr;  ///< [>=T,C]
  int64_t vocab = 0;       ///< V
  int64_t C = 0;           ///< width
  /// @return B T C, one thread per output element.
  ZT_HD int64_t items() const { return tokens.rows * tokens.cols * C; }
  /// @param e the element's flat index.
  ZT_HD void operator()(int64_t e) const { embedding_forward_element(out, tokens, wte, wpe, vocab, C, e / C, e % C); }
  /// The host form: the CPU kernel, a row at a time (the same sums). Host only.
  void host() const { kernels::embedding_forward(out, tokens, wte, wpe, vocab, C); }
};

/// Backward, position table: item e = t C + c computes dwpe[t, c] (kernels::embedding_dwpe_element).
template <typename T>
struct EmbeddingDwpeElements {
  T* dwpe = nullptr;      ///< [>=T,C] (rows 0..T-1 written)
  const T* dx = nullptr;  ///< [B,T,C]
  int64_t B = 0;          ///< batch
  int64_t Tc = 0;         ///< context
  int64_t C = 0;          ///< width
  /// @return T C, one thread per element.
  ZT_HD int64_t items() const { return Tc * C; }
  /// @param e the element's flat index.
  ZT_HD void operator()(int64_t e) const { embedding_dwpe_element(dwpe, dx, B, Tc, C, e / C, e % C); }
};

/// Backward, grouping: one item runs kernels::embedding_group_positions.
struct EmbeddingGroupPositions {
  int32_t* start = nullptr;  ///< [V+1] group boundaries (written)
  int32_t* order = nullptr;  ///< [N] positions grouped by token (written)
  TokenView tokens;          ///< [B,T] ids
  int64_t vocab = 0;         ///< V
  /// @return 1: the counting sort is one sequential pass.
  ZT_HD int64_t items() const { return 1; }
  /// @param i always 0.
  ZT_HD void operator()(int64_t i) const {
    (void)i;
    embedding_group_positions(start, order, tokens, vocab);
  }
};

/// Backward, token table: item e = v C + c adds token v's sum to dwte[v, c]
/// (kernels::embedding_dwte_element), after EmbeddingGroupPositions.
template <typename T>
struct EmbeddingDwteElements {
  T* dwte = nullptr;               ///< [V,C]: on entry the head's part, on exit the full gradient
  const T* dx = nullptr;           ///< [B,T,C]
  const int32_t* start = nullptr;  ///< [V+1] group boundaries
  const int32_t* order = nullptr;  ///< [N] positions grouped by token
  int64_t vocab = 0;               ///< V
  int64_t C = 0;                   ///< width
  /// @return V C, one thread per element.
  ZT_HD int64_t items() const { return vocab * C; }
  /// @param e the element's flat index.
  ZT_HD void operator()(int64_t e) const { embedding_dwte_element(dwte, dx, start, order, C, e / C, e % C); }
};

}  // namespace zt::ops
