// device/runtime.h — the one interface through which the training engine does everything
// device-side: device memory, host staging memory, streams, events, asynchronous copies and kernel
// launches. Two implementations stand behind it: the CUDA runtime (device/cuda_runtime.h) and an
// emulated device that runs on the host (device/emulated_runtime.h).
//
// Why an interface, and why small: the engine must run the same code on a GPU and on a machine
// without one, and the emulated device is there to be *strict where a GPU is strict* (host code
// cannot read device memory, streams run concurrently, a missing event is a bug), so that the
// engine's device path is proven on a CPU. Everything here is what both can honour: the CUDA
// stream/event model (work on one stream runs in order; work on two streams is unordered unless
// an event orders it; the host waits only at a synchronize).
//
// Not here: what a kernel computes (ops/, packed by ops/op_launch.h), which memory
// holds which tensor (memory/), collectives (collective/), choosing a runtime
// (device/make_runtime.h).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/words.h"

namespace zt::device {

/// Which way a copy moves bytes (cudaMemcpyKind without the "default" guess).
enum class CopyKind { host_to_device, device_to_host, device_to_device };
/// @return the words that name the copy kinds in printed lines, in enum order.
constexpr auto words(CopyKind) {
  return std::array{Word{"host_to_device", CopyKind::host_to_device}, Word{"device_to_host", CopyKind::device_to_host},
                    Word{"device_to_device", CopyKind::device_to_device}};
}
/// The number of copy kinds (the size of CopyStats' arrays).
inline constexpr std::size_t kCopyKinds = 3;

/// A stream: a queue of device work that runs in the order it was enqueued. Stream{0} is the
/// stream every runtime has from the start ("default"); create_stream() makes the others.
struct Stream {
  int id = 0;  ///< the runtime's number for the stream
  /// @param other another handle. @return whether both name the same stream.
  bool operator==(const Stream& other) const = default;
};

/// An event: a point in one stream's queue, captured by Runtime::record(). Another stream that
/// waits for it runs its later work only after everything enqueued before the point has run.
struct Event {
  int id = -1;  ///< the runtime's number for the event (-1: no event)
  /// @param other another handle. @return whether both name the same event.
  bool operator==(const Event& other) const = default;
};

/// Copies and bytes moved, by CopyKind (counted when a copy is enqueued). Snapshots subtract, so
/// a caller measures one phase as `after - before`.
struct CopyStats {
  std::array<int64_t, kCopyKinds> copies{};  ///< copies enqueued, indexed by CopyKind
  std::array<int64_t, kCopyKinds> bytes{};   ///< bytes those copies move, indexed by CopyKind

  /// @param kind a copy kind. @return the copies of that kind.
  int64_t copies_of(CopyKind kind) const { return copies[static_cast<std::size_t>(kind)]; }
  /// @param kind a copy kind. @return the bytes moved by copies of that kind.
  int64_t bytes_of(CopyKind kind) const { return bytes[static_cast<std::size_t>(kind)]; }

