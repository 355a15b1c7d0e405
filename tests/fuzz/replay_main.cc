// tests/fuzz/replay_main.cc — the main() that `make test` links with each fuzz target instead of
// libFuzzer: it runs every file of the folders it is given (the target's seed corpus and its
// regressions) through LLVMFuzzerTestOneInput once, in name order, with no sanitizer and no
// mutation. A file fails when the target lets an exception other than zt::Error escape, aborts
// (a broken property, or a crash), or asks for one allocation above kMaxAllocation (libFuzzer's
// -malloc_limit_mb does the same in make fuzz). It is not a fuzzer: it finds nothing new, it
// keeps what was found fixed.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size);

namespace {

// The largest single allocation a target may make: an input of at most a few hundred KiB that
// makes a reader ask for more has trusted a size field it should have refused or read lazily.
constexpr std::size_t kMaxAllocation = std::size_t{64} << 20;

void* checked_allocation(std::size_t size, std::size_t align) {
  if (size > kMaxAllocation) {
    std::fprintf(stderr, "replay: one allocation of %zu bytes, above the limit of %zu\n", size, kMaxAllocation);
    std::abort();
  }
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (size + align - 1) / align * align)
                                              : std::malloc(size ? size : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

// Every allocation through new goes through the limit (std::string, std::vector, nlohmann::json).
void* operator new(std::size_t size) { return checked_allocation(size, 0); }
void* operator new[](std::size_t size) { return checked_allocation(size, 0); }
void* operator new(std::size_t size, std::align_val_t align) {
  return checked_allocation(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return checked_allocation(size, static_cast<std::size_t>(align));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER [MORE_FOLDERS...]\n", argv[0]);
    return 2;
  }
  std::size_t replayed = 0;
  for (int a = 1; a < argc; ++a) {
    std::vector<fs::path> files;
    // hidden files are not inputs: a .gitkeep keeps an empty regressions folder in git
    for (const auto& entry : fs::directory_iterator(argv[a]))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    // the first folder is the seed corpus: empty, this test would pass while checking nothing
    if (a == 1 && files.empty()) {
      std::fprintf(stderr, "replay: no input in %s\n", argv[a]);
      return 1;
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), bytes.size());
      try {
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "replay: %s: the target let an exception escape: %s\n", f.c_str(), e.what());
        return 1;
      } catch (...) {
        std::fprintf(stderr, "replay: %s: the target let a non-standard exception escape\n", f.c_str());
        return 1;
      }
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs, all refused cleanly or accepted\n", replayed);
  return 0;
}
