// collective/device_routed.h — one group made of two: a device-side library (NCCL) for the calls
// whose buffers are device memory, and a host-side one (Gloo) for the calls on host memory.
//
// Why two: a training step reduces two kinds of data. Its gradients and parameters live on the
// GPU and should never cross the host; NCCL moves them GPU to GPU. Its few scalars (the loss sum,
// the overflow flag, the gradient norm's block sums) are host values, which NCCL cannot read;
// Gloo handles them as on the host. Every rank issues the same calls in the same order, and a
// buffer's side is the same on every rank, so each library sees the same sequence on every rank:
// neither can deadlock on the other, and in deterministic mode both give the canonical tree's
// bits (collective/nccl/nccl_collective.h), so the step's bits are the staged path's.
//
// A call whose input and output lie on different sides is an error, named; so are sub-groups and
// point-to-point batches (a plain data-parallel world only: train/collective_choice.h refuses the
// rest before any rank starts). Not here: choosing the libraries, or the device's streams (the
// device group orders itself after the caller's stream).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collective/collective.h"
#include "device/runtime.h"

namespace zt {

/// Device buffers to one group, host buffers to the other (see the file comment).
class DeviceRoutedCollective final : public Collective {
 public:
  /// @param host the group for host buffers (outlives this object). @param device the group for
  /// device buffers (owned). @param runtime tells the two apart (outlives this object).
  DeviceRoutedCollective(Collective& host, std::unique_ptr<Collective> device, const device::Runtime& runtime);

  /// @return the rank (both groups agree; checked at construction).
  int rank() const override { return host_.rank(); }
  /// @return the size.
  int size() const override { return host_.size(); }
  /// @return the reduction mode (both groups agree; checked at construction).
  ReduceMode mode() const override { return host_.mode(); }
  /// @return both groups' traffic, added.
  CommStats stats() const override;

 protected:
  Work start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) override;
  Work start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts, DType dtype,
                              ReduceOp op) override;
  Work start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                          DType dtype) override;
  Work start_broadcast(void* data, std::size_t count, DType dtype, int root) override;
  Work start_barrier() override;
  Work start_p2p(std::vector<P2pOp> ops) override;
  std::unique_ptr<Collective> make_subgroup(const std::vector<int>& members, const std::string& name) override;

 private:
  // The group for a call on these buffers; both on one side, or an error naming the call.
  Collective& side(const char* call, const void* a, const void* b);

  Collective& host_;
  std::unique_ptr<Collective> device_;
  const device::Runtime& rt_;
};

}  // namespace zt
