// optim/optim_threads.h — the optimizer's element-wise work as item ops (device/item_grid.h), one
// thread per element: Adam/AdamW, SGD with momentum, and the loss scaler's unscale + overflow
// check. The bodies are the ZT_HD element functions the CPU loops call (adam.h, sgd.h,
// loss_scaler.h), so a shard updated on a GPU has the CPU's bits. Their CUDA launcher is in
// optim/cuda/, beside the optimizer rather than in ops/cuda: the module map keeps each
// module's GPU twin in its own folder, and the optimizer knows nothing of the model's kernels.
#pragma once

#include <cstdint>

#include "fp/hd.h"
#include "optim/adam.h"
#include "optim/loss_scaler.h"
#include "optim/sgd.h"

namespace zt {

/// Adam/AdamW: item i updates (p, m, v)[i] (adam_update_element).
struct AdamElements {
  float* p = nullptr;        ///< [n] FP32 master weights (updated)
  const float* g = nullptr;  ///< [n] gradients (unscaled, clipped)
  float* m = nullptr;        ///< [n] first moments (updated)
  float* v = nullptr;        ///< [n] second moments (updated)
  int64_t n = 0;             ///< count
  AdamStepScalars s;         ///< this step's scalars
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { adam_update_element(p[i], g[i], m[i], v[i], s); }
};

/// SGD with momentum: item i updates (p, b)[i] (sgd_update_element).
struct SgdElements {
  float* p = nullptr;        ///< [n] FP32 master weights (updated)
  const float* g = nullptr;  ///< [n] gradients
  float* b = nullptr;        ///< [n] momentum buffers (updated)
  int64_t n = 0;             ///< count
  SgdStepScalars s;          ///< this step's scalars
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { sgd_update_element(p[i], g[i], b[i], s); }
};

/// Unscale + overflow check: item i unscales g[i] and sets *flag to 1 if it was inf or NaN
/// (unscale_check_element). The caller zeroes *flag first; after the launch it equals
/// any_nonfinite over the scaled values.
struct UnscaleCheckElements {
  float* g = nullptr;        ///< [n] scaled FP32 gradients (unscaled in place)
  int64_t n = 0;             ///< count
  float inverse_scale = 1;   ///< 1/S
  uint32_t* flag = nullptr;  ///< one integer, set to 1 on a non-finite value
  /// @return n, one thread per element.
  ZT_HD int64_t items() const { return n; }
  /// @param i the element.
  ZT_HD void operator()(int64_t i) const { unscale_check_element(g[i], inverse_scale, *flag); }
};

}  // namespace zt
