// train/rank_memory.h — a rank's memory report: the arena ledger's measured peaks beside their
// predictions, and the model states beside the paper's accounting.
//
// Both loops build their report here from what they measured (the arena), and what their memory
// plan predicted is added beside it (the ZeRO engine's by predict/, outside the engine), so the
// single-rank and ZeRO summaries mean the same thing field by field. It predicts nothing itself.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "memory/arena.h"
#include "memory/model_states.h"
#include "train/run_result.h"

namespace zt::train {

/// The measurement: every ledger category's peak, the model states' sum, the whole peak.
/// @param arena the rank's arena (its ledger's peaks are the measurement). @param rank the rank.
/// @param host the host tier's arena (null: none). @return the report, its predicted fields empty.
RankMemory rank_memory(const Arena& arena, int rank, const Arena* host = nullptr,
                       const std::map<std::string, std::size_t>& pinned = {});

/// The prediction beside it.
/// @param m the report to complete. @param predicted_categories predicted peak bytes per ledger
/// category. @param predicted_states the exact model-state bytes of the sharding description.
/// @param predicted_high_water the high-water mark of the loop's predicted arena trace.
void add_memory_predictions(RankMemory& m, std::map<std::string, std::size_t> predicted_categories,
                            const ModelStateBytes& predicted_states, std::size_t predicted_high_water);

}  // namespace zt::train
