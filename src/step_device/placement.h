// step_device/placement.h — where a training loop's tensors live and what computes on them: the host
// (the CPU kernels and plain loops) or a device runtime (device/runtime.h: the emulated device,
// or CUDA), chosen once from `--device`.
//
// Why one object: a loop on a device differs from the same loop on the host in exactly three
// things, and this is where each is answered — the slab its arena manages (host memory or the
// runtime's device memory, under the same ledger categories), the host-side slab for what the
// loop itself fills and reads (token ids, predictions: pinned on a device), and the three op
// sets the loop calls instead of touching memory: the model's (model/model_ops.h), the optimizer
// step's (step_ops.h) and the loop's own (loop_ops.h). On the host all three run on the host
// runtime (device/host_runtime.h): the device's ops, at once, over the rank's CPU pool. (The groups the ZeRO
// engine reduces over are staged around the host's collectives by collective/staged_groups.h.) The loop's step code is
// the same for both; only this object's answers differ. On a device every op is enqueued on one compute stream, so the
// loop's order is the stream's order. Every setting runs on either. Not here: the memory plan; the tiers' own streams
// (offload/transfer_thread.h, offload/param_file_tier.h), which take the runtime and the compute stream from here.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/cuda_probe.h"
#include "device/runtime.h"
#include "memory/arena.h"
#include "model/model_ops.h"
#include "step_device/loop_ops.h"
#include "step_device/step_ops.h"

namespace zt::step {

/// Where one loop's tensors live, and its ops there (see the file comment).
template <typename T>
class Placement {
 public:
  /// @param where `--device`: cpu runs on the host; emulated and cuda make a runtime
  /// (device/make_runtime.h; zt::Error in one line where cuda cannot run).
  /// @param gpu for cuda, the rank's GPU (train/collective_choice.h's gpu_of_rank).
  explicit Placement(device::Device where, int gpu = 0);
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

  /// @return the model's ops here.
  model::ModelOps<T>* model_ops() { return model_.get(); }
  /// @return protocol steps 4-6 here.
  step::StepOps<T>& step_ops() { return *step_; }
  /// @return the loop's own tensor work here.
  step::LoopOps<T>& loop_ops() { return *loop_; }
  /// @return the host-device copies enqueued so far, by kind (all zero on the host).
  device::CopyStats copies() const { return runtime_ ? runtime_->stats() : device::CopyStats{}; }
  /// @return the device runtime (null on the host): for what copies on streams of its own.
  device::Runtime* runtime() { return runtime_.get(); }
  /// @return the compute stream every op is enqueued on (meaningless on the host).
  device::Stream compute_stream() const { return stream_; }
  /// @return the runtime's name ("host" without one).
  std::string name() const { return runtime_ ? runtime_->name() : "host"; }

 private:
  std::unique_ptr<device::Runtime> runtime_;  // declared first: the ops below use it until they go
  std::unique_ptr<device::Runtime> host_;     // on the host: the runtime every op runs on
  device::Stream stream_;                     // the compute stream
  std::unique_ptr<model::ModelOps<T>> model_;
  std::unique_ptr<step::StepOps<T>> step_;
  std::unique_ptr<step::LoopOps<T>> loop_;
};

}  // namespace zt::step
