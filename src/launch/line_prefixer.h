// launch/line_prefixer.h — turns a child's byte stream into whole lines that each start with a
// prefix such as "[rank 1] ".
//
// Only complete lines leave it, so lines of different ranks never interleave mid-line on the
// launcher's terminal. It does no I/O itself (launch/spawn.cc reads pipes and writes the result).
#pragma once

#include <cstddef>
#include <string>

namespace zt::launch {

/// Accumulates bytes and releases complete, prefixed lines.
class LinePrefixer {
 public:
  /// A partial line longer than this is released as a line of its own, so that a child that
  /// never prints a newline cannot make the launcher's memory grow without bound.
  static constexpr std::size_t kMaxLineBytes = 1 << 20;

  /// @param prefix text put in front of every line.
  explicit LinePrefixer(std::string prefix) : prefix_(std::move(prefix)) {}

  /// Add bytes; return the complete lines they finish, each prefixed and ending in '\n'.
  /// @param data the bytes. @param size how many. @return prefixed complete lines (maybe "").
  std::string feed(const char* data, std::size_t size);

  /// End of stream: the unfinished last line, prefixed and given a '\n' ("" if there is none).
  /// @return the remaining text.
  std::string finish();

  /// The last complete non-empty line released so far, without prefix or newline (at most
  /// kMaxKeptBytes of it): a launcher quotes a failed rank's last words from it.
  /// @return the line ("" if none).
  const std::string& last_line() const { return last_line_; }
  /// How much of the last line last_line() keeps.
  static constexpr std::size_t kMaxKeptBytes = 4096;

 private:
  void keep(const std::string& line);
  std::string prefix_;
  std::string partial_;
  std::string last_line_;
};

}  // namespace zt::launch
