// train/offload_target.h — where --offload-optimizer and --offload-params put their states:
// `none`, `host` (the host tier) or `file:DIR` (a file per rank under DIR), parsed once into a
// kind and a directory and printed back as the same text.
//
// Why not a plain choice: file:DIR carries a path, so the value is a closed kind plus an open
// directory. Which kinds a flag accepts (--offload-params has no host tier) is the caller's
// argument. Not here: the tiers themselves (src/offload), the checks that need other settings
// (train_config.h's validate).
#pragma once

#include <array>
#include <string>

#include "core/words.h"

namespace zt::train {

/// The kind of an offload target.
enum class OffloadKind { none, host, file };
/// @return the words of the kinds (file is written file:DIR).
constexpr auto words(OffloadKind) {
  return std::array{Word{"none", OffloadKind::none}, Word{"host", OffloadKind::host}, Word{"file", OffloadKind::file}};
}

/// Where a state lives: nowhere else (none), the host tier, or files under a directory.
struct OffloadTarget {
  OffloadKind kind = OffloadKind::none;  ///< none | host | file
  std::string dir;                       ///< the directory of file:DIR; empty otherwise

  /// Whether anything is offloaded. @return kind != none.
  bool offloaded() const { return kind != OffloadKind::none; }
  /// The target as the flag writes it. @return "none", "host" or "file:DIR".
  std::string text() const { return kind == OffloadKind::file ? "file:" + dir : word_of(kind); }
  /// Two targets are the same when kind and directory are. @param other the other target.
  /// @return true if equal.
  bool operator==(const OffloadTarget& other) const = default;
};

/// Parse `none`, `host` (when allowed) or `file:DIR` (DIR not empty).
/// @param text the flag's value. @param flag the flag, with dashes, for the error line.
/// @param host_allowed whether `host` is a target of this flag. @return the target.
OffloadTarget parse_offload_target(const std::string& text, const std::string& flag, bool host_allowed);

}  // namespace zt::train
