// report/summary_json.h — the `--summary-json` document of zero-train.
//
// Layout (the contract that tests, notebooks and later issues read): config; param_count;
// steps: [{step, loss, loss_scale, skipped, grad_norm (null when not finite), clipped, lr,
//          grad16_zeros (16-bit runs of the reference loop only)}];
// evals: [{step, loss, accuracy, problems}]; memory: {per_rank: [{rank, model_states_bytes,
// model_states_bytes_predicted, peak_bytes, peak_bytes_predicted, high_water_bytes_predicted,
// padding_bytes, by_category, by_category_predicted, arena_capacity}]}; tokens_per_s; seconds; frozen_fraction (null
// unless 16-bit); then the sections the caller adds (zero-train: comm, verify, and summary, the
// closing table of report/run_summary.h: layout, numerics, batch, memory rows with formula and
// formula_bytes, peak, traffic rows with psi_multiple and closed_form). Every float is written so that parsing
// it back gives the same float32 bits.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "train/run_options.h"
#include "train/run_result.h"

namespace zt::report {

using train::RankMemory;
using train::RunOptions;
using train::RunResult;

/// One rank's memory report as a JSON object (the per_rank entries of the summary).
/// @param memory the report. @return compact JSON.
std::string rank_memory_json(const RankMemory& memory);

/// A top-level member the caller adds to the summary: its key and its JSON text.
using JsonSection = std::pair<std::string, std::string>;

/// The whole summary document. @param config the settings. @param result the run.
/// @param sections further top-level members, in order (e.g. {"comm", comm_json(...)}).
/// @return pretty-printed JSON.
std::string summary_json(const RunOptions& config, const RunResult& result,
                         const std::vector<JsonSection>& sections = {});

/// The parameter manifest: [{name, shape, offset, numel, tensor_parallel}] in canonical order, the
/// order of the dumps; tensor_parallel is "column" or "row" for the tensors --mp-blocks splits
/// (each model-parallel rank stores 1/N_m of them), "replicated" for the others.
/// @param config the settings (model shape). @param vocab the vocabulary in use.
/// @return JSON text.
std::string manifest_json(const RunOptions& config, int64_t vocab);

}  // namespace zt::report
