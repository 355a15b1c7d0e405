// zero/checkpoint_io.cc — canonical pieces and the manifest's descriptive parts (see checkpoint_io.h).
#include "zero/checkpoint_io.h"

#include <algorithm>

#include "core/check.h"
#include "model/manifest.h"

namespace zt::zero {

std::vector<CanonicalPiece> canonical_pieces(const model::Manifest& storage, std::size_t unit, std::size_t begin,
                                             std::size_t end) {
  std::vector<CanonicalPiece> out;
  const auto& u = storage.units[unit];
  for (int i = u.first_param; i < u.first_param + u.num_params; ++i) {
    const auto& p = storage.params[static_cast<std::size_t>(i)];
    for (const auto& r : p.runs) {
      // the run's elements in unit coordinates, clipped to [begin, end)
      const auto first = static_cast<std::size_t>(p.offset_in_unit + r.offset);
      const std::size_t lo = std::max(first, begin);
      const std::size_t hi = std::min(first + static_cast<std::size_t>(r.length), end);
      if (lo >= hi) continue;
      out.push_back(
          {lo, r.param, r.canonical_offset + static_cast<int64_t>(lo - first), static_cast<int64_t>(hi - lo)});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.unit_offset < b.unit_offset; });
  return out;
}

std::vector<std::string> checkpoint_states(const train::RunOptions& c) {
  if (c.optimizer == train::Optimizer::sgd) return {"master", "sgd.momentum"};
  return {"master", "adam.m", "adam.v"};
}

namespace {

nlohmann::json model_json(const model::GptConfig& m) {
  return {{"family", "gpt"},  {"vocab", m.vocab}, {"context", m.context},    {"layers", m.layers},
          {"heads", m.heads}, {"width", m.width}, {"mp_blocks", m.mp_blocks}};
}

}  // namespace

checkpoint::Manifest checkpoint_header(const train::RunOptions& c, const ZeroPlan& plan, const std::string& dataset,
                                       const RunScalars& s) {
  checkpoint::Manifest m;
  const model::GptConfig& g = plan.shape.model;
  m.model = model_json(g);
  nlohmann::json units = nlohmann::json::array();
  for (const auto& u : plan.layout.units)  // this model-parallel rank's units (of its stage); the others are alike
    units.push_back({{"name", u.name}, {"numel", u.numel}, {"shard", u.shard}, {"padding", u.full - u.numel}});
  m.sharding = {{"stage", c.stage},
                {"dp_size", c.dp_size()},
                {"shard_group", c.resolved_shard_group()},
                {"mp_size", c.mp_size},
                {"mp_blocks", c.resolved_mp_blocks()},
                {"pp_size", c.pp_size},
                {"pp_split", c.resolved_pp_split()},
                {"norm_block", plan.layout.block},
                {"persist_below_mb", c.persist_below_mb},
                {"units_of_mp_rank_0", plan.mp.rank == 0 ? units : nlohmann::json()},
                {"written_by",
                 "each data-parallel rank of the first shard group its shard range of every unit of its "
                 "pipeline stage; replicated units by model-parallel rank 0"}};
  m.run = {{"step", s.step},
           {"optimizer_step", s.optimizer_step},
           {"loss_scale", s.loss_scale},
           {"loss_scale_good_steps", s.good_steps},
           {"precision", word_of(c.precision)},
           {"optimizer", word_of(c.optimizer)},
           {"master_weights", !c.no_master_weights},
           {"steps", c.steps},
           {"global_batch", c.global_batch},
           {"micro_batch", c.micro_batch},
           {"seed", c.seed},
           // the sampler and the initialiser are counter-based (data/counter_hash.h): their whole
           // state is (seed, step), so the data position is the step — mid-epoch or not
           {"data", {{"dataset", dataset}, {"next_step", s.step + 1}, {"sequences_seen", s.step * c.global_batch}}},
           {"rng", {{"kind", "counter-based (seed, step, index)"}, {"seed", c.seed}}}};
  m.states = checkpoint_states(c);
  for (const auto& p : model::make_manifest(g).params) m.params.push_back({p.name, p.shape, p.numel});
  return m;
}

RunScalars check_resumable(const checkpoint::Manifest& m, const std::string& where, const train::RunOptions& c,
                           const ZeroPlan& plan, const std::string& dataset) {
  const nlohmann::json ours = model_json(plan.shape.model);
  for (const auto& [key, value] : ours.items())
    ZT_CHECK(m.model.contains(key) && m.model[key] == value, where, ": a checkpoint of another model (", key, " ",
             m.model.value(key, nlohmann::json()).dump(), "; this run's is ", value.dump(), ")");
  const auto canonical = model::make_manifest(plan.shape.model);
  ZT_CHECK(m.params.size() == canonical.params.size(), where, ": ", m.params.size(), " parameters, this model has ",
           canonical.params.size());
  for (std::size_t i = 0; i < m.params.size(); ++i)
    ZT_CHECK(m.params[i].name == canonical.params[i].name && m.params[i].numel == canonical.params[i].numel, where,
             ": parameter ", i, " is ", m.params[i].name, " of ", m.params[i].numel, " elements, this model's is ",
             canonical.params[i].name, " of ", canonical.params[i].numel);
  const auto field = [&](const char* key) {
    ZT_CHECK(m.run.contains(key), where, ": the manifest's run has no \"", key, "\"");
    return m.run[key];
  };
  ZT_CHECK(field("precision") == word_of(c.precision), where, ": saved by a ", field("precision").get<std::string>(),
           " run; this run is --precision ", word_of(c.precision),
           " (its loss scaler and 16-bit copy would not continue)");
  ZT_CHECK(field("optimizer") == word_of(c.optimizer), where, ": saved with --optimizer ",
           field("optimizer").get<std::string>(), "; this run's is ", word_of(c.optimizer));
  ZT_CHECK(field("data").value("dataset", "") == dataset, where, ": trained on ", field("data").value("dataset", "?"),
           "; this run's data is ", dataset);
  for (const auto& state : checkpoint_states(c))
    ZT_CHECK(std::find(m.states.begin(), m.states.end(), state) != m.states.end(), where, ": no state \"", state, "\"");
  RunScalars s;
  s.step = field("step").get<int64_t>();
  s.optimizer_step = field("optimizer_step").get<int64_t>();
  s.loss_scale = field("loss_scale").get<float>();
  s.good_steps = field("loss_scale_good_steps").get<int64_t>();
  ZT_CHECK(s.step >= 0 && s.optimizer_step >= 0 && s.optimizer_step <= s.step, where, ": step ", s.step, " with ",
           s.optimizer_step, " applied updates is not a valid position");
  ZT_CHECK(s.step < c.steps, where, " is at step ", s.step, "; --steps ", c.steps,
           " leaves nothing to train (--steps counts from the start of the run)");
  return s;
}

}  // namespace zt::zero
