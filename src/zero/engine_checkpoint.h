// zero/engine_checkpoint.h — a ZeRO rank's part of a checkpoint (chapter 14): which canonical pieces of
// which states it writes, how it reads back every state it keeps from whatever ranks wrote them,
// and the job-wide agreement that ends each phase of the protocol.
//
// A rank writes [rank · shard_u, + its real elements) of every unit it stores (a unit replicated
// over the model-parallel group: model-parallel rank 0 only; with a pipeline, the units of its
// stage), for each state: the FP32 master
// (fp32 precision: the parameters themselves), then the optimizer's moments. Reading is by the same
// canonical pieces over whatever extent the rank keeps now (S_p for the compute copy, S_o for the
// master and moments), so resharding is the reader's interval intersection
// (checkpoint/reader.h). The protocol (begin, write, publish, with a job-wide agreement between the
// phases) is save_rank_checkpoint; resuming is load_rank_checkpoint. It owns no state: the engine
// lends each unit's compute copy and owned state through callables, wherever a tier keeps them.
#pragma once

#include <cstddef>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/reader.h"
#include "checkpoint/writer.h"
#include "collective/collective.h"
#include "core/check.h"
#include "core/error_report.h"
#include "offload/tier.h"
#include "zero/checkpoint_io.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// Checkpoint state s of a view: 0 the FP32 master (fp32 precision: the parameters), j >= 1 the
/// optimizer's j-th moment (m, then v). @param v the view. @param s the state. @return its values.
inline float* state_values(const offload::StateView& v, std::size_t s) { return s == 0 ? v.master : v.moment(s - 1); }

/// Unit coordinates of element 0 of an owned-state view: the shard's start (S_o) or 0.
/// @param p the rank's plan. @param u the unit. @return the offset.
inline std::size_t owned_begin(const ZeroPlan& p, std::size_t u) {
  return p.spec.optimizer ? p.layout.rank * p.layout.units[u].shard : 0;
}

/// Whether this rank writes unit u: a unit of its pipeline stage, a model-parallel block's always,
/// a replicated one only on model-parallel rank 0. @param p the rank's plan. @param u the unit.
/// @return true to write it.
inline bool writes_unit(const ZeroPlan& p, std::size_t u) {
  return p.held[u] && (p.manifest.units[u].block >= 0 || p.mp.rank == 0);
}

/// Add every piece this rank writes to `writer`. @param states checkpoint_states(c).
/// @param with_owned_state the engine's: with_owned_state(u, fn(const offload::StateView&) -> bool).
template <typename WithOwnedState>
void write_rank_pieces(checkpoint::RankFileWriter& writer, const ZeroPlan& p, const std::vector<std::string>& states,
                       WithOwnedState&& with_owned_state) {
  const Layout& l = p.layout;
  if (p.replica_rank() != 0) return;  // hybrid sharding: the first shard group writes; the others hold copies
  for (std::size_t u = 0; u < l.units.size(); ++u) {
    if (!writes_unit(p, u)) continue;
    const std::size_t begin = l.rank * l.units[u].shard, end = begin + l.shard_real(u, l.rank);
    with_owned_state(u, [&](const offload::StateView& view) {  // wherever the tier keeps it
      for (std::size_t s = 0; s < states.size(); ++s)
        for (const auto& piece : canonical_pieces(p.manifest, u, begin, end))
          writer.add(states[s], piece.param, piece.offset,
                     state_values(view, s) + (piece.unit_offset - owned_begin(p, u)), piece.length);
      return false;  // nothing changed
    });
  }
}

/// Read every state this rank keeps: the compute copy (S_p extent, θ16 = round(θ32) as after every
/// update) and the master and moments (S_o extent). @param reader the checkpoint. @param states
/// checkpoint_states(c). @param with_params the engine's: with_params(u, fn(T*) -> bool).
/// @param with_owned_state as for write_rank_pieces.
template <typename T, typename WithParams, typename WithOwnedState>
void read_rank_states(checkpoint::Reader& reader, const ZeroPlan& p, const std::vector<std::string>& states,
                      WithParams&& with_params, WithOwnedState&& with_owned_state) {
  const Layout& l = p.layout;
  std::vector<float> values;
  const auto read = [&](std::size_t state, std::size_t u, std::size_t begin, std::size_t end, auto put) {
    for (const auto& piece : canonical_pieces(p.manifest, u, begin, end)) {
      values.resize(static_cast<std::size_t>(piece.length));
      reader.read(states[state], piece.param, piece.offset, piece.length, values.data());
      for (std::size_t k = 0; k < values.size(); ++k) put(piece.unit_offset + k, values[k]);
    }
  };
  for (std::size_t u : p.units_here) {  // a pipeline stage keeps its own units only
    const std::size_t numel = l.units[u].numel, shard_begin = l.rank * l.units[u].shard;
    const std::size_t shard_end = shard_begin + l.shard_real(u, l.rank);
    const std::size_t p_begin = p.params_sharded(u) ? shard_begin : 0;
    with_params(u, [&](T* params) {  // in the engine's params, or the parameter tier's record
      read(0, u, p_begin, p.params_sharded(u) ? shard_end : numel,
           [&](std::size_t k, float v) { params[k - p_begin] = T(v); });
      return true;
    });
    const std::size_t o_begin = owned_begin(p, u), o_end = p.spec.optimizer ? shard_end : numel;
    with_owned_state(u, [&](const offload::StateView& view) {  // wherever the tier keeps them
      for (std::size_t state = 0; state < states.size(); ++state)
        read(state, u, o_begin, o_end, [&](std::size_t k, float v) { state_values(view, state)[k - o_begin] = v; });
      return true;  // written back
    });
  }
}

