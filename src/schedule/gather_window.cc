// schedule/gather_window.cc — stage 3's prefetch window (see gather_window.h).
#include "schedule/gather_window.h"

#include <algorithm>

#include "core/check.h"

namespace zt::schedule {

GatherWindow gather_window(const std::vector<std::size_t>& acquire_order, const std::vector<bool>& sharded,
                           std::size_t prefetch) {
  GatherWindow w;
  for (std::size_t u : acquire_order) {
    ZT_CHECK(u < sharded.size(), "gather window: unit ", u, " of the acquire order is not in the model");
    w.gathers_before.push_back(w.units.size());
    w.gathers.push_back(sharded[u]);
    if (sharded[u]) w.units.push_back(u);
  }
  // issued after position i: its own gather (if any) and the next --prefetch ones, never past the
  // micro-batch's last gather
  for (std::size_t i = 0; i < acquire_order.size(); ++i)
    w.issued.push_back(std::min(w.units.size(), w.gathers_before[i] + (w.gathers[i] ? 1 : 0) + prefetch));
  return w;
}

std::size_t gathered_window_peak(const GatherWindow& w, const std::vector<std::size_t>& held_from,
                                 const std::vector<std::size_t>& unit_elements) {
  ZT_CHECK(held_from.size() == w.issued.size(), "gathered window: ", held_from.size(), " positions held, ",
           w.issued.size(), " acquired");
  std::size_t peak = 0;
  for (std::size_t i = 0; i < w.issued.size(); ++i) {
    // live: every gather from the first held use's to the last issued one
    std::size_t live = 0;
    for (std::size_t k = w.gathers_before[held_from[i]]; k < w.issued[i]; ++k) live += unit_elements[w.units[k]];
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace zt::schedule
