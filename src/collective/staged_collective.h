// collective/staged_collective.h — a Collective over device buffers for a host-side backend:
// every device buffer a call names is copied to pinned host memory, the wrapped collective (Gloo)
// runs on the host copies, and the result is copied back (device → pinned host → collective →
// device). Host buffers pass straight through, so one group serves both the engine's device
// tensors and its host-side values (losses, flags, norm sums).
//
// Why: ranks without a device-side collective library — every run on the emulated device, and
// ranks that share one GPU, where NCCL refuses two ranks on one device — still reduce with the
// project's canonical tree, so the bits are the host run's. It is the slow way on purpose: the
// GPU path between distinct devices is NCCL on the device buffers themselves.
//
// Each call is synchronous: the source is copied down after everything already queued on the
// compute stream (which produced it), the host collective runs and is waited for, the result is
// copied up and the stream synchronised, and the returned Work is already complete. So there is
// no overlap of communication with computation here (--overlap changes nothing), and because
// every rank issues its collectives in one order, completing each at once cannot deadlock.
// A point-to-point batch stages the same way: its device sends packed into the input room, its
// device receives into the output room.
// The pinned buffers ("rooms", one for inputs and one for outputs) are reused, one call at a time.
// A training loop reserves them before its first step for the largest call its plan foresees and
// reports their bytes in its host memory ledger (category `collective_staging`, beside a
// prediction); a call larger than its room grows it, and the report then shows the mismatch.
// Not here: the reduction itself (the wrapped backend's), device-side collectives (nccl/).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "collective/collective.h"
#include "device/runtime.h"

namespace zt {

/// Ledger category of the staged groups' pinned rooms (host memory).
inline constexpr const char* kCollectiveStagingCategory = "collective_staging";

/// The pinned rooms a staged group needs: the largest input and the largest output among its calls
/// on device buffers (0: no such call).
struct StagingRooms {
  std::size_t in = 0;   ///< bytes of the largest input staged down
  std::size_t out = 0;  ///< bytes of the largest output of a reduce-scatter or all-gather staged up
  /// @return both rooms together.
  std::size_t total() const { return in + out; }
};

/// A Collective that stages device buffers through pinned host memory (see the file comment).
class StagedCollective final : public Collective {
 public:
  /// @param inner the host-side group (kept by reference; it must outlive this object).
  /// @param runtime the device whose buffers are staged (outlives this object).
  /// @param stream the stream the buffers' producers and consumers run on.
  StagedCollective(Collective& inner, device::Runtime& runtime, device::Stream stream);
  /// A sub-group's staging owns its inner group. @param inner the group (owned).
  /// @param runtime the device. @param stream the stream.
  StagedCollective(std::unique_ptr<Collective> inner, device::Runtime& runtime, device::Stream stream);
  ~StagedCollective() override;
  StagedCollective(const StagedCollective&) = delete;
  StagedCollective& operator=(const StagedCollective&) = delete;

  /// @return the wrapped group's rank.
  int rank() const override { return inner_.rank(); }
  /// @return the wrapped group's size.
  int size() const override { return inner_.size(); }
  /// @return the wrapped group's mode.
  ReduceMode mode() const override { return inner_.mode(); }
  /// @return the wrapped group's traffic (staging copies are the runtime's CopyStats).
  CommStats stats() const override { return inner_.stats(); }

  /// Grow the rooms now to at least these sizes (see the file comment). @param rooms the sizes.
  void reserve(StagingRooms rooms);
  /// @return the rooms' bytes now.
  std::size_t room_bytes() const { return in_.bytes + out_.bytes; }

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
  // A pinned buffer grown on demand.
  struct Pinned {
    std::byte* ptr = nullptr;
    std::size_t bytes = 0;
  };
  void grow(Pinned& room, std::size_t bytes);  // to at least `bytes`; every copy through it was waited for
  // Where the host collective reads or writes a buffer: the buffer itself (host memory), or a
  // pinned stand-in (device memory), filled from the device when `fill`.
  void* host_side(Pinned& room, const void* buffer, std::size_t bytes, bool fill);
  // Copy a stand-in's bytes back to the device buffer it stands for, if it is one.
  void write_back(void* buffer, const void* host, std::size_t bytes);

  std::unique_ptr<Collective> owned_;  // a sub-group's inner group
  Collective& inner_;
  device::Runtime& rt_;
  device::Stream stream_;
  Pinned in_, out_;
};

}  // namespace zt
