// zero/timeline.h — a per-rank timeline of compute and of time spent blocked on collectives, for
// showing what overlap and prefetch buy (written as Chrome-trace / Perfetto JSON by zero-train
// --trace FILE). A blocked span is the time a rank waits in Work::wait() for a collective it
// issued earlier: with overlap and prefetch the collectives run during compute and these spans
// shrink. It measures wall-clock time only; it changes no arithmetic.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace zt::zero {

/// One span of a rank's timeline.
struct TimelineEvent {
  std::string name;   ///< e.g. "forward h.0", "wait all_gather h.1"
  std::string cat;    ///< "compute", "wait", "optimizer"
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
  /// The spans so far. @return them, in recording order.
  const std::vector<TimelineEvent>& events() const { return events_; }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point origin_;
  std::vector<TimelineEvent> events_;
};

/// Chrome-trace JSON ({"traceEvents": [...]}, complete events, pid = rank).
/// @param per_rank each rank's spans, in rank order. @return the document.
std::string chrome_trace_json(const std::vector<std::vector<TimelineEvent>>& per_rank);

/// One rank's spans as compact JSON (to move them between processes). @param events the spans.
/// @return JSON text.
std::string timeline_to_json(const std::vector<TimelineEvent>& events);

/// Parse timeline_to_json's text. @param text the JSON. @return the spans.
std::vector<TimelineEvent> timeline_from_json(const std::string& text);

}  // namespace zt::zero