  /// @param a one count. @param b another. @return their element-wise sum.
  friend CopyStats operator+(const CopyStats& a, const CopyStats& b) {
    CopyStats s;
    for (std::size_t k = 0; k < kCopyKinds; ++k) {
      s.copies[k] = a.copies[k] + b.copies[k];
      s.bytes[k] = a.bytes[k] + b.bytes[k];
    }
    return s;
  }
  /// @param a a later snapshot. @param b an earlier one. @return what happened between them.
  friend CopyStats operator-(const CopyStats& a, const CopyStats& b) {
    CopyStats s;
    for (std::size_t k = 0; k < kCopyKinds; ++k) {
      s.copies[k] = a.copies[k] - b.copies[k];
      s.bytes[k] = a.bytes[k] - b.bytes[k];
    }
    return s;
  }
  /// @param other another count. @return whether every count is equal.
  bool operator==(const CopyStats& other) const = default;
};

/// The copies a runtime has enqueued, counted from several threads at once; stats() is a snapshot.
struct CopyCounter {
  std::array<std::atomic<int64_t>, kCopyKinds> copies{};  ///< copies, indexed by CopyKind
  std::array<std::atomic<int64_t>, kCopyKinds> bytes{};   ///< their bytes, indexed by CopyKind
  /// Count one copy. @param kind its kind. @param n its bytes.
  void add(CopyKind kind, std::size_t n) {
    copies[static_cast<std::size_t>(kind)].fetch_add(1);
    bytes[static_cast<std::size_t>(kind)].fetch_add(static_cast<int64_t>(n));
  }
  /// @return the counts so far.
  CopyStats stats() const {
    CopyStats s;
    for (std::size_t k = 0; k < kCopyKinds; ++k) {
      s.copies[k] = copies[k].load();
      s.bytes[k] = bytes[k].load();
    }
    return s;
  }
};

/// A range of device memory that an operation reads or writes.
struct DeviceSpan {
  const void* ptr = nullptr;  ///< its first byte (device memory)
  std::size_t bytes = 0;      ///< its length
};

/// The span of `count` elements starting at a device pointer.
/// @param ptr the first element (device memory). @param count elements. @return the span.
template <typename T>
DeviceSpan span_of(const T* ptr, std::size_t count) {
  return {ptr, count * sizeof(T)};
}

/// One piece of device work as it ran on its stream (Runtime::take_trace): for `--trace`.
struct DeviceWorkSpan {
  std::string stream;                           ///< the stream's name ("compute", "tier copies")
  std::string what;                             ///< e.g. "kernel 'gelu_forward'", "copy device_to_host"
  std::chrono::steady_clock::time_point start;  ///< when the stream began it
  std::chrono::steady_clock::time_point end;    ///< when it was done
};

/// One kernel launch, type-erased: its name (for messages), the device ranges it reads and
/// writes (what the emulated device checks for missing synchronisation), and its body for each
/// runtime. ops/op_launch.h builds one from an op.
struct KernelLaunch {
  std::string name;                 ///< e.g. "gelu_forward"
  std::vector<DeviceSpan> reads;    ///< device ranges the kernel reads
  std::vector<DeviceSpan> writes;   ///< device ranges the kernel writes
  std::function<void()> host_body;  ///< the kernel run on the host thread by thread (the emulated device)
  /// The kernel on the host runtime (device/host_runtime.h): its items or blocks split over the
  /// calling thread's CPU pool, or the CPU's own fast form (a GEMM); empty: host_body.
  std::function<void()> pool_body;
  std::function<void(void*)> cuda_body;  ///< enqueue on a cudaStream_t (empty without CUDA kernels)
  double flops = 0;                      ///< the arithmetic it does (a roofline's compute side; 0: not declared)
  bool tensor_cores = false;             ///< its flops are 16-bit products on a GPU's tensor cores (the dense rate)
};

/// The device as the engine sees it. Every method is called from host code; the work that copies
/// and launches enqueue runs later, on the stream, and its errors surface at a synchronize.
class Runtime {
 public:
  virtual ~Runtime() = default;

  /// @return the runtime's name ("cuda", "emulated").
  virtual std::string name() const = 0;

  /// Allocate device memory (like cudaMalloc): host code must not read or write it; copies and
  /// kernels do. @param bytes its size (> 0). @param name what it holds, for messages.
  /// @return its first byte, aligned to at least 256 bytes.
  virtual std::byte* allocate(std::size_t bytes, const std::string& name) = 0;
  /// Free device memory from allocate(); waits for the device's queued work first (like cudaFree).
  /// @param ptr what allocate() returned.
  virtual void release(std::byte* ptr) = 0;

  /// Allocate page-locked host memory for staging copies (like cudaMallocHost): ordinary host
  /// memory to the host. @param bytes its size (> 0). @param name what it holds, for messages.
  /// @return its first byte, aligned to at least 256 bytes.
  virtual std::byte* allocate_pinned(std::size_t bytes, const std::string& name) = 0;
  /// Free memory from allocate_pinned(). @param ptr what allocate_pinned() returned.
  virtual void release_pinned(std::byte* ptr) = 0;

