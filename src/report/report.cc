// report/report.cc — the JSON conversions of zero-train's reports (see report.h).
#include "report/report.h"

#include "core/check.h"

#include <bit>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace zt::report {

using namespace zt::zero;

using nlohmann::ordered_json;

train::RankMemory rank_memory_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  train::RankMemory m;
  m.rank = j.at("rank").get<int>();
  m.dp_rank = j.at("dp_rank").get<int>();
  m.mp_rank = j.at("mp_rank").get<int>();
  m.model_states_bytes = j.at("model_states_bytes").get<std::size_t>();
  m.model_states_bytes_predicted = j.at("model_states_bytes_predicted").get<std::size_t>();
  m.peak_bytes = j.at("peak_bytes").get<std::size_t>();
  m.peak_bytes_predicted = j.at("peak_bytes_predicted").get<std::size_t>();
  m.high_water_bytes_predicted = j.at("high_water_bytes_predicted").get<std::size_t>();
  m.padding_bytes = j.at("padding_bytes").get<std::size_t>();
  m.by_category = j.at("by_category").get<std::map<std::string, std::size_t>>();
  m.by_category_predicted = j.at("by_category_predicted").get<std::map<std::string, std::size_t>>();
  m.arena_capacity = j.at("arena_capacity").get<std::size_t>();
  if (j.contains("host")) {
    m.host_by_category = j["host"].at("by_category").get<std::map<std::string, std::size_t>>();
    m.host_by_category_predicted = j["host"].at("by_category_predicted").get<std::map<std::string, std::size_t>>();
    m.host_capacity = j["host"].at("capacity").get<std::size_t>();
  }
  return m;
}

std::string comm_json(const CommStats& measured, const CommStats& predicted) {
  ordered_json bytes = ordered_json::object(), calls = ordered_json::object();
  ordered_json pbytes = ordered_json::object(), pcalls = ordered_json::object();
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    const auto kind = static_cast<CollKind>(k);
    if (kind == CollKind::call_check) continue;  // headers, not payload (collective/stats.h)
    const char* name = coll_kind_name(kind);
    if (measured[kind].calls || predicted[kind].calls) {
      bytes[name] = measured[kind].bytes_sent;
      calls[name] = measured[kind].calls;
      pbytes[name] = predicted[kind].bytes_sent;
      pcalls[name] = predicted[kind].calls;
    }
  }
  ordered_json j;
  j["bytes_sent_per_step"] = bytes;
  j["calls_per_step"] = calls;
  j["predicted_bytes_sent_per_step"] = pbytes;
  j["predicted_calls_per_step"] = pcalls;
  return j.dump();
}

std::string comm_json(const GroupComm& dp, const GroupComm& mp, const GroupComm* dp_replica, const GroupComm* dp_whole,
                      const GroupComm* pp) {
  const GroupComm none;
  const GroupComm& p = pp ? *pp : none;
  auto j = ordered_json::parse(
      comm_json(dp.per_step + mp.per_step + p.per_step,
                dp.predicted_per_step + mp.predicted_per_step + p.predicted_per_step));  // the sum over groups
  j["groups"] = {{"dp", ordered_json::parse(comm_json(dp.per_step, dp.predicted_per_step))},
                 {"mp", ordered_json::parse(comm_json(mp.per_step, mp.predicted_per_step))}};
  if (dp_replica && dp_whole) {  // hybrid sharding: dp split into inside, across and whole
    const CommStats shard = dp.per_step - dp_replica->per_step - dp_whole->per_step;
    const CommStats shard_predicted =
        dp.predicted_per_step - dp_replica->predicted_per_step - dp_whole->predicted_per_step;
    j["groups"]["dp_shard"] = ordered_json::parse(comm_json(shard, shard_predicted));
    j["groups"]["dp_replica"] = ordered_json::parse(comm_json(dp_replica->per_step, dp_replica->predicted_per_step));
    j["groups"]["dp_whole"] = ordered_json::parse(comm_json(dp_whole->per_step, dp_whole->predicted_per_step));
  }
  if (pp) j["groups"]["pp"] = ordered_json::parse(comm_json(pp->per_step, pp->predicted_per_step));
  return j.dump();
}

std::string transfers_json(const offload::TransferStats& per_step, const offload::TransferStats& predicted,
                           const offload::TransferStats& total) {
  const auto side = [](const offload::TransferStats& t) {
    return ordered_json{{"to_host_bytes", t.to_host_bytes},
                        {"to_host_calls", t.to_host_calls},
                        {"to_device_bytes", t.to_device_bytes},
                        {"to_device_calls", t.to_device_calls}};
  };
  ordered_json j;
  j["per_step"] = side(per_step);
  j["predicted_per_step"] = side(predicted);
  j["copy_seconds"] = total.busy_seconds;
  j["wait_seconds"] = total.wait_seconds;
  return j.dump();
}

