// --data FILE: byte windows of a file, keyed purely by (seed, step, index); bad files are errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "core/check.h"
#include "data/dataset.h"
#include "data/text_file.h"

using namespace zt;

namespace {
std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = "test_text_file_" + name + ".txt";  // in the build directory
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);
  return path;
}
}  // namespace

TEST_CASE("text windows are T+1 bytes of the file at a keyed offset", "[ch2][data]") {
  std::string text;
  for (int i = 0; i < 500; ++i) text += static_cast<char>(i * 37 % 256);
  const auto path = write_temp("windows", text);
  TextFileDataset d(path, 16);
  CHECK(d.vocab_size() == 256);
  CHECK(d.size() == 500);
  std::vector<int32_t> s(17), again(17);
  std::set<std::size_t> offsets;
  for (uint64_t i = 0; i < 50; ++i) {
    d.sample(9, 2, i, s.data());
    const std::size_t off = d.window_offset(9, 2, i);
    CHECK(off + 17 <= 500);
    offsets.insert(off);
    for (std::size_t k = 0; k < 17; ++k) CHECK(s[k] == static_cast<int32_t>(static_cast<unsigned char>(text[off + k])));
    d.sample(9, 2, i, again.data());
    CHECK(s == again);
  }
  CHECK(offsets.size() > 40);  // windows are spread over the file
  // the factory: a path gives bytes, no path the addition task
  CHECK(make_dataset(path, 16)->vocab_size() == 256);
  CHECK(make_dataset("", 16)->vocab_size() == 13);
  std::remove(path.c_str());
}

TEST_CASE("unreadable or too short files are clear errors", "[ch2][data]") {
  CHECK_THROWS_WITH(TextFileDataset("/nonexistent/zt.txt", 8),
                    Catch::Contains("/nonexistent/zt.txt") && Catch::Contains("cannot open"));
  const auto path = write_temp("short", "12345678");  // 8 bytes: one sample needs 9 at T = 8
  CHECK_THROWS_WITH(TextFileDataset(path, 8), Catch::Contains("too short"));
  CHECK_NOTHROW(TextFileDataset(path, 7));
  std::remove(path.c_str());
  CHECK_THROWS_AS(TextFileDataset(".", 4), Error);  // a directory reads as an error
}
