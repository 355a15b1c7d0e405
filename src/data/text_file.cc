// data/text_file.cc — byte windows of a file (see text_file.h).
#include "data/text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/check.h"
#include "data/counter_hash.h"

namespace zt {

namespace {
constexpr uint64_t kTextDomain = 0x74657874ull;  // "text"

std::vector<unsigned char> read_all(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ZT_CHECK(f != nullptr, "--data ", path, ": cannot open (", std::strerror(errno), ")");
  std::vector<unsigned char> bytes;
  unsigned char chunk[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0) bytes.insert(bytes.end(), chunk, chunk + got);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  ZT_CHECK(!failed, "--data ", path, ": read error (", std::strerror(err), ")");
  return bytes;
}
}  // namespace

TextFileDataset::TextFileDataset(const std::string& path, std::size_t context)
    : path_(path), context_(context), bytes_(read_all(path)) {
  ZT_CHECK(context >= 1, "--data ", path, ": context must be at least 1");
  ZT_CHECK(bytes_.size() >= context + 1, "--data ", path, ": ", bytes_.size(),
           " bytes is too short for one sample of context ", context, " (needs ", context + 1, ")");
}

std::string TextFileDataset::describe() const {
  return concat("bytes of ", path_, " (", bytes_.size(), " bytes, vocab 256, context ", context_, ")");
}

std::size_t TextFileDataset::window_offset(uint64_t seed, uint64_t step, uint64_t global_index) const {
  const uint64_t windows = bytes_.size() - context_;  // offsets 0 .. size − T − 1
  return static_cast<std::size_t>(hash_key({kTextDomain, seed, step, global_index}) % windows);
}

void TextFileDataset::sample(uint64_t seed, uint64_t step, uint64_t global_index, int32_t* out) const {
  const unsigned char* w = bytes_.data() + window_offset(seed, step, global_index);
  for (std::size_t i = 0; i <= context_; ++i) out[i] = w[i];
}

}  // namespace zt