std::string file_io_json(const offload::TransferStats& per_step, const offload::TransferStats& predicted,
                         const offload::TransferStats& total) {
  const auto side = [](const offload::TransferStats& t) {
    return ordered_json{{"read_bytes", t.read_bytes},
                        {"read_calls", t.read_calls},
                        {"write_bytes", t.write_bytes},
                        {"write_calls", t.write_calls}};
  };
  ordered_json j;
  j["per_step"] = side(per_step);
  j["predicted_per_step"] = side(predicted);
  j["io_seconds"] = total.busy_seconds;
  j["wait_seconds"] = total.wait_seconds;
  return j.dump();
}

std::string device_copies_json(const device::CopyStats& per_step, const device::CopyStats& predicted,
                               const device::CopyStats& total) {
  const auto side = [](const device::CopyStats& s, bool host_kinds_only) {
    ordered_json j;
    for (const auto& w : words(device::CopyKind{})) {
      if (host_kinds_only && w.value == device::CopyKind::device_to_device) continue;
      j[std::string(w.text)] = {{"bytes", s.bytes_of(w.value)}, {"copies", s.copies_of(w.value)}};
    }
    return j;
  };
  ordered_json j;
  j["per_step"] = side(per_step, false);
  j["predicted_per_step"] = side(predicted, true);  // host <-> device only: D2D is not host traffic
  j["total"] = side(total, false);
  return j.dump();
}

std::string arena_trace_json(const std::vector<ArenaEvent>& events, const train::RunOptions& c) {
  ordered_json j;
  j["capacity"] = static_cast<std::size_t>(c.memory_budget_mb * 1048576.0);
  j["allocator"] = word_of(c.allocator);
  ordered_json list = ordered_json::array();
  for (const auto& e : events) list.push_back({e.allocate ? 1 : 0, e.id, e.bytes, e.category});
  j["events"] = list;
  return j.dump() + "\n";
}

std::vector<ArenaEvent> arena_trace_from_json(const std::string& text) {
  // A trace is a file a user hands to zero-memreplay, so every field is checked here: the replays
  // size an arena from these numbers, and a release of a block that is not live would make
  // min_capacity's running sum wrap around to an absurd capacity.
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    ZT_FAIL("memory trace: not valid JSON (", e.what(), ")");
  }
  ZT_CHECK(j.is_object() && j.contains("events") && j["events"].is_array(),
           "memory trace: not an object with an array \"events\"");
  const auto& list = j["events"];
  std::vector<ArenaEvent> events;
  std::map<uint64_t, std::size_t> live;  // id -> requested bytes
  std::size_t allocated = 0;             // every allocation side by side, aligned
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& e = list[i];
    ZT_CHECK(e.is_array() && e.size() == 4 && e[0].is_number_unsigned() && e[0].get<uint64_t>() <= 1 &&
                 e[1].is_number_unsigned() && e[2].is_number_unsigned() && e[3].is_string(),
             "memory trace: event ", i, " is not [allocate 1|0, id, bytes, category]");
    ArenaEvent ev{e[0].get<uint64_t>() == 1, e[1].get<uint64_t>(), 0, e[3].get<std::string>()};
    const uint64_t bytes = e[2].get<uint64_t>();
    ZT_CHECK(bytes <= kMaxTraceBytes, "memory trace: event ", i, " asks for ", bytes, " bytes, more than 2^50");
    ev.bytes = static_cast<std::size_t>(bytes);
    if (ev.allocate) {
      ZT_CHECK(live.emplace(ev.id, ev.bytes).second, "memory trace: event ", i, " allocates block ", ev.id,
               ", which is live already");
      allocated += Arena::aligned_size(ev.bytes);
      ZT_CHECK(allocated <= kMaxTraceBytes << 10, "memory trace: its allocations add up to more than 2^60 bytes");
    } else {
      const auto it = live.find(ev.id);
      ZT_CHECK(it != live.end(), "memory trace: event ", i, " releases block ", ev.id, ", which is not live");
      ZT_CHECK(it->second == ev.bytes, "memory trace: event ", i, " releases block ", ev.id, " as ", ev.bytes,
               " bytes, it was allocated as ", it->second);
      live.erase(it);
    }
    events.push_back(std::move(ev));
  }
  return events;
}

}  // namespace zt::report
