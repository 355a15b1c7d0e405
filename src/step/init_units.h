// step/init_units.h — initial parameter values of any range of a unit, without a full FP32 copy.
//
// The counter-based initialiser (model/init.h) gives each element a value that depends only on
// (seed, canonical parameter, index), so a range can be produced in any pieces and any layout (a
// tensor-parallel rank's slices included, through the manifest's canonical runs): the single-rank reference
// asks for whole units, a ZeRO rank only for the parts of each unit it keeps (its shard of the
// master, its shard or the whole of the compute copy), and both get the same bits.
// It writes through the caller's `put`; it allocates nothing but uses the caller's window.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "model/gpt_config.h"
#include "model/init.h"
#include "model/manifest.h"

namespace zt::step {

/// Initial values of unit u's elements [first, first + count) in unit coordinates, written by
/// put(k, value) for k in [0, count); elements past the unit's real ones (padding) get 0.
/// @param cfg the model. @param manifest its manifest. @param seed the run's seed. @param u unit.
/// @param first first element. @param count elements. @param window scratch of window_size floats.
/// @param window_size its size (>= 1). @param put the writer.
template <typename Put>
void init_unit_range(const model::GptConfig& cfg, const model::Manifest& manifest, int64_t seed, std::size_t u,
                     std::size_t first, std::size_t count, float* window, std::size_t window_size, Put put) {
  const auto& unit = manifest.units[u];
  for (std::size_t k = 0; k < count; ++k) put(k, 0.0f);
  for (int p = unit.first_param; p < unit.first_param + unit.num_params; ++p) {
    const auto& info = manifest.params[static_cast<std::size_t>(p)];
    // a stored parameter is runs of canonical elements (model/manifest.h): the initialiser is
    // keyed by the canonical parameter and element, so a split tensor gets its canonical values
    for (const auto& run : info.runs) {
      const auto begin = static_cast<std::size_t>(info.offset_in_unit + run.offset);
      const auto lo = std::max(first, begin);
      const auto hi = std::min(first + count, begin + static_cast<std::size_t>(run.length));
      for (std::size_t at = lo; at < hi; at += window_size) {
        const std::size_t n = std::min(window_size, hi - at);
        model::init_param_slice(cfg, static_cast<uint64_t>(seed), run.param,
                                run.canonical_offset + static_cast<int64_t>(at - begin), static_cast<int64_t>(n),
                                window);
        for (std::size_t k = 0; k < n; ++k) put(at + k - first, window[k]);
      }
    }
  }
}

}  // namespace zt::step
