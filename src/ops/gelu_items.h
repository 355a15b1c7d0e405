// ops/gelu_items.h — GELU as item ops (device/item_grid.h): one thread per element, running
// kernels/gelu.h's element functions with the scalar tanh (the CPU kernel's array tanh has the
// same bits). y may be x, dx may be dy: each thread reads its element before writing it.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/gelu.h"

namespace zt::ops {

using kernels::gelu_backward_element;
using kernels::gelu_forward_element;

/// Forward: item i computes y[i] = gelu(x[i]).
template <typename T>
struct GeluForwardElements {
  T* y = nullptr;        ///< [n] (written)
  const T* x = nullptr;  ///< [n]
  int64_t n = 0;         ///< count
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { gelu_forward_element(y[i], x[i]); }
  /// The host form: the CPU kernel (its tanh a chunk at a time, the same bits). Host only.
  void host() const { kernels::gelu_forward(y, x, n); }
};

/// Backward: item i computes dx[i] = dy[i] gelu'(x[i]).
template <typename T>
struct GeluBackwardElements {
  T* dx = nullptr;        ///< [n] (written)
  const T* dy = nullptr;  ///< [n]
  const T* x = nullptr;   ///< [n] the forward input
  int64_t n = 0;          ///< count
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { gelu_backward_element(dx[i], dy[i], x[i]); }
  /// The host form: the CPU kernel (its tanh a chunk at a time, the same bits). Host only.
  void host() const { kernels::gelu_backward(dx, dy, x, n); }
};

}  // namespace zt::ops
