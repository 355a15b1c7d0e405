// device/emulated_runtime.cc — streams as threads, events as flags they wait on, and every
// copy and launch checked when it is enqueued (see emulated_runtime.h).
#include "device/emulated_runtime.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <utility>

#include "core/check.h"
#include "core/job_thread.h"

namespace zt::device {

// One stream: a FIFO thread, and the first error its work met (later work is then skipped).
struct EmulatedRuntime::StreamState {
  StreamState(std::string n, int i) : name(std::move(n)), index(i) {}
  std::string name;
  int index;                // in the hazard clock, and the Stream's id
  std::vector<int> events;  // recorded here, not yet retired (guarded by the runtime's mutex)

  /// @return the error this stream's work met, empty if none.
  std::string failure() {
    std::lock_guard<std::mutex> lock(failure_mutex);
    return failure_text;
  }
  /// Keep the first error. @param text what failed.
  void fail(const std::string& text) {
    std::lock_guard<std::mutex> lock(failure_mutex);
    if (failure_text.empty()) failure_text = text;
  }

  std::mutex failure_mutex;
  std::string failure_text;
  JobThread worker;  // last: destroyed first, after it has run everything queued
};

// One event: reached when its stream's thread gets to it, or failed if that stream's work failed
// before it, so that a waiter never blocks on a point that will not come.
struct EmulatedRuntime::EventState {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::string failure;  // the recording stream's error, if it had one when it got here
};

EmulatedRuntime::EmulatedRuntime() { create_stream("default"); }

EmulatedRuntime::~EmulatedRuntime() {
  streams_.clear();  // each stream runs its queue, then joins; nothing runs after this line
  for (auto& [ptr, bytes] : pinned_) std::free(ptr);
  // memory_ unmaps what is still allocated
}

EmulatedRuntime::StreamState& EmulatedRuntime::stream_at(Stream stream) {
  ZT_CHECK(stream.id >= 0 && static_cast<std::size_t>(stream.id) < streams_.size(), "emulated device: stream ",
           stream.id, " was not created by this runtime");
  return *streams_[static_cast<std::size_t>(stream.id)];
}

std::byte* EmulatedRuntime::allocate(std::size_t bytes, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::byte* ptr = memory_.allocate(bytes, name);
  clock_.add_buffer(memory_.find(ptr)->id, name);
  return ptr;
}

std::vector<EmulatedRuntime::StreamState*> EmulatedRuntime::all_streams() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<StreamState*> all;
  for (auto& s : streams_) all.push_back(s.get());
  return all;
}

void EmulatedRuntime::release(std::byte* ptr) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto a = memory_.find(ptr);
    ZT_CHECK(a && a->begin == ptr, "emulated device: release of ", static_cast<const void*>(ptr),
             ", which is not the start of a device allocation of this runtime");
  }
  drain(all_streams());  // queued work may still use it (an error stays for the next synchronize)
  std::lock_guard<std::mutex> lock(mutex_);
  clock_.remove_buffer(memory_.release(ptr).id);
}

std::byte* EmulatedRuntime::allocate_pinned(std::size_t bytes, const std::string& name) {
  ZT_CHECK(bytes > 0, "emulated device: allocate_pinned 0 bytes for '", name, "'");
  void* p = nullptr;
  ZT_CHECK(::posix_memalign(&p, 4096, bytes) == 0, "emulated device: cannot allocate ", bytes,
           " bytes of host staging memory for '", name, "'");
  std::lock_guard<std::mutex> lock(mutex_);
  pinned_.emplace(static_cast<std::byte*>(p), bytes);
  return static_cast<std::byte*>(p);
}

void EmulatedRuntime::release_pinned(std::byte* ptr) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ZT_CHECK(pinned_.count(ptr) == 1, "emulated device: release_pinned of ", static_cast<const void*>(ptr),
             ", which allocate_pinned did not return");
  }
  drain(all_streams());  // a queued copy may still read or write it
  std::lock_guard<std::mutex> lock(mutex_);
  pinned_.erase(ptr);
  std::free(ptr);
}

Stream EmulatedRuntime::create_stream(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int index = clock_.add_stream(name);
  streams_.push_back(std::make_unique<StreamState>(name, index));
  return Stream{index};
}

