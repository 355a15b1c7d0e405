// kernels/tokens.h — a read-only view of a [B, T] grid of token ids inside a larger array.
//
// A batch arrives as [B, T+1] tokens (inputs are columns 0..T-1, targets columns 1..T); both are
// the same kind of view with a row stride of T+1. Not an owning container.
// ZT_HD, so a GPU kernel reads token ids through the same view (pointing at device memory).
#pragma once

#include <cstdint>

#include "fp/hd.h"

namespace zt::kernels {

/// B rows of T token ids, row b starting at data + b * stride.
struct TokenView {
  const int32_t* data = nullptr;  ///< first token of row 0
  int64_t rows = 0;               ///< B
  int64_t cols = 0;               ///< T
  int64_t stride = 0;             ///< elements between the starts of consecutive rows

  /// Token at (b, t). @param b row. @param t column. @return the id.
  ZT_HD int32_t at(int64_t b, int64_t t) const { return data[b * stride + t]; }
  /// Token at flat position n = b * T + t. @param n the position. @return the id.
  ZT_HD int32_t flat(int64_t n) const { return at(n / cols, n % cols); }
};

}  // namespace zt::kernels
