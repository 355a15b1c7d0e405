// train/copy_plan.cc — the reference loop's copies per step, call by call as it makes them
// (see copy_plan.h).
#include "train/copy_plan.h"

#include <cstdint>

#include "model/manifest.h"
#include "optim/grad_norm.h"
#include "step_device/loop_threads.h"
#include "step_device/step_threads.h"

namespace zt::train {

device::CopyStats predict_single_rank_copies_per_step(const SingleRankShape& s) {
  device::CopyStats st;
  if (!s.host_side) return st;  // the host: nothing crosses
  const auto copy = [&](device::CopyKind kind, std::size_t bytes) {
    if (bytes == 0) return;
    ++st.copies[static_cast<std::size_t>(kind)];
    st.bytes[static_cast<std::size_t>(kind)] += static_cast<int64_t>(bytes);
  };
  const auto groups = [](std::size_t n, int64_t group) { return (n + static_cast<std::size_t>(group) - 1) / group; };
  const bool narrow = s.precision != model::Precision::fp32;
  const std::size_t ids = s.micro_batch * s.context * sizeof(int32_t);
  for (std::size_t j = 0; j < s.micro_batches; ++j) {
    for (int k = 0; k < 4; ++k) copy(device::CopyKind::host_to_device, ids);
    copy(device::CopyKind::device_to_host, ids);  // as many FP32 losses as ids
    if (narrow) copy(device::CopyKind::device_to_host, groups(s.psi, step::kLoopCountGroup) * sizeof(uint32_t));
  }
  for (const auto& u : model::make_storage_manifest(s.model, {}).units) {
    const auto n = static_cast<std::size_t>(u.numel);
    copy(device::CopyKind::host_to_device, sizeof(uint32_t));
    copy(device::CopyKind::device_to_host, sizeof(uint32_t));
    copy(device::CopyKind::device_to_host, norm_block_count(n, s.norm_block) * sizeof(float));
    if (narrow) copy(device::CopyKind::device_to_host, groups(n, step::kKeptGroup) * sizeof(uint32_t));
  }
  return st;
}

}  // namespace zt::train
