// apps/zero-ckpt/inspect.cc — `zero-ckpt inspect`: what a checkpoint holds, read from its manifest
// (opening it checks versions, sizes and coverage); --verify also reads every byte once.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/zero-ckpt/commands.h"
#include "checkpoint/reader.h"

namespace zt::ckpt_tool {
namespace {

// "key value, key value" for an object's scalars; arrays and objects as "key (N entries)".
std::string scalars(const nlohmann::json& j) {
  if (!j.is_object()) return j.dump();
  std::string text;
  for (const auto& [key, value] : j.items()) {
    text += text.empty() ? "" : ", ";
    if (value.is_structured())
      text += key + " (" + std::to_string(value.size()) + " entries)";
    else
      text += key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text.empty() ? "(none)" : text;
}

}  // namespace

void inspect(const std::string& dir, bool verify, bool json) {
  checkpoint::Reader reader(checkpoint::resolve_checkpoint(dir));
  const checkpoint::Manifest& m = reader.manifest();
  if (verify) reader.verify_files();
  int64_t elements = 0;
  for (const auto& p : m.params) elements += p.numel;
  uint64_t total = 0;
  for (const auto& f : m.files) total += f.bytes;
  const nlohmann::json step = m.run.is_object() && m.run.contains("step") ? m.run["step"] : nlohmann::json();

  if (json) {
    nlohmann::ordered_json j;
    j["checkpoint"] = reader.dir();
    j["format_version"] = m.format_version;
    j["step"] = step;
    j["model"] = m.model;
    j["sharding"] = m.sharding;
    j["run"] = m.run;
    j["states"] = m.states;
    j["params"] = m.params.size();
    j["elements"] = elements;
    j["files"] = nlohmann::ordered_json::array();
    for (const auto& f : m.files) j["files"].push_back({{"name", f.name}, {"bytes", f.bytes}, {"crc32c", f.crc32c}});
    j["total_bytes"] = total;
    j["intervals"] = m.intervals.size();
    j["verified"] = verify;
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("checkpoint: %s\n", reader.dir().c_str());
  std::printf("format version: %d\n", m.format_version);
  std::printf("step: %s\n", step.is_null() ? "(not recorded)" : step.dump().c_str());
  std::printf("model: %s; %zu parameters, %lld elements\n", scalars(m.model).c_str(), m.params.size(),
              static_cast<long long>(elements));
  std::printf("sharding: %s\n", scalars(m.sharding).c_str());
  std::string states;
  for (const auto& s : m.states) states += (states.empty() ? "" : ", ") + s;
  std::printf("states: %s\n", states.c_str());
  std::printf("files:\n");
  for (const auto& f : m.files)
    std::printf("  %-16s %14llu bytes  crc32c 0x%08x\n", f.name.c_str(), static_cast<unsigned long long>(f.bytes),
                f.crc32c);
  std::printf("total: %llu bytes in %zu files, %zu intervals\n", static_cast<unsigned long long>(total), m.files.size(),
              m.intervals.size());
  if (verify) std::printf("all %zu files verify\n", m.files.size());
}

}  // namespace zt::ckpt_tool
