// tests/collective/reference.h — independent references for collective tests.
//
// The canonical aligned pairwise tree written again from its definition, by explicit recursion on
// rank indices (not via reduce/canonical_tree.h), so the tests compare two implementations:
// split the leaves [lo, lo+n) into aligned power-of-two blocks following n's binary digits from
// the top, sum each block as a perfect binary tree, combine the block sums from left to right.
// Also: input patterns per dtype, chosen so that the order of summation changes the result, and
// the fp32 reference sums over a list of ranks' inputs that the group and process tests compare with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "collective/dtype.h"

namespace zt_test {

/// A float add that may round to a 16-bit type after each add (storage accumulation).
using AddFn = std::function<float(float, float)>;

inline float perfect_block(const std::vector<float>& x, std::size_t lo, std::size_t n, const AddFn& add) {
  if (n == 1) return x[lo];
  return add(perfect_block(x, lo, n / 2, add), perfect_block(x, lo + n / 2, n / 2, add));
}

/// Reference canonical tree over x[0..n). @param x leaves in rank order. @param add the add.
/// @return the tree's sum.
inline float reference_tree(const std::vector<float>& x, const AddFn& add) {
  std::size_t n = x.size(), top = 1;
  while (top * 2 <= n) top *= 2;
  float total = perfect_block(x, 0, top, add);
  std::size_t lo = top;
  for (std::size_t b = top / 2; b >= 1; b /= 2) {
    if (n & b) {
      total = add(total, perfect_block(x, lo, b, add));
      lo += b;
    }
  }
  return total;
}

/// Value as float for any collective element type.
template <typename T>
float as_float(T v) {
  return static_cast<float>(v);
}

/// Bitwise equality of two elements (so -0 != +0 and NaN == NaN with the same payload).
template <typename T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// An order-sensitive value for rank q, element i: a big value B, 1, -B, 1, ... rotated by i,
/// plus a small element-dependent part; B is beyond the type's integer precision, so B + 1
/// rounds and the result depends on which operands meet first.
template <typename T>
float order_sensitive_value(int q, std::size_t i) {
  float big;
  if constexpr (std::is_same_v<T, float>) {
    big = 1e8f;
  } else if constexpr (std::is_same_v<T, zt::fp16>) {
    big = 2048.0f;
  } else {
    big = 256.0f;
  }
  const int phase = static_cast<int>((q + i) % 4);
  const float base = phase == 0 ? big : (phase == 2 ? -big : 1.0f);
  const float frac = static_cast<float>((i * 7 + static_cast<std::size_t>(q) * 3) % 5) * 0.25f;
  return base + frac;
}

/// Rank q's fp32 inputs of order_sensitive_value. @param q the rank. @param count elements.
/// @return the values for i = 0..count-1.
inline std::vector<float> order_sensitive_inputs(int q, std::size_t count) {
  std::vector<float> x(count);
  for (std::size_t i = 0; i < count; ++i) x[i] = order_sensitive_value<float>(q, i);
  return x;
}

/// The reference tree (fp32 sums) over the order_sensitive_inputs of the given ranks, taken in
/// the list's order, element by element. @param ranks whose inputs, in leaf order.
/// @param count elements. @return the sums.
inline std::vector<float> reference_sums(const std::vector<int>& ranks, std::size_t count) {
  std::vector<float> sums(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<float> leaves;
    for (int q : ranks) leaves.push_back(order_sensitive_value<float>(q, i));
    sums[i] = reference_tree(leaves, [](float a, float b) { return a + b; });
  }
  return sums;
}

/// Elements whose bits differ. @param got one vector. @param want another.
/// @return the count, or -1 when the sizes differ.
inline int bitwise_mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return -1;
  int wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += !same_bits(got[i], want[i]);
  return wrong;
}

/// A small integer value for rank q, element i: sums over up to 8 ranks stay exact in every
/// dtype, so any summation order gives the closed-form result.
inline float exact_value(int q, std::size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(q) * 3) % 16) - 5);
}

}  // namespace zt_test
