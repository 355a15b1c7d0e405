// core/check.h — the project's one error type and its check macro.
//
// Every misconfiguration or bad input becomes a zt::Error with one readable line; programs catch
// it at main() and exit non-zero. This is not an assertion facility for internal invariants in hot
// loops (those are cheap ZT_CHECKs too, but the point is the message, not the speed).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace zt {

/// The single exception type thrown for bad input, misconfiguration and failed invariants.
class Error : public std::runtime_error {
 public:
  /// @param message one line, saying what was wrong and with which values.
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Concatenate any streamable values into one string (used by ZT_CHECK and ZT_FAIL).
/// @param parts values to print one after the other, with no separator.
/// @return the concatenation.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace zt

/// Throw zt::Error with the concatenated message parts unless `cond` holds.
#define ZT_CHECK(cond, ...)                                    \
  do {                                                         \
    if (!(cond)) throw ::zt::Error(::zt::concat(__VA_ARGS__)); \
  } while (0)

/// Throw zt::Error with the concatenated message parts.
#define ZT_FAIL(...) throw ::zt::Error(::zt::concat(__VA_ARGS__))
