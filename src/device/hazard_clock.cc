// device/hazard_clock.cc — vector clocks and per-buffer access histories (see hazard_clock.h).
#include "device/hazard_clock.h"

#include <algorithm>

#include "core/check.h"

namespace zt::device {
namespace {

uint64_t entry(const VectorClock& clock, int stream) {
  return static_cast<std::size_t>(stream) < clock.size() ? clock[static_cast<std::size_t>(stream)] : 0;
}

// into = max(into, other), entry by entry
void merge(VectorClock& into, const VectorClock& other) {
  if (into.size() < other.size()) into.resize(other.size(), 0);
  for (std::size_t t = 0; t < other.size(); ++t) into[t] = std::max(into[t], other[t]);
}

}  // namespace

int HazardClock::add_stream(const std::string& name) {
  stream_names_.push_back(name);
  stream_clocks_.emplace_back();
  return static_cast<int>(stream_names_.size() - 1);
}

void HazardClock::add_buffer(int64_t buffer, const std::string& name) { buffers_[buffer].name = name; }

void HazardClock::remove_buffer(int64_t buffer) { buffers_.erase(buffer); }

VectorClock HazardClock::clock_of(int stream) const {
  VectorClock clock = stream_clocks_.at(static_cast<std::size_t>(stream));
  merge(clock, host_clock_);
  clock.resize(std::max(clock.size(), stream_names_.size()), 0);
  return clock;
}

uint64_t HazardClock::enqueue(int stream, const OpName& op, const std::vector<TrackedAccess>& accesses) {
  VectorClock clock = clock_of(stream);
  const uint64_t seq = ++clock[static_cast<std::size_t>(stream)];
  // Check everything before recording anything: a rejected operation leaves no trace.
  for (const TrackedAccess& a : accesses) {
    const auto it = buffers_.find(a.buffer);
    ZT_CHECK(it != buffers_.end(), "emulated device: ", op.what, " names a device buffer the checker does not know");
    for (const Record& r : it->second.records) {
      const bool overlap = r.begin < a.end && a.begin < r.end;
      if (!overlap || (!a.write && !r.write)) continue;  // disjoint bytes, or two reads: no race
      if (entry(clock, r.stream) >= r.seq) continue;     // ordered before (always, on the same stream)
      report(op, stream, seq, a, it->second, r);
    }
  }
  stream_clocks_[static_cast<std::size_t>(stream)] = clock;
  const auto name = std::make_shared<const OpName>(op);
  for (const TrackedAccess& a : accesses)
    if (a.begin < a.end) add(buffers_[a.buffer], Record{a.begin, a.end, stream, seq, a.write, name}, clock);
  return seq;
}

void HazardClock::add(Buffer& buffer, const Record& record, const VectorClock& clock) {
  // An earlier access inside the new one's bytes and ordered before it is redundant when every
  // operation that would race with the earlier one also races with the new one: always when the
  // new access writes (everything it overlaps is ordered before it, or the check would have
  // failed); when it reads, only for earlier reads (an earlier write is what later reads race
  // with, and a read does not stand in for it).
  std::erase_if(buffer.records, [&](const Record& r) {
    const bool inside = record.begin <= r.begin && r.end <= record.end;
    const bool ordered = entry(clock, r.stream) >= r.seq;
    return inside && ordered && (record.write || !r.write);
  });
  buffer.records.push_back(record);
  if (buffer.records.size() >= buffer.prune_at) {
    prune(buffer);
    buffer.prune_at = std::max<std::size_t>(64, 2 * buffer.records.size());
  }
}

void HazardClock::prune(Buffer& buffer) const {
  // floor[t]: how many of stream t's operations every stream's next operation (and every stream
  // created later, which starts from the host clock) is ordered after.
  VectorClock floor(stream_names_.size(), 0);
  for (std::size_t t = 0; t < floor.size(); ++t) {
    uint64_t least = UINT64_MAX;
    for (const VectorClock& c : stream_clocks_)
      least = std::min(least, std::max(entry(c, static_cast<int>(t)), entry(host_clock_, static_cast<int>(t))));
    floor[t] = least;
  }
  std::erase_if(buffer.records, [&](const Record& r) { return entry(floor, r.stream) >= r.seq; });
}

void HazardClock::wait(int stream, const VectorClock& event) {
  merge(stream_clocks_.at(static_cast<std::size_t>(stream)), event);
}

void HazardClock::host_synchronized(const VectorClock& synced) {
  merge(host_clock_, synced);
  for (auto& [id, buffer] : buffers_) prune(buffer);
}

std::size_t HazardClock::tracked() const {
  std::size_t n = 0;
  for (const auto& [id, buffer] : buffers_) n += buffer.records.size();
  return n;
}

void HazardClock::report(const OpName& op, int stream, uint64_t seq, const TrackedAccess& access, const Buffer& buffer,
                         const Record& earlier) const {
  const std::string& mine = stream_names_[static_cast<std::size_t>(stream)];
  const std::string& theirs = stream_names_[static_cast<std::size_t>(earlier.stream)];
  ZT_FAIL("emulated device: ", op.what, " on stream '", mine, "' (#", seq, ") ", access.write ? "writes" : "reads",
          " bytes [", std::max(access.begin, earlier.begin), ", ", std::min(access.end, earlier.end), ") of buffer '",
          buffer.name, "' ", earlier.write ? "written" : "read", " by ", earlier.op->what, " on stream '", theirs,
          "' (#", earlier.seq, ") with no event between them (record an event on '", theirs, "' after the ",
          earlier.op->kind, " and make '", mine, "' wait for it)");
}

}  // namespace zt::device
