// zero-memreplay — ZeRO-R's memory defragmentation (M_D), measured on a real run's allocations.
//
//   zero-train ... --memory-trace trace.json
//   zero-memreplay trace.json [--capacity BYTES] [--json out.json]
//
// Replays the trace (zero_r/allocation_replay.h) through one first-fit region ("general", a
// device caching allocator without ZeRO's pools) and through M_D's layout ("zero": the gradients
// and checkpoints in pre-allocated regions of their own), prints the smallest capacity each
// needs, and replays both at one capacity (default: the zero layout's smallest) to show the
// general allocator's failing request with its free bytes and largest free block. Only wiring.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/cli.h"
#include "core/output_place.h"
#include "report/report.h"
#include "zero_r/allocation_replay.h"

int main(int argc, char** argv) {
  return zt::run_main("zero-memreplay", [&]() -> int {
    int64_t capacity = 0;
    std::string json_out;
    zt::ArgParser p("zero-memreplay",
                    "Replay a zero-train --memory-trace through the general and the M_D layout: "
                    "zero-memreplay [flags] -- TRACE.json");
    p.add_int("capacity", &capacity, "replay both layouts at this many bytes", 0, int64_t{1} << 50);
    p.set_default_text("capacity", "the M_D layout's smallest capacity");
    p.add_string("json", &json_out, "also write the results as JSON to this file");
    if (!p.parse(argc, argv)) return 0;
    ZT_CHECK(p.rest().size() == 1, "give one trace file after --: zero-memreplay -- TRACE.json");
    if (!json_out.empty()) zt::prepare_output_place({"--json", json_out, zt::PlaceKind::file});
    const auto events = zt::report::arena_trace_from_json(zt::read_file(p.rest()[0]));
    std::size_t allocations = 0;
    for (const auto& e : events) allocations += e.allocate;
    const auto regions = zt::zero_r::zero_regions(events);
    const std::size_t general = zt::zero_r::min_capacity(events);
    const std::size_t zero = zt::zero_r::min_capacity(events, regions);
    std::printf("trace: %zu events, %zu allocations\n", events.size(), allocations);
    std::printf("smallest capacity, general first-fit layout: %zu bytes\n", general);
    std::printf("smallest capacity, M_D layout:               %zu bytes", zero);
    for (const auto& r : regions) std::printf(" (region %s: %zu bytes)", r.name.c_str(), r.bytes);
    std::printf("\n");
    const std::size_t at = capacity ? static_cast<std::size_t>(capacity) : zero;
    const auto g = zt::zero_r::replay(events, at);
    const auto z = zt::zero_r::replay(events, at, regions);
    const auto show = [](const char* name, const zt::zero_r::ReplayResult& r) {
      if (r.ok)
        std::printf("  %-8s fits\n", name);
      else  // free bytes >= the request is the paper's "OOM with memory still available"
        std::printf("  %-8s fails at event %zu: %s\n           %s\n", name, r.failed_event, r.message.c_str(),
                    r.free_bytes >= r.request ? "free bytes >= the request: fragmentation"
                                              : "free bytes < the request: too small");
    };
    std::printf("at %zu bytes:\n", at);
    show("general", g);
    show("M_D", z);
    if (!json_out.empty()) {
      nlohmann::ordered_json j;
      j["events"] = events.size();
      j["min_capacity_general"] = general;
      j["min_capacity_zero"] = zero;
      j["capacity"] = at;
      j["general"] = {{"ok", g.ok},
                      {"request", g.request},
                      {"category", g.category},
                      {"free_bytes", g.free_bytes},
                      {"largest_free", g.largest_free}};
      j["zero"] = {{"ok", z.ok}};
      zt::write_file_atomic(json_out, j.dump(2) + "\n");
    }
    return 0;
  });
}