TrackedAccess EmulatedRuntime::device_range(const void* ptr, std::size_t bytes, bool write, const std::string& what,
                                            const std::string& role) const {
  const auto a = memory_.find(ptr);
  ZT_CHECK(a, "emulated device: ", what, ": ", role, " ", ptr, " (", bytes,
           " bytes) is not inside any device allocation (device work reads and writes only memory from allocate())");
  const auto offset = static_cast<std::size_t>(static_cast<const std::byte*>(ptr) - a->begin);
  ZT_CHECK(offset + bytes <= a->bytes, "emulated device: ", what, ": ", role, " bytes [", offset, ", ", offset + bytes,
           ") run past the end of device buffer '", a->name, "' (", a->bytes, " bytes)");
  return {a->id, offset, offset + bytes, write};
}

void EmulatedRuntime::submit(StreamState& stream, const std::string& what, std::function<void()> work,
                             std::string label) {
  stream.worker.submit([this, &stream, what, work = std::move(work), label = std::move(label)] {
    if (!stream.failure().empty()) return;  // an earlier error: CUDA would refuse it too
    try {
      if (!tracing_.load()) return work();
      const auto start = std::chrono::steady_clock::now();
      work();
      const auto end = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> lock(trace_mutex_);
      trace_.push_back({stream.name, label, start, end});
    } catch (const std::exception& e) {
      stream.fail(what + " failed: " + e.what());
    } catch (...) {
      stream.fail(what + " failed with an exception that is not a std::exception");
    }
  });
}

void EmulatedRuntime::copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, Stream stream) {
  const std::string what = "copy " + word_of(kind);
  ZT_CHECK(dst != nullptr && src != nullptr, "emulated device: ", what, " with a null pointer");
  const bool src_on_device = kind != CopyKind::host_to_device, dst_on_device = kind != CopyKind::device_to_host;
  std::lock_guard<std::mutex> lock(mutex_);
  StreamState& s = stream_at(stream);
  if (bytes == 0) return;
  std::vector<TrackedAccess> accesses;
  const void* dst_bytes = dst;
  for (const auto& [ptr, on_device, write] :
       {std::tuple{src, src_on_device, false}, std::tuple{dst_bytes, dst_on_device, true}}) {
    const std::string role = write ? "the destination" : "the source";
    if (on_device) {
      accesses.push_back(device_range(ptr, bytes, write, what, role));
    } else if (const auto a = memory_.find(ptr)) {
      ZT_FAIL("emulated device: ", what, ": ", role, " is in device buffer '", a->name, "', but a ", word_of(kind),
              " copy's ", write ? "destination" : "source",
              " is host memory (choose the copy kind by where each side is)");
    }
  }
  if (kind == CopyKind::device_to_device && accesses[0].buffer == accesses[1].buffer)
    ZT_CHECK(accesses[0].end <= accesses[1].begin || accesses[1].end <= accesses[0].begin, "emulated device: ", what,
             ": source bytes [", accesses[0].begin, ", ", accesses[0].end, ") and destination bytes [",
             accesses[1].begin, ", ", accesses[1].end, ") of one buffer overlap");
  const uint64_t seq = clock_.enqueue(s.index, OpName{what, "copy"}, accesses);
  copies_.add(kind, bytes);
  std::vector<ProtectedMemory::Range> ranges;  // the device sides: all this copy may touch there
  if (src_on_device) ranges.push_back({src, bytes});
  if (dst_on_device) ranges.push_back({dst, bytes});
  submit(
      s, what + " (#" + std::to_string(seq) + ")",
      [this, dst, src, bytes, ranges, what] {
        ProtectedMemory::OpenScope open(memory_, ranges, what.c_str());
        std::memcpy(dst, src, bytes);
      },
      what);
}

