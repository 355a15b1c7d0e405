// memory/arena.h — one rank's memory: a fixed-capacity region, a first-fit allocator, a ledger.
//
// The arena stands in for a GPU's memory on the CPU path: one contiguous block of `capacity`
// bytes, reserved once, out of which every model and residual state of the rank is carved. So an
// out-of-memory condition happens where it would on a device — when no free block is large
// enough — and fragmentation is real and measurable (chapter 3, ZeRO-R's defragmentation later).
//
// Allocator: a free list kept in address order; an allocation takes the FIRST free block large
// enough (first-fit), splitting off the rest; a release merges the freed block with free
// neighbours on both sides (coalescing), so two adjacent free blocks never exist. Every block
// starts at a multiple of kAlignment = 256 bytes (the CUDA allocator's granule, and enough for any
// vector load) and occupies its size rounded up to 256.
//
// Accounting: the ledger counts the REQUESTED bytes (what the data needs), never the alignment
// round-up, so predicted == measured can hold exactly from element counts alone. The round-up is
// visible as reserved_bytes() - ledger().total().current_bytes and in the fragmentation stats.
// The arena never touches the bytes it manages, so it may manage a slab the caller reserved: on a
// device, one allocation of device memory (device/runtime.h) carved under the same ledger.
// Not thread-safe: one arena per rank, used by that rank's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memory/ledger.h"

namespace zt {

/// One allocation or release, as the arena saw it (allocation tracing, ZeRO-R's M_D).
struct ArenaEvent {
  bool allocate = true;   ///< true: an allocation; false: the release of allocation `id`
  uint64_t id = 0;        ///< the allocation's number (0, 1, ... in allocation order)
  std::size_t bytes = 0;  ///< requested bytes
  std::string category;   ///< its ledger category
};

/// The ledger's high-water mark over a trace: the peak of the running sum of requested bytes (no
/// alignment, no fragmentation: what Ledger::total().peak_bytes measures over those events).
/// @param events a trace, in order. @return bytes.
std::size_t ledger_high_water(const std::vector<ArenaEvent>& events);

/// The ledger's peak of every category over a trace: per category, the peak of its running sum of
/// requested bytes (what Ledger::usage(category).peak_bytes measures over those events; a category
/// whose every request is empty is absent, as a trace has no empty requests).
/// @param events a trace, in order. @return category -> bytes.
std::map<std::string, std::size_t> ledger_peaks(const std::vector<ArenaEvent>& events);

/// Free-space statistics of an arena at one moment.
struct FragmentationStats {
  std::size_t free_bytes = 0;          ///< capacity minus reserved (aligned) bytes
  std::size_t largest_free_block = 0;  ///< the largest allocation that could succeed now (aligned)
  std::size_t free_blocks = 0;         ///< number of free blocks in the free list
  double external_fragmentation = 0;   ///< 1 - largest_free_block / free_bytes (0 when nothing is free)
};

class Arena;

/// RAII owner of one arena block: releases it (and its ledger entry) when destroyed.
/// Move-only. A default-constructed or zero-byte allocation owns no block.
class ArenaAllocation {
 public:
  ArenaAllocation() = default;
  /// Releases the block.
  ~ArenaAllocation() { reset(); }
  /// Take over another allocation. @param other the source (left empty).
  ArenaAllocation(ArenaAllocation&& other) noexcept { swap(other); }
  /// Take over another allocation; this one's block, swapped into `other`, is released as it dies
  /// (moving from an rvalue only: the copy constructor is deleted). @param other the source.
  /// @return this.
  ArenaAllocation& operator=(ArenaAllocation other) noexcept {
    swap(other);
    return *this;
  }
  ArenaAllocation(const ArenaAllocation&) = delete;

  /// Start of the block (nullptr when empty). @return the address.
  std::byte* data() const { return data_; }
  /// Requested size in bytes (what the ledger counts). @return the size.
  std::size_t bytes() const { return bytes_; }
  /// Byte offset of the block from the arena's start. @return the offset.
  std::size_t offset() const { return offset_; }
  /// Release the block now (no-op when empty).
  void reset() noexcept;

 private:
  friend class Arena;
  void swap(ArenaAllocation& other) noexcept;
  Arena* arena_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t offset_ = 0;
  std::size_t bytes_ = 0;
  const std::string* category_ = nullptr;  // interned in the arena, stable while it lives
};

/// Memory reserved elsewhere for an arena to manage (a device runtime's, pinned host memory), with
/// the call that gives it back.
struct ArenaSlab {
  std::byte* ptr = nullptr;                 ///< its first byte (aligned to Arena::kAlignment)
  std::size_t bytes = 0;                    ///< its size
  std::function<void(std::byte*)> release;  ///< called with ptr when the arena is destroyed
};

/// The name of a rank's arena, the one --memory-budget-mb sizes: its out-of-memory error then
/// names the flag to change, and nothing in it depends on the rank, so every rank that runs out
/// says the same line (the launchers print a repeated line once).
inline constexpr const char* kBudgetArenaName = "the --memory-budget-mb arena";

/// A fixed-capacity region with a first-fit, coalescing allocator and a ledger by category.
class Arena {
 public:
  static constexpr std::size_t kAlignment = 256;  ///< block start and size granule, in bytes