  /// Create a stream that runs concurrently with every other (CUDA: non-blocking).
  /// @param name what it is for ("h2d", "compute"), for messages. @return its handle.
  virtual Stream create_stream(const std::string& name) = 0;

  /// Enqueue a copy on a stream; returns at once. The source must not be written, nor the
  /// destination read, until the copy is known to be done (an event or a synchronize).
  /// @param dst where the bytes go. @param src where they come from. @param bytes how many.
  /// @param kind which side of each is device memory. @param stream the stream.
  virtual void copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream stream) = 0;

  /// Capture the current end of a stream's queue (like cudaEventRecord on a fresh event).
  /// @param stream the stream. @return the event, reached once the work before it has run.
  virtual Event record(Stream stream) = 0;
  /// Make a stream's later work wait for an event (like cudaStreamWaitEvent); the host does not
  /// wait. @param stream the stream that waits. @param event an event from record().
  virtual void wait(Stream stream, Event event) = 0;

  /// Block the host until a stream's queued work has run; rethrow (zt::Error) the first error
  /// that work met. @param stream the stream.
  virtual void synchronize(Stream stream) = 0;
  /// Block the host until every stream's queued work has run; rethrow the first error.
  virtual void synchronize() = 0;

  /// Enqueue a kernel on a stream; returns at once.
  /// @param stream the stream. @param kernel the launch (its spans name device memory).
  virtual void launch(Stream stream, const KernelLaunch& kernel) = 0;

  /// @return the copies enqueued so far, by kind.
  virtual CopyStats stats() const = 0;
  /// @return the kernels launched so far.
  virtual int64_t launches() const = 0;
  /// @return whether this runtime's memory is the host's (host code may then touch it).
  virtual bool host_memory() const { return false; }
  /// The library's own handle of a stream, for a library that enqueues work of its own on the
  /// device (NCCL orders its calls after this stream). @param stream a stream of this runtime.
  /// @return the CUDA runtime's cudaStream_t; null for a runtime without one.
  virtual void* native_stream(Stream stream) const {
    (void)stream;
    return nullptr;
  }
  /// Record, from now on, when each copy, kernel and wait runs on its stream (`--trace`; off by
  /// default: it costs two clock reads, or two timing events on a GPU, per operation). The
  /// emulated device times its streams' threads; the CUDA runtime times copies and kernels with
  /// events (waits are not work there).
  virtual void enable_trace() {}
  /// @return the work recorded and not taken before, each stream's in the order it ran.
  virtual std::vector<DeviceWorkSpan> take_trace() { return {}; }

  /// Whether an address is this runtime's device memory (what a collective must stage through
  /// the host before a host-side library may read it). @param ptr any address.
  /// @return true inside a live allocate() region.
  virtual bool is_device(const void* ptr) const = 0;
};

/// A buffer an op set owns and grows on demand (scratch, staging): device memory, or pinned host
/// memory when `pinned`. Growing frees the old buffer first (the runtime waits for queued work
/// that may still use it), so the contents are not kept.
struct Room {
  std::byte* ptr = nullptr;  ///< its first byte (null until the first at_least)
  std::size_t bytes = 0;     ///< its size
  bool pinned = false;       ///< pinned host memory (allocate_pinned) rather than device memory

  /// @param rt the runtime that owns it. @param want the bytes needed (> 0).
  /// @param name what it holds, for the runtime's messages. @return ptr, at least `want` bytes.
  std::byte* at_least(Runtime& rt, std::size_t want, const char* name) {
    if (bytes < want) {
      release(rt);
      ptr = pinned ? rt.allocate_pinned(want, name) : rt.allocate(want, name);
      bytes = want;
    }
    return ptr;
  }
  /// Free the buffer, if any (a later at_least allocates again). @param rt the runtime that owns it.
  void release(Runtime& rt) {
    if (ptr && pinned) rt.release_pinned(ptr);
    if (ptr && !pinned) rt.release(ptr);
    ptr = nullptr;
    bytes = 0;
  }
};

}  // namespace zt::device
