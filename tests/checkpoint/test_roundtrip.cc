// Writing with 1..4 ranks dealt irregular pieces, publishing, and reading back every element bit for
// bit: whole parameters, random sub-ranges, the dense layout; how intervals are merged and split;
// how resolve_checkpoint picks a checkpoint; a re-saved step replacing the old one.
#include <catch2/catch.hpp>

#include <fstream>

#include "checkpoint/fixtures.h"

using namespace zt;
using namespace zt::checkpoint;
using namespace zt::test::ckpt;

namespace {
const std::vector<std::string> kAdam = {"master", "adam.m", "adam.v"};
// small, tiny, odd and two larger than one interval (kMaxIntervalElements)
const std::vector<int64_t> kSizes = {5, 1, 300, kMaxIntervalElements + 1000, 17, 2 * kMaxIntervalElements};

int64_t total_elements(const Manifest& m) {
  int64_t n = 0;
  for (const auto& p : m.params) n += p.numel;
  return n;
}
}  // namespace

TEST_CASE("checkpoint: 1-4 ranks with irregular pieces read back bit for bit", "[ch14]") {
  for (int world = 1; world <= 4; ++world) {
    INFO("world size " << world);
    TempDir dir("roundtrip");
    const Manifest h = synthetic_header(kSizes, kAdam, 42);
    const Values v = make_values(h, 100 + world);
    const auto plan = deal(h, world, 200 + world, world >= 3 ? 1 : -1);
    const std::string published = save(dir.path(), 42, h, v, plan);
    CHECK(published == step_dir(dir.path(), 42));
    // only the published directory; in it, the manifest and one data file per rank
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == 1);
    CHECK(std::distance(fs::directory_iterator(published), fs::directory_iterator{}) == world + 1);

    Reader r(resolve_checkpoint(dir.path()));
    const Manifest& m = r.manifest();
    CHECK(m.run["step"] == 42);
    REQUIRE(m.files.size() == static_cast<std::size_t>(world));
    uint64_t bytes = 0;
    for (const auto& f : m.files) bytes += f.bytes;
    CHECK(bytes == 4 * static_cast<uint64_t>(total_elements(h)) * kAdam.size());
    if (world >= 3) CHECK(m.files[1].bytes == 0);  // the idle rank: an empty file, listed
    for (const auto& iv : m.intervals) CHECK(iv.length <= kMaxIntervalElements);
    CHECK(reads_back(r, v));
    for (std::size_t s = 0; s < kAdam.size(); ++s) {
      const auto dense = r.read_dense(kAdam[s]);
      REQUIRE(dense.size() == v.dense[s].size());
      CHECK(std::memcmp(dense.data(), v.dense[s].data(), dense.size() * sizeof(float)) == 0);
    }
    std::mt19937_64 rng(world);
    for (int k = 0; k < 300; ++k) {
      const auto& state = kAdam[rng() % kAdam.size()];
      const int p = static_cast<int>(rng() % h.params.size());
      const int64_t n = h.params[static_cast<std::size_t>(p)].numel;
      const int64_t offset = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      const int64_t length = static_cast<int64_t>(rng() % static_cast<uint64_t>(n - offset + 1));
      std::vector<float> got(static_cast<std::size_t>(length));
      r.read(state, p, offset, length, got.data());
      INFO(state << " of p" << p << " [" << offset << ", " << offset + length << ")");
      // an empty read leaves got.data() null, and memcmp wants valid pointers even for 0 bytes
      CHECK((got.empty() || std::memcmp(got.data(), v.at(state, p) + offset, got.size() * sizeof(float)) == 0));
    }
    CHECK_NOTHROW(r.verify_files());
  }
}

