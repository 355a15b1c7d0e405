// zero/model_state_stores.h — where a ZeRO rank keeps its model states, chosen once at set-up.
//
// The compute copy (S_p's storage, ParamStore): per unit its shard or the whole unit in the rank's
// arena, or, with --offload-params (ZeRO-Infinity), the sharded units' shards in a file
// (offload/param_file_tier.h) with only the persistent units resident. The FP32 master and the
// optimizer's moments (S_o's storage, make_state_store): the rank's arena, ZeRO-Offload's host tier
// or its file (offload/state_store.h). The step reaches a unit's stored copy in three ways, each
// here once: between steps
// (with_params: initialisation, checkpoints, dumps), during the update (an update pass that brings
// each shard in the file into a buffer and writes it back), and for the stage-3 gathers and
// held-out rounds (resident() and file(), read by zero/step_interpreter.h and zero/heldout_eval.h).
// It neither gathers nor updates (zero/train_zero.cc does).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "offload/optimizer_tier.h"
#include "offload/param_file_tier.h"
#include "offload/state_store.h"
#include "offload/transfer_thread.h"
#include "step/categories.h"
#include "step_device/loop_ops.h"
#include "step_device/placement.h"
#include "train/run_options.h"
#include "zero/arena_states.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// One rank's compute copy θ16 (fp32: the master); T is the compute type.
template <typename T>
class ParamStore {
 public:
  /// Allocate the resident units in `arena` (S_p's extent each) and, with --offload-params, the
  /// file of the sharded units' shards. @param plan the rank's plan. @param arena its arena.
  /// @param dir --offload-params' directory. @param world_rank names the file. @param place where
  /// the loop runs: its ops on the arena's memory (a visitor sees a host copy of device memory)
  /// and, on a device, the runtime and compute stream the parameter tier copies against.
  /// @param host_side the loop's host-side arena (pinned on a device: the tier's bounce record).
  ParamStore(const ZeroPlan& plan, Arena& arena, const std::string& dir, int world_rank, step::Placement<T>& place,
             Arena& host_side)
      : plan_(plan), ops_(place.loop_ops()) {
    if (plan.params_layout.total) params_ = make_buffer<T>(arena, plan.params_layout.total, step::category::params);
    if (!plan.offload_params) return;
    std::vector<std::size_t> records(plan.layout.units.size(), 0);
    for (std::size_t u = 0; u < records.size(); ++u) {
      if (!plan.params_in_file(u)) continue;
      records[u] = plan.layout.units[u].shard * sizeof(T);
      in_file_.push_back(u);
    }
    const offload::ParamTierDevice device{place.runtime(), place.compute_stream(), &host_side};
    file_ = std::make_unique<offload::ParamFileTier>(dir, world_rank, records, plan.param_buffers, arena, device);
  }

  /// @return the resident units' storage (each unit at plan.params_layout.offsets[u]).
  T* resident() { return params_.data(); }
  /// @param u a resident unit. @return its stored copy.
  T* resident(std::size_t u) { return params_.data() + plan_.params_layout.offsets[u]; }
  /// @return the parameter file (null without --offload-params).
  offload::ParamFileTier* file() { return file_.get(); }
  /// @return the parameter file's I/O so far.
  offload::TransferStats stats() const { return file_ ? file_->stats() : offload::TransferStats{}; }

  /// Unit u's stored copy between steps, in host memory: fn(T*) sees it and returns whether it
  /// changed it (a file record, or a device's copy, is then written back). @param u the unit.
  /// @param fn the visitor. @param fresh the record is filled, not read.
  template <typename Fn>
  void with_params(std::size_t u, Fn fn, bool fresh = false) {
    if (!plan_.params_in_file(u)) {
      step::visit_on_host(ops_, resident(u), plan_.layout.extent(u, plan_.params_sharded(u)), fresh, fn);
      return;
    }
    file_->with_record(u, fresh, [&](std::byte* r) { return fn(reinterpret_cast<T*>(r)); });
  }

  /// The update pass: every unit in order, its shard in the file read ahead into the ring.
  void begin_update() {
    if (file_) file_->start_pass(in_file_);
    next_ = 0;
  }
  /// @param u the next unit of the pass. @return where its stored copy is during its update.
  T* for_update(std::size_t u) {
    return plan_.params_in_file(u) ? reinterpret_cast<T*>(file_->get(next_)) : resident(u);
  }
  /// Unit u is updated: a shard in the file is written back. After the pass's last one, its
  /// write-backs are waited for (the next step's first gather would wait for them anyway), so
  /// that every copy and write of a step is enqueued within it. @param u the unit just updated.
  void end_update(std::size_t u) {
    if (!plan_.params_in_file(u)) return;
    file_->put(next_++, /*write=*/true);
    if (next_ == in_file_.size()) file_->drain();
  }

 private:
  const ZeroPlan& plan_;
  step::LoopOps<T>& ops_;
  TypedBuffer<T> params_;                         // the resident units, extent S_p per unit
  std::vector<std::size_t> in_file_;              // the units whose shards are in the file, in order
  std::unique_ptr<offload::ParamFileTier> file_;  // --offload-params (outlives the gathers that read it)
  std::size_t next_ = 0;                          // the update pass's position among in_file_
};

/// Where the optimizer states live (offload/state_store.h): ZeRO-Offload's host tier or its file
/// (--offload-optimizer), else the rank's arena; each of S_o's extent (the owned shard, or every unit).
/// @param plan the rank's plan. @param c the offload settings (the tier's directory, buffers, read-ahead).
/// @param arena the rank's arena. @param host the host tier's arena (with --offload-optimizer).
/// @param copies the transfers between the tiers (with --offload-optimizer). @param world_rank
/// names the file. @param params the compute copy (fp32 in the arena: it is the master).
/// @param ops the loop's ops on the arena's memory. @param steps protocol steps 4-6 there.
/// @return the store.
template <typename T>
std::unique_ptr<offload::StateStore<T>> make_state_store(const ZeroPlan& plan, const train::OffloadOptions& c,
                                                         Arena& arena, Arena* host, offload::TransferThread* copies,
                                                         int world_rank, ParamStore<T>& params, step::LoopOps<T>& ops,
                                                         step::StepOps<T>& steps) {
  const offload::TierShape shape = offload_tier_shape(plan);  // the owned elements, S_o's extent per unit
  if (plan.offload_optimizer) {
    const offload::TierSettings where{plan.offload_to_file ? offload::TierKind::file : offload::TierKind::host,
                                      c.offload_optimizer_dir(), static_cast<std::size_t>(c.offload_buffers),
                                      c.offload_read_ahead, world_rank};
    return std::make_unique<offload::OptimizerTier<T>>(where, shape, *host, *copies);
  }
  typename ArenaStates<T>::MasterInParams in_params;  // fp32: the owned part of the compute copy
  if constexpr (std::is_same_v<T, float>)
    in_params = [&plan, &params](std::size_t u, const std::function<bool(float*)>& fn) {
      const bool whole = plan.params_sharded(u) || !plan.spec.optimizer;  // the stored copy is the owned part
      const std::size_t begin = whole ? 0 : plan.layout.rank * plan.layout.units[u].shard;
      params.with_params(u, [&](float* p) { return fn(p + begin); });
    };
  return std::make_unique<ArenaStates<T>>(shape, arena, in_params, ops, steps);
}

}  // namespace zt::zero
