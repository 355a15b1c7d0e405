// predict/zero_comm.cc — the closed forms of zero_comm.h, call by call as the engine issues them.
#include "predict/zero_comm.h"

#include <algorithm>
#include <vector>

#include "collective/padding.h"
#include "optim/grad_norm.h"

namespace zt::predict {

using namespace zt::zero;
namespace {

std::size_t sum(const std::vector<std::size_t>& v) {
  std::size_t s = 0;
  for (std::size_t x : v) s += x;
  return s;
}

struct Model {
  CommStats s;
  std::size_t n, r;
  void reduce_scatter(const std::vector<std::size_t>& counts, std::size_t es, CollKind kind) {
    s[kind].bytes_sent += (sum(counts) - counts[r]) * es;
  }
  void all_gather(const std::vector<std::size_t>& counts, std::size_t es, CollKind kind) {
    s[kind].bytes_sent += (sum(counts) - counts[(r + 1) % n]) * es;
  }
  void rs_call(const std::vector<std::size_t>& counts, std::size_t es) {
    ++s[CollKind::reduce_scatter].calls;
    reduce_scatter(counts, es, CollKind::reduce_scatter);
  }
  void ag_call(const std::vector<std::size_t>& counts, std::size_t es) {
    ++s[CollKind::all_gather].calls;
    all_gather(counts, es, CollKind::all_gather);
  }
  void ar_call(std::size_t count, std::size_t es) {
    ++s[CollKind::all_reduce].calls;
    const auto counts = balanced_counts(count, n);
    reduce_scatter(counts, es, CollKind::all_reduce);
    all_gather(counts, es, CollKind::all_reduce);
  }
};

}  // namespace

CommStats predict_comm_per_step(const ZeroPlan& p) {
  const Layout& l = p.layout;
  Model m{{}, l.world_size, l.rank};
  const std::size_t N = l.world_size;
  if (N == 1) return m.s;
  const std::size_t A = p.micro_batches_per_rank;
  const std::size_t wt = p.shape.precision == model::Precision::fp32 ? 4 : 2;
  const std::size_t wg = p.reduce_in_compute_type ? 2 : 4;
  // stage 3: one gather per acquire of a sharded-parameter unit, every micro-batch
  for (std::size_t j = 0; j < A; ++j)
    for (std::size_t u : p.acquire_order)
      if (p.params_sharded(u)) m.ag_call(std::vector<std::size_t>(N, l.units[u].shard), wt);
  const std::size_t syncs = p.reduce_each_micro_batch ? A : 1;
  for (std::size_t k = 0; k < syncs; ++k)
    for (const auto& u : l.units) {
      if (!p.reduce_scatters_grad) {
        m.ar_call(u.full, wg);
        continue;
      }
      const std::size_t bucket = p.bucket_elements ? p.bucket_elements : u.full;
      for (std::size_t a = 0; a < u.full; a += bucket) {
        const std::size_t z = std::min(u.full, a + bucket);
        std::vector<std::size_t> counts(N);
        for (std::size_t q = 0; q < N; ++q) {
          const std::size_t lo = std::max(a, q * u.shard), hi = std::min(z, (q + 1) * u.shard);
          counts[q] = hi > lo ? hi - lo : 0;
        }
        m.rs_call(counts, wg);
      }
    }
  m.ag_call(std::vector<std::size_t>(N, A), 4);  // per-micro-batch loss sums
  if (p.reduce_scatters_grad) {
    m.ar_call(1, 4);  // overflow flag (max)
    std::vector<std::size_t> blocks(N, 0);
    for (std::size_t q = 0; q < N; ++q)
      for (std::size_t u = 0; u < l.units.size(); ++u) blocks[q] += norm_block_count(l.shard_real(u, q), l.block);
    m.ag_call(blocks, 4);  // norm block sums
  }
  // updated 16-bit shards back to every rank holding the unit whole (stages 1-2, persistent units)
  for (std::size_t u = 0; u < l.units.size(); ++u)
    if (p.spec.optimizer && !p.params_sharded(u)) m.ag_call(std::vector<std::size_t>(N, l.units[u].shard), wt);
  return m.s;
}

CommStats predict_mp_comm_per_step(const ZeroPlan& p) {
  const auto n = static_cast<std::size_t>(p.mp.size);
  Model m{{}, n, static_cast<std::size_t>(p.mp.rank)};
  if (n == 1) return m.s;
  // per micro-batch and block: Megatron's g in forward after each row-parallel Linear (attn and
  // MLP output), f in backward after each column-parallel one (c_attn and c_fc input gradients),
  // and g again in the recomputed forward with checkpointing: 4 or 6 all-reduces of [B T, C] FP32
  const std::size_t tokens = p.shape.micro_batch * p.shape.context;
  const std::size_t per_block = p.shape.checkpoint_activations ? 6 : 4;
  for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j)
    for (int64_t l = 0; l < p.shape.model.layers; ++l)
      for (std::size_t k = 0; k < per_block; ++k) m.ar_call(tokens * static_cast<std::size_t>(p.shape.model.width), 4);
  // P_a: before block l is recomputed, one all-gather of the L checkpoint slices' S values each
  if (p.partition_activations)
    for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j)
      for (int64_t l = 0; l < p.shape.model.layers; ++l)
        m.ag_call(std::vector<std::size_t>(n, checkpoint_slice_of(p)), model::bytes_of(p.shape.precision));
  m.ar_call(1, 4);  // the overflow flag (max), agreed over the model-parallel group too
  std::vector<std::size_t> counts;
  for (const auto& contributions : mp_norm_contributions(p)) {
    counts.push_back(0);
    for (const auto& c : contributions) counts.back() += c.blocks;
  }
  m.ag_call(counts, 4);  // norm block sums of the whole model
  return m.s;
}

