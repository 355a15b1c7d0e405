// checkpoint/manifest.cc — manifest.json to and from the Manifest struct, strictly checked, and
// the coverage check the writer and the reader share (see manifest.h).
#include "checkpoint/manifest.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

#include "core/check.h"

namespace zt::checkpoint {
namespace {

using nlohmann::json;

// The field `key` of object `j`, which must exist; `field` is j's own place, for messages.
const json& member(const json& j, const char* key, const std::string& where, const std::string& field) {
  const std::string name = field.empty() ? key : field + "." + key;
  ZT_CHECK(j.is_object(), where, ": field ", field, " should be an object, not ", j.type_name());
  const auto it = j.find(key);
  ZT_CHECK(it != j.end(), where, ": field ", name, " is missing");
  return *it;
}

int64_t as_int(const json& v, const std::string& where, const std::string& name) {
  ZT_CHECK(v.is_number_integer(), where, ": field ", name, " should be an integer, not ", v.type_name());
  ZT_CHECK(!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()}, where,
           ": field ", name, " is out of range");
  return v.get<int64_t>();
}

uint64_t as_uint(const json& v, const std::string& where, const std::string& name, uint64_t max) {
  ZT_CHECK(v.is_number_integer(), where, ": field ", name, " should be an integer, not ", v.type_name());
  ZT_CHECK(v.is_number_unsigned() || v.get<int64_t>() >= 0, where, ": field ", name, " is negative");
  const auto x = v.get<uint64_t>();
  ZT_CHECK(x <= max, where, ": field ", name, " is ", x, ", more than ", max);
  return x;
}

int as_index(const json& v, const std::string& where, const std::string& name) {
  return static_cast<int>(as_uint(v, where, name, std::numeric_limits<int>::max()));
}

std::string as_string(const json& v, const std::string& where, const std::string& name) {
  ZT_CHECK(v.is_string(), where, ": field ", name, " should be a string, not ", v.type_name());
  return v.get<std::string>();
}

const json& as_array(const json& v, const std::string& where, const std::string& name) {
  ZT_CHECK(v.is_array(), where, ": field ", name, " should be an array, not ", v.type_name());
  return v;
}

std::string at(const std::string& field, std::size_t i) { return field + "[" + std::to_string(i) + "]"; }

ParamEntry param_from_json(const json& j, const std::string& where, const std::string& field) {
  ParamEntry p;
  p.name = as_string(member(j, "name", where, field), where, field + ".name");
  ZT_CHECK(!p.name.empty(), where, ": field ", field, ".name is empty");
  const json& shape = as_array(member(j, "shape", where, field), where, field + ".shape");
  int64_t product = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const int64_t n = as_int(shape[d], where, at(field + ".shape", d));
    ZT_CHECK(n >= 0, where, ": field ", at(field + ".shape", d), " is negative");
    ZT_CHECK(!__builtin_mul_overflow(product, n, &product), where, ": field ", field, ".shape overflows");
    p.shape.push_back(n);
  }
  p.numel = as_int(member(j, "numel", where, field), where, field + ".numel");
  ZT_CHECK(p.numel == product, where, ": field ", field, ".numel is ", p.numel, ", the shape has ", product,
           " elements");
  return p;
}

// The manifest's cross-references: every interval names a saved state, an existing parameter
// and file, and lies inside both.
void check_references(const Manifest& m, const std::string& where) {
  const std::set<std::string> states(m.states.begin(), m.states.end());
  for (std::size_t i = 0; i < m.intervals.size(); ++i) {
    const Interval& iv = m.intervals[i];
    const std::string f = at("intervals", i);
    ZT_CHECK(states.count(iv.state), where, ": ", f, " is of state \"", iv.state, "\", which is not in states");
    ZT_CHECK(iv.param < static_cast<int>(m.params.size()), where, ": ", f, " names parameter ", iv.param, " of ",
             m.params.size());
    ZT_CHECK(iv.file < static_cast<int>(m.files.size()), where, ": ", f, " names file ", iv.file, " of ",
             m.files.size());
    const ParamEntry& p = m.params[static_cast<std::size_t>(iv.param)];
    ZT_CHECK(iv.offset + iv.length <= p.numel, where, ": ", f, " (", describe(m, iv), ") ends beyond the ", p.numel,
             " elements of ", p.name);
    const FileEntry& file = m.files[static_cast<std::size_t>(iv.file)];
    const uint64_t bytes = 4 * static_cast<uint64_t>(iv.length);
    ZT_CHECK(iv.byte_offset <= file.bytes && bytes <= file.bytes - iv.byte_offset, where, ": ", f, " (bytes ",
             iv.byte_offset, "..", iv.byte_offset + bytes, ") lies beyond the ", file.bytes, " bytes of ", file.name);
  }
}

