// collective/local_reduce.cc — canonical-tree reduction of rank rows, and fast-mode elementwise ops.
#include "collective/local_reduce.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "reduce/canonical_tree.h"

namespace zt {
namespace {

// Elements per block: the tree over ranks is run on arrays of this many floats, so the recursion
// is paid once per block; 256 floats = 1 KiB keeps every partial sum in L1.
constexpr std::size_t kBlock = 256;
using Block = std::array<float, kBlock>;

template <typename T>
float widen(T x) {
  return static_cast<float>(x);
}
template <>
float widen<float>(float x) {
  return x;
}

template <typename T>
float round_to(float x) {
  return static_cast<float>(T(x));
}

// The tree over rows, for one element type T (float, fp16 or bf16) and one "add" on floats.
template <typename T, typename Add>
void reduce_rows_typed(const void* const* rows, std::size_t nrows, void* out_v, std::size_t n,
                       const Add& add) {
  T* out = static_cast<T*>(out_v);
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t len = std::min(kBlock, n - start);
    auto leaf = [&](std::size_t q) {
      Block b;
      const T* row = static_cast<const T*>(rows[q]) + start;
      for (std::size_t i = 0; i < len; ++i) b[i] = widen(row[i]);
      return b;
    };
    auto combine = [&](Block a, const Block& b) {
      for (std::size_t i = 0; i < len; ++i) a[i] = add(a[i], b[i]);
      return a;
    };
    const Block total = canonical_reduce(nrows, leaf, combine);
    for (std::size_t i = 0; i < len; ++i) out[start + i] = T(total[i]);
  }
}

template <typename T>
void reduce_rows_dispatch(const void* const* rows, std::size_t nrows, void* out, std::size_t n,
                          ReduceOp op, Accumulation acc) {
  if (op == ReduceOp::max) {
    // The max of representable values is representable: no rounding question here.
    reduce_rows_typed<T>(rows, nrows, out, n, [](float a, float b) { return max_nan(a, b); });
  } else if (acc == Accumulation::storage) {
    reduce_rows_typed<T>(rows, nrows, out, n, [](float a, float b) { return round_to<T>(a + b); });
  } else {
    reduce_rows_typed<T>(rows, nrows, out, n, [](float a, float b) { return a + b; });
  }
}

template <typename T>
void sum_fn(void* out, const void* a, const void* b, std::size_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(out);
  for (std::size_t i = 0; i < n; ++i) z[i] = T(widen(x[i]) + widen(y[i]));
}
template <typename T>
void max_fn(void* out, const void* a, const void* b, std::size_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(out);
  for (std::size_t i = 0; i < n; ++i) z[i] = T(max_nan(widen(x[i]), widen(y[i])));
}

}  // namespace

void reduce_rows_canonical(const void* const* rows, std::size_t nrows, void* out, std::size_t n,
                           DType dtype, ReduceOp op, Accumulation acc) {
  ZT_CHECK(nrows >= 1, "reduce_rows_canonical: no rows");
  switch (dtype) {
    case DType::fp32: return reduce_rows_dispatch<float>(rows, nrows, out, n, op, Accumulation::fp32);
    case DType::fp16: return reduce_rows_dispatch<fp16>(rows, nrows, out, n, op, acc);
    case DType::bf16: return reduce_rows_dispatch<bf16>(rows, nrows, out, n, op, acc);
  }
}

ElementwiseFn elementwise_fn(DType dtype, ReduceOp op) {
  const bool sum = op == ReduceOp::sum;
  switch (dtype) {
    case DType::fp32: return sum ? &sum_fn<float> : &max_fn<float>;
    case DType::fp16: return sum ? &sum_fn<fp16> : &max_fn<fp16>;
    case DType::bf16: return sum ? &sum_fn<bf16> : &max_fn<bf16>;
  }
  return nullptr;
}

}  // namespace zt
