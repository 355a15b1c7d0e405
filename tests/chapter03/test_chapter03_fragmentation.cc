// chapter-03's fragmentation section: k short-lived and k long-lived blocks of b bytes, interleaved
// then contiguous. Closed forms: after freeing the short-lived blocks, interleaved leaves k free
// blocks of b (largest b, fragmentation 1 - 1/k) and a 2b request fails with the arena's error line;
// contiguous leaves one free block of k·b (fragmentation 0) and the 2b request is placed at k·b.
#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "support/run_program.h"

namespace {

using Run = zt::test::ProgramOutput;

// stdout and stderr together, in order (the error case checks the whole output is one line).
Run run(const std::string& args) {
  zt::test::RunOptions o;
  o.merge_stderr = true;
  return zt::test::run_program(ZT_CHAPTER03_BIN, args, o);
}

/// The lines after the first line that starts with `marker`.
std::vector<std::string> lines_after(const std::string& out, const std::string& marker) {
  std::istringstream in(out);
  std::vector<std::string> lines;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside && line.find(marker) != std::string::npos)
      inside = true;
    else if (inside)
      lines.push_back(line);
  }
  return lines;
}

std::string stats(std::size_t free, std::size_t blocks, std::size_t largest, double frag) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "free %9zu B in %3zu blocks, largest free block %9zu B, external fragmentation %.4f",
                free, blocks, largest, frag);
  return buf;
}

}  // namespace

TEST_CASE("chapter-03 shows fragmentation and its remedy with the closed-form numbers", "[ch3]") {
  for (auto [k, b] : {std::pair<std::size_t, std::size_t>{8, 65536}, {5, 768}, {2, 256}}) {
    const Run r = run("--frag-pairs " + std::to_string(k) + " --frag-block " + std::to_string(b));
    REQUIRE(r.status == 0);
    const auto interleaved = lines_after(r.out, " interleaved");
    const auto contiguous = lines_after(r.out, " contiguous");
    REQUIRE(interleaved.size() >= 3);
    REQUIRE(contiguous.size() == 3);
    INFO(r.out);
    CHECK(interleaved[0].find(stats(0, 0, 0, 0.0)) != std::string::npos);
    CHECK(interleaved[1].find(stats(k * b, k, b, 1.0 - 1.0 / static_cast<double>(k))) != std::string::npos);
    const std::string failed =
        "out of memory in interleaved: category 'bucket' requested " + std::to_string(2 * b) + " bytes";
    CHECK(interleaved[2].find(failed) != std::string::npos);
    CHECK(interleaved[2].find("largest free block " + std::to_string(b) + " bytes") != std::string::npos);
    CHECK(contiguous[1].find(stats(k * b, 1, k * b, 0.0)) != std::string::npos);
    CHECK(contiguous[2].find("placed at offset " + std::to_string(k * b)) != std::string::npos);
  }
}

TEST_CASE("chapter-03 rejects a fragmentation block that is not whole granules", "[ch3]") {
  const Run r = run("--frag-block " + std::to_string(zt::Arena::kAlignment + 1));
  CHECK(r.status != 0);
  CHECK(r.out.find("error: --frag-block") != std::string::npos);
  CHECK(r.out.find('\n') == r.out.size() - 1);  // one line
}
