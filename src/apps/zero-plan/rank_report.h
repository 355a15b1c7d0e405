// apps/zero-plan/rank_report.h — zero-plan's lines and JSON about one predicted rank: its bytes,
// its traffic by group and collective, its labels. Formatting only; every number is the plan
// library's (plan/rank_prediction.h). The lines are a stable format quoted by the chapters.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collective/stats.h"
#include "memory/arena.h"
#include "plan/rank_prediction.h"
#include "train/train_config.h"

namespace zt::zero_plan {

/// @param bytes a size. @return it in GB (1e9 bytes), e.g. "1.875 GB".
std::string gb(double bytes);
/// @param trace an arena trace. @return its allocations.
std::size_t allocations(const std::vector<ArenaEvent>& trace);
/// @param r a rank. @param c the run. @return e.g. "rank 1 (dp 1, mp 0)".
std::string rank_label(const plan::RankPrediction& r, const train::TrainConfig& c);
/// Print "  LABEL  WHAT  BYTES B  GB". @param label the rank's (empty: none). @param what the
/// line's name. @param bytes the size.
void bytes_line(const std::string& label, const std::string& what, double bytes);
/// @param s a group's traffic. @param field &CollCounters::calls or &CollCounters::bytes_sent.
/// @return that counter summed over the collectives (call checks left out).
double comm_total(const CommStats& s, uint64_t CollCounters::*field);
/// @param r a rank's prediction. @param c the run. @return the rank's object in --json's "ranks".
nlohmann::ordered_json rank_json(const plan::RankPrediction& r, const train::TrainConfig& c);
/// Print every rank's traffic per step by group, host transfers, device copies and file I/O.
/// @param run the prediction. @param c the run. @return whether any rank moves anything.
bool print_traffic(const plan::RunPrediction& run, const train::TrainConfig& c);

}  // namespace zt::zero_plan
