// memory/ledger.h — bytes in use per category, now and at their peak.
//
// The ledger is what the memory chapter and the tests read: every allocation made through an Arena
// is counted here under a category name ("params_fp16", "adam_m", "activations", ...), with the
// bytes the caller asked for. It does not allocate anything itself and knows nothing of alignment.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace zt {

/// Usage of one ledger category (or of all of them together).
struct CategoryUsage {
  std::size_t current_bytes = 0;  ///< bytes allocated now
  std::size_t peak_bytes = 0;     ///< largest value current_bytes has had since the last reset
  std::size_t allocations = 0;    ///< live allocations now
};

/// Current and peak bytes by category and overall. The overall peak is the peak of the sum (the
/// high-water mark of the whole arena), which is in general less than the sum of category peaks.
class Ledger {
 public:
  /// Count an allocation. @param category its category. @param bytes its requested size.
  void add(std::string_view category, std::size_t bytes);
  /// Count a release. @param category the category it was allocated under.
  /// @param bytes the same size that was added.
  void remove(std::string_view category, std::size_t bytes);

  /// Usage of one category (zeros for a category never seen). @param category the name.
  /// @return its usage.
  CategoryUsage usage(std::string_view category) const;
  /// Usage of everything together. @return the overall usage.
  const CategoryUsage& total() const { return total_; }
  /// Every category seen so far, in name order (released ones stay listed with current 0).
  /// @return the map from name to usage.
  const std::map<std::string, CategoryUsage, std::less<>>& categories() const { return by_category_; }
  /// Set every peak (and the overall one) to the current value, to measure one phase's peak.
  void reset_peaks();

 private:
  std::map<std::string, CategoryUsage, std::less<>> by_category_;
  CategoryUsage total_;
};

}  // namespace zt
