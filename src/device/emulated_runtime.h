// device/emulated_runtime.h — a device that runs on the host but is strict where a GPU is strict,
// so that the engine's device path can be proven on a machine without one.
//
// Three strictnesses, each a bug a GPU would punish and a plain host run would hide:
//  - device memory is not host memory: allocations are protected pages that only the device's
//    own copies and kernels may touch; host code that reads them dies with one line naming the
//    buffer (device/protected_memory.h, which also states the limit of that protection);
//  - streams are asynchronous: each stream is a thread of its own that runs its queue in order,
//    copy_async and launch return at once, events and waits order streams, and only a synchronize
//    makes the host wait;
//  - missing synchronisation is found deterministically: every copy and launch is checked, when
//    it is enqueued, against the accesses of earlier work on other streams that no event or
//    synchronize orders before it (device/hazard_clock.h), and a race is one zt::Error naming both
//    operations, both streams, the buffer and the bytes, whatever the threads' timing.
//
// Errors met by a stream's work (a kernel that throws, a wait for an event of a failed stream) are
// kept, the stream skips its later work (as a CUDA error is sticky), events recorded after the
// failure fail their waiters instead of leaving them blocked, and every synchronize of the stream
// rethrows the error as zt::Error. The destructor runs what is queued, then joins the threads.
//
// Not here: what kernels compute (their host bodies come with each KernelLaunch), CUDA
// (device/cuda_runtime.h), timing or bandwidth models (the emulated device is as fast as memcpy).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/hazard_clock.h"
#include "device/protected_memory.h"
#include "device/runtime.h"

namespace zt::device {

/// The emulated device (see the file comment). All methods may be called from several host
/// threads; device work runs on one thread per stream.
class EmulatedRuntime final : public Runtime {
 public:
  /// A runtime with its default stream, Stream{0}, named "default".
  EmulatedRuntime();
  /// Runs every stream's queued work (errors are dropped: synchronize first to see them), joins
  /// the streams' threads and frees what is still allocated.
  ~EmulatedRuntime() override;
  EmulatedRuntime(const EmulatedRuntime&) = delete;
  EmulatedRuntime& operator=(const EmulatedRuntime&) = delete;

  /// @return "emulated".
  std::string name() const override { return "emulated"; }
  /// @param bytes its size (> 0). @param name what it holds, for messages.
  /// @return a protected, page-aligned device buffer, filled with 0xFF bytes.
  std::byte* allocate(std::size_t bytes, const std::string& name) override;
  /// Waits for every stream's queued work (like cudaFree), then unmaps.
  /// @param ptr what allocate() returned.
  void release(std::byte* ptr) override;
  /// @param bytes its size (> 0). @param name what it holds, for messages.
  /// @return ordinary host memory, page-aligned.
  std::byte* allocate_pinned(std::size_t bytes, const std::string& name) override;
  /// Waits for every stream's queued work (like cudaFreeHost), then frees.
  /// @param ptr what allocate_pinned() returned.
  void release_pinned(std::byte* ptr) override;
  /// @param name the stream's name, for messages. @return a new stream with a thread of its own.
  Stream create_stream(const std::string& name) override;
  /// Checks the pointers against the kind and the bytes against earlier work, then enqueues.
  /// @param dst where the bytes go. @param src where they come from. @param bytes how many (0:
  /// nothing happens). @param kind which side is device memory. @param stream the stream.
  void copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream stream) override;
  /// @param stream the stream. @return an event reached when the stream's thread gets to it.
  Event record(Stream stream) override;
  /// @param stream the stream that waits (its thread blocks there). @param event from record();
  /// one retired by a synchronize of its stream is complete, and waiting for it does nothing.
  void wait(Stream stream, Event event) override;
  /// @param stream the stream to drain; its error, if any, is rethrown as zt::Error.
  void synchronize(Stream stream) override;
  /// Drain every stream; the first error (in stream order) is rethrown as zt::Error.
  void synchronize() override;
  /// Checks the kernel's spans against earlier work, then enqueues its host body; cuda_body is
  /// ignored. @param stream the stream. @param kernel the launch.
  void launch(Stream stream, const KernelLaunch& kernel) override;
  /// @return the copies enqueued so far, by kind.
  CopyStats stats() const override { return copies_.stats(); }
  /// @return the kernels launched so far.
  int64_t launches() const override { return launches_.load(); }
  /// Each stream's thread times every copy, kernel and wait it runs from now on.
  void enable_trace() override;
  /// @return the spans timed and not taken before.
  std::vector<DeviceWorkSpan> take_trace() override;
  /// @param ptr any address. @return whether it is inside a live device allocation.
  bool is_device(const void* ptr) const override;

  /// @return how many accesses the race checker remembers now; bounded by the work in flight,
  /// not by the work done (tests check that it does not grow with the number of steps).
  std::size_t tracked_accesses() const;

 private:
  struct StreamState;
  struct EventState;
  struct EventEntry {
    std::shared_ptr<EventState> state;
    VectorClock clock;  // what the event orders
    int stream = 0;     // where it was recorded
  };
  StreamState& stream_at(Stream stream);
  std::vector<StreamState*> all_streams();  // every stream, collected under the lock
  TrackedAccess device_range(const void* ptr, std::size_t bytes, bool write, const std::string& what,
                             const std::string& role) const;
  // enqueue work on a stream's thread; `label` names it in the trace
  void submit(StreamState& stream, const std::string& what, std::function<void()> work, std::string label);
  std::string drain(const std::vector<StreamState*>& streams);

  ProtectedMemory memory_;
  mutable std::mutex mutex_;  // guards everything below except the counters
  HazardClock clock_;
  std::unordered_map<std::byte*, std::size_t> pinned_;  // host staging allocations and their sizes
  std::unordered_map<int, EventEntry> events_;          // recorded, not yet retired by a synchronize
  int next_event_ = 1;
  CopyCounter copies_;
  std::atomic<int64_t> launches_{0};
  std::atomic<bool> tracing_{false};
  std::mutex trace_mutex_;  // guards trace_ (every stream's thread appends)
  std::vector<DeviceWorkSpan> trace_;
  std::vector<std::unique_ptr<StreamState>> streams_;  // index = Stream::id; emptied first on destruction
};

}  // namespace zt::device
