// The canonical GEMM's packing (gemm/pack.h) against its definition, element by element: op(A)
// tiles of MR rows and op(B) panels of NR columns, k-major, zeros past the edge. Both transposes of
// each operand, the widths of both microkernels (MR 6 and 12, NR 16 and 32) and odd ones, ragged
// row/column counts, k counts that are and are not multiples of four (the SSE transpose's step),
// padded strides and offsets into a larger matrix; the SSE path and the element-by-element path.
// The buffers start filled with NaN so that a slot the packing forgets to write shows.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gemm/pack.h"
#include "support/kernel_cases/env.h"

using namespace zt::gemm;

using zt::test::last_difference;
using zt::test::same_bits;

namespace {

// a stored matrix of rows x cols (row stride ld) whose every value is distinct and non-zero
std::vector<float> distinct_values(int64_t rows, int64_t ld) {
  std::vector<float> m(static_cast<std::size_t>(rows * ld));
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = 1.0f + static_cast<float>(i);
  return m;
}

// the packed layout written out again: `count` rows of op(A) (or columns of op(B)) in blocks of
// width W; block t holds kc x W floats, slot (q, w) is value(t W + w, q) inside the count, else 0
template <typename Value>
std::vector<float> expected_layout(int64_t count, int64_t kc, int64_t W, Value value) {
  const int64_t blocks = (count + W - 1) / W;
  std::vector<float> out(static_cast<std::size_t>(blocks * kc * W));
  for (int64_t t = 0; t < blocks; ++t)
    for (int64_t q = 0; q < kc; ++q)
      for (int64_t w = 0; w < W; ++w)
        out[static_cast<std::size_t>((t * kc + q) * W + w)] = t * W + w < count ? value(t * W + w, q) : 0.0f;
  return out;
}

std::vector<float> expected_b(const Operand& B, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t NR) {
  return expected_layout(nc, kc, NR, [&](int64_t x, int64_t q) { return B.at(p0 + q, j0 + x); });
}

std::vector<float> expected_a(const Operand& A, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t MR) {
  return expected_layout(mc, kc, MR, [&](int64_t r, int64_t q) { return A.at(i0 + r, p0 + q); });
}

struct Case {
  int64_t count, kc;  // rows of op(A) (or columns of op(B)) to pack, and k
};
const Case kCases[] = {{1, 1}, {5, 7}, {6, 8}, {12, 16}, {13, 9}, {16, 256}, {31, 17}, {32, 24}, {45, 255}, {70, 64}};
const int64_t kWidths[] = {6, 12, 16, 32, 3, 8, 9};

}  // namespace

TEST_CASE("canonical GEMM packing: every path writes the definition's layout", "[ch13]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool scalar_only : {false, true}) {
    set_pack_scalar_only(scalar_only);
    for (const Case& c : kCases)
      for (int64_t width : kWidths)
        for (bool trans : {false, true}) {
          // the block starts at (3, 5) of op(X) in a larger stored matrix with a padded stride
          const int64_t off_rows = 3, off_k = 5;
          const int64_t op_rows = off_rows + c.count, op_cols = off_k + c.kc;  // op(A): rows x k
          const int64_t stored_rows = trans ? op_cols : op_rows, stored_cols = trans ? op_rows : op_cols;
          const int64_t ld = stored_cols + 3;
          const std::vector<float> x = distinct_values(stored_rows, ld);
          const Operand A{x.data(), ld, trans};
          INFO("scalar_only " << scalar_only << ", count " << c.count << ", kc " << c.kc << ", width " << width
                              << ", trans " << trans);
          const std::vector<float> want_a = expected_a(A, off_rows, c.count, off_k, c.kc, width);
          std::vector<float> got_a(want_a.size(), nan);
          pack_a(A, off_rows, c.count, off_k, c.kc, width, got_a.data());
          const bool same_a = same_bits(got_a, want_a);
          INFO("op(A): " << last_difference());
          CHECK(same_a);
          // op(B) is k x columns: the same stored matrix read the other way round
          const Operand B{x.data(), ld, !trans};
          const std::vector<float> want_b = expected_b(B, off_k, c.kc, off_rows, c.count, width);
          std::vector<float> got_b(want_b.size(), nan);
          pack_b(B, off_k, c.kc, off_rows, c.count, width, got_b.data());
          const bool same_b = same_bits(got_b, want_b);
          INFO("op(B): " << last_difference());
          CHECK(same_b);
        }
  }
  set_pack_scalar_only(false);
}

TEST_CASE("canonical GEMM packing: a wrong layout is caught (the test can fail)", "[ch13]") {
  // the definition's layout of a 2 x 3 op(A) at MR 2 differs from the same values stored row-major
  const std::vector<float> x = distinct_values(2, 3);
  const Operand A{x.data(), 3, false};
  const std::vector<float> want = expected_a(A, 0, 2, 0, 3, 2);
  CHECK_FALSE(same_bits(want, x));
  std::vector<float> got(want.size());
  pack_a(A, 0, 2, 0, 3, 2, got.data());
  CHECK(same_bits(got, want));
}
