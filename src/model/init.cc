// model/init.cc — the counter-based GPT-2 initialiser.
#include "model/init.h"

#include <cmath>
#include <string>

#include "core/check.h"
#include "fp/random_bits.h"
#include "kernels/math.h"

namespace zt::model {
namespace {

// A uniform double in (0, 1): 53 random bits, offset by half a step so 0 never occurs.
double uniform_open(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1p-53; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

InitRule init_rule(const GptConfig& cfg, const ParamInfo& info) {
  const double base = 0.02;
  if (ends_with(info.name, "c_proj.weight")) {
    return {InitKind::normal, base / std::sqrt(2.0 * static_cast<double>(cfg.layers))};
  }
  if (ends_with(info.name, ".weight") && info.shape.size() == 1) return {InitKind::ones, 0.0};
  if (ends_with(info.name, ".bias")) return {InitKind::zeros, 0.0};
  return {InitKind::normal, base};  // wte, wpe, c_attn and c_fc weights
}

double init_standard_normal(uint64_t seed, int64_t param_index, int64_t element) {
  const uint64_t key =
      splitmix64_mix(splitmix64_mix(seed) ^ splitmix64_mix(0x5eedull + static_cast<uint64_t>(param_index)));
  const uint64_t e = static_cast<uint64_t>(element);
  const double u1 = uniform_open(splitmix64_mix(key ^ splitmix64_mix(2 * e)));
  const double u2 = uniform_open(splitmix64_mix(key ^ splitmix64_mix(2 * e + 1)));
  return std::sqrt(-2.0 * kernels::log_d(u1)) * kernels::cos_2pi_d(u2);
}

namespace {

// The canonical manifest of the last configuration asked for on this thread: a tensor-parallel
// rank initialises its split tensors row slice by row slice, so this is called many times in a row.
const Manifest& canonical_manifest(const GptConfig& cfg) {
  thread_local GptConfig cached{};
  thread_local Manifest m;
  thread_local bool have = false;
  if (!have || !(cached == cfg)) {
    m = make_manifest(cfg);
    cached = cfg;
    have = true;
  }
  return m;
}

}  // namespace

void init_param_slice(const GptConfig& cfg, uint64_t seed, int64_t param_index, int64_t first, int64_t count,
                      float* out) {
  const Manifest& m = canonical_manifest(cfg);
  ZT_CHECK(param_index >= 0 && param_index < static_cast<int64_t>(m.params.size()),
           "init_param_slice: parameter index ", param_index, " out of range");
  const ParamInfo& p = m.params[static_cast<std::size_t>(param_index)];
  ZT_CHECK(first >= 0 && count >= 0 && first + count <= p.numel, "init_param_slice: elements [", first, ",",
           first + count, ") outside ", p.name, " (", p.numel, " elements)");
  const InitRule rule = init_rule(cfg, p);
  for (int64_t i = 0; i < count; ++i) {
    switch (rule.kind) {
      case InitKind::zeros:
        out[i] = 0.0f;
        break;
      case InitKind::ones:
        out[i] = 1.0f;
        break;
      case InitKind::normal:
        out[i] = static_cast<float>(rule.std * init_standard_normal(seed, param_index, first + i));
        break;
    }
  }
}

void init_params(const GptConfig& cfg, uint64_t seed, float* out) {
  const Manifest m = make_manifest(cfg);
  for (std::size_t i = 0; i < m.params.size(); ++i) {
    init_param_slice(cfg, seed, static_cast<int64_t>(i), 0, m.params[i].numel, out + m.params[i].offset);
  }
}

}  // namespace zt::model
