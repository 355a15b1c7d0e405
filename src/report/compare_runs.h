// report/compare_runs.h — the bitwise comparison of two training runs: every per-step record field,
// every held-out evaluation, and the final FP32 master weights, each reported by its first
// difference. One definition, used by `zero-train --verify` and by the equivalence tests, so the
// two can never check different things.
//
// Floats are compared by their bits (never a tolerance): +0 and −0 differ, two NaNs with the same
// payload are equal. It does not run anything; it compares what runs returned.
#pragma once

#include <string>
#include <vector>

#include "model/manifest.h"
#include "train/run_result.h"

namespace zt::report {

using train::EvalRecord;
using train::RunResult;
using train::StepRecord;

/// Where two runs first differ; every field empty means bitwise equal.
struct RunComparison {
  std::string steps;   ///< first differing step record ("step 3: grad_norm 0.5 vs 0.50000006")
  std::string evals;   ///< first differing held-out evaluation
  std::string params;  ///< first differing master weight ("h.0.attn.c_proj.weight[17]: a vs b")
  /// @return true when nothing differs.
  bool equal() const { return steps.empty() && evals.empty() && params.empty(); }
  /// @return "" when equal, else "first differing parameter X" (or "master weights equal")
  /// followed by the step and evaluation differences.
  std::string describe() const;
};

/// First difference of two per-step record lists: step, loss, loss_scale, lr, skipped,
/// grad_norm (presence and bits), clipped. @param a one run's records. @param b the other's.
/// @return "" when equal.
std::string compare_steps(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b);

/// First difference of two held-out evaluation lists: step, loss bits, accuracy, problems.
/// @param a one run's. @param b the other's. @return "" when equal.
std::string compare_evals(const std::vector<EvalRecord>& a, const std::vector<EvalRecord>& b);

/// First differing element of two flat FP32 vectors in canonical order, named by parameter and
/// index when a manifest is given. @param a one run's values. @param b the other's.
/// @param manifest names and offsets (may be null: the flat index is reported).
/// @return "" when bitwise equal.
std::string compare_params(const std::vector<float>& a, const std::vector<float>& b,
                           const model::Manifest* manifest = nullptr);

/// All three comparisons. @param a one run. @param a_params its final master weights.
/// @param b the other run. @param b_params its final master weights.
/// @param manifest names for the parameter report (may be null). @return the differences.
RunComparison compare_runs(const RunResult& a, const std::vector<float>& a_params, const RunResult& b,
                           const std::vector<float>& b_params, const model::Manifest* manifest = nullptr);

}  // namespace zt::report
