// tests/fuzz/fuzz_support.cc — see fuzz_support.h.
#include "fuzz/fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace zt::fuzz {

namespace fs = std::filesystem;

std::string as_text(const uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

std::vector<std::string> split(std::string_view text, std::string_view separator) {
  std::vector<std::string> parts;
  for (;;) {
    const std::size_t at = text.find(separator);
    parts.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + separator.size());
  }
}

ScratchDir& ScratchDir::get() {
  static ScratchDir dir;
  return dir;
}

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/zt-fuzz-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) broken("cannot make a scratch directory from " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void ScratchDir::clear() {
  for (const auto& entry : fs::directory_iterator(path_)) fs::remove_all(entry.path());
}

std::string ScratchDir::write(const std::string& name, const std::string& bytes) {
  const std::string file = path_ + "/" + name;
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) broken("cannot write " + file);
  return file;
}

void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz target: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace zt::fuzz
