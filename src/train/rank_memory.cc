// train/rank_memory.cc — measured and predicted memory of one rank (see rank_memory.h).
#include "train/rank_memory.h"

#include "step/categories.h"

namespace zt::train {

RankMemory rank_memory(const Arena& arena, int rank, const Arena* host,
                       const std::map<std::string, std::size_t>& pinned) {
  RankMemory m;
  m.rank = rank;
  for (const auto& [name, usage] : arena.ledger().categories()) m.by_category[name] = usage.peak_bytes;
  for (const char* const* name = step::model_state_categories(); *name; ++name)
    if (auto it = m.by_category.find(*name); it != m.by_category.end()) m.model_states_bytes += it->second;
  m.peak_bytes = arena.ledger().total().peak_bytes;
  m.arena_capacity = arena.capacity();
  if (host) {
    for (const auto& [name, usage] : host->ledger().categories()) m.host_by_category[name] = usage.peak_bytes;
    m.host_capacity = host->capacity();
  }
  for (const auto& [name, bytes] : pinned) m.host_by_category[name] = bytes;  // held outside the arenas
  return m;
}

void add_memory_predictions(RankMemory& m, std::map<std::string, std::size_t> predicted_categories,
                            const ModelStateBytes& predicted_states, std::size_t predicted_high_water) {
  m.by_category_predicted = std::move(predicted_categories);
  m.model_states_bytes_predicted = predicted_states.total;
  m.padding_bytes = predicted_states.padding;
  m.peak_bytes_predicted = 0;
  for (const auto& [name, bytes] : m.by_category_predicted) m.peak_bytes_predicted += bytes;
  m.high_water_bytes_predicted = predicted_high_water;
}

}  // namespace zt::train
