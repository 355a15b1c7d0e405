// report/run_summary.h — zero-train's closing table: the configuration in the paper's terms, one
// rank's memory by the paper's categories beside its prediction and the paper's formula, and the
// traffic of a step by collective with its multiple of ψ beside the closed form.
//
// The categories are those of the ZeRO paper (Sec. 3): the model states, split into parameters,
// gradients and optimizer states, then the residual states, split into activations and buffers
// (every other ledger category: gathered parameters, gradient staging, scratch, ...). A model
// state's formula is bytes-per-element · ψ · (1 − S + S/N) (memory/model_states.h) with this
// run's widths: 2 bytes for 16-bit parameters, 4 for fp32 ones; 4 for FP32 gradients
// (--reduce-dtype fp32), 2 for 16-bit; the optimizer's K less the master copy when the parameters
// are already fp32. ψ counts elements. A collective's multiple of ψ is the elements it sends per
// rank per step over ψ; its closed form is the paper's (Sec. 7): an all-reduce sends 2(N−1)/N ψ,
// a reduce-scatter and an all-gather (N−1)/N ψ each, stage 3 gathers twice per micro-batch; so a
// step of A = 1 micro-batch sends 2(N−1)/N ψ at stages 0-2 and 3(N−1)/N ψ at stage 3.
// The formulas are shown for the data-parallel layout the paper analyses (N_m = N_p = 1, no hybrid
// sharding, persistence or offload); other layouts show the measured and predicted figures only.
// This file formats; it measures and predicts nothing itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/run_options.h"
#include "train/run_result.h"
#include "zero/train_zero.h"

namespace zt::report {

/// One row of the memory table: a paper category on one rank.
struct MemoryRow {
  std::string category;       ///< "parameters (16-bit)", "gradients (FP32)", ..., "buffers"
  std::size_t measured = 0;   ///< the ledger's peak bytes
  std::size_t predicted = 0;  ///< the prediction's (the layout's padding included)
  std::string formula;        ///< the paper's formula with this run's widths ("2ψ/N"; "" if none)
  double formula_bytes = -1;  ///< its value (−1 without a formula)
};

/// One row of the traffic table: a collective of one group in one step, on rank 0.
struct TrafficRow {
  std::string group;         ///< "dp", "mp", "pp", ...
  std::string collective;    ///< "all_reduce", "reduce_scatter", ...
  uint64_t bytes_sent = 0;   ///< measured, per step
  uint64_t predicted = 0;    ///< the closed form of predict/zero_comm.h
  uint64_t calls = 0;        ///< calls per step
  int element_bytes = 0;     ///< the width of the elements it moves (0: not model states)
  double psi_multiple = -1;  ///< bytes_sent / (element_bytes · ψ) (−1: not model states)
  /// The paper's multiple as c·(N−1)/N ψ: c = 2 for an all-reduce of the gradients, 1 for a
  /// reduce-scatter or a stage 1-2 all-gather, times the syncs or gathers a step makes (0: none).
  int64_t closed_form_coefficient = 0;
};

/// The whole table.
struct RunSummary {
  std::string layout;               ///< "ZeRO stage 3, N_d × N_m × N_p = 4 × 1 × 1"
  std::string numerics;             ///< "fp32, FP32 gradients, adamw"
  std::string batch;                ///< "1 micro-batch of 2 sequences per rank a step (global batch 8)"
  int rank = 0;                     ///< whose memory the table shows
  std::vector<MemoryRow> memory;    ///< parameters, gradients, optimizer states, model states, activations, buffers
  std::size_t peak = 0;             ///< the ledger's peak, all categories at once
  std::size_t peak_predicted = 0;   ///< the predicted arena trace's high-water mark
  std::size_t budget = 0;           ///< the arena's capacity (--memory-budget-mb)
  std::vector<TrafficRow> traffic;  ///< empty for a single-rank run
  int64_t n = 1;                    ///< N, the data-parallel degree the closed forms use
  double tokens_per_s = 0;          ///< training tokens per second of wall time
  double seconds = 0;               ///< the training loop's wall time
};

/// Build the table. @param c the run's configuration. @param r its result (rank 0's memory first).
/// @param zero rank 0's counters (null for the single-rank reference). @return the table.
RunSummary run_summary(const train::RunOptions& c, const train::RunResult& r, const zero::ZeroRunResult* zero);

/// The table as zero-train prints it (lines of at most 100 columns, each ending in '\n').
/// @param s the table. @param threads per rank. @return the text.
std::string run_summary_text(const RunSummary& s, int64_t threads);

/// The table as the summary JSON's `summary` object. @param s the table. @return JSON text.
std::string run_summary_json(const RunSummary& s);

}  // namespace zt::report
