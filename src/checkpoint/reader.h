// checkpoint/reader.h — reading a checkpoint back, whole or by canonical interval.
//
// Opening checks everything that is cheap before anything is loaded: the format version, the
// manifest's structure, that every listed file exists with exactly its recorded size, and that the
// intervals of each state cover every element of every parameter exactly once. read() then serves
// any canonical range (state, parameter, offset, length) by intersecting it with the saved
// intervals, reading each touched interval whole and checking its CRC-32C before a byte of it is
// used, so a rank reads only what it needs and never trusts a byte it has not verified.
// Every problem is one zt::Error naming the file and what is wrong.
// Not a cache of the model: it holds the manifest, the index and the open files; every read()
// reads and verifies again what it needs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/manifest.h"

namespace zt::checkpoint {

/// Resolve a --resume argument: a checkpoint directory (it holds manifest.json), or a save
/// directory, in which case its highest complete step-N directory (.tmp ones are ignored).
/// @param path the argument. @return the checkpoint directory; zt::Error if there is none.
std::string resolve_checkpoint(const std::string& path);

/// A verified view of one checkpoint directory.
class Reader {
 public:
  /// Open and check (see the file comment). @param checkpoint_dir a checkpoint directory.
  explicit Reader(const std::string& checkpoint_dir);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  /// @return the parsed manifest.
  const Manifest& manifest() const;
  /// @return the directory.
  const std::string& dir() const;

  /// Canonical elements [offset, offset + length) of `param` in `state`.
  /// @param state a saved state. @param param canonical index. @param offset first element.
  /// @param length how many. @param out length floats (written; unspecified after an error).
  void read(const std::string& state, int param, int64_t offset, int64_t length, float* out);

  /// Every element of every parameter of `state` in canonical dense order (the parameters end
  /// to end, as --dump-params writes them). @param state a saved state. @return the values.
  std::vector<float> read_dense(const std::string& state);

  /// Check the CRC-32C of every file (zero-ckpt inspect --verify). zt::Error on a mismatch.
  void verify_files();

  /// @return bytes read from data files so far.
  uint64_t bytes_read() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zt::checkpoint
