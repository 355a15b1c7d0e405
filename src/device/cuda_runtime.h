// device/cuda_runtime.h — the Runtime on a CUDA device, through the CUDA runtime API: cudaMalloc
// and cudaMallocHost, non-blocking streams, events without timing, cudaMemcpyAsync, and kernels
// enqueued by their cuda_body.
//
// Why so thin: every rule the engine must follow (device memory is not host memory, streams are
// unordered without events) is the GPU's own; the emulated device (device/emulated_runtime.h)
// checks them on the host, and this class only passes the calls on. Stream{0} is a non-blocking
// stream of its own, not CUDA's legacy default stream, so that it is as unordered with the other
// streams as the emulated device's. An event is a fresh cudaEvent_t per record(); a synchronize of
// its stream destroys it (it is complete, and waiting for a complete event does nothing), so a
// loop that synchronizes keeps a bounded number. With `--trace` (enable_trace) every copy and
// kernel also gets two timing events, turned into spans by take_trace at the end of the run.
//
// Compiled only in a build with CUDA (ZT_HAVE_CUDA); the header names no CUDA type, so including
// it needs no CUDA headers. Every call selects the runtime's device first (cudaSetDevice, per host
// thread in CUDA), so a rank's transfer threads and a thread rank on its own GPU stay on it. Not
// here: the kernels (ops/cuda/), NCCL (collective/nccl/).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/runtime.h"

namespace zt::device {

/// The CUDA runtime behind the Runtime interface (see the file comment).
class CudaRuntime final : public Runtime {
 public:
  /// Creates Stream{0} ("default") on a device. @param device its index (cudaSetDevice): every
  /// call of this runtime selects it first, on whichever host thread makes the call.
  explicit CudaRuntime(int device = 0);
  /// Waits for the device, then destroys events and streams and frees what is still allocated.
  ~CudaRuntime() override;
  CudaRuntime(const CudaRuntime&) = delete;
  CudaRuntime& operator=(const CudaRuntime&) = delete;

  /// @return "cuda".
  std::string name() const override { return "cuda"; }
  /// @param stream a stream of this runtime. @return its cudaStream_t.
  void* native_stream(Stream stream) const override;
  std::byte* allocate(std::size_t bytes, const std::string& name) override;
  void release(std::byte* ptr) override;
  std::byte* allocate_pinned(std::size_t bytes, const std::string& name) override;
  void release_pinned(std::byte* ptr) override;
  Stream create_stream(const std::string& name) override;
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream stream) override;
  Event record(Stream stream) override;
  /// @param stream the stream that waits. @param event from record() (a retired one: nothing to do).
  void wait(Stream stream, Event event) override;
  void synchronize(Stream stream) override;
  /// Wait for the whole device (cudaDeviceSynchronize).
  void synchronize() override;
  /// @param stream the stream. @param kernel the launch; its cuda_body must be set.
  void launch(Stream stream, const KernelLaunch& kernel) override;
  CopyStats stats() const override { return copies_.stats(); }
  /// @return the kernels launched so far.
  int64_t launches() const override { return launches_.load(); }
  bool is_device(const void* ptr) const override;
  /// From now on put two timing events around every copy and kernel (see take_trace).
  void enable_trace() override;
  /// Wait for the traced work's end events and turn each pair into a span: the GPU's elapsed time
  /// from an origin event, placed on the host's clock where that origin was seen complete.
  /// @return the work traced and not taken before, in the order it was enqueued.
  std::vector<DeviceWorkSpan> take_trace() override;

 private:
  void* stream_at(Stream stream) const;
  void retire_events(int stream);
  void* trace_mark(void* stream);  // with --trace: a timing event recorded on the stream, else null
  void end_span(Stream stream, void* cuda_stream, void* start, std::string what);

  struct TracedWork {  // one copy or kernel between two timing events (cudaEvent_t)
    std::string stream, what;
    void* start = nullptr;
    void* end = nullptr;
  };
  std::atomic<bool> tracing_{false};
  void* origin_ = nullptr;                             // the trace's origin event (cudaEvent_t)
  std::chrono::steady_clock::time_point origin_seen_;  // when the host saw it complete
  std::vector<TracedWork> traced_;                     // guarded by mutex_

  mutable std::mutex mutex_;  // guards everything below except the counters
  std::vector<std::string> stream_names_;
  std::vector<void*> streams_;                   // cudaStream_t, index = Stream::id
  std::unordered_map<int, void*> events_;        // cudaEvent_t of events not yet retired
  std::vector<std::vector<int>> stream_events_;  // per stream, its events not yet retired
  int next_event_ = 1;
  std::unordered_map<std::byte*, std::string> device_;  // live device allocations and their names
  std::unordered_map<std::byte*, std::string> pinned_;  // live pinned allocations and their names
  CopyCounter copies_;
  std::atomic<int64_t> launches_{0};
  int gpu_ = 0;         // the device index every call selects
  void select() const;  // cudaSetDevice(gpu_) on the calling thread
};

}  // namespace zt::device
