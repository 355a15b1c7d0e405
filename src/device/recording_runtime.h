// device/recording_runtime.h — a device that runs nothing and records what the engine would
// enqueue on it: every kernel with its name, the bytes its spans name and the arithmetic it
// declares, and every copy. A plan's device (zero-plan --device cuda: the roofline of a step).
//
// Why a runtime and not a list: the model's ops (model/model_ops.h) are the one place
// that decides which kernels a forward and a backward launch, over which bytes; running them on
// this runtime reads that decision instead of restating it, so the plan's launch count is the
// emulated device's (tests/device) and changes with the code.
//
// Device memory is address space reserved without access (mmap PROT_NONE, no memory committed):
// a plan of a model far larger than this machine costs nothing, and a host read of it faults at
// once. Pinned memory is ordinary host memory. Copies move nothing; events and synchronisation
// are immediate. Not here: timing (plan/roofline.h turns the records into time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/runtime.h"

namespace zt::device {

/// One kernel as the recording runtime saw it.
struct LaunchRecord {
  std::string name;           ///< the launch's name
  double bytes = 0;           ///< the bytes of its read and written spans (what it moves at least once)
  double flops = 0;           ///< the arithmetic it declares (KernelLaunch::flops)
  bool tensor_cores = false;  ///< on the tensor cores (KernelLaunch::tensor_cores)
};

/// The recording device (see the file comment). One host thread at a time.
class RecordingRuntime final : public Runtime {
 public:
  RecordingRuntime() = default;
  ~RecordingRuntime() override;
  RecordingRuntime(const RecordingRuntime&) = delete;
  RecordingRuntime& operator=(const RecordingRuntime&) = delete;

  /// @return "recording".
  std::string name() const override { return "recording"; }
  /// @param bytes its size (> 0). @param name unused. @return reserved, inaccessible address space.
  std::byte* allocate(std::size_t bytes, const std::string& name) override;
  /// @param ptr what allocate() returned.
  void release(std::byte* ptr) override;
  /// @param bytes its size (> 0). @param name unused. @return host memory.
  std::byte* allocate_pinned(std::size_t bytes, const std::string& name) override;
  /// @param ptr what allocate_pinned() returned.
  void release_pinned(std::byte* ptr) override;
  /// @param name unused. @return a new stream's handle.
  Stream create_stream(const std::string& name) override;
  /// Counts the copy; moves nothing. @param dst unused. @param src unused. @param bytes counted.
  /// @param kind counted. @param stream unused.
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream stream) override;
  /// @param stream unused. @return an event that is reached at once.
  Event record(Stream stream) override;
  /// Nothing to wait for. @param stream unused. @param event unused.
  void wait(Stream stream, Event event) override;
  /// Nothing to wait for. @param stream unused.
  void synchronize(Stream stream) override;
  /// Nothing to wait for.
  void synchronize() override;
  /// Records the kernel; runs nothing. @param stream unused. @param kernel the launch.
  void launch(Stream stream, const KernelLaunch& kernel) override;
  /// @return the copies counted so far.
  CopyStats stats() const override { return stats_; }
  /// @return the kernels recorded so far.
  int64_t launches() const override { return static_cast<int64_t>(records_.size()); }
  /// @param ptr any address. @return whether it lies in a live allocate() reservation.
  bool is_device(const void* ptr) const override;

  /// @return every kernel recorded, in launch order.
  const std::vector<LaunchRecord>& records() const { return records_; }
  /// Forget the records and copy counts (the reservations stay).
  void clear();

 private:
  std::map<const std::byte*, std::size_t> reserved_;  // base -> length
  std::map<const std::byte*, std::unique_ptr<std::byte[]>> pinned_;
  std::vector<LaunchRecord> records_;
  CopyStats stats_;
  int streams_ = 1;
  int events_ = 0;
};

}  // namespace zt::device
