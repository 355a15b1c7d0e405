// device/cuda_runtime.cc — the Runtime's calls passed to the CUDA runtime API (see cuda_runtime.h).
#include "device/cuda_runtime.h"

#include <cuda_runtime_api.h>

#include "core/check.h"

namespace zt::device {
namespace {

// Throw one line naming the call, what it was for, and the runtime's words for the error.
void check_cuda(cudaError_t err, const char* call, const std::string& what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so that the next call starts clean
  ZT_FAIL("cuda device: ", call, " (", what, "): ", cudaGetErrorString(err));
}

cudaMemcpyKind memcpy_kind(CopyKind kind) {
  switch (kind) {
    case CopyKind::host_to_device:
      return cudaMemcpyHostToDevice;
    case CopyKind::device_to_host:
      return cudaMemcpyDeviceToHost;
    case CopyKind::device_to_device:
      return cudaMemcpyDeviceToDevice;
  }
  ZT_FAIL("cuda device: a copy kind without a cudaMemcpyKind");
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }

}  // namespace

CudaRuntime::CudaRuntime(int device) : gpu_(device) {
  ZT_CHECK(device >= 0, "cuda device: device index ", device, " (need >= 0)");
  create_stream("default");
}

void CudaRuntime::select() const { check_cuda(cudaSetDevice(gpu_), "cudaSetDevice", concat("device ", gpu_)); }

void* CudaRuntime::native_stream(Stream stream) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stream_at(stream);
}

CudaRuntime::~CudaRuntime() {
  // Errors are dropped here (a destructor cannot report them); synchronize first to see them.
  (void)cudaSetDevice(gpu_);
  (void)cudaDeviceSynchronize();
  for (auto& [id, event] : events_) (void)cudaEventDestroy(as_event(event));
  for (auto& w : traced_) {
    (void)cudaEventDestroy(as_event(w.start));
    (void)cudaEventDestroy(as_event(w.end));
  }
  if (origin_) (void)cudaEventDestroy(as_event(origin_));
  for (void* s : streams_) (void)cudaStreamDestroy(as_stream(s));
  for (auto& [ptr, name] : device_) (void)cudaFree(ptr);
  for (auto& [ptr, name] : pinned_) (void)cudaFreeHost(ptr);
  (void)cudaGetLastError();
}

void* CudaRuntime::stream_at(Stream stream) const {
  ZT_CHECK(stream.id >= 0 && static_cast<std::size_t>(stream.id) < streams_.size(), "cuda device: stream ", stream.id,
           " was not created by this runtime");
  return streams_[static_cast<std::size_t>(stream.id)];
}

std::byte* CudaRuntime::allocate(std::size_t bytes, const std::string& name) {
  select();
  ZT_CHECK(bytes > 0, "cuda device: allocate 0 bytes for '", name, "' (device allocations have a size)");
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc", concat("'", name, "', ", bytes, " bytes"));
  std::lock_guard<std::mutex> lock(mutex_);
  device_.emplace(static_cast<std::byte*>(p), name);
  return static_cast<std::byte*>(p);
}

void CudaRuntime::release(std::byte* ptr) {
  select();
  std::string name;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = device_.find(ptr);
    ZT_CHECK(it != device_.end(), "cuda device: release of ", static_cast<const void*>(ptr),
             ", which allocate() did not return");
    name = it->second;
    device_.erase(it);
  }
  check_cuda(cudaFree(ptr), "cudaFree", "'" + name + "'");
}

std::byte* CudaRuntime::allocate_pinned(std::size_t bytes, const std::string& name) {
  select();
  ZT_CHECK(bytes > 0, "cuda device: allocate_pinned 0 bytes for '", name, "'");
  void* p = nullptr;
  check_cuda(cudaMallocHost(&p, bytes), "cudaMallocHost", concat("'", name, "', ", bytes, " bytes"));
  std::lock_guard<std::mutex> lock(mutex_);
  pinned_.emplace(static_cast<std::byte*>(p), name);
  return static_cast<std::byte*>(p);
}

void CudaRuntime::release_pinned(std::byte* ptr) {
  select();
  std::string name;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = pinned_.find(ptr);
    ZT_CHECK(it != pinned_.end(), "cuda device: release_pinned of ", static_cast<const void*>(ptr),
             ", which allocate_pinned() did not return");
    name = it->second;
    pinned_.erase(it);
  }
  check_cuda(cudaFreeHost(ptr), "cudaFreeHost", "'" + name + "'");
}

Stream CudaRuntime::create_stream(const std::string& name) {
  select();
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
             "stream '" + name + "'");
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.push_back(s);
  stream_names_.push_back(name);
  stream_events_.emplace_back();
  return Stream{static_cast<int>(streams_.size() - 1)};
}

void CudaRuntime::copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream stream) {
  select();
  cudaStream_t s = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = as_stream(stream_at(stream));
  }
  if (bytes == 0) return;
  void* start = trace_mark(s);
  check_cuda(cudaMemcpyAsync(dst, src, bytes, memcpy_kind(kind), s), "cudaMemcpyAsync",
             concat(word_of(kind), ", ", bytes, " bytes"));
  if (start) end_span(stream, s, start, "copy " + word_of(kind));
  copies_.add(kind, bytes);
}

