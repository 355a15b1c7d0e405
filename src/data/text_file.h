// data/text_file.h — byte-level training on any file (`--data FILE`).
//
// The vocabulary is the 256 byte values; a sample is the T + 1 bytes starting at an offset drawn
// uniformly from [0, size − T − 1] by hashing (seed, step, global index). The whole file is read
// once into memory. Not a tokenizer, not a streaming reader, no held-out split.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace zt {

/// Random windows of a byte file.
class TextFileDataset : public Dataset {
 public:
  /// Read the file. zt::Error when it cannot be read or has fewer than T + 1 bytes.
  /// @param path the file. @param context T.
  TextFileDataset(const std::string& path, std::size_t context);

  int vocab_size() const override { return 256; }
  std::size_t context() const override { return context_; }
  void sample(uint64_t seed, uint64_t step, uint64_t global_index, int32_t* out) const override;
  std::string describe() const override;

  /// Size of the file in bytes. @return it.
  std::size_t size() const { return bytes_.size(); }
  /// The offset a sample starts at (for tests). @param seed data seed. @param step step.
  /// @param global_index sample index. @return the offset into the file.
  std::size_t window_offset(uint64_t seed, uint64_t step, uint64_t global_index) const;
  /// The file's bytes. @return them.
  const std::vector<unsigned char>& bytes() const { return bytes_; }

 private:
  std::string path_;
  std::size_t context_;
  std::vector<unsigned char> bytes_;
};

}  // namespace zt
