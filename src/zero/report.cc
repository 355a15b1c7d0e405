// zero/report.cc — JSON conversions and the bitwise comparison of zero-train (see report.h).
#include "zero/report.h"

#include "train/summary_json.h"

#include <bit>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>

namespace zt::zero {

using nlohmann::ordered_json;

std::string rank_memory_to_json(const train::RankMemory& m) { return train::rank_memory_json(m); }

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

std::string comm_json(const GroupComm& dp, const GroupComm& mp) {
  auto j = ordered_json::parse(
      comm_json(dp.per_step + mp.per_step, dp.predicted_per_step + mp.predicted_per_step));  // the sum over groups
  j["groups"] = {{"dp", ordered_json::parse(comm_json(dp.per_step, dp.predicted_per_step))},
                 {"mp", ordered_json::parse(comm_json(mp.per_step, mp.predicted_per_step))}};
  return j.dump();
}

std::string transfers_json(const zero_r::TransferStats& per_step, const zero_r::TransferStats& predicted,
                           const zero_r::TransferStats& total) {
  const auto side = [](const zero_r::TransferStats& t) {
    return ordered_json{{"to_host_bytes", t.to_host_bytes},
                        {"to_host_calls", t.to_host_calls},
                        {"to_device_bytes", t.to_device_bytes},
                        {"to_device_calls", t.to_device_calls}};
  };
  ordered_json j;
  j["per_step"] = side(per_step);
  j["predicted_per_step"] = side(predicted);
  j["copy_seconds"] = total.copy_seconds;
  j["wait_seconds"] = total.wait_seconds;
  return j.dump();
}

std::string file_io_json(const offload::FileIoStats& per_step, const offload::FileIoStats& predicted,
                         const offload::FileIoStats& total) {
  const auto side = [](const offload::FileIoStats& t) {
    return ordered_json{{"read_bytes", t.read_bytes},
                        {"read_calls", t.read_calls},
                        {"write_bytes", t.write_bytes},
                        {"write_calls", t.write_calls}};
  };
  ordered_json j;
  j["per_step"] = side(per_step);
  j["predicted_per_step"] = side(predicted);
  j["io_seconds"] = total.io_seconds;
  j["wait_seconds"] = total.wait_seconds;
  return j.dump();
}

std::string arena_trace_json(const std::vector<ArenaEvent>& events, const train::TrainConfig& c) {
  ordered_json j;
  j["capacity"] = static_cast<std::size_t>(c.memory_budget_mb * 1048576.0);
  j["allocator"] = c.allocator;
  ordered_json list = ordered_json::array();
  for (const auto& e : events) list.push_back({e.allocate ? 1 : 0, e.id, e.bytes, e.category});
  j["events"] = list;
  return j.dump() + "\n";
}

std::vector<ArenaEvent> arena_trace_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  std::vector<ArenaEvent> events;
  for (const auto& e : j.at("events"))
    events.push_back(
        {e.at(0).get<int>() == 1, e.at(1).get<uint64_t>(), e.at(2).get<std::size_t>(), e.at(3).get<std::string>()});
  return events;
}

}  // namespace zt::zero
