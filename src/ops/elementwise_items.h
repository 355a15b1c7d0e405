// ops/elementwise_items.h — the element-wise ops without arithmetic of their own as item
// ops (device/item_grid.h), one thread per element: the residual add (kernels/residual.h; the
// backward join is the add with out = a = skip), and casts between float and the 16-bit formats
// (kernels/cast.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "fp/bulk_convert.h"
#include "fp/hd.h"
#include "kernels/cast.h"
#include "kernels/residual.h"

namespace zt::ops {

using kernels::add_rounded;
using kernels::from_f;
using kernels::to_f;

/// Residual forward: item i computes out[i] = a[i] + b[i] (out may alias a or b).
template <typename T>
struct ResidualForwardElements {
  T* out = nullptr;      ///< [n] (written)
  const T* a = nullptr;  ///< [n]
  const T* b = nullptr;  ///< [n]
  int64_t n = 0;         ///< count
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { out[i] = add_rounded(a[i], b[i]); }
  /// The host form: the CPU kernel (fp16 a chunk at a time through F16C, the same bits). Host only.
  void host() const { kernels::residual_forward(out, a, b, n); }
};

/// Cast: item i computes dst[i] = src[i] widened to float and rounded once to To (kernels::to_f,
/// kernels::from_f): float to fp16/bf16 rounds to nearest even, fp16/bf16 to float is exact.
template <typename To, typename From>
struct CastElements {
  To* dst = nullptr;          ///< [n] (written)
  const From* src = nullptr;  ///< [n]
  int64_t n = 0;              ///< count
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { dst[i] = from_f<To>(to_f(src[i])); }
  /// The host form: the CPU's array conversions (kernels/cast.h: fp16 through F16C where present,
  /// the scalar conversion's bits), split over the pool by the element-wise grain. Host only.
  void host() const {
    if constexpr (std::is_same_v<To, float>)
      kernels::widen_into(dst, src, n);
    else
      kernels::narrow(dst, src, static_cast<std::size_t>(n));  // From is float: a cast has a float side
  }
};

}  // namespace zt::ops