Event CudaRuntime::record(Stream stream) {
  select();
  std::lock_guard<std::mutex> lock(mutex_);
  cudaStream_t s = as_stream(stream_at(stream));
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags", "an event");
  const cudaError_t err = cudaEventRecord(e, s);
  if (err != cudaSuccess) (void)cudaEventDestroy(e);
  check_cuda(err, "cudaEventRecord", "stream '" + stream_names_[static_cast<std::size_t>(stream.id)] + "'");
  const int id = next_event_++;
  events_.emplace(id, e);
  stream_events_[static_cast<std::size_t>(stream.id)].push_back(id);
  return Event{id};
}

void CudaRuntime::wait(Stream stream, Event event) {
  select();
  std::lock_guard<std::mutex> lock(mutex_);
  cudaStream_t s = as_stream(stream_at(stream));
  ZT_CHECK(event.id >= 1 && event.id < next_event_, "cuda device: wait for event ", event.id,
           ", which record() did not return");
  const auto it = events_.find(event.id);
  if (it == events_.end()) return;  // retired by a synchronize: complete
  check_cuda(cudaStreamWaitEvent(s, as_event(it->second), 0), "cudaStreamWaitEvent",
             "stream '" + stream_names_[static_cast<std::size_t>(stream.id)] + "'");
}

void CudaRuntime::retire_events(int stream) {
  for (const int id : stream_events_[static_cast<std::size_t>(stream)]) {
    const auto it = events_.find(id);
    if (it == events_.end()) continue;
    (void)cudaEventDestroy(as_event(it->second));
    events_.erase(it);
  }
  stream_events_[static_cast<std::size_t>(stream)].clear();
}

void CudaRuntime::synchronize(Stream stream) {
  select();
  cudaStream_t s = nullptr;
  std::vector<int> before;
  std::string name;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = as_stream(stream_at(stream));
    before = stream_events_[static_cast<std::size_t>(stream.id)];
    name = stream_names_[static_cast<std::size_t>(stream.id)];
  }
  check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize", "stream '" + name + "'");
  std::lock_guard<std::mutex> lock(mutex_);
  // only the events recorded before the wait are known complete
  auto& events = stream_events_[static_cast<std::size_t>(stream.id)];
  std::vector<int> later(events.begin() + static_cast<std::ptrdiff_t>(before.size()), events.end());
  events = std::move(before);
  retire_events(stream.id);
  events = std::move(later);
}

void CudaRuntime::synchronize() {
  select();
  std::size_t streams = 0;
  std::vector<std::size_t> counts;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    streams = streams_.size();
    for (const auto& e : stream_events_) counts.push_back(e.size());
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", "every stream");
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < streams; ++i) {
    auto& events = stream_events_[i];
    std::vector<int> later(events.begin() + static_cast<std::ptrdiff_t>(counts[i]), events.end());
    events.resize(counts[i]);
    retire_events(static_cast<int>(i));
    events = std::move(later);
  }
}

void CudaRuntime::launch(Stream stream, const KernelLaunch& kernel) {
  select();
  ZT_CHECK(static_cast<bool>(kernel.cuda_body), "cuda device: kernel ", kernel.name,
           " was not compiled for CUDA (its launch has no cuda_body; build it where ZT_WITH_CUDA_KERNELS is defined)");
  cudaStream_t s = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = as_stream(stream_at(stream));
  }
  void* start = trace_mark(s);
  ++launches_;
  kernel.cuda_body(s);
  if (start) end_span(stream, s, start, "kernel '" + kernel.name + "'");
}

void CudaRuntime::enable_trace() {
  if (tracing_.exchange(true)) return;
  cudaEvent_t origin = nullptr;
  check_cuda(cudaEventCreate(&origin), "cudaEventCreate", "the trace's origin");
  cudaStream_t s = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = as_stream(stream_at(Stream{0}));
    origin_ = origin;
  }
  check_cuda(cudaEventRecord(origin, s), "cudaEventRecord", "the trace's origin");
  check_cuda(cudaEventSynchronize(origin), "cudaEventSynchronize", "the trace's origin");
  origin_seen_ = std::chrono::steady_clock::now();  // the GPU's time 0 on the host's clock, give or take a wake-up
}

void* CudaRuntime::trace_mark(void* stream) {
  if (!tracing_.load()) return nullptr;
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreate(&e), "cudaEventCreate", "a trace span");
  check_cuda(cudaEventRecord(e, as_stream(stream)), "cudaEventRecord", "a trace span");
  return e;
}

void CudaRuntime::end_span(Stream stream, void* cuda_stream, void* start, std::string what) {
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreate(&e), "cudaEventCreate", "a trace span");
  check_cuda(cudaEventRecord(e, as_stream(cuda_stream)), "cudaEventRecord", "a trace span");
  std::lock_guard<std::mutex> lock(mutex_);
  traced_.push_back({stream_names_[static_cast<std::size_t>(stream.id)], std::move(what), start, e});
}

std::vector<DeviceWorkSpan> CudaRuntime::take_trace() {
  std::vector<TracedWork> work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    work.swap(traced_);
  }
  std::vector<DeviceWorkSpan> spans;
  const auto at = [this](void* event) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, as_event(origin_), as_event(event)), "cudaEventElapsedTime", "a trace span");
    return origin_seen_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double, std::milli>(ms));
  };
  for (auto& w : work) {
    check_cuda(cudaEventSynchronize(as_event(w.end)), "cudaEventSynchronize", "a trace span");
    spans.push_back({w.stream, w.what, at(w.start), at(w.end)});
    (void)cudaEventDestroy(as_event(w.start));
    (void)cudaEventDestroy(as_event(w.end));
  }
  return spans;
}

bool CudaRuntime::is_device(const void* ptr) const {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    (void)cudaGetLastError();  // an unregistered host pointer: clear the sticky-free error
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

}  // namespace zt::device
