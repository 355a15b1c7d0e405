// step_device/step_ops.cc — the device StepOps: launches, scratch and read-backs (see the
// header); the per-thread arithmetic is step_threads.h's.
#include "step_device/step_ops.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/check.h"
#include "device/item_grid.h"
#include "ops/op_launch.h"
#include "step_device/step_threads.h"

namespace zt::step {

namespace {

using device::CopyKind;
using device::DeviceSpan;
using device::span_of;

// The device bytes of `count` gradient values, in whichever storage the span uses.
template <typename T>
DeviceSpan grad_bytes(const GradSpan<T>& g, std::size_t count) {
  return g.fp32 ? span_of(g.fp32, count) : span_of(g.compute, count);
}

}  // namespace

template <typename T>
StepOps<T>::StepOps(device::Runtime& runtime, device::Stream stream) : rt_(runtime), stream_(stream) {
  flag_.at_least(rt_, 2 * sizeof(uint32_t), "step nonfinite flag");
  flag_back_.at_least(rt_, 2 * sizeof(uint32_t), "step nonfinite flag (read-back)");
  auto* pinned = reinterpret_cast<uint32_t*>(flag_back_.ptr);
  pinned[0] = 0;  // the source of every zeroing copy, never written again
  pinned[1] = 0;  // the answer
}

template <typename T>
StepOps<T>::~StepOps() {
  for (device::Room* r : {&flag_, &flag_back_, &sums_, &sums_back_, &kept_, &count_, &count_back_}) r->release(rt_);
}

template <typename T>
bool StepOps<T>::any_nonfinite(GradSpan<T> g, std::size_t count) {
  if (count == 0) return false;
  auto* flag = reinterpret_cast<uint32_t*>(flag_.ptr);
  auto* pinned = reinterpret_cast<uint32_t*>(flag_back_.ptr);
  rt_.copy_async(flag, &pinned[0], sizeof(uint32_t), CopyKind::host_to_device, stream_);
  const NonfiniteFlagItems<T> op{g, static_cast<int64_t>(count), flag};
  rt_.launch(stream_, ops::op_kernel("step_nonfinite_flag", op, {grad_bytes(g, count)}, {span_of(flag, 1)}));
  rt_.copy_async(&pinned[1], flag, sizeof(uint32_t), CopyKind::device_to_host, stream_);
  rt_.synchronize(stream_);
  return pinned[1] != 0;
}

template <typename T>
void StepOps<T>::append_norm_block_sums(GradSpan<T> g, std::size_t real, std::size_t block, float inv_scale,
                                        std::vector<float>& sums) {
  if (real == 0) return;
  const std::size_t blocks = norm_block_count(real, block);  // checks that b is a power of two
  auto* out = reinterpret_cast<float*>(sums_.at_least(rt_, blocks * sizeof(float), "step norm block sums"));
  auto* back =
      reinterpret_cast<float*>(sums_back_.at_least(rt_, blocks * sizeof(float), "step norm block sums (read-back)"));
  const NormBlockItems<T> op{g, static_cast<int64_t>(real), static_cast<int64_t>(block), inv_scale, out};
  rt_.launch(stream_, ops::op_kernel("step_norm_block_sums", op, {grad_bytes(g, real)}, {span_of(out, blocks)}));
  rt_.copy_async(back, out, blocks * sizeof(float), CopyKind::device_to_host, stream_);
  rt_.synchronize(stream_);
  sums.insert(sums.end(), back, back + blocks);
}

template <typename T>
std::size_t StepOps<T>::apply_update(const OwnedSlice<T>& s, float inv_scale, const ClipDecision& clip,
                                     const ElementOptimizer& opt) {
  if (s.count == 0) return 0;
  constexpr bool wide = std::is_same_v<T, float>;
  const std::size_t n = s.count;
  UpdateItems<T> op;
  op.params = s.params;
  op.master = s.master;
  op.g = s.grad;
  op.n = static_cast<int64_t>(n);
  op.state_index = s.state_index;
  op.inv_scale = inv_scale;
  op.clipped = clip.clipped;
  op.coefficient = clip.coefficient;
  op.opt = opt;
  std::vector<DeviceSpan> state = {span_of(opt.state + s.state_index, n)};
  if (opt.adam) state.push_back(span_of(opt.state + opt.n + s.state_index, n));
  std::vector<DeviceSpan> reads = {grad_bytes(s.grad, n), span_of(s.params, n)}, writes = {span_of(s.params, n)};
  if (s.master) {
    reads.push_back(span_of(s.master, n));
    writes.push_back(span_of(s.master, n));
  }
  reads.insert(reads.end(), state.begin(), state.end());
  writes.insert(writes.end(), state.begin(), state.end());
  if (!wide) {
    op.kept = reinterpret_cast<uint8_t*>(kept_.at_least(rt_, n, "step kept flags"));
    writes.push_back(span_of(op.kept, n));
  }
  rt_.launch(stream_, ops::op_kernel("step_update", op, std::move(reads), std::move(writes)));
  if constexpr (wide) {
    return 0;
  } else {
    const KeptCountItems count{op.kept, op.n, nullptr};
    const auto groups = static_cast<std::size_t>(count.items());
    auto* counts = reinterpret_cast<uint32_t*>(count_.at_least(rt_, groups * sizeof(uint32_t), "step kept counts"));
    auto* back = reinterpret_cast<uint32_t*>(
        count_back_.at_least(rt_, groups * sizeof(uint32_t), "step kept counts (read-back)"));
    rt_.launch(stream_, ops::op_kernel("step_kept_count", KeptCountItems{op.kept, op.n, counts}, {span_of(op.kept, n)},
                                       {span_of(counts, groups)}));
    rt_.copy_async(back, counts, groups * sizeof(uint32_t), CopyKind::device_to_host, stream_);
    rt_.synchronize(stream_);
    std::size_t unchanged = 0;
    for (std::size_t j = 0; j < groups; ++j) unchanged += back[j];
    return unchanged;
  }
}

template class StepOps<float>;
template class StepOps<fp16>;
template class StepOps<bf16>;

}  // namespace zt::step
