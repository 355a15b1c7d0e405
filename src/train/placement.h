// train/placement.h — where a training loop's tensors live and what computes on them: the host
// (the CPU kernels and plain loops) or a device runtime (device/runtime.h: the emulated device,
// or CUDA), chosen once from `--device`.
//
// Why one object: a loop on a device differs from the same loop on the host in exactly four
// things, and this is where each is answered — the slab its arena manages (host memory or the
// runtime's device memory, under the same ledger categories), the host-side slab for what the
// loop itself fills and reads (token ids, predictions: pinned on a device), the three op sets
// the loop calls instead of touching memory: the model's (model/model_ops.h), the optimizer
// step's (step/step_ops.h) and the loop's own (step/loop_ops.h), and the group its tensors are
// reduced over (on a device, staged through pinned host memory around the host's collective).
// The loop's step code is the same for both; only this object's answers differ. On a device
// every op is enqueued on one compute stream, so the loop's order is the stream's order. Every
// setting runs on either. Not here: the memory plan; the tiers' own streams (zero_r/copy_engine.h,
// offload/param_file_tier.h), which take the runtime and the compute stream from here.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collective/collective.h"
#include "collective/staged_collective.h"
#include "device/cuda_probe.h"
#include "device/runtime.h"
#include "memory/arena.h"
#include "model/model_ops.h"
#include "step/loop_ops.h"
#include "step/step_ops.h"
#include "train/run_options.h"

namespace zt::train {

/// Where one loop's tensors live, and its ops there (see the file comment).
template <typename T>
class Placement {
 public:
  /// @param where `--device`: cpu runs on the host; emulated and cuda make a runtime
  /// (device/make_runtime.h; zt::Error in one line where cuda cannot run).
  explicit Placement(device::Device where);
  ~Placement();
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;

  /// @return whether the tensors are device memory (host code must not touch them).
  bool on_device() const { return runtime_ != nullptr; }
  /// The slab of the loop's arena: host memory, or device memory. @param bytes its size.
  /// @param name what it holds, for messages. @return it, with its release.
  ArenaSlab slab(std::size_t bytes, const std::string& name);
  /// A slab of host memory for what the loop fills and reads on the host while the ops read it
  /// too (token ids, predictions): pinned on a device, so copies from and to it are asynchronous.
  /// @param bytes its size. @param name what it holds. @return it, with its release.
  ArenaSlab host_slab(std::size_t bytes, const std::string& name);

  /// @return the model's ops here, or null for the host's (a Gpt's default).
  model::ModelOps<T>* model_ops() { return model_.get(); }
  /// @return protocol steps 4-6 here.
  step::StepOps<T>& step_ops() { return *step_; }
  /// @return the loop's own tensor work here.
  step::LoopOps<T>& loop_ops() { return *loop_; }
  /// @return the host-device copies enqueued so far, by kind (all zero on the host).
  device::CopyStats copies() const { return runtime_ ? runtime_->stats() : device::CopyStats{}; }
  /// The group the loop reduces and gathers its tensors over: `group` itself on the host; on a
  /// device, `group` behind pinned staging (collective/staged_collective.h), kept by this object.
  /// @param group a host-side group (outlives this object). @return the group to use.
  Collective& collective(Collective& group);
  /// On a device, reserve a staged group's pinned rooms for its largest call
  /// (collective/staged_collective.h); nothing on the host. @param group what collective()
  /// returned. @param rooms the input and output rooms' sizes.
  void reserve_staging(Collective& group, StagingRooms rooms);
  /// @return pinned host memory held outside the loop's arenas, by ledger category (on a device:
  /// the staged groups' rooms; empty on the host).
  std::map<std::string, std::size_t> pinned_by_category() const;
  /// @return the device runtime (null on the host): for what copies on streams of its own.
  device::Runtime* runtime() { return runtime_.get(); }
  /// @return the compute stream every op is enqueued on (meaningless on the host).
  device::Stream compute_stream() const { return stream_; }
  /// @return the runtime's name ("host" without one).
  std::string name() const { return runtime_ ? runtime_->name() : "host"; }

 private:
  std::unique_ptr<device::Runtime> runtime_;  // declared first: the ops below use it until they go
  device::Stream stream_;                     // the compute stream
  std::unique_ptr<model::ModelOps<T>> model_;
  std::unique_ptr<step::StepOps<T>> step_;
  std::unique_ptr<step::LoopOps<T>> loop_;
  std::vector<std::unique_ptr<StagedCollective>> staged_;  // collective(): the device's staged groups
};

}  // namespace zt::train
