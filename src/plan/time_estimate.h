// plan/time_estimate.h — the alpha-beta estimate of one step's time, and the breakeven batch.
//
// Communication: T_comm = calls · α + bytes / β (β in bytes per second per rank). Compute: a
// forward and backward pass costs 6ψ flops per token (8ψ with activation checkpointing: the
// forward is run twice), so T_compute = c · ψ · B · T / F for B sequences of T tokens per rank
// per step at F sustained flop/s. The breakeven batch is the smallest integer B with
// T_comm ≤ f · T_compute. When α is negligible both terms scale with ψ (bytes = b ψ), so the
// ratio is b · F / (β · c · B · T), and the breakeven B = b · F / (f · β · c · T) does not depend
// on ψ. It is a model, not a measurement.
#pragma once

#include <cstdint>

namespace zt::plan {

/// The machine and the workload of the estimate.
struct TimeInputs {
  double alpha_s = 10e-6;            ///< per-call latency α, seconds
  double beta_bytes_s = 100e9;       ///< bandwidth β per rank, bytes/s
  double flops = 150e12;             ///< sustained flop/s per rank
  double flops_per_param_token = 6;  ///< 6, or 8 with activation checkpointing
  double comm_fraction = 0.05;       ///< the breakeven's f
};

/// One step's estimate.
struct TimeEstimate {
  double compute_s = 0;  ///< c · ψ · tokens / F
  double comm_s = 0;     ///< calls · α + bytes / β
  double ratio = 0;      ///< comm_s / compute_s
};

/// Estimate one step. @param in machine and workload. @param psi parameters a rank computes with.
/// @param tokens tokens per rank per step. @param calls collectives per step.
/// @param bytes bytes sent per rank per step. @return the estimate.
TimeEstimate estimate_step(const TimeInputs& in, double psi, double tokens, double calls, double bytes);

/// The smallest integer batch B (sequences per rank per step) with T_comm ≤ f · T_compute(B).
/// @param in machine and workload. @param psi parameters. @param seq tokens per sequence S.
/// @param calls collectives per step. @param bytes bytes per rank per step. @return B (≥ 1).
int64_t breakeven_batch(const TimeInputs& in, double psi, double seq, double calls, double bytes);

}  // namespace zt::plan
