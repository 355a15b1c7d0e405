// zero/config_check.cc — the start-up agreement of every rank on its settings (see config_check.h).
#include "zero/config_check.h"

#include <bit>
#include <string>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "core/error_report.h"

namespace zt::zero {

using train::TrainConfig;

uint64_t config_hash(const TrainConfig& c) {
  std::string text;
  // Floating-point settings by their exact bits: to_string keeps six decimals, so eps = 1e-8 and
  // 2e-8 (or a learning rate of 1e-7 and 2e-7) would otherwise hash alike.
  auto add = [&](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_convertible_v<V, std::string>)
      text += v;
    else if constexpr (std::is_floating_point_v<V>)
      text += std::to_string(std::bit_cast<uint64_t>(static_cast<double>(v)));
    else
      text += std::to_string(v);
    text += '\x1f';
  };
  add(c.model);
  add(c.layers);
  add(c.heads);
  add(c.width);
  add(c.context);
  add(c.vocab);
  add(c.precision);
  add(c.optimizer);
  add(c.reduce_dtype);
  add(c.lr);
  add(c.resolved_min_lr());
  add(c.resolved_warmup_steps());
  add(c.weight_decay);
  add(c.beta1);
  add(c.beta2);
  add(c.eps);
  add(c.momentum);
  add(c.clip_grad_norm);
  add(c.norm_block);
  add(c.loss_scale);
  add(c.loss_scale_init);
  add(c.loss_scale_growth_interval);
  add(c.loss_scale_growth_factor);
  add(c.loss_scale_backoff);
  add(c.steps);
  add(c.global_batch);
  add(c.micro_batch);
  add(c.seed);
  add(c.data);
  add(c.digits);
  add(c.stage);
  add(c.world_size);
  add(c.bucket_mb);
  add(c.prefetch);
  add(c.overlap);
  add(c.resolved_grad_sync());
  add(c.stage1_reduce);
  add(c.collective_mode);
  add(c.gemm);
  add(c.blas_threads);  // OpenBLAS's bits may depend on its thread count (kernels/blas.h)
  add(c.device);
  add(c.persist_below_mb);
  add(c.eval_every);  // evaluations issue collectives (zero/heldout_eval.h): all ranks at the same steps
  add(c.mp_size);
  add(c.resolved_mp_blocks());
  // ZeRO-Offload: where every rank keeps its optimizer (the same DIR string on every rank)
  add(c.offload_optimizer);
  add(c.offload_params);
  add(c.offload_buffers);
  add(c.offload_read_ahead);
  add(c.checkpoint_activations);        // recomputation issues model-parallel all-reduces
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

/// Exchange config hashes: every rank learns whether all agree, and fails with the same message.
void check_same_config(const TrainConfig& c, Collective& coll) {
  if (coll.size() == 1) return;
  const uint64_t h = config_hash(c);
  // two 32-bit halves as floats would lose bits: send 4 exact 16-bit pieces as floats
  std::vector<float> mine(4), all(4 * static_cast<std::size_t>(coll.size()));
  for (int k = 0; k < 4; ++k) mine[static_cast<std::size_t>(k)] = static_cast<float>((h >> (16 * k)) & 0xffff);
  coll.all_gather(std::span<const float>(mine), std::span<float>(all));
  auto same_as_rank0 = [&](int q) {
    for (int k = 0; k < 4; ++k)
      if (all[static_cast<std::size_t>(4 * q + k)] != all[static_cast<std::size_t>(k)]) return false;
    return true;
  };
  for (int q = 0; q < coll.size(); ++q) {
    if (same_as_rank0(q)) continue;
    // Rank 0's settings are the reference: a rank that differs from them is the cause (its own
    // error), the ranks that agree with rank 0 stop because of it (zt::PeerFailed).
    const std::string msg = concat("configuration mismatch: rank ", q,
                                   "'s settings differ from rank 0's (config hash "
                                   "exchange at start-up); start every rank with the same flags");
    if (!same_as_rank0(coll.rank())) throw Error(msg);
    throw PeerFailed(msg);
  }
}

}  // namespace zt::zero