zero_r::TransferStats predict_transfers_per_step(const ZeroPlan& p) {
  zero_r::TransferStats t;
  if (p.offload_activations) {
    const auto copies = p.micro_batches_per_rank * static_cast<std::size_t>(p.shape.model.layers);
    const auto bytes = copies * checkpoint_slice_of(p) * model::bytes_of(p.shape.precision);
    t.to_host_calls = t.to_device_calls = copies;
    t.to_host_bytes = t.to_device_bytes = bytes;
  }
  if (p.offload_optimizer)  // ZeRO-Offload: per unit, the owned gradient down and the owned parameters up
    for (std::size_t u = 0; u < p.layout.units.size(); ++u) {
      ++t.to_host_calls;
      ++t.to_device_calls;
      t.to_host_bytes += p.owned_real(u) * (p.grad_storage_16bit ? 2 : 4);  // s_g
      t.to_device_bytes += p.owned_real(u) * model::bytes_of(p.shape.precision);
    }
  return t;
}

offload::FileIoStats predict_file_io_per_step(const ZeroPlan& p) {
  offload::FileIoStats io;
  if (p.offload_to_file) {
    for (std::size_t u = 0; u < p.layout.units.size(); ++u) {  // every unit's record read once and written once
      ++io.read_calls;
      ++io.write_calls;
      io.read_bytes += p.layout.extent(u, p.spec.optimizer) * static_cast<std::size_t>(p.shape.optimizer_k);
    }
    io.write_bytes = io.read_bytes;
  }
  if (p.offload_params) {  // the parameter tier: a shard read per gather, and per sharded unit one update
    const std::size_t t = model::bytes_of(p.shape.precision);
    for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j)
      for (std::size_t u : p.acquire_order)
        if (p.params_sharded(u)) {
          ++io.read_calls;
          io.read_bytes += p.layout.units[u].shard * t;
        }
    for (std::size_t u = 0; u < p.layout.units.size(); ++u)
      if (p.params_sharded(u)) {  // read, updated, written back
        ++io.read_calls;
        ++io.write_calls;
        io.read_bytes += p.layout.units[u].shard * t;
        io.write_bytes += p.layout.units[u].shard * t;
      }
  }
  return io;
}

}  // namespace zt::predict
