// step/loop_ops.h — the few things a training loop itself does to its tensors, outside the model
// (model/model_ops.h) and the optimizer step (step/step_ops.h): fill them at start-up, zero the
// optimizer state, copy and widen the model's 16-bit gradient to FP32 (and narrow a sum to a
// 16-bit wire), add two partial sums of the micro-batch accumulator, count zero gradients and
// unchanged parameters for chapter 2's diagnostics, and read values back for the dumps.
//
// Why a seam: on a device runtime the loop's tensors are device memory, which host code must not
// touch (the emulated device kills a process that does). Every touch the loop used to make with a
// host loop or a memcpy is one call here; HostLoopOps makes exactly those host loops, so the host
// path keeps its bits and its speed, and the device's answer (step_device/device_loop_ops.h) runs
// the same element expressions as kernels. Each is element-wise or an integer count, so the bits
// cannot depend on where it runs.
// Not here: allocation (the caller's arena), what the tensors mean, any ordering with other
// streams (a device implementation works on the loop's one compute stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cast.h"

namespace zt::step {

/// The loop's own tensor work on memory of one kind (host or a device); T is the compute type.
template <typename T>
class LoopOps {
 public:
  virtual ~LoopOps() = default;

  /// @return whether the loop's memory is host memory (then host code may touch it directly, and
  /// a store may hand it to a visitor without staging a copy).
  virtual bool host_memory() const = 0;

  /// Copy host bytes into the loop's memory; `host` may be reused as soon as this returns.
  /// @param dst the loop's memory. @param host host memory. @param bytes how many.
  virtual void upload(void* dst, const void* host, std::size_t bytes) = 0;
  /// Copy the loop's bytes to the host, complete on return.
  /// @param host host memory. @param src the loop's memory. @param bytes how many.
  virtual void download(void* host, const void* src, std::size_t bytes) = 0;
  /// Copy within the loop's memory (the ranges do not overlap).
  /// @param dst where to. @param src where from. @param bytes how many.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  /// Zero bytes (the optimizer state before the first step, a gradient before backward adds
  /// into it). @param dst the bytes. @param bytes how many.
  virtual void zero(void* dst, std::size_t bytes) = 0;
  /// dst[i] = float(src[i]), exact (protocol step 3: the gradient's FP32 storage).
  /// @param dst FP32 values. @param src compute-type values. @param n elements.
  virtual void widen(float* dst, const T* src, std::size_t n) = 0;
  /// dst[i] = T(src[i]), rounded to nearest even (an FP32 sum put on a 16-bit wire).
  /// @param dst compute-type values. @param src FP32 values. @param n elements.
  virtual void narrow(T* dst, const float* src, std::size_t n) = 0;
  /// left[i] = left[i] + right[i]: one merge of the canonical accumulator's binary counter.
  /// @param left the earlier micro-batches' partial sum (updated). @param right the later one.
  /// @param n elements.
  virtual void add(float* left, const float* right, std::size_t n) = 0;
  /// Chapter 2's underflow counter: elements of the model's own gradient output that are exactly
  /// zero (+0 or -0), before any widening. It does not say why (the embedding rows of tokens absent
  /// from the batch are zero in FP32 too; chapter 2 compares against a loss-scaled run).
  /// @param g the gradient. @param n elements. @return how many compare equal to 0.
  virtual int64_t count_zeros(const T* g, std::size_t n) = 0;
  /// Chapter 2's stall counter: elements whose bit patterns are equal (no tolerance).
  /// @param a one array. @param b another. @param n elements. @return how many are equal.
  virtual int64_t count_same_bits(const T* a, const T* b, std::size_t n) = 0;
};

/// The host's answers: memcpy and plain loops, as the loops wrote them before this seam.
template <typename T>
class HostLoopOps final : public LoopOps<T> {
 public:
  /// @return true.
  bool host_memory() const override { return true; }
  void upload(void* dst, const void* host, std::size_t bytes) override { std::memcpy(dst, host, bytes); }
  void download(void* host, const void* src, std::size_t bytes) override { std::memcpy(host, src, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void zero(void* dst, std::size_t bytes) override { std::memset(dst, 0, bytes); }
  void widen(float* dst, const T* src, std::size_t n) override {
    kernels::widen_into(dst, src, static_cast<int64_t>(n));  // fp16 with F16C: the scalar conversion's bits
  }
  void narrow(T* dst, const float* src, std::size_t n) override { kernels::narrow(dst, src, n); }
  void add(float* left, const float* right, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) left[i] = left[i] + right[i];
  }
  int64_t count_zeros(const T* g, std::size_t n) override {
    int64_t zeros = 0;
    if constexpr (std::is_same_v<T, fp16>)  // ±0 exactly when the bits below the sign are 0 (no widening)
      for (std::size_t i = 0; i < n; ++i) zeros += (g[i].bits & 0x7fffu) == 0;
    else
      for (std::size_t i = 0; i < n; ++i) zeros += static_cast<float>(g[i]) == 0.0f;  // widening is exact
    return zeros;
  }
  int64_t count_same_bits(const T* a, const T* b, std::size_t n) override {
    int64_t same = 0;
    for (std::size_t i = 0; i < n; ++i) same += std::memcmp(&a[i], &b[i], sizeof(T)) == 0;
    return same;
  }
};

/// Show `count` values of the loop's memory to a host-side visitor (between steps: initialisation,
/// dumps, checkpoints): the memory itself where it is host memory, else a host copy, read back
/// unless `fresh` (the visitor fills it) and written back when the visitor returns true.
/// @param ops the loop's ops. @param data the values (the loop's memory). @param count how many.
/// @param fresh the visitor writes every value and reads none. @param fn bool(V*), true if it changed them.
/// @return what fn returned.
template <typename T, typename V, typename Fn>
bool visit_on_host(LoopOps<T>& ops, V* data, std::size_t count, bool fresh, Fn&& fn) {
  if (ops.host_memory()) return fn(data);
  std::vector<V> host(count);
  if (!fresh) ops.download(host.data(), data, count * sizeof(V));
  const bool changed = fn(host.data());
  if (changed) ops.upload(data, host.data(), count * sizeof(V));
  return changed;
}

}  // namespace zt::step
