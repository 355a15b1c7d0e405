// zero/timeline.cc — JSON forms of a timeline (see timeline.h).
#include "zero/timeline.h"

#include <nlohmann/json.hpp>

namespace zt::zero {

std::string chrome_trace_json(const std::vector<std::vector<TimelineEvent>>& per_rank) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    std::vector<std::string> tracks = {"host", "host: blocked on collectives"};  // tid = index
    const auto tid_of = [&](const std::string& cat) -> std::size_t {
      if (cat == "wait") return 1;
      if (cat.rfind("stream ", 0) != 0) return 0;
      const std::string name = "device " + cat;
      for (std::size_t t = 2; t < tracks.size(); ++t)
        if (tracks[t] == name) return t;
      tracks.push_back(name);
      return tracks.size() - 1;
    };
    for (const auto& e : per_rank[r])
      events.push_back({{"name", e.name},
                        {"cat", e.cat},
                        {"ph", "X"},
                        {"ts", e.ts_us},
                        {"dur", e.dur_us},
                        {"pid", r},
                        {"tid", tid_of(e.cat)}});
    for (std::size_t t = 0; t < tracks.size(); ++t)
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", t}, {"args", {{"name", tracks[t]}}}});
  }
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
