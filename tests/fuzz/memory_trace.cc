// tests/fuzz/memory_trace.cc — fuzz target: a `--memory-trace` file as zero-memreplay reads it
// (report::arena_trace_from_json), then replayed as zero-memreplay does: M_D's regions, the
// smallest capacity of both layouts, and a replay at that capacity. Each step must succeed or
// throw one zt::Error, and a trace the reader accepts must keep its promise (report.h): sizes at
// most 2^50, every release of a live block with its allocated size. The replays run only for
// traces whose allocations, side by side, stay under 16 MiB: a replay reserves that much address
// space by design (the arena a real run would have had), so a bigger one says nothing about the
// reader and only slows the fuzzer.
#include <cstddef>
#include <cstdint>
#include <map>

#include "core/check.h"
#include "fuzz/fuzz_support.h"
#include "memory/arena.h"
#include "report/report.h"
#include "zero_r/allocation_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const auto events = zt::report::arena_trace_from_json(zt::fuzz::as_text(data, size));
    std::map<uint64_t, std::size_t> live;
    for (const auto& e : events) {
      if (e.bytes > zt::report::kMaxTraceBytes) zt::fuzz::broken("the reader accepted a request above 2^50 bytes");
      if (e.allocate && !live.emplace(e.id, e.bytes).second)
        zt::fuzz::broken("the reader accepted the allocation of a live block");
      if (!e.allocate && (!live.count(e.id) || live[e.id] != e.bytes))
        zt::fuzz::broken("the reader accepted the release of a block that is not live, or not with its size");
      if (!e.allocate) live.erase(e.id);
    }
    std::size_t side_by_side = 0;
    for (const auto& e : events)
      if (e.allocate) {
        if (e.bytes > (std::size_t{16} << 20)) return 0;
        side_by_side += zt::Arena::aligned_size(e.bytes);
        if (side_by_side > (std::size_t{16} << 20)) return 0;
      }
    const auto regions = zt::zero_r::zero_regions(events);
    zt::zero_r::min_capacity(events);
    const std::size_t zero = zt::zero_r::min_capacity(events, regions);
    zt::zero_r::replay(events, zero);
    zt::zero_r::replay(events, zero, regions);
  } catch (const zt::Error&) {
  }
  return 0;
}
