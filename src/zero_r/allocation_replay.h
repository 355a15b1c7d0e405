// zero_r/allocation_replay.h — ZeRO-R's memory defragmentation (M_D, ZeRO paper Sec. 6.3) made
// measurable: replay a rank's exact sequence of allocations and releases (Arena::trace) through an
// allocator with a given capacity, and find the smallest capacity at which it succeeds.
//
// Two layouts of the same events:
//   general — one first-fit region for everything, as a device caching allocator without ZeRO's
//             pools: long-lived tensors allocated in the middle of a step (the step's gradient
//             storage) land between short-lived ones (the model's gradient outputs, reduction
//             buffers) and leave holes when those go, so a request can fail with more than enough
//             free bytes in total ("OOM with over 30% of memory still available");
//   zero    — M_D: the long-lived categories get pre-allocated contiguous regions of their own
//             (sized by replaying their events alone), everything else shares the rest.
// The replay uses the Arena itself (the same allocator the run uses), so a replayed failure is the
// failure the run would have. It reads events; it runs no training.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memory/arena.h"

namespace zt::zero_r {

/// A contiguous region set aside for some categories.
struct ReplayRegion {
  std::string name;                     ///< e.g. "gradients"
  std::vector<std::string> categories;  ///< allocated from it
  std::size_t bytes = 0;                ///< its size
};

/// What a replay found.
struct ReplayResult {
  bool ok = true;                ///< every allocation succeeded
  std::size_t failed_event = 0;  ///< index of the failing allocation in the events
  std::size_t request = 0;       ///< its requested bytes
  std::string category;          ///< its category
  std::size_t free_bytes = 0;    ///< free bytes (of its region) when it failed
  std::size_t largest_free = 0;  ///< the largest free block then
  std::string message;           ///< the arena's error line
};

/// The categories M_D places in regions of their own (the paper's two): the gradients — the step's
/// storage and the canonical tree's partial sums, allocated during backward between short-lived
/// buffers — and the activation checkpoints. @return them, one region each.
std::vector<std::vector<std::string>> long_lived_categories();

/// Replay events in an arena of `capacity` bytes with the given regions.
/// @param events a trace (allocations not released stay live to the end).
/// @param capacity bytes. @param regions set aside before the first event. @return the outcome.
ReplayResult replay(const std::vector<ArenaEvent>& events, std::size_t capacity,
                    const std::vector<ReplayRegion>& regions = {});

/// Whether a trace runs in an arena of `capacity` bytes with these regions. When even every
/// allocation side by side (aligned, never reusing a byte) fits next to the regions, only the
/// regions can fail: it answers without replaying if there are none, else replays in no more than
/// that, so a huge capacity reserves nothing huge. @param events a trace. @param capacity bytes. @param regions
/// as for replay.
/// @return the outcome (ok when it fits).
ReplayResult fits(const std::vector<ArenaEvent>& events, std::size_t capacity,
                  const std::vector<ReplayRegion>& regions = {});

/// The ZeRO layout of a trace: one region per group of long_lived_categories() that occurs in it,
/// each the smallest that holds that group's events replayed alone. @param events the trace.
/// @return the regions.
std::vector<ReplayRegion> zero_regions(const std::vector<ArenaEvent>& events);

/// The smallest capacity (a multiple of the arena's granule) at which `events` replay with the
/// given regions, by bisection between the peak of the requested bytes and the sum of every
/// allocation. @param events the trace. @param regions as for replay. @return bytes.
std::size_t min_capacity(const std::vector<ArenaEvent>& events, const std::vector<ReplayRegion>& regions = {});

}  // namespace zt::zero_r
