// zero/timeline.h — a per-rank timeline of compute and of time spent blocked on collectives, for
// showing what overlap and prefetch buy (written as Chrome-trace / Perfetto JSON by zero-train
// --trace FILE). A blocked span is the time a rank waits in Work::wait() for a collective it
// issued earlier: with overlap and prefetch the collectives run during compute and these spans
// shrink. On a device the runtime's streams add a track each (category "stream NAME": the
// kernels, copies and waits as they ran there), so the host's run-ahead and the copy stream's
// overlap with the compute stream show. It measures wall-clock time only; it changes no arithmetic.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "device/runtime.h"

namespace zt::zero {

/// One span of a rank's timeline.
struct TimelineEvent {
  std::string name;   ///< e.g. "forward h.0", "wait all_gather h.1"
  std::string cat;    ///< "compute", "wait", "optimizer", "pass" (a pipeline stage's forward or backward)
  double ts_us = 0;   ///< start, microseconds since the timeline began
  double dur_us = 0;  ///< duration, microseconds
};

/// Collects spans when enabled (a disabled timeline records nothing and costs a branch).
class Timeline {
 public:
  /// @param enabled whether to record.
  explicit Timeline(bool enabled) : enabled_(enabled), origin_(std::chrono::steady_clock::now()) {}
  /// Whether spans are recorded. @return the flag.
  bool enabled() const { return enabled_; }
  /// Microseconds since construction. @return the time.
  double now_us() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
  }
  /// Record a span that started at start_us and ends now. @param name what ran.
  /// @param cat its category. @param start_us its start (from now_us()).
  void add(std::string name, std::string cat, double start_us) {
    if (enabled_) events_.push_back({std::move(name), std::move(cat), start_us, now_us() - start_us});
  }
  /// Record a span measured elsewhere (a device stream's work). @param name what ran.
  /// @param cat its category. @param start when it began. @param end when it was done.
  void add_at(std::string name, std::string cat, std::chrono::steady_clock::time_point start,
              std::chrono::steady_clock::time_point end) {
    if (!enabled_) return;
    const auto us = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };
    events_.push_back({std::move(name), std::move(cat), us(start - origin_), us(end - start)});
  }
  /// Record the device work a runtime timed (Runtime::enable_trace), a track per stream
  /// (category "stream NAME"), once the work queued so far has run. @param runtime the device.
  void add_device_work(device::Runtime& runtime) {
    if (!enabled_) return;
    runtime.synchronize();
    for (const device::DeviceWorkSpan& w : runtime.take_trace()) add_at(w.what, "stream " + w.stream, w.start, w.end);
  }
  /// The spans so far. @return them, in recording order.
  const std::vector<TimelineEvent>& events() const { return events_; }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point origin_;
  std::vector<TimelineEvent> events_;
};

/// Chrome-trace JSON ({"traceEvents": [...]}, complete events, pid = rank; a track per rank for
/// its compute (tid 0), its blocked spans (tid 1) and each device stream (tid 2, 3, ..., in order
/// of first appearance), each named by a thread_name metadata event).
/// @param per_rank each rank's spans, in rank order. @return the document.
std::string chrome_trace_json(const std::vector<std::vector<TimelineEvent>>& per_rank);

/// One rank's spans as compact JSON (to move them between processes). @param events the spans.
/// @return JSON text.
std::string timeline_to_json(const std::vector<TimelineEvent>& events);

/// Parse timeline_to_json's text. @param text the JSON. @return the spans.
std::vector<TimelineEvent> timeline_from_json(const std::string& text);

}  // namespace zt::zero
