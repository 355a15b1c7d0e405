// train/collective_choice.cc — NCCL or Gloo (see collective_choice.h).
#include "train/collective_choice.h"

#include "core/check.h"
#include "core/words.h"

namespace zt::train {

bool use_nccl(CollectiveBackend asked, const CollectiveFacts& f) {
  if (asked == CollectiveBackend::gloo) return false;
  const bool nccl = asked == CollectiveBackend::nccl;
  if (f.device != device::Device::cuda) {
    ZT_CHECK(!nccl, "--collective nccl: NCCL reduces GPU buffers and needs --device cuda (given: --device ",
             word_of(f.device), ")");
    return false;
  }
  if (!f.nccl_built) {
    ZT_CHECK(!nccl, "--collective nccl: this build has no NCCL (it was configured without nvcc)");
    return false;
  }
  if (f.gpus < f.local_ranks) {
    ZT_CHECK(!nccl, "--collective nccl: ", f.local_ranks, f.local_ranks == 1 ? " rank" : " ranks",
             " on this machine and ", f.gpus, f.gpus == 1 ? " GPU" : " GPUs",
             " visible; NCCL needs a GPU per rank (--collective gloo stages through the host)");
    return false;
  }
  if (!f.plain_data_parallel) {
    ZT_CHECK(!nccl,
             "--collective nccl: only a plain data-parallel world runs on NCCL (--mp-size, --pp-size and "
             "--shard-group groups stage through Gloo: --collective gloo)");
    return false;
  }
  // auto: a world of one has nothing to send
  return nccl || f.world_size > 1;
}

}  // namespace zt::train
