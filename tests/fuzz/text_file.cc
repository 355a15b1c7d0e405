// tests/fuzz/text_file.cc — fuzz target: the `--data FILE` reader (data/text_file.cc). The first
// two bytes choose the context T (1 to 512), the rest is the file. Opening must succeed or throw
// one zt::Error; once open, every sample must be the T + 1 file bytes at its window's offset.
// Not the training loop that consumes the samples.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "data/text_file.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t context = 1 + ((std::size_t{data[0]} << 8 | data[1]) % 512);
  auto& dir = zt::fuzz::ScratchDir::get();
  dir.clear();
  const std::string path = dir.write("data.txt", zt::fuzz::as_text(data + 2, size - 2));
  try {
    zt::TextFileDataset d(path, context);
    d.describe();
    std::vector<int32_t> sample(context + 1);
    for (uint64_t i = 0; i < 4; ++i) {
      d.sample(7, i, i * 3, sample.data());
      const std::size_t at = d.window_offset(7, i, i * 3);
      if (at + context >= d.size()) zt::fuzz::broken("a window runs past the end of the file");
      for (std::size_t k = 0; k <= context; ++k)
        if (sample[k] != d.bytes()[at + k]) zt::fuzz::broken("a sample differs from the file's bytes");
    }
  } catch (const zt::Error&) {
  }
  return 0;
}
