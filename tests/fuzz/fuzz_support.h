// tests/fuzz/fuzz_support.h — what the fuzz targets share: cutting one input into parts, a
// scratch directory for the readers that take a path, and the one way a target reports a broken
// property. It is not a fuzzing engine: libFuzzer (make fuzz) or replay_main.cc (make test)
// calls each target's LLVMFuzzerTestOneInput.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zt::fuzz {

/// What separates the parts of a multi-part input (a manifest from its data files): a line that
/// holds only "@@". Short, so that the mutator keeps or makes it easily; never in a manifest.
inline constexpr std::string_view kPartSeparator = "\n@@\n";

/// The input as text (the readers take std::string). @param data bytes. @param size count.
/// @return them as a string.
std::string as_text(const uint8_t* data, std::size_t size);

/// Cut text at every separator. @param text the input. @param separator what cuts it.
/// @return the parts (one more than the separators found).
std::vector<std::string> split(std::string_view text, std::string_view separator);

/// A directory of this process's own, made on first use under $TMPDIR (or /tmp) and removed at
/// exit; clear() empties it before each input so that no file outlives the input that wrote it.
class ScratchDir {
 public:
  /// The process's directory. @return it.
  static ScratchDir& get();
  /// @return its path.
  const std::string& path() const { return path_; }
  /// Remove every file in it.
  void clear();
  /// Write one file in it. @param name a plain file name. @param bytes its contents.
  /// @return its path.
  std::string write(const std::string& name, const std::string& bytes);

 private:
  ScratchDir();
  ~ScratchDir();
  std::string path_;
};

/// A property the target checks does not hold: print why and abort, which libFuzzer reports as a
/// crash and the replay as a failed test. @param what one line. Never returns.
[[noreturn]] void broken(const std::string& what);

}  // namespace zt::fuzz
