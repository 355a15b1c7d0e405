// support/kernel_cases/optim.h — the optimizer's item ops against the CPU loops, bitwise (see
// env.h): Adam and AdamW over three steps, SGD with and without Nesterov, and the unscale +
// overflow check (its integer flag against any_nonfinite, with and without an inf and a NaN),
// 1000 elements (not a multiple of the block).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "optim/adam.h"
#include "optim/loss_scaler.h"
#include "optim/optim_threads.h"
#include "optim/sgd.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// Adam/AdamW, SGD and the unscale + check. @param env the environment (env.h).
template <typename Env>
void case_optim(const Env& env) {
  using F = typename Env::template vec<float>;
  const int64_t n = 1000;
  const auto count = static_cast<std::size_t>(n);
  const F g = sensitive<F>(count, 24, -10);
  for (const bool decoupled : {true, false}) {
    const AdamConfig config{0.9, 0.999, 1e-8, decoupled ? 0.1 : 0.01, decoupled};
    F p = sensitive<F>(count, 25, -10), m(count, 0.0f), v(count, 0.0f);
    F p_op = p, m_op = m, v_op = v;
    for (int64_t t = 1; t <= 3; ++t) {
      const AdamStepScalars s = adam_step_scalars(config, 1e-3 * static_cast<double>(t), t);
      adam_update(p.data(), g.data(), m.data(), v.data(), count, s);
      env.run(AdamElements{p_op.data(), g.data(), m_op.data(), v_op.data(), n, s});
    }
    env.check(same_bits(p, p_op) && same_bits(m, m_op) && same_bits(v, v_op), decoupled ? "adamw" : "adam (L2)");
  }
  for (const bool nesterov : {false, true}) {
    const SgdStepScalars s = sgd_step_scalars(SgdConfig{0.9, 0.01, nesterov}, 0.05);
    F p = sensitive<F>(count, 26, -10), b(count, 0.0f), p_op = p, b_op = b;
    for (int t = 0; t < 3; ++t) {
      sgd_update(p.data(), g.data(), b.data(), count, s);
      env.run(SgdElements{p_op.data(), g.data(), b_op.data(), n, s});
    }
    env.check(same_bits(p, p_op) && same_bits(b, b_op), nesterov ? "sgd nesterov" : "sgd momentum");
  }
  for (const bool poison : {false, true}) {
    F grad = sensitive<F>(count, 27, 0), grad_op = grad;
    if (poison) {
      grad[777] = grad_op[777] = std::numeric_limits<float>::infinity();
      grad[3] = grad_op[3] = -std::numeric_limits<float>::quiet_NaN();
    }
    typename Env::template vec<uint32_t> flag(1, 0u);
    const bool bad = any_nonfinite(grad.data(), count);
    unscale(grad.data(), count, 0x1p-16f);
    env.run(UnscaleCheckElements{grad_op.data(), n, 0x1p-16f, flag.data()});
    // IEEE 754 (6.2.3) leaves a NaN result's sign and payload to the machine: x86 returns the NaN
    // operand quieted (here -NaN, 0xffc00000), NVIDIA GPUs their canonical 0x7fffffff. Neither
    // reaches the weights (the flag skips the step), so the poisoned element must be NaN on both
    // and every other element the same bits.
    const bool nan_kept = !poison || (std::isnan(grad[3]) && std::isnan(grad_op[3]));
    if (poison) grad_op[3] = grad[3];
    env.check(nan_kept && bad == poison && flag[0] == (poison ? 1u : 0u) && same_bits(grad, grad_op),
              poison ? "unscale + check, inf and NaN" : "unscale + check, all finite");
  }
}

}  // namespace zt::test
