// memory/arena.cc — implementation of the first-fit arena (see arena.h for the policy).
#include "memory/arena.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "core/check.h"

namespace zt {

void ArenaAllocation::swap(ArenaAllocation& other) noexcept {
  std::swap(arena_, other.arena_);
  std::swap(data_, other.data_);
  std::swap(offset_, other.offset_);
  std::swap(bytes_, other.bytes_);
  std::swap(category_, other.category_);
}

void ArenaAllocation::reset() noexcept {
  if (arena_ != nullptr) arena_->release(offset_, bytes_, *category_);
  arena_ = nullptr;
  data_ = nullptr;
  offset_ = 0;
  bytes_ = 0;
  category_ = nullptr;
}

namespace {
std::byte* reserve_region(std::size_t capacity) {
  // std::aligned_alloc wants a size that is a multiple of the alignment; the tail beyond
  // `capacity` is never handed out. Pages are touched only when used, so a large budget is cheap.
  void* p = std::aligned_alloc(Arena::kAlignment, Arena::aligned_size(capacity));
  ZT_CHECK(p != nullptr, "arena: the host could not reserve ", capacity, " bytes");
  return static_cast<std::byte*>(p);
}
}  // namespace

std::size_t ledger_high_water(const std::vector<ArenaEvent>& events) {
  std::size_t live = 0, peak = 0;
  for (const auto& e : events) e.allocate ? peak = std::max(peak, live += e.bytes) : live -= e.bytes;
  return peak;
}

std::map<std::string, std::size_t> ledger_peaks(const std::vector<ArenaEvent>& events) {
  std::map<std::string, std::size_t> live, peak;
  for (const auto& e : events) {
    std::size_t& now = live[e.category];
    if (!e.allocate) {
      now -= e.bytes;
      continue;
    }
    now += e.bytes;
    peak[e.category] = std::max(peak[e.category], now);
  }
  return peak;
}

Arena::Arena(std::size_t capacity_bytes, std::string name)
    : capacity_(capacity_bytes), name_(std::move(name)), region_(nullptr, [](std::byte* p) { std::free(p); }) {
  ZT_CHECK(capacity_bytes > 0, "arena '", name_, "': capacity must be positive");
  region_.reset(reserve_region(capacity_bytes));
  regions_.push_back({"general", {{0, capacity_bytes}}, 0, capacity_bytes});
}

Arena::Arena(std::byte* slab, std::size_t capacity_bytes, std::string name, std::function<void(std::byte*)> release)
    : capacity_(capacity_bytes), name_(std::move(name)), region_(nullptr, std::move(release)) {
  ZT_CHECK(capacity_bytes > 0, "arena '", name_, "': capacity must be positive");
  ZT_CHECK(slab != nullptr && reinterpret_cast<std::uintptr_t>(slab) % kAlignment == 0, "arena '", name_,
           "': the slab must start at a multiple of ", kAlignment, " bytes");
  region_.reset(slab);
  regions_.push_back({"general", {{0, capacity_bytes}}, 0, capacity_bytes});
}

Arena::Region& Arena::region_of(std::string_view category) {
  auto it = region_by_category_.find(category);
  return regions_[it == region_by_category_.end() ? 0 : it->second];
}

Arena::Region& Arena::region_at(std::size_t offset) {
  for (std::size_t i = regions_.size(); i-- > 1;)  // the M_D regions; the general region is the rest
    if (offset >= regions_[i].begin && offset < regions_[i].end) return regions_[i];
  return regions_[0];
}

void Arena::add_region(const std::string& name, std::size_t bytes, const std::vector<std::string>& categories) {
  bytes = bytes / kAlignment * kAlignment;
  auto& general = regions_[0].free;
  ZT_CHECK(!general.empty(), "arena '", name_, "': no free space for region '", name, "'");
  auto last = std::prev(general.end());
  const std::size_t usable = last->second / kAlignment * kAlignment;
  ZT_CHECK(usable >= bytes && bytes > 0, "arena '", name_, "': region '", name, "' of ", bytes,
           " bytes does not fit the free space at its end (", usable, " bytes)");
  // the region is the top of the last free block, granule-aligned
  const std::size_t begin = (last->first + last->second - bytes) / kAlignment * kAlignment;
  const std::size_t end = last->first + last->second;
  if (begin > last->first)
    last->second = begin - last->first;
  else
    general.erase(last);
  regions_.push_back({name, {{begin, end - begin}}, begin, end});
  regions_[0].end = std::min(regions_[0].end, begin);
  for (const auto& c : categories) region_by_category_[c] = regions_.size() - 1;
}

Arena::~Arena() {
  if (live_blocks_ != 0) {
    // A buffer outliving its arena would later write into freed memory: stop here, loudly.
    std::fprintf(stderr, "arena '%s' destroyed with %zu live allocations (%zu bytes)\n", name_.c_str(), live_blocks_,
                 reserved_);
    std::abort();
  }
}

const std::string& Arena::intern(std::string_view category) {
  auto it = names_.find(category);
  if (it == names_.end()) it = names_.emplace(std::string(category), std::make_unique<std::string>(category)).first;
  return *it->second;
}

ArenaAllocation Arena::allocate(std::size_t bytes, std::string_view category) {
  ArenaAllocation a;
  a.category_ = &intern(category);
  if (bytes == 0) {  // counted (allocation count, live handles) but owns no block
    ledger_.add(category, 0);
    ++live_blocks_;
    a.arena_ = this;
    return a;
  }
  const std::size_t need = aligned_size(bytes);
  Region& region = region_of(category);
  auto& free = region.free;
  auto fit = free.begin();
  while (fit != free.end() && fit->second < need) ++fit;
  if (fit == free.end()) {
    const FragmentationStats f = fragmentation();
    if (&region != &regions_[0])
      ZT_FAIL("out of memory in ", name_, ": category '", category, "' requested ", bytes, " bytes (", need, " with ",
              kAlignment, "-byte alignment) in its region '", region.name, "' of ", region.end - region.begin,
              " bytes");
    ZT_FAIL("out of memory in ", name_, ": category '", category, "' requested ", bytes, " bytes (", need, " with ",
            kAlignment, "-byte alignment); free ", f.free_bytes, " bytes of ", capacity_, ", largest free block ",
            f.largest_free_block, " bytes");
  }
  const std::size_t offset = fit->first, size = fit->second;
  free.erase(fit);
  if (size > need) free.emplace(offset + need, size - need);
  if (tracing_) {
    id_at_[offset] = next_id_;
    trace_.push_back({true, next_id_++, bytes, std::string(category)});
  }
  reserved_ += need;
  ++live_blocks_;
  ledger_.add(category, bytes);
  a.arena_ = this;
  a.data_ = region_.get() + offset;
  a.offset_ = offset;
  a.bytes_ = bytes;
  return a;
}

void Arena::release(std::size_t offset, std::size_t bytes, const std::string& category) noexcept {
  ledger_.remove(category, bytes);
  --live_blocks_;
  if (bytes == 0) return;
  if (tracing_) {
    auto it = id_at_.find(offset);
    if (it != id_at_.end()) {  // allocations made before tracing began are not in the trace
      trace_.push_back({false, it->second, bytes, category});
      id_at_.erase(it);
    }
  }
  std::size_t start = offset, size = aligned_size(bytes);
  reserved_ -= size;
  auto& free = region_at(offset).free;
  auto next = free.lower_bound(offset);
  if (next != free.end() && start + size == next->first) {  // merge with the right neighbour
    size += next->second;
    next = free.erase(next);
  }
  if (next != free.begin()) {  // merge with the left neighbour
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      free.erase(prev);
    }
  }
  free.emplace(start, size);
}

FragmentationStats Arena::fragmentation() const {
  FragmentationStats f;
  for (const auto& [offset, size] : regions_[0].free) {  // the general region: what a request there can use
    // The last block may end at a capacity that is not a multiple of the granule: only whole
    // granules of it can be handed out, so only those count as allocatable.
    const std::size_t usable = size / kAlignment * kAlignment;
    f.free_bytes += size;
    if (usable > f.largest_free_block) f.largest_free_block = usable;
    ++f.free_blocks;
  }
  f.external_fragmentation =
      f.free_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(f.largest_free_block) / static_cast<double>(f.free_bytes);
  return f;
}

}  // namespace zt
