// zero/timeline.cc — JSON forms of a timeline (see timeline.h).
#include "zero/timeline.h"

#include <nlohmann/json.hpp>

namespace zt::zero {

std::string chrome_trace_json(const std::vector<std::vector<TimelineEvent>>& per_rank) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < per_rank.size(); ++r)
    for (const auto& e : per_rank[r])
      events.push_back({{"name", e.name},
                        {"cat", e.cat},
                        {"ph", "X"},
                        {"ts", e.ts_us},
                        {"dur", e.dur_us},
                        {"pid", r},
                        {"tid", e.cat == "wait" ? 1 : 0}});
  nlohmann::ordered_json j;
  j["traceEvents"] = events;
  j["displayTimeUnit"] = "ms";
  return j.dump() + "\n";
}

std::string timeline_to_json(const std::vector<TimelineEvent>& events) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : events) list.push_back({e.name, e.cat, e.ts_us, e.dur_us});
  return list.dump();
}

std::vector<TimelineEvent> timeline_from_json(const std::string& text) {
  std::vector<TimelineEvent> out;
  for (const auto& e : nlohmann::json::parse(text))
    out.push_back({e[0].get<std::string>(), e[1].get<std::string>(), e[2].get<double>(), e[3].get<double>()});
  return out;
}

}  // namespace zt::zero
