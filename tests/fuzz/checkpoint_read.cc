// tests/fuzz/checkpoint_read.cc — fuzz target: a whole checkpoint directory, opened and read as
// --resume and zero-ckpt do (checkpoint::Reader). The input is the manifest, then up to four data
// files, separated by lines holding only "@@" (fuzz_support.h); the files are written as
// rank-00000.bin, rank-00001.bin, ... into a scratch directory. Every state is read densely, then
// every parameter again without its first and last element (the partial-interval path, which
// must give the same values), and every file's CRC is checked. Each step must succeed or throw
// one zt::Error. Not the manifest's own parser alone (checkpoint_manifest.cc is faster at that).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "checkpoint/reader.h"
#include "core/check.h"
#include "fuzz/fuzz_support.h"

namespace {

void read_everything(zt::checkpoint::Reader& r) {
  const auto& m = r.manifest();
  for (const auto& state : m.states) {
    const std::vector<float> dense = r.read_dense(state);
    int64_t at = 0;
    for (std::size_t p = 0; p < m.params.size(); ++p) {
      const int64_t n = m.params[p].numel;
      if (n > 2) {
        std::vector<float> inner(static_cast<std::size_t>(n - 2));
        r.read(state, static_cast<int>(p), 1, n - 2, inner.data());
        if (std::memcmp(inner.data(), dense.data() + at + 1, inner.size() * sizeof(float)) != 0)
          zt::fuzz::broken("a partial read differs from the same elements of the dense read");
      }
      at += n;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  auto& dir = zt::fuzz::ScratchDir::get();
  dir.clear();
  const auto parts = zt::fuzz::split(zt::fuzz::as_text(data, size), zt::fuzz::kPartSeparator);
  dir.write("manifest.json", parts[0]);
  for (std::size_t f = 1; f < parts.size() && f <= 4; ++f) {
    char name[32];
    std::snprintf(name, sizeof name, "rank-%05zu.bin", f - 1);
    dir.write(name, parts[f]);
  }
  try {
    zt::checkpoint::Reader reader(dir.path());
    try {
      read_everything(reader);
    } catch (const zt::Error&) {
    }
    reader.verify_files();
  } catch (const zt::Error&) {
  }
  return 0;
}
