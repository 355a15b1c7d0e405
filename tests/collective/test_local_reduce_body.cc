// The CUDA row-reduction kernel's per-thread body (collective/local_reduce_body.h), run on the host
// over the very grid the CUDA launcher uses (row_reduce_geometry + device::launch_on_host), gives
// the bits of the CPU's reduce_rows_canonical: fp32/fp16/bf16, sum and max, fp32 and storage
// accumulation, N = 1..8 rows, n not a multiple of the block, rows with a stride, order-sensitive
// inputs (and NaN and inf for max). So the NCCL backend's deterministic mode computes what the
// Gloo backend computes, element for element, without a GPU to show it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "collective/local_reduce.h"
#include "support/order_sensitive.h"

using namespace zt;

namespace {

// Rows of n elements of T, `stride` apart, from order-sensitive floats; 16-bit values are scaled
// into range (|x| < 2^12, so sums of 8 rows stay finite in fp16).
template <typename T>
std::vector<T> make_rows(std::size_t nrows, std::size_t n, std::size_t stride, bool specials) {
  std::vector<T> rows(nrows * stride, T(0.0f));
  const float scale = std::is_same_v<T, float> ? 1.0f : std::ldexp(1.0f, -9);
  for (std::size_t q = 0; q < nrows; ++q) {
    const auto v = zt::test::order_sensitive(n, static_cast<uint32_t>(17 + q));
    for (std::size_t i = 0; i < n; ++i) rows[q * stride + i] = T(v[i] * scale);
    if (specials) {  // a NaN and an inf in every row, at places that differ between rows
      rows[q * stride + (7 * q + 3) % n] = T(std::nanf(""));
      rows[q * stride + (11 * q + 5) % n] = T(q % 2 ? -INFINITY : INFINITY);
    }
  }
  return rows;
}

// Both paths on the same rows; the number of elements whose bits differ.
template <typename T>
int compare(std::size_t nrows, std::size_t n, DType dtype, ReduceOp op, Accumulation acc) {
  const std::size_t stride = n + 3;
  const auto rows = make_rows<T>(nrows, n, stride, op == ReduceOp::max);
  // CPU: reduce_rows_canonical (fp32 rows are its scratch: give it a copy)
  auto scratch = rows;
  std::vector<void*> ptrs(nrows);
  for (std::size_t q = 0; q < nrows; ++q) ptrs[q] = scratch.data() + q * stride;
  std::vector<T> cpu(n, T(-7.0f));
  reduce_rows_canonical(ptrs.data(), nrows, cpu.data(), n, dtype, op, acc);
  // kernel body over the launcher's grid
  std::vector<T> body(n, T(-7.0f));
  dispatch_row_reduce(dtype, op, acc, [&](auto tag, auto combine) {
    using U = typename decltype(tag)::type;
    REQUIRE(std::is_same_v<U, T>);
    RowReduceArgs<U> a;
    a.rows = reinterpret_cast<const U*>(rows.data());
    a.stride = stride;
    a.nrows = static_cast<uint32_t>(nrows);
    a.out = reinterpret_cast<U*>(body.data());
    a.n = n;
    const RowReduceGeometry g = row_reduce_geometry(n);
    device::launch_on_host(g.grid, g.block, [&](const device::ThreadIndex& t) { row_reduce_thread(t, a, combine); });
  });
  int differ = 0;
  for (std::size_t i = 0; i < n; ++i) differ += std::memcmp(&cpu[i], &body[i], sizeof(T)) != 0;
  return differ;
}

template <typename T>
void check_all(DType dtype) {
  const std::size_t n = 1000;  // 3 blocks of 256 and a partial one; not a multiple of the CPU's 1024
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max})
    for (Accumulation acc : {Accumulation::fp32, Accumulation::storage})
      for (std::size_t nrows = 1; nrows <= 8; ++nrows) {
        INFO(dtype_name(dtype) << " " << reduce_op_name(op) << (acc == Accumulation::storage ? " storage" : " fp32")
                               << " acc, " << nrows << " rows");
        CHECK(compare<T>(nrows, n, dtype, op, acc) == 0);
      }
}

}  // namespace

TEST_CASE("the row-reduction kernel body on the host equals reduce_rows_canonical, fp32", "[ch13][collective]") {
  check_all<float>(DType::fp32);
}

TEST_CASE("the row-reduction kernel body on the host equals reduce_rows_canonical, fp16", "[ch13][collective]") {
  check_all<fp16>(DType::fp16);
}

TEST_CASE("the row-reduction kernel body on the host equals reduce_rows_canonical, bf16", "[ch13][collective]") {
  check_all<bf16>(DType::bf16);
}

TEST_CASE("the inputs of the body test are order-sensitive", "[ch13][collective]") {
  // Were they not, a kernel summing in another order could pass the tests above. (For 3 rows the
  // canonical tree is the running sum, (x0+x1)+x2, so the comparison starts at 4.)
  const std::size_t n = 1000;
  for (std::size_t nrows = 4; nrows <= 8; ++nrows) {
    const auto rows = make_rows<float>(nrows, n, n, false);
    std::vector<float> scratch = rows;
    std::vector<void*> ptrs(nrows);
    for (std::size_t q = 0; q < nrows; ++q) ptrs[q] = scratch.data() + q * n;
    std::vector<float> tree(n);
    reduce_rows_canonical(ptrs.data(), nrows, tree.data(), n, DType::fp32, ReduceOp::sum, Accumulation::fp32);
    int differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float seq = rows[i];
      for (std::size_t q = 1; q < nrows; ++q) seq += rows[q * n + i];
      differ += std::memcmp(&seq, &tree[i], 4) != 0;
    }
    INFO(nrows << " rows");
    CHECK(differ > 0);
  }
}

TEST_CASE("the row-reduction geometry covers n with whole blocks", "[ch13][collective]") {
  for (uint64_t n : {1ull, 255ull, 256ull, 257ull, 1000ull}) {
    const RowReduceGeometry g = row_reduce_geometry(n);
    CHECK(g.block.x == kRowReduceBlock);
    CHECK(uint64_t(g.grid.x) * g.block.x >= n);
    CHECK(uint64_t(g.grid.x - 1) * g.block.x < n);
  }
}
