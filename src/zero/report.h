// zero/report.h — what zero-train writes for a ZeRO run beyond the single-rank summary: per-rank
// memory moved between processes (as JSON text through the rendezvous store), the `comm` object,
// and the --verify comparison. Plain conversions; no training and no collectives here.
#pragma once

#include <string>
#include <vector>

#include "collective/stats.h"
#include "model/manifest.h"
#include "train/run_result.h"

namespace zt::zero {

/// One rank's memory as compact JSON (the summary's per_rank layout).
/// @param m the report. @return JSON text.
std::string rank_memory_to_json(const train::RankMemory& m);

/// Parse rank_memory_to_json's text back. @param text the JSON. @return the report.
train::RankMemory rank_memory_from_json(const std::string& text);

/// The `comm` object: {bytes_sent_per_step, calls_per_step, predicted_bytes_sent_per_step,
/// predicted_calls_per_step}, each {kind: number}, kinds with no traffic left out.
/// @param measured counters of one step. @param predicted predicted counters of one step.
/// @return JSON text.
std::string comm_json(const CommStats& measured, const CommStats& predicted);

/// The first parameter whose FP32 values differ bitwise, as "name[index]: a vs b"; empty when
/// the two vectors are bitwise equal.
/// @param manifest names and offsets. @param a one run's master weights (canonical order).
/// @param b the other run's. @return the description, or "".
std::string first_difference(const model::Manifest& manifest, const std::vector<float>& a,
                             const std::vector<float>& b);

}  // namespace zt::zero