void EmulatedRuntime::launch(Stream stream, const KernelLaunch& kernel) {
  const std::string what = "kernel '" + kernel.name + "'";
  ZT_CHECK(static_cast<bool>(kernel.host_body), "emulated device: ", what, " has no host body to run");
  ++launches_;
  std::lock_guard<std::mutex> lock(mutex_);
  StreamState& s = stream_at(stream);
  std::vector<TrackedAccess> accesses;
  for (const DeviceSpan& span : kernel.reads)
    if (span.bytes > 0) accesses.push_back(device_range(span.ptr, span.bytes, false, what, "its read span"));
  for (const DeviceSpan& span : kernel.writes)
    if (span.bytes > 0) accesses.push_back(device_range(span.ptr, span.bytes, true, what, "its written span"));
  const uint64_t seq = clock_.enqueue(s.index, OpName{what, "kernel"}, accesses);
  std::vector<ProtectedMemory::Range> ranges;  // its declared spans: all the kernel may touch
  for (const DeviceSpan& span : kernel.reads) ranges.push_back({span.ptr, span.bytes});
  for (const DeviceSpan& span : kernel.writes) ranges.push_back({span.ptr, span.bytes});
  submit(
      s, what + " (#" + std::to_string(seq) + ")",
      [this, body = kernel.host_body, ranges, what] {
        ProtectedMemory::OpenScope open(memory_, ranges, what.c_str());
        body();
      },
      what);
}

Event EmulatedRuntime::record(Stream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  StreamState& s = stream_at(stream);
  const int id = next_event_++;
  auto state = std::make_shared<EventState>();
  events_.emplace(id, EventEntry{state, clock_.clock_of(s.index), s.index});
  s.events.push_back(id);
  // not submit(): an event is reached (or failed) even after its stream's work failed
  s.worker.submit([&s, state] {
    const std::string failure = s.failure();
    {
      std::lock_guard<std::mutex> event_lock(state->mutex);
      state->done = true;
      state->failure = failure;
    }
    state->cv.notify_all();
  });
  return Event{id};
}

void EmulatedRuntime::wait(Stream stream, Event event) {
  std::lock_guard<std::mutex> lock(mutex_);
  StreamState& s = stream_at(stream);
  ZT_CHECK(event.id >= 1 && event.id < next_event_, "emulated device: stream '", s.name, "' waits for event ", event.id,
           ", which record() did not return");
  const auto it = events_.find(event.id);
  if (it == events_.end()) return;  // retired: a synchronize saw it complete and ordered it for everyone
  clock_.wait(s.index, it->second.clock);
  const std::string& recorder = streams_[static_cast<std::size_t>(it->second.stream)]->name;
  submit(
      s, "waiting for an event of stream '" + recorder + "'",
      [state = it->second.state] {
        std::unique_lock<std::mutex> event_lock(state->mutex);
        state->cv.wait(event_lock, [&] { return state->done; });
        ZT_CHECK(state->failure.empty(), "that stream's work failed before the event (", state->failure, ")");
      },
      "wait for stream '" + recorder + "'");
}

std::string EmulatedRuntime::drain(const std::vector<StreamState*>& streams) {
  std::vector<Work> markers;
  std::vector<VectorClock> clocks;
  std::vector<std::vector<int>> retired;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (StreamState* s : streams) {
      clocks.push_back(clock_.clock_of(s->index));
      retired.push_back(std::exchange(s->events, {}));
      markers.push_back(s->worker.submit([] {}));
    }
  }
  for (const Work& m : markers) m.wait();  // without the lock: other threads may enqueue meanwhile
  std::string first_failure;
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < streams.size(); ++i) {
    clock_.host_synchronized(clocks[i]);
    for (const int id : retired[i]) events_.erase(id);
    const std::string failure = streams[i]->failure();
    if (first_failure.empty() && !failure.empty())
      first_failure = "emulated device: stream '" + streams[i]->name + "': " + failure +
                      "; the stream skips its later work (every synchronize reports this)";
  }
  return first_failure;
}

void EmulatedRuntime::synchronize(Stream stream) {
  StreamState* s = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = &stream_at(stream);
  }
  const std::string failure = drain({s});
  if (!failure.empty()) throw Error(failure);
}

void EmulatedRuntime::synchronize() {
  const std::string failure = drain(all_streams());
  if (!failure.empty()) throw Error(failure);
}

void EmulatedRuntime::enable_trace() { tracing_.store(true); }

std::vector<DeviceWorkSpan> EmulatedRuntime::take_trace() {
  std::lock_guard<std::mutex> lock(trace_mutex_);
  return std::exchange(trace_, {});
}

bool EmulatedRuntime::is_device(const void* ptr) const { return memory_.find(ptr).has_value(); }

std::size_t EmulatedRuntime::tracked_accesses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return clock_.tracked();
}

}  // namespace zt::device
