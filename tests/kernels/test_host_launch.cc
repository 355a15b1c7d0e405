// Every CUDA kernel of the model's non-GEMM ops and of the optimizer, run on the host: each item
// op's threads (ops/*_items.h, optim/optim_threads.h) over the grid the device would use
// (device/item_grid.h), each block op's phases (ops/, device/block_launch.h), compared bit for bit
// with the CPU kernel on order-sensitive inputs; then every op again as the host runtime runs it
// (device/host_runtime.h: an op's host() form where it has one, else its items or blocks split over
// a pool). The
// cases are shared with the GPU test (tests/support/kernel_cases/); here they run without a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "device/item_grid.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "kernels/row_sum.h"
#include "ops/elementwise_items.h"
#include "support/kernel_cases/attention.h"
#include "support/kernel_cases/cross_entropy.h"
#include "support/kernel_cases/elementwise.h"
#include "support/kernel_cases/embedding.h"
#include "support/kernel_cases/host_env.h"
#include "support/kernel_cases/layernorm.h"
#include "support/kernel_cases/linear.h"
#include "support/kernel_cases/optim.h"

TEMPLATE_TEST_CASE("host launch: LayerNorm blocks give the CPU kernel's bits", "[ch13]", float, zt::fp16, zt::bf16) {
  zt::test::case_layernorm<TestType>(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE("host launch: GELU elements give the CPU kernel's bits", "[ch13]", float, zt::fp16, zt::bf16) {
  zt::test::case_gelu<TestType>(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE("host launch: residual add and join give the CPU kernel's bits", "[ch13]", float, zt::fp16,
                   zt::bf16) {
  zt::test::case_residual<TestType>(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE("host launch: casts to and from 16 bits give the CPU's bits", "[ch13]", zt::fp16, zt::bf16) {
  zt::test::case_cast<TestType>(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE("host launch: cross-entropy blocks and logits give the CPU kernel's bits", "[ch13]", float, zt::fp16,
                   zt::bf16) {
  zt::test::case_cross_entropy<TestType>(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE("host launch: the attention block ops give the CPU kernel's bits", "[ch13]", float, zt::fp16,
                   zt::bf16) {
  zt::test::case_attention_blocks<TestType>(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE("host launch: embedding elements give the CPU kernel's bits", "[ch13]", float, zt::fp16, zt::bf16) {
  zt::test::case_embedding<TestType>(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE("host launch: linear bias epilogue and gradient give the CPU kernel's bits", "[ch13]", float,
                   zt::fp16, zt::bf16) {
  zt::test::case_linear<TestType>(zt::test::HostEnv{});
}

TEST_CASE("host launch: Adam, SGD and the unscale check give the CPU loops' bits", "[ch13]") {
  zt::test::case_optim(zt::test::HostEnv{});
}

TEMPLATE_TEST_CASE(
    "host runtime: every op as the host runtime runs it (host forms, pooled items and blocks) gives "
    "the CPU kernel's bits",
    "[ch13]", float, zt::fp16, zt::bf16) {
  const zt::test::HostRuntimeEnv env;
  zt::test::case_layernorm<TestType>(env);
  zt::test::case_gelu<TestType>(env);
  zt::test::case_residual<TestType>(env);
  if constexpr (!std::is_same_v<TestType, float>) zt::test::case_cast<TestType>(env);
  zt::test::case_cross_entropy<TestType>(env);
  zt::test::case_attention_blocks<TestType>(env);
  zt::test::case_embedding<TestType>(env);
  zt::test::case_linear<TestType>(env);
}

TEST_CASE("host launch: the inputs are order-sensitive (the tests can fail)", "[ch13]") {
  // a left-to-right sum of a LayerNorm row, or of a cross-entropy row's exponentials, differs from
  // the canonical tree in most rows: a kernel that summed in another order would be caught
  int differ_ln = 0, differ_ce = 0;
  for (uint32_t row = 0; row < 50; ++row) {
    const auto x = zt::test::order_sensitive(77, 100 + row);
    float seq = 0.0f;
    for (float v : x) seq += v;
    differ_ln += seq != zt::kernels::canonical_sum_f(x.size(), [&](std::size_t i) { return x[i]; });
    std::vector<float> e(300);
    const auto l = zt::test::order_sensitive(e.size(), 200 + row);
    for (std::size_t i = 0; i < e.size(); ++i) e[i] = zt::kernels::exp_f(std::ldexp(l[i], -18));
    float seq_e = 0.0f;
    for (float v : e) seq_e += v;
    differ_ce += seq_e != zt::kernels::canonical_sum_f(e.size(), [&](std::size_t i) { return e[i]; });
  }
  CHECK(differ_ln > 25);
  CHECK(differ_ce > 25);
}

TEST_CASE("host launch: the item grid covers every item once, idle threads at the edge", "[ch13]") {
  for (const int64_t items : {int64_t{1}, int64_t{127}, int64_t{128}, int64_t{129}, int64_t{1000}}) {
    const zt::device::Launch l = zt::device::item_grid(items);
    CHECK(l.block.x == zt::device::kItemBlock);
    CHECK(int64_t{l.grid.x} * l.block.x >= items);
    CHECK(int64_t{l.grid.x - 1} * l.block.x < items);
    struct Count {
      std::vector<int>* seen;
      int64_t n;
      int64_t items() const { return n; }
      void operator()(int64_t i) const { ++(*seen)[static_cast<std::size_t>(i)]; }
    };
    std::vector<int> seen(static_cast<std::size_t>(items), 0);
    zt::device::run_items_on_host(Count{&seen, items});
    CHECK(std::count(seen.begin(), seen.end(), 1) == items);
  }
  CHECK_THROWS(zt::device::item_grid(0));
  CHECK_THROWS(zt::device::item_grid(zt::device::kMaxItems));
}

TEMPLATE_TEST_CASE("host launch: a cast's host form (the CPU's array conversions) gives its items' bits", "[ch13]",
                   zt::fp16, zt::bf16) {
  // what the host runtime runs (ops/op_launch.h): the op's host() over the whole array, split over
  // a pool, against the items one by one; values over the whole range of the format, both signs,
  // halfway cases, a length that no vector width divides
  const std::size_t n = 70001;
  std::vector<float> f(n);
  uint32_t s = 12345u;
  for (auto& x : f) {
    s = s * 1664525u + 1013904223u;
    x = std::ldexp(static_cast<float>(static_cast<int32_t>(s >> 8) - (1 << 23)) * 0x1p-23f,
                   static_cast<int>(s % 40) - 24);
  }
  const auto count = static_cast<int64_t>(n);
  std::vector<TestType> by_items(n), by_host(n);
  for (int64_t i = 0; i < count; ++i) zt::ops::CastElements<TestType, float>{by_items.data(), f.data(), count}(i);
  zt::test::HostRuntimeEnv{}.run(zt::ops::CastElements<TestType, float>{by_host.data(), f.data(), count});
  CHECK(zt::test::same_bits(by_items, by_host));
  std::vector<float> back_items(n), back_host(n);
  for (int64_t i = 0; i < count; ++i)
    zt::ops::CastElements<float, TestType>{back_items.data(), by_items.data(), count}(i);
  zt::test::HostRuntimeEnv{}.run(zt::ops::CastElements<float, TestType>{back_host.data(), by_items.data(), count});
  CHECK(zt::test::same_bits(back_items, back_host));
}
