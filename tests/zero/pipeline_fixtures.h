// zero/pipeline_fixtures.h — what the tests of ZeRO inside pipeline stages share (chapter 15): a
// grid's configuration of the small model (four blocks, four micro-batches per data-parallel rank)
// and the check that every rank's ledger and per-step traffic equal the plan's predictions.
// Not a test itself; ranks are threads (zero_fixtures.h).
#pragma once

#include "schedule/pipeline.h"
#include "zero/zero_fixtures.h"

namespace zt::test {

struct GridCase {
  int nd, np, nm;
};

inline train::TrainConfig pipeline_config(const GridCase& g, int stage, const char* precision,
                                          schedule::PipeSchedule s) {
  const int M = 4;  // micro-batches per data-parallel rank: >= N_p, a power of two
  train::TrainConfig c = zero_config(stage, g.nd * g.np * g.nm, M, precision);
  c.global_batch = static_cast<int64_t>(g.nd) * M * c.micro_batch;
  c.layers = 4;
  c.mp_size = g.nm;
  c.pp_size = g.np;
  c.pp_schedule = s;
  return c;
}

// Every rank's ledger and traffic equal the plan's predictions (predict/): the memory by
// category, the model states, the peak; per group and kind, the calls and bytes of a step.
inline void check_predictions(const ZeroRun& z) {
  for (const auto& r : z.ranks) {
    const auto& v = *r.value;
    const auto& m = v.run.memory.front();
    INFO("rank " << m.rank << " (stage " << v.pp_rank << ")");
    CHECK(m.by_category == m.by_category_predicted);
    CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
    CHECK(m.peak_bytes == m.high_water_bytes_predicted);
    const std::pair<const char*, const zero::GroupComm*> groups[] = {{"dp", &v.dp}, {"mp", &v.mp}, {"pp", &v.pp}};
    for (const auto& [name, g] : groups)
      for (std::size_t k = 0; k < kCollKinds; ++k) {
        if (static_cast<CollKind>(k) == CollKind::call_check) continue;
        INFO(name << " " << coll_kind_name(static_cast<CollKind>(k)));
        CHECK(g->per_step.by_kind[k].calls == g->predicted_per_step.by_kind[k].calls);
        CHECK(g->per_step.by_kind[k].bytes_sent == g->predicted_per_step.by_kind[k].bytes_sent);
      }
  }
}

}  // namespace zt::test
