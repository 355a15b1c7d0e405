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
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/cast.h"
#include "support/order_sensitive.h"

namespace zt::test {

/// n order-sensitive values scaled by 2^shift (exact) and rounded to T.
/// @param n how many. @param seed the stream. @param shift the power of two to scale by.
/// @return the values in the environment's buffer type V.
template <typename V>
V sensitive(std::size_t n, uint32_t seed, int shift) {
  using T = typename V::value_type;
  const auto f = order_sensitive(n, seed);
  V v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = kernels::from_f<T>(std::ldexp(f[i], shift));
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

/// Whether two buffers hold the same bytes. @param a first. @param b second. @return equal.
template <typename A, typename B>
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

/// The compute type's name for reports. @return "fp32", "fp16" or "bf16".
template <typename T>
const char* type_name() {
  return std::is_same_v<T, float> ? "fp32" : std::is_same_v<T, fp16> ? "fp16" : "bf16";
}

/// A case's label for reports. @param op the op. @param shape the shape. @return "op shape".
inline std::string label(const char* op, const std::string& shape) { return std::string(op) + " " + shape; }

}  // namespace zt::test