/// Run `phase` on every rank, then agree over the whole job whether it succeeded: a rank that
/// failed rethrows its own error, the others fail at once with a zt::PeerFailed naming `what`
/// (instead of waiting at the next collective for the timeout). A failed rank announces its
/// message *before* the agreement (core/error_report.h): once the others know, they exit, and a
/// launcher may stop this rank before it could print. The agreement is a max over the
/// data-parallel group, then over the model-parallel one, then over the pipeline: the maximum of
/// the whole job. @param dp the data-parallel group. @param mp the model-parallel group (null:
/// N_m = 1). @param pp the pipeline group (null: N_p = 1). @param what the operation, for the other
/// ranks' message. @param phase this rank's part.
template <typename Phase>
void together(Collective& dp, Collective* mp, Collective* pp, const std::string& what, Phase&& phase) {
  std::exception_ptr error;
  try {
    phase();
  } catch (const std::exception& e) {
    announce_error(e);
    error = std::current_exception();
  } catch (...) {
    error = std::current_exception();
  }
  float failed = error ? 1.0f : 0.0f;
  dp.all_reduce(std::span<float>(&failed, 1), ReduceOp::max);
  if (mp) mp->all_reduce(std::span<float>(&failed, 1), ReduceOp::max);
  if (pp) pp->all_reduce(std::span<float>(&failed, 1), ReduceOp::max);
  if (error) std::rethrow_exception(error);
  ZT_CHECK_PEERS(failed == 0.0f, what, ": another rank failed (its message says why)");
}

/// Save the job's checkpoint of `step` (checkpoint/writer.h's protocol): rank 0 opens the temporary
/// directory, every rank writes its pieces, rank 0 publishes; nobody goes on (or is killed) before
/// the checkpoint is visible. @param dp the data-parallel group. @param mp the model-parallel
/// group (null: N_m = 1). @param pp the pipeline group (null: N_p = 1). @param world_rank this
/// rank in the job. @param c the settings (--save-dir).
/// @param plan this rank's plan. @param dataset its description. @param s the run's scalars.
/// @param with_owned_state as for write_rank_pieces.
template <typename WithOwnedState>
void save_rank_checkpoint(Collective& dp, Collective* mp, Collective* pp, int world_rank, const train::RunOptions& c,
                          const ZeroPlan& plan, const std::string& dataset, const RunScalars& s,
                          WithOwnedState&& with_owned_state) {
  const std::string where = checkpoint::step_dir(c.save_dir, s.step);
  together(dp, mp, pp, where, [&] {
    if (world_rank == 0) checkpoint::begin_save(c.save_dir, s.step);
  });
  together(dp, mp, pp, where, [&] {
    checkpoint::RankFileWriter writer(where + ".tmp", world_rank);
    write_rank_pieces(writer, plan, checkpoint_states(c), with_owned_state);
    writer.finish();
  });
  together(dp, mp, pp, where, [&] {
    if (world_rank == 0)
      checkpoint::publish(c.save_dir, s.step, checkpoint_header(c, plan, dataset, s),
                          static_cast<int>(plan.dp_size) * (mp ? mp->size() : 1) * plan.pp_size);  // every rank's file
  });
}

/// Continue from --resume: every state this rank keeps, read by canonical pieces from whatever
/// ranks saved them (resharding is the reader's interval intersection), checked against this run.
/// @param dp the data-parallel group. @param mp the model-parallel group (null: N_m = 1).
/// @param pp the pipeline group (null: N_p = 1). @param c the settings (--resume). @param plan this rank's plan. @param
/// dataset its description.
/// @param with_params as for read_rank_states. @param with_owned_state as for read_rank_states.
/// @return the run's scalars at the checkpoint.
template <typename T, typename WithParams, typename WithOwnedState>
RunScalars load_rank_checkpoint(Collective& dp, Collective* mp, Collective* pp, const train::RunOptions& c,
                                const ZeroPlan& plan, const std::string& dataset, WithParams&& with_params,
                                WithOwnedState&& with_owned_state) {
  RunScalars s;
  together(dp, mp, pp, c.resume, [&] {
    checkpoint::Reader reader(checkpoint::resolve_checkpoint(c.resume));
    s = check_resumable(reader.manifest(), reader.dir(), c, plan, dataset);
    read_rank_states<T>(reader, plan, checkpoint_states(c), with_params, with_owned_state);
  });
  return s;
}

}  // namespace zt::zero
