// kernels/residual.h — the residual connection x + f(x): forward, and the backward join.
//
// Forward: out = a + b in FP32, rounded once to T (out may alias a or b).
// Backward: the gradient of out reaches both a and b unchanged; where a tensor feeds both the
// skip path and a branch, its gradient is the sum of the two, which residual_grad_join forms:
// skip + branch in FP32, rounded once. That add and the final rounding are the only places an
// activation gradient is rounded outside the ops that produce it.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "kernels/cast.h"

namespace zt::kernels {

/// a + b in FP32, rounded once to T: the element body of both functions below, of the embedding's
/// lookup and of their GPU kernels. @param a first value. @param b second value. @return the sum.
template <typename T>
ZT_HD T add_rounded(T a, T b) {
  return from_f<T>(to_f(a) + to_f(b));
}

/// out = a + b, element-wise. @param out n values (written; may alias a or b).
/// @param a n values. @param b n values. @param n count.
template <typename T>
void residual_forward(T* out, const T* a, const T* b, int64_t n) {
  if constexpr (std::is_same_v<T, fp16>) {  // a chunk widened at once (F16C): add_rounded's bits
    constexpr int64_t kChunk = 256;
    parallel_for(n, kCpuElementGrain, [&](int64_t lo, int64_t hi) {  // elements split over the rank's threads
      float fa[kChunk], fb[kChunk];
      for (int64_t i0 = lo; i0 < hi; i0 += kChunk) {
        const auto len = static_cast<std::size_t>(hi - i0 < kChunk ? hi - i0 : kChunk);
        widen_fp16(a + i0, fa, len);
        widen_fp16(b + i0, fb, len);
        for (std::size_t j = 0; j < len; ++j) fa[j] += fb[j];
        narrow_fp16(fa, out + i0, len);  // out may be a or b: both were read
      }
    });
  } else {
    parallel_for(n, kCpuElementGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[i] = add_rounded(a[i], b[i]);
    });
  }
}

/// skip += branch: the gradient of a tensor used by both the skip path and a branch.
/// @param skip n values: on entry the skip-path gradient, on exit the sum.
/// @param branch n values: the branch's gradient. @param n count.
template <typename T>
void residual_grad_join(T* skip, const T* branch, int64_t n) {
  residual_forward(skip, skip, branch, n);
}

}  // namespace zt::kernels
