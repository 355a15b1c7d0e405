// step_device/loop_ops.cc — LoopOps: staging, launches and read-backs (see the
// header); the per-thread arithmetic is loop_threads.h's.
#include "step_device/loop_ops.h"

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "core/check.h"
#include "device/item_grid.h"
#include "ops/elementwise_items.h"
#include "ops/op_launch.h"
#include "step_device/loop_threads.h"

namespace zt::step {

using device::CopyKind;
using device::span_of;

template <typename T>
LoopOps<T>::LoopOps(device::Runtime& runtime, device::Stream stream) : rt_(runtime), stream_(stream) {}

template <typename T>
LoopOps<T>::~LoopOps() {
  staging_.release(rt_);
  counts_.release(rt_);
}

template <typename T>
uint32_t* LoopOps<T>::count_room(std::size_t groups) {
  return reinterpret_cast<uint32_t*>(counts_.at_least(rt_, groups * sizeof(uint32_t), "loop counts"));
}

template <typename T>
int64_t LoopOps<T>::read_counts(const uint32_t* counts, std::size_t groups) {
  const std::size_t bytes = groups * sizeof(uint32_t);
  auto* back = reinterpret_cast<uint32_t*>(staging_.at_least(rt_, bytes, "loop staging"));
  rt_.copy_async(back, counts, bytes, CopyKind::device_to_host, stream_);
  rt_.synchronize(stream_);
  int64_t total = 0;  // integers: exact in any order
  for (std::size_t j = 0; j < groups; ++j) total += back[j];
  return total;
}

template <typename T>
void LoopOps<T>::upload(void* dst, const void* host, std::size_t bytes) {
  if (bytes == 0) return;
  std::byte* staged = staging_.at_least(rt_, bytes, "loop staging");
  std::memcpy(staged, host, bytes);
  rt_.copy_async(dst, staged, bytes, CopyKind::host_to_device, stream_);
  rt_.synchronize(stream_);  // the staging (and the caller's bytes) are free again
}

template <typename T>
void LoopOps<T>::download(void* host, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  std::byte* staged = staging_.at_least(rt_, bytes, "loop staging");
  rt_.copy_async(staged, src, bytes, CopyKind::device_to_host, stream_);
  rt_.synchronize(stream_);
  std::memcpy(host, staged, bytes);
}

template <typename T>
void LoopOps<T>::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes) rt_.copy_async(dst, src, bytes, CopyKind::device_to_device, stream_);
}

template <typename T>
void LoopOps<T>::zero(void* dst, std::size_t bytes) {
  if (bytes == 0) return;
  auto* d = static_cast<uint8_t*>(dst);
  rt_.launch(stream_, ops::op_kernel("loop_zero", ZeroItems{d, static_cast<int64_t>(bytes)}, {}, {span_of(d, bytes)}));
}

template <typename T>
void LoopOps<T>::narrow(T* dst, const float* src, std::size_t n) {
  if (n == 0) return;
  rt_.launch(stream_, ops::op_kernel("loop_narrow", ops::CastElements<T, float>{dst, src, static_cast<int64_t>(n)},
                                     {span_of(src, n)}, {span_of(dst, n)}));
}

template <typename T>
void LoopOps<T>::widen(float* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  rt_.launch(stream_, ops::op_kernel("loop_widen", ops::CastElements<float, T>{dst, src, static_cast<int64_t>(n)},
                                     {span_of(src, n)}, {span_of(dst, n)}));
}

template <typename T>
void LoopOps<T>::add(float* left, const float* right, std::size_t n) {
  if (n == 0) return;
  rt_.launch(stream_, ops::op_kernel("loop_accumulate", AddItems{left, right, static_cast<int64_t>(n)},
                                     {span_of(left, n), span_of(right, n)}, {span_of(left, n)}));
}

template <typename T>
int64_t LoopOps<T>::count_zeros(const T* g, std::size_t n) {
  if (n == 0) return 0;
  ZeroCountItems<T> op{g, static_cast<int64_t>(n), nullptr};
  const auto groups = static_cast<std::size_t>(op.items());
  op.counts = count_room(groups);
  rt_.launch(stream_, ops::op_kernel("loop_zero_count", op, {span_of(g, n)}, {span_of(op.counts, groups)}));
  return read_counts(op.counts, groups);
}

template <typename T>
int64_t LoopOps<T>::count_same_bits(const T* a, const T* b, std::size_t n) {
  if constexpr (sizeof(T) != 2) {
    ZT_CHECK(false, "the stall counter compares 16-bit parameters only");
    return 0;
  } else {
    if (n == 0) return 0;
    SameBitsItems<T> op{a, b, static_cast<int64_t>(n), nullptr};
    const auto groups = static_cast<std::size_t>(op.items());
    op.counts = count_room(groups);
    rt_.launch(stream_,
               ops::op_kernel("loop_same_bits", op, {span_of(a, n), span_of(b, n)}, {span_of(op.counts, groups)}));
    return read_counts(op.counts, groups);
  }
}

template class LoopOps<float>;
template class LoopOps<fp16>;
template class LoopOps<bf16>;

}  // namespace zt::step