  /// Reserve the region. @param capacity_bytes the budget (> 0). @param name used in errors
  /// (e.g. "rank 3").
  explicit Arena(std::size_t capacity_bytes, std::string name = "arena");
  /// An arena over a slab the caller reserved, e.g. device memory from device::Runtime::allocate.
  /// The arena only hands out offsets into it: the free list and the ledger live on the host and
  /// the slab's bytes are never read or written here, so the same allocator and the same ledger
  /// categories manage a GPU's memory. @param slab its first byte (aligned to kAlignment).
  /// @param capacity_bytes its size (> 0). @param name used in errors. @param release called
  /// with `slab` when the arena is destroyed (e.g. the runtime's release).
  Arena(std::byte* slab, std::size_t capacity_bytes, std::string name, std::function<void(std::byte*)> release);
  /// The same, from an ArenaSlab. @param slab the slab, its size and its release. @param name used in errors.
  Arena(ArenaSlab slab, std::string name) : Arena(slab.ptr, slab.bytes, std::move(name), std::move(slab.release)) {}
  /// Aborts with a message if allocations are still alive (they would dangle).
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// Allocate `bytes` under `category`; throws zt::Error naming the category, the request, the
  /// free bytes and the largest free block when no free block is large enough.
  /// @param bytes requested size (0 gives an empty allocation that is still counted in the
  /// category's allocation count). @param category ledger category name.
  /// @return the owning handle.
  ArenaAllocation allocate(std::size_t bytes, std::string_view category);

  /// The capacity given at construction. @return bytes.
  std::size_t capacity() const { return capacity_; }
  /// Bytes taken by live blocks including the alignment round-up. @return bytes.
  std::size_t reserved_bytes() const { return reserved_; }
  /// The ledger (requested bytes by category). @return it.
  const Ledger& ledger() const { return ledger_; }
  /// Reset the ledger's peaks to current values (to measure one phase).
  void reset_peaks() { ledger_.reset_peaks(); }
  /// Free-space statistics now. @return them.
  FragmentationStats fragmentation() const;
  /// The arena's name. @return it.
  const std::string& name() const { return name_; }
  /// Record every later allocation and release (zero_r/allocation_replay.h replays them).
  void enable_trace() { tracing_ = true; }
  /// The recorded events, in order. @return them.
  const std::vector<ArenaEvent>& trace() const { return trace_; }
  /// M_D (ZeRO paper, Sec. 6.3): set aside `bytes` at the end of the free space as a region of its
  /// own for the listed categories, so long-lived tensors do not land between short-lived ones.
  /// Must be called while the arena's last free block can hold it (e.g. before any allocation).
  /// @param name the region's name (in errors). @param bytes its size (rounded down to the
  /// granule). @param categories the categories allocated from it.
  void add_region(const std::string& name, std::size_t bytes, const std::vector<std::string>& categories);
  /// Round a size up to the allocation granule. @param bytes a size. @return the reserved size.
  static std::size_t aligned_size(std::size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

 private:
  friend class ArenaAllocation;
  void release(std::size_t offset, std::size_t bytes, const std::string& category) noexcept;
  const std::string& intern(std::string_view category);
  struct Region {
    std::string name;
    std::map<std::size_t, std::size_t> free;  // offset -> size, address order, never adjacent
    std::size_t begin = 0, end = 0;           // [begin, end) of the arena
  };
  Region& region_of(std::string_view category);
  Region& region_at(std::size_t offset);

  std::size_t capacity_;
  std::string name_;
  std::unique_ptr<std::byte, std::function<void(std::byte*)>> region_;  // the slab and how it is given back
  std::vector<Region> regions_;  // [0]: the general region; then M_D's (add_region)
  std::map<std::string, std::size_t, std::less<>> region_by_category_;
  std::size_t reserved_ = 0;
  std::size_t live_blocks_ = 0;
  Ledger ledger_;
  std::map<std::string, std::unique_ptr<std::string>, std::less<>> names_;
  bool tracing_ = false;
  std::vector<ArenaEvent> trace_;
  uint64_t next_id_ = 0;
  std::map<std::size_t, uint64_t> id_at_;  // live allocation's offset -> its number (tracing)
};

}  // namespace zt
