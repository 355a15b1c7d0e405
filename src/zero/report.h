// zero/report.h — what zero-train writes for a ZeRO run beyond the single-rank summary: per-rank
// memory moved between processes (as JSON text through the rendezvous store) and the `comm`
// object. The --verify comparison is train/compare_runs.h. Plain conversions; no training and no
// collectives here.
#pragma once

#include <string>
#include <vector>

#include "collective/stats.h"
#include "train/run_result.h"
#include "zero/train_zero.h"

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

/// The `comm` object of a run on a data-parallel × model-parallel grid: the fields above summed
/// over both groups, and `groups` = {dp: {...}, mp: {...}} with the same fields per group.
/// @param dp the data-parallel group's counters. @param mp the model-parallel group's (zero
/// without model parallelism). @return JSON text.
std::string comm_json(const GroupComm& dp, const GroupComm& mp);

}  // namespace zt::zero
