// zero_r/allocation_replay.cc — replaying an allocation trace (see allocation_replay.h).
#include "zero_r/allocation_replay.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/check.h"

namespace zt::zero_r {

std::vector<std::vector<std::string>> long_lived_categories() {
  return {{"grads", "accum_partials"}, {"activation_checkpoints"}};
}

ReplayResult replay(const std::vector<ArenaEvent>& events, std::size_t capacity,
                    const std::vector<ReplayRegion>& regions) {
  ReplayResult r;
  std::optional<Arena> arena;
  try {
    arena.emplace(capacity, "replay");
    for (const auto& g : regions) arena->add_region(g.name, g.bytes, g.categories);
  } catch (const Error& e) {  // the regions alone do not fit
    r.ok = false;
    r.message = e.what();
    return r;
  }
  std::map<uint64_t, ArenaAllocation> live;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const ArenaEvent& e = events[i];
    if (!e.allocate) {
      live.erase(e.id);
      continue;
    }
    try {
      live.emplace(e.id, arena->allocate(e.bytes, e.category));
    } catch (const Error& err) {
      const FragmentationStats f = arena->fragmentation();
      r = {false, i, e.bytes, e.category, f.free_bytes, f.largest_free_block, err.what()};
      break;
    }
  }
  live.clear();  // before the arena goes
  return r;
}

std::size_t min_capacity(const std::vector<ArenaEvent>& events, const std::vector<ReplayRegion>& regions) {
  std::size_t live = 0, peak = 0, total = 0;
  std::map<uint64_t, std::size_t> sizes;
  for (const auto& e : events) {
    if (e.allocate) {
      sizes[e.id] = Arena::aligned_size(e.bytes);
      total += sizes[e.id];
      peak = std::max(peak, live += sizes[e.id]);
    } else {
      live -= sizes[e.id];
    }
  }
  std::size_t regions_bytes = 0;
  for (const auto& g : regions) regions_bytes += g.bytes;
  const std::size_t k = Arena::kAlignment;
  // no allocator does with less than the peak of live (aligned) bytes; a region that is never
  // reused needs at most the sum of all of them
  std::size_t lo = std::max(peak, regions_bytes + k), hi = total + regions_bytes + k;
  const ReplayResult at_total = replay(events, hi, regions);
  ZT_CHECK(at_total.ok, "replay: the trace does not fit even its total of ", hi, " bytes: ", at_total.message);
  if (replay(events, lo, regions).ok) return lo;
  while (hi - lo > k) {  // invariant: fails at lo, succeeds at hi
    const std::size_t mid = (lo + hi) / 2 / k * k;
    if (mid <= lo) break;
    (replay(events, mid, regions).ok ? hi : lo) = mid;
  }
  return hi;
}

ReplayResult fits(const std::vector<ArenaEvent>& events, std::size_t capacity,
                  const std::vector<ReplayRegion>& regions) {
  std::size_t side_by_side = 0;
  for (const auto& e : events)
    if (e.allocate) side_by_side += Arena::aligned_size(e.bytes);
  if (regions.empty() && side_by_side <= capacity) return {};
  // a region has its own limit, so replay; but past every block side by side next to the regions
  // more capacity changes nothing (the general region cannot fail), so reserve no more than that
  std::size_t enough = side_by_side + Arena::kAlignment;
  for (const auto& g : regions) enough += g.bytes;
  return replay(events, std::min(capacity, enough), regions);
}

std::vector<ReplayRegion> zero_regions(const std::vector<ArenaEvent>& events) {
  std::vector<ReplayRegion> regions;
  const auto groups = long_lived_categories();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<ArenaEvent> mine;
    for (const auto& e : events)
      if (std::find(groups[g].begin(), groups[g].end(), e.category) != groups[g].end()) mine.push_back(e);
    if (mine.empty()) continue;
    regions.push_back({g == 0 ? "gradients" : "checkpoints", groups[g], min_capacity(mine)});
  }
  return regions;
}

}  // namespace zt::zero_r