// No two intervals share a byte of a file (a writer puts each interval at bytes of its own).
// Besides catching a corrupt manifest, this bounds what a reader allocates by the bytes that
// exist: without it, a few KiB of intervals all pointing at the same bytes could declare
// parameters of billions of elements, and read_dense would allocate them all before reading.
void check_disjoint(const Manifest& m, const std::string& where) {
  std::vector<std::size_t> order(m.intervals.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto start = [&](std::size_t i) { return std::tuple(m.intervals[i].file, m.intervals[i].byte_offset, i); };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return start(a) < start(b); });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const Interval &prev = m.intervals[order[k - 1]], &next = m.intervals[order[k]];
    const uint64_t prev_end = prev.byte_offset + 4 * static_cast<uint64_t>(prev.length);
    ZT_CHECK(prev.file != next.file || next.byte_offset >= prev_end, where, ": ", at("intervals", order[k - 1]),
             " and ", at("intervals", order[k]), " share bytes ", next.byte_offset, "..",
             std::min(prev_end, next.byte_offset + 4 * static_cast<uint64_t>(next.length)), " of ",
             m.files[static_cast<std::size_t>(next.file)].name);
  }
}

}  // namespace

json file_to_json(const FileEntry& f) { return {{"name", f.name}, {"bytes", f.bytes}, {"crc32c", f.crc32c}}; }

FileEntry file_from_json(const json& j, const std::string& where, const std::string& field) {
  FileEntry f;
  f.name = as_string(member(j, "name", where, field), where, field + ".name");
  ZT_CHECK(!f.name.empty() && f.name != "." && f.name != ".." && f.name.find('/') == std::string::npos, where,
           ": field ", field, ".name \"", f.name, "\" is not a plain file name");
  f.bytes = as_uint(member(j, "bytes", where, field), where, field + ".bytes", std::numeric_limits<int64_t>::max());
  f.crc32c = static_cast<uint32_t>(as_uint(member(j, "crc32c", where, field), where, field + ".crc32c", 0xFFFFFFFFu));
  return f;
}

json interval_to_json(const Interval& iv) {
  return {{"state", iv.state},   {"param", iv.param}, {"offset", iv.offset},
          {"length", iv.length}, {"file", iv.file},   {"byte_offset", iv.byte_offset},
          {"crc32c", iv.crc32c}};
}

Interval interval_from_json(const json& j, const std::string& where, const std::string& field) {
  Interval iv;
  iv.state = as_string(member(j, "state", where, field), where, field + ".state");
  iv.param = as_index(member(j, "param", where, field), where, field + ".param");
  iv.offset = as_int(member(j, "offset", where, field), where, field + ".offset");
  ZT_CHECK(iv.offset >= 0, where, ": field ", field, ".offset is negative");
  iv.length = as_int(member(j, "length", where, field), where, field + ".length");
  ZT_CHECK(iv.length > 0, where, ": field ", field, ".length is ", iv.length, ", not positive");
  ZT_CHECK(iv.length <= (std::numeric_limits<int64_t>::max() - iv.offset) / 4, where, ": field ", field,
           ".length is out of range");
  iv.file = as_index(member(j, "file", where, field), where, field + ".file");
  iv.byte_offset = as_uint(member(j, "byte_offset", where, field), where, field + ".byte_offset",
                           std::numeric_limits<int64_t>::max());
  iv.crc32c = static_cast<uint32_t>(as_uint(member(j, "crc32c", where, field), where, field + ".crc32c", 0xFFFFFFFFu));
  return iv;
}

json to_json(const Manifest& m) {
  json j = {{"format_version", m.format_version},
            {"model", m.model},
            {"sharding", m.sharding},
            {"run", m.run},
            {"states", m.states}};
  j["params"] = json::array();
  for (const auto& p : m.params) j["params"].push_back({{"name", p.name}, {"shape", p.shape}, {"numel", p.numel}});
  j["files"] = json::array();
  for (const auto& f : m.files) j["files"].push_back(file_to_json(f));
  j["intervals"] = json::array();
  for (const auto& iv : m.intervals) j["intervals"].push_back(interval_to_json(iv));
  return j;
}

std::string manifest_text(const Manifest& m) {
  const json j = to_json(m);
  std::string text = "{\n";
  bool first = true;
  for (const char* key : {"format_version", "model", "sharding", "run", "states", "params", "files", "intervals"}) {
    text += std::string(first ? "" : ",\n") + "  \"" + key + "\": ";
    first = false;
    const json& v = j[key];
    if (!v.is_array() || v.empty() || std::string(key) == "states") {
      text += v.dump();
      continue;
    }
    text += "[\n";
    for (std::size_t i = 0; i < v.size(); ++i) text += "    " + v[i].dump() + (i + 1 < v.size() ? ",\n" : "\n");
    text += "  ]";
  }
  return text + "\n}\n";
}

