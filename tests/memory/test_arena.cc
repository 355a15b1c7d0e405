// The arena: first-fit placement, coalescing, the ledger's current/peak bytes, fragmentation
// numbers on a hand-built pattern, the out-of-memory message, and RAII release.
#include <catch2/catch.hpp>

#include <string>

#include "core/check.h"
#include "memory/arena.h"
#include "memory/buffer.h"

using zt::Arena;

TEST_CASE("arena places first-fit, aligns to 256 and coalesces on release", "[ch3][memory]") {
  Arena arena(4096, "test");
  auto a = arena.allocate(100, "x");  // granules [0, 256)
  auto b = arena.allocate(256, "y");  // [256, 512)
  auto c = arena.allocate(300, "x");  // [512, 1024): 300 rounds up to 512
  CHECK(a.offset() == 0);
  CHECK(b.offset() == 256);
  CHECK(c.offset() == 512);
  CHECK(arena.reserved_bytes() == 1024);
  CHECK(arena.fragmentation().free_blocks == 1);

  b.reset();  // a hole of 256 between a and c
  auto f = arena.fragmentation();
  CHECK(f.free_blocks == 2);
  CHECK(f.free_bytes == 256 + 3072);
  CHECK(f.largest_free_block == 3072);
  CHECK(f.external_fragmentation == 1.0 - 3072.0 / 3328.0);

  auto d = arena.allocate(200, "y");  // first fit: the hole, not the tail
  CHECK(d.offset() == 256);
  d.reset();
  a.reset();  // [0, 256) merges with the hole [256, 512)
  CHECK(arena.fragmentation().free_blocks == 2);
  CHECK(arena.fragmentation().largest_free_block == 3072);
  auto e = arena.allocate(512, "z");  // fits exactly in the merged [0, 512)
  CHECK(e.offset() == 0);
  e.reset();
  c.reset();  // everything merges back into one block
  f = arena.fragmentation();
  CHECK(f.free_blocks == 1);
  CHECK(f.free_bytes == 4096);
  CHECK(f.largest_free_block == 4096);
  CHECK(f.external_fragmentation == 0.0);
  CHECK(arena.reserved_bytes() == 0);
}

TEST_CASE("ledger counts requested bytes, current and peak, per category and overall", "[ch3][memory]") {
  Arena arena(1 << 20);
  {
    auto p = zt::make_buffer<float>(arena, 1000, "params");    // 4000 bytes
    auto g = zt::make_buffer<uint16_t>(arena, 1000, "grads");  // 2000 bytes
    {
      auto t = arena.allocate(777, "temp");
      CHECK(arena.ledger().total().current_bytes == 6777);
      CHECK(arena.ledger().usage("temp").current_bytes == 777);
    }
    auto t2 = arena.allocate(100, "temp");
    const auto& l = arena.ledger();
    CHECK(l.usage("params").current_bytes == 4000);
    CHECK(l.usage("grads").peak_bytes == 2000);
    CHECK(l.usage("temp").current_bytes == 100);
    CHECK(l.usage("temp").peak_bytes == 777);
    CHECK(l.total().peak_bytes == 6777);
    CHECK(l.total().current_bytes == 6100);
    // measured = requested: alignment round-up is not in the ledger, but is in reserved_bytes
    CHECK(arena.reserved_bytes() == 4096 + 2048 + 256);
    arena.reset_peaks();
    CHECK(l.usage("temp").peak_bytes == 100);
    CHECK(l.total().peak_bytes == 6100);
  }
  CHECK(arena.ledger().total().current_bytes == 0);
  CHECK(arena.ledger().usage("params").allocations == 0);
  CHECK(arena.ledger().total().peak_bytes == 6100);
  CHECK(arena.reserved_bytes() == 0);
}

TEST_CASE("out of memory is a zt::Error naming category, sizes and free space", "[ch3][memory]") {
  Arena arena(1024, zt::kBudgetArenaName);
  auto a = arena.allocate(256, "params");
  auto b = arena.allocate(256, "params");
  auto c = arena.allocate(256, "grads");
  auto d = arena.allocate(256, "grads");
  a.reset();
  c.reset();  // 512 bytes free, in two blocks of 256: external fragmentation 0.5
  CHECK(arena.fragmentation().external_fragmentation == 0.5);
  std::string message;
  try {
    auto e = arena.allocate(300, "activations");
  } catch (const zt::Error& err) {
    message = err.what();
  }
  INFO(message);
  CHECK(message.find("out of memory in the --memory-budget-mb arena") != std::string::npos);
  CHECK(message.find("'activations'") != std::string::npos);
  CHECK(message.find("requested 300 bytes") != std::string::npos);
  CHECK(message.find("free 512 bytes") != std::string::npos);
  CHECK(message.find("largest free block 256 bytes") != std::string::npos);
  // the failed request left no trace in the ledger or the free list
  CHECK(arena.ledger().usage("activations").allocations == 0);
  CHECK(arena.fragmentation().free_bytes == 512);
  CHECK_THROWS_AS(arena.allocate(1025, "x"), zt::Error);
  CHECK_THROWS_AS(Arena(0), zt::Error);
}

TEST_CASE("typed buffers own their block; moves transfer it", "[ch3][memory]") {
  Arena arena(4096);
  zt::TypedBuffer<float> moved;
  {
    auto buf = zt::make_buffer<float>(arena, 10, "master");
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i);
    moved = std::move(buf);
    CHECK(buf.size() == 0);
    CHECK(buf.data() == nullptr);
  }
  CHECK(arena.ledger().usage("master").current_bytes == 40);
  CHECK(moved[9] == 9.0f);
  CHECK(reinterpret_cast<std::uintptr_t>(moved.data()) % Arena::kAlignment == 0);
  moved = zt::make_buffer<float>(arena, 5, "master");  // old block released first
  CHECK(arena.ledger().usage("master").current_bytes == 20);
  CHECK(arena.ledger().usage("master").allocations == 1);
  moved.reset();
  CHECK(arena.ledger().usage("master").current_bytes == 0);
  auto empty = zt::make_buffer<float>(arena, 0, "scalars");  // counted, owns nothing
  CHECK(arena.ledger().usage("scalars").allocations == 1);
  CHECK(arena.reserved_bytes() == 0);
}

TEST_CASE("a capacity that is not a multiple of 256 hands out whole granules only", "[ch3][memory]") {
  Arena arena(1000);
  CHECK(arena.fragmentation().free_bytes == 1000);
  CHECK(arena.fragmentation().largest_free_block == 768);
  CHECK_THROWS_AS(arena.allocate(800, "x"), zt::Error);  // needs 1024 reserved bytes
  auto a = arena.allocate(768, "x");
  CHECK(arena.fragmentation().free_bytes == 232);
  CHECK(arena.fragmentation().largest_free_block == 0);
}
