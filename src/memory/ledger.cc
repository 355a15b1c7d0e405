// memory/ledger.cc — implementation of the byte ledger (see ledger.h).
#include "memory/ledger.h"

#include <algorithm>

#include "core/check.h"

namespace zt {

void Ledger::add(std::string_view category, std::size_t bytes) {
  auto it = by_category_.find(category);
  if (it == by_category_.end()) it = by_category_.emplace(std::string(category), CategoryUsage{}).first;
  for (CategoryUsage* u : {&it->second, &total_}) {
    u->current_bytes += bytes;
    u->peak_bytes = std::max(u->peak_bytes, u->current_bytes);
    ++u->allocations;
  }
}

void Ledger::remove(std::string_view category, std::size_t bytes) {
  auto it = by_category_.find(category);
  ZT_CHECK(it != by_category_.end() && it->second.current_bytes >= bytes && it->second.allocations > 0,
           "ledger: releasing ", bytes, " bytes of category '", category, "' that were never allocated");
  for (CategoryUsage* u : {&it->second, &total_}) {
    u->current_bytes -= bytes;
    --u->allocations;
  }
}

CategoryUsage Ledger::usage(std::string_view category) const {
  auto it = by_category_.find(category);
  return it == by_category_.end() ? CategoryUsage{} : it->second;
}

void Ledger::reset_peaks() {
  for (auto& [name, u] : by_category_) u.peak_bytes = u.current_bytes;
  total_.peak_bytes = total_.current_bytes;
}

}  // namespace zt