Manifest manifest_from_json(const json& j, const std::string& where) {
  ZT_CHECK(j.is_object(), where, ": the manifest should be a JSON object, not ", j.type_name());
  Manifest m;
  // the version first: a later format may change everything else
  m.format_version = static_cast<int>(as_int(member(j, "format_version", where, ""), where, "format_version"));
  ZT_CHECK(m.format_version == kFormatVersion, where, ": format version ", m.format_version,
           ", this program reads version ", kFormatVersion);
  m.model = member(j, "model", where, "");
  m.sharding = member(j, "sharding", where, "");
  m.run = member(j, "run", where, "");
  const json& states = as_array(member(j, "states", where, ""), where, "states");
  for (std::size_t i = 0; i < states.size(); ++i) {
    m.states.push_back(as_string(states[i], where, at("states", i)));
    ZT_CHECK(!m.states.back().empty(), where, ": field ", at("states", i), " is empty");
  }
  ZT_CHECK(!m.states.empty(), where, ": field states is empty");
  ZT_CHECK(std::set<std::string>(m.states.begin(), m.states.end()).size() == m.states.size(), where,
           ": field states names a state twice");
  const json& params = as_array(member(j, "params", where, ""), where, "params");
  std::set<std::string> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    m.params.push_back(param_from_json(params[i], where, at("params", i)));
    ZT_CHECK(names.insert(m.params.back().name).second, where, ": field ", at("params", i), ".name \"",
             m.params.back().name, "\" appears twice");
  }
  const json& files = as_array(member(j, "files", where, ""), where, "files");
  names.clear();
  for (std::size_t i = 0; i < files.size(); ++i) {
    m.files.push_back(file_from_json(files[i], where, at("files", i)));
    ZT_CHECK(names.insert(m.files.back().name).second, where, ": field ", at("files", i), ".name \"",
             m.files.back().name, "\" appears twice");
  }
  const json& intervals = as_array(member(j, "intervals", where, ""), where, "intervals");
  m.intervals.reserve(intervals.size());
  for (std::size_t i = 0; i < intervals.size(); ++i)
    m.intervals.push_back(interval_from_json(intervals[i], where, at("intervals", i)));
  check_references(m, where);
  return m;
}

Manifest parse_manifest(const std::string& text, const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    // not only parse_error: a number too large for a double (1e400) is nlohmann's out_of_range
    ZT_FAIL(where, ": not valid JSON (", e.what(), ")");
  }
  return manifest_from_json(j, where);
}

std::string describe(const Manifest& m, const Interval& iv) {
  const bool known = iv.param >= 0 && iv.param < static_cast<int>(m.params.size());
  const std::string name = known ? m.params[static_cast<std::size_t>(iv.param)].name : "parameter ?";
  return concat(iv.state, " of ", name, " [", iv.offset, ", ", iv.offset + iv.length, ")");
}

void check_coverage(const Manifest& m, const std::string& where) {
  std::vector<std::size_t> order(m.intervals.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto state_index = [&](const std::string& s) {
    const auto it = std::find(m.states.begin(), m.states.end(), s);
    ZT_CHECK(it != m.states.end(), where, ": an interval of state \"", s, "\", which is not in states");
    return it - m.states.begin();
  };
  std::vector<std::ptrdiff_t> state_of(m.intervals.size());
  for (std::size_t i = 0; i < m.intervals.size(); ++i) {
    state_of[i] = state_index(m.intervals[i].state);
    const int p = m.intervals[i].param;
    ZT_CHECK(p >= 0 && p < static_cast<int>(m.params.size()), where, ": an interval names parameter ", p, " of ",
             m.params.size());
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Interval &x = m.intervals[a], &y = m.intervals[b];
    return std::tie(state_of[a], x.param, x.offset) < std::tie(state_of[b], y.param, y.offset);
  });
  // walk every (state, parameter) in order, `next` being the first element not yet covered
  std::size_t k = 0;
  for (std::size_t s = 0; s < m.states.size(); ++s)
    for (std::size_t p = 0; p < m.params.size(); ++p) {
      const std::string what = m.states[s] + " of " + m.params[p].name;
      int64_t next = 0;
      for (; k < order.size() && state_of[order[k]] == static_cast<std::ptrdiff_t>(s) &&
             m.intervals[order[k]].param == static_cast<int>(p);
           ++k) {
        const Interval& iv = m.intervals[order[k]];
        ZT_CHECK(iv.offset <= next, where, ": ", what, ": elements [", next, ", ", iv.offset, ") are not saved");
        ZT_CHECK(iv.offset >= next, where, ": ", what, ": elements [", iv.offset, ", ",
                 std::min(next, iv.offset + iv.length), ") are saved twice");
        next = iv.offset + iv.length;
      }
      ZT_CHECK(next <= m.params[p].numel, where, ": ", what, ": elements up to ", next, " are saved, but it has ",
               m.params[p].numel);
      ZT_CHECK(next == m.params[p].numel, where, ": ", what, ": elements [", next, ", ", m.params[p].numel,
               ") are not saved");
    }
  check_disjoint(m, where);
}

}  // namespace zt::checkpoint