TEST_CASE("checkpoint: consecutive adds merge into intervals of at most kMaxIntervalElements", "[ch14]") {
  TempDir dir("merge");
  const Manifest h = synthetic_header(kSizes, {"master"}, 1);
  const Values v = make_values(h, 9);
  std::vector<std::vector<Piece>> plan(1);
  for (int p = 0; p < static_cast<int>(kSizes.size()); ++p)  // each parameter in pieces of 1000, in order
    for (int64_t at = 0; at < kSizes[static_cast<std::size_t>(p)]; at += 1000)
      plan[0].push_back({"master", p, at, std::min<int64_t>(1000, kSizes[static_cast<std::size_t>(p)] - at)});
  save(dir.path(), 1, h, v, plan);
  Reader r(resolve_checkpoint(dir.path()));
  std::size_t expected = 0;
  for (int64_t n : kSizes) expected += static_cast<std::size_t>((n + kMaxIntervalElements - 1) / kMaxIntervalElements);
  CHECK(r.manifest().intervals.size() == expected);
  uint64_t byte = 0;
  for (const auto& iv : r.manifest().intervals) {  // in the order written: file offsets are contiguous
    CHECK(iv.byte_offset == byte);
    CHECK((iv.length == kMaxIntervalElements || iv.offset + iv.length == kSizes[static_cast<std::size_t>(iv.param)]));
    byte += 4 * static_cast<uint64_t>(iv.length);
  }
  CHECK(reads_back(r, v));
  CHECK_NOTHROW(r.verify_files());
}

TEST_CASE("checkpoint: a read touches only the intervals holding its range", "[ch14]") {
  TempDir dir("bytes");
  const Manifest h = synthetic_header({3 * kMaxIntervalElements}, {"master"}, 1);
  const Values v = make_values(h, 4);
  save(dir.path(), 1, h, v, {{{"master", 0, 0, 3 * kMaxIntervalElements}}});
  Reader r(resolve_checkpoint(dir.path()));
  float x = 0;
  r.read("master", 0, kMaxIntervalElements + 5, 1, &x);  // one element of the second interval
  CHECK(r.bytes_read() == 4 * static_cast<uint64_t>(kMaxIntervalElements));
  CHECK(std::memcmp(&x, v.at("master", 0) + kMaxIntervalElements + 5, 4) == 0);
  std::vector<float> two(2);
  r.read("master", 0, 2 * kMaxIntervalElements - 1, 2, two.data());  // straddles the second and third
  CHECK(r.bytes_read() == 12 * static_cast<uint64_t>(kMaxIntervalElements));
  CHECK(std::memcmp(two.data(), v.at("master", 0) + 2 * kMaxIntervalElements - 1, 8) == 0);
}

TEST_CASE("checkpoint: resolve_checkpoint takes the newest complete step", "[ch14]") {
  TempDir dir("resolve");
  const Manifest h = synthetic_header({10, 20}, {"master"}, 0);
  const Values v = make_values(h, 1);
  const auto plan = deal(h, 2, 3);
  CHECK_THROWS_WITH(resolve_checkpoint(dir.path()), Catch::Contains("no checkpoint in " + dir.path()));
  CHECK_THROWS_WITH(resolve_checkpoint(dir / "absent"), Catch::Contains("does not exist"));
  save(dir.path(), 3, h, v, plan);
  save(dir.path(), 12, h, v, plan);
  checkpoint::begin_save(dir.path(), 40);         // started, never published
  fs::create_directories(dir / "step-00000099");  // no manifest: not complete
  fs::create_directories(dir / "step-12.other");
  CHECK(resolve_checkpoint(dir.path()) == step_dir(dir.path(), 12));
  CHECK(resolve_checkpoint(step_dir(dir.path(), 3)) == step_dir(dir.path(), 3));
  std::ofstream(dir / "file.txt") << "x";
  CHECK_THROWS_WITH(resolve_checkpoint(dir / "file.txt"), Catch::Contains("not a directory"));
}

TEST_CASE("checkpoint: saving a step again replaces it whole", "[ch14]") {
  TempDir dir("resave");
  const Manifest h = synthetic_header({100, 7000}, kAdam, 5);
  const Values first = make_values(h, 1), second = make_values(h, 2);
  save(dir.path(), 5, h, first, deal(h, 3, 1));
  save(dir.path(), 5, h, second, deal(h, 2, 2));  // a re-run, another world size
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == 1);
  Reader r(resolve_checkpoint(dir.path()));
  CHECK(r.manifest().files.size() == 2);
  CHECK(reads_back(r, second));
}
