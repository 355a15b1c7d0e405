// collective/local_reduce.cc — canonical-tree reduction of rank rows, and fast-mode elementwise ops.
#include "collective/local_reduce.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "reduce/canonical_tree.h"

namespace zt {
namespace {

// Elements per block: the tree over ranks is run on one block of every row at a time, in place,
// so the N blocks (N x 4 KiB for fp32) stay in L1/L2 while the tree combines them.
constexpr std::size_t kBlock = 1024;

// The tree over rows for one element type T and one add on floats. Leaves are row indices; an
// internal node adds its right subtree's row into its left subtree's row (left operand first, as
// canonical_tree.h specifies), so the tree's value ends in row 0 without any copy of a partial sum.
// fp32 rows are combined in place (they are the caller's scratch); 16-bit rows are widened per
// block into a float workspace first. Every add is `combine` and every widening and rounding is
// local_reduce_body.h's: per element, the operations of the CUDA kernel's body, in its order.
template <typename T, typename Combine>
void reduce_rows_typed(void* const* rows, std::size_t nrows, void* out_v, std::size_t n, const Combine& combine) {
  T* out = static_cast<T*>(out_v);
  std::vector<float> work(std::is_same_v<T, float> ? 0 : kBlock * nrows);
  std::vector<float*> row(nrows);
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t len = std::min(kBlock, n - start);
    for (std::size_t q = 0; q < nrows; ++q) {
      if constexpr (std::is_same_v<T, float>) {
        row[q] = static_cast<float*>(rows[q]) + start;
      } else {
        row[q] = work.data() + q * kBlock;
        const T* src = static_cast<const T*>(rows[q]) + start;
        for (std::size_t i = 0; i < len; ++i) row[q][i] = widen_hd(src[i]);
      }
    }
    const std::size_t root = canonical_reduce(
        nrows, [](std::size_t q) { return q; },
        [&](std::size_t left, std::size_t right) {
          float* a = row[left];
          const float* b = row[right];
          for (std::size_t i = 0; i < len; ++i) a[i] = combine(a[i], b[i]);
          return left;
        });
    for (std::size_t i = 0; i < len; ++i) out[start + i] = narrow_hd<T>(row[root][i]);
  }
}

// Fast mode's out = a op b (an ElementwiseFn): widen, one combine, round to T once. out may be a.
template <typename T, typename Combine>
void elementwise(void* out, const void* a, const void* b, std::size_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(out);
  for (std::size_t i = 0; i < n; ++i) z[i] = narrow_hd<T>(Combine{}(widen_hd(x[i]), widen_hd(y[i])));
}

}  // namespace

void reduce_rows_canonical(void* const* rows, std::size_t nrows, void* out, std::size_t n, DType dtype, ReduceOp op,
                           Accumulation acc) {
  ZT_CHECK(nrows >= 1, "reduce_rows_canonical: no rows");
  dispatch_row_reduce(dtype, op, acc, [&](auto tag, auto combine) {
    reduce_rows_typed<typename decltype(tag)::type>(rows, nrows, out, n, combine);
  });
}

ElementwiseFn elementwise_fn(DType dtype, ReduceOp op) {
  // Accumulation::fp32 picks SumF32 or MaxNan; a single op rounds once under either accumulation
  return dispatch_row_reduce(dtype, op, Accumulation::fp32, [](auto tag, auto combine) -> ElementwiseFn {
    return &elementwise<typename decltype(tag)::type, decltype(combine)>;
  });
}

}  // namespace zt
