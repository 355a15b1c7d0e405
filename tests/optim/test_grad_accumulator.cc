// The canonical gradient accumulator: element-wise the canonical tree over micro-batches, never
// more than floor(log2 A) + 1 live buffers (seen by a counting allocator and by an arena ledger),
// and world-size invariance for aligned power-of-two blocks.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "optim/grad_accumulator.h"
#include "reduce/canonical_tree.h"

using namespace zt;

namespace {
// A vector that counts how many of its kind are alive.
struct Counted {
  std::vector<float> v;
  int* live = nullptr;
  Counted(std::size_t n, int* counter) : v(n), live(counter) { ++*live; }
  Counted(Counted&& o) noexcept : v(std::move(o.v)), live(o.live) { o.live = nullptr; }
  Counted& operator=(Counted&& o) noexcept {
    if (live) --*live;
    v = std::move(o.v);
    live = o.live;
    o.live = nullptr;
    return *this;
  }
  ~Counted() {
    if (live) --*live;
  }
  float* data() { return v.data(); }
};
float micro_grad(std::size_t mb, std::size_t i) {
  return std::ldexp(std::sin(1.3f * mb + 0.7f * i), static_cast<int>((mb * 5 + i) % 17) - 8);
}
}  // namespace

TEST_CASE("accumulator = canonical tree per element, with at most log2(A)+1 buffers", "[ch2][optim]") {
  const std::size_t n = 33;
  for (std::size_t a = 1; a <= 13; ++a) {
    int live = 0, most = 0;
    CanonicalGradAccumulator<Counted> acc(n, [&](std::size_t k) { return Counted(k, &live); });
    for (std::size_t mb = 0; mb < a; ++mb) {
      acc.push_with([&](float* leaf) {
        for (std::size_t i = 0; i < n; ++i) leaf[i] = micro_grad(mb, i);
        most = std::max(most, live);
      });
      most = std::max(most, live);
    }
    Counted sum = acc.finish();
    CHECK(live == 1);
    INFO("A = " << a);
    CHECK(static_cast<std::size_t>(most) <= canonical_max_live_partials(a));
    for (std::size_t i = 0; i < n; ++i) {
      const float expected = canonical_reduce(
          a, [&](std::size_t mb) { return micro_grad(mb, i); }, [](float x, float y) { return x + y; });
      CHECK(std::memcmp(&sum.v[i], &expected, 4) == 0);
    }
  }
}

TEST_CASE("accumulator buffers are seen by the arena ledger", "[ch2][optim]") {
  Arena arena(1 << 20, "rank 0");
  const std::size_t n = 100, a = 5;  // floor(log2 5) + 1 = 3 buffers at the peak
  {
    CanonicalGradAccumulator<TypedBuffer<float>> acc(
        n, [&](std::size_t k) { return make_buffer<float>(arena, k, "grad_accum"); });
    std::vector<float> g(n, 1.0f);
    for (std::size_t mb = 0; mb < a; ++mb) acc.push(g.data());
    auto sum = acc.finish();
    CHECK(sum[17] == 5.0f);
    CHECK(arena.ledger().usage("grad_accum").current_bytes == n * 4);
  }
  CHECK(arena.ledger().usage("grad_accum").peak_bytes == canonical_max_live_partials(a) * n * 4);
  CHECK(arena.ledger().usage("grad_accum").current_bytes == 0);
}

TEST_CASE("N ranks accumulating aligned blocks of A = 2^k equal one rank accumulating all", "[ch2][optim]") {
  const std::size_t n = 9;
  auto alloc = [](std::size_t k) { return std::vector<float>(k); };
  for (std::size_t world : {3u, 5u})
    for (std::size_t a : {1u, 2u, 4u}) {
      CanonicalGradAccumulator<std::vector<float>> all(n, alloc);
      for (std::size_t mb = 0; mb < world * a; ++mb)
        all.push_with([&](float* leaf) {
          for (std::size_t i = 0; i < n; ++i) leaf[i] = micro_grad(mb, i);
        });
      const auto single = all.finish();
      std::vector<std::vector<float>> per_rank;
      for (std::size_t r = 0; r < world; ++r) {
        CanonicalGradAccumulator<std::vector<float>> mine(n, alloc);
        for (std::size_t mb = r * a; mb < (r + 1) * a; ++mb)
          mine.push_with([&](float* leaf) {
            for (std::size_t i = 0; i < n; ++i) leaf[i] = micro_grad(mb, i);
          });
        per_rank.push_back(mine.finish());
      }
      for (std::size_t i = 0; i < n; ++i) {
        const float reduced = canonical_reduce(
            world, [&](std::size_t r) { return per_rank[r][i]; }, [](float x, float y) { return x + y; });
        INFO("world " << world << ", A " << a << ", element " << i);
        CHECK(std::memcmp(&reduced, &single[i], 4) == 0);
      }
    }
}
