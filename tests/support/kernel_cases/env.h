// support/kernel_cases/env.h — what the kernel cases (this folder) share: order-sensitive inputs
// in any compute type, bitwise comparison, and the contract of an environment.
//
// One case = one op: build inputs, run the CPU kernel, run the op's item kernel through the
// environment, compare every output bit for bit. The same case runs in two environments: the host
// test (tests/kernels/test_host_launch.cc: std::vector, device::run_items_on_host, Catch2 checks)
// and the GPU test (tests/gpu/test_gpu_kernels.cc: managed memory that both the CPU kernel and the
// device can address, the CUDA launcher, a failure count). An environment Env provides
//   template <typename T> using vec = ...;           a std::vector-like buffer type
//   template <typename Op> void run(const Op&) const  run every thread of the op, finished on return
//   void check(bool same, const std::string& what) const
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cast.h"
#include "ops/op_launch.h"
#include "support/order_sensitive.h"

namespace zt::test {

using ops::kBlockOp;  // an item op or a block op: each environment launches it its own way

/// n order-sensitive values scaled by 2^shift (exact) and rounded to T; every one finite.
/// @param n how many. @param seed the stream. @param shift the power of two to scale by.
/// @return the values in the environment's buffer type V.
/// @throws std::invalid_argument where a value overflows T: an inf input turns a case's outputs
/// into NaNs, and a case that compares NaNs tests nothing of the arithmetic (and compares bits
/// IEEE 754 leaves to the machine: see case_optim).
template <typename V>
V sensitive(std::size_t n, uint32_t seed, int shift) {
  using T = typename V::value_type;
  const auto f = order_sensitive(n, seed);
  V v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = kernels::from_f<T>(std::ldexp(f[i], shift));
    if (!std::isfinite(kernels::to_f(v[i])))
      throw std::invalid_argument("sensitive: " + std::to_string(f[i]) + " * 2^" + std::to_string(shift) +
                                  " overflows the type: scale the case's inputs down");
  }
  return v;
}

/// A buffer of n copies of a sentinel (-7), so an output a kernel forgot to write shows.
/// @param n how many. @return the buffer.
template <typename V>
V sentinel(std::size_t n) {
  return V(n, kernels::from_f<typename V::value_type>(-7.0f));
}

/// The scale of a case's inputs for T: order_sensitive's full range (2^-20 .. 2^21) for float,
/// 2^-8 of it for the 16-bit types (fp16 overflows above 65504). @return the shift.
template <typename T>
int range_shift() {
  return std::is_same_v<T, float> ? 0 : -8;
}

/// Where the last same_bits() that failed found its first difference ("" after a match), for the
/// environments' failure reports: the element, both bit patterns and both values.
inline std::string& last_difference() {
  thread_local std::string where;
  return where;
}

/// Whether two buffers hold the same bytes; on a difference, last_difference() says where.
/// @param a first (the CPU kernel's). @param b second (the op's). @return equal.
template <typename A, typename B>
bool same_bits(const A& a, const B& b) {
  last_difference().clear();
  if (a.size() != b.size()) {
    last_difference() = "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
    return false;
  }
  constexpr std::size_t kBytes = sizeof(a[0]);
  static_assert(kBytes == 2 || kBytes == 4, "elements of 16 or 32 bits");
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], kBytes) == 0) continue;
    uint32_t x = 0, y = 0;
    std::memcpy(&x, &a[i], kBytes);
    std::memcpy(&y, &b[i], kBytes);
    char text[160];
    std::snprintf(text, sizeof text, "element %zu of %zu: 0x%0*x (%.9g) against 0x%0*x (%.9g)", i, a.size(),
                  static_cast<int>(2 * kBytes), x, static_cast<double>(kernels::to_f(a[i])),
                  static_cast<int>(2 * kBytes), y, static_cast<double>(kernels::to_f(b[i])));
    last_difference() = text;
    return false;
  }
  return true;
}

/// The compute type's name for reports. @return "fp32", "fp16" or "bf16".
template <typename T>
const char* type_name() {
  return std::is_same_v<T, float> ? "fp32" : std::is_same_v<T, fp16> ? "fp16" : "bf16";
}

/// A case's label for reports. @param op the op. @param shape the shape. @return "op shape".
inline std::string label(const char* op, const std::string& shape) { return std::string(op) + " " + shape; }

}  // namespace zt::test
