// predict/zero_comm.cc — the closed forms of zero_comm.h, call by call as the engine issues them.
#include "predict/zero_comm.h"

#include <algorithm>
#include <vector>

#include "collective/padding.h"
#include "optim/grad_norm.h"
#include "step_device/step_threads.h"
#include "zero/dp_calls.h"

namespace zt::predict {

using namespace zt::zero;
namespace {

struct Model {
  CommStats s;
  std::size_t n, r;
  void reduce_scatter(const std::vector<std::size_t>& counts, std::size_t es, CollKind kind) {
    s[kind].bytes_sent += (total_of(counts) - counts[r]) * es;
  }
  void all_gather(const std::vector<std::size_t>& counts, std::size_t es, CollKind kind) {
    s[kind].bytes_sent += (total_of(counts) - counts[(r + 1) % n]) * es;
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

// The visitor of for_each_dp_call (zero/dp_calls.h): every call counts, wherever its buffers are.
// Without hybrid sharding every call runs on the data-parallel group (`shards` is it). With it
// (collective/hybrid_group.h), a reduce-scatter is one inside the shard group plus an all-reduce
// of this rank's part across the replica group; an all-reduce adds an all-gather inside; an
// all-gather stays inside; and the loss sums go over the whole data-parallel group.
struct DpModel {
  Model shards, replicas, data;
  bool hybrid = false;
  void rs(const std::vector<std::size_t>& counts, std::size_t es, bool) {
    shards.rs_call(counts, es);
    if (hybrid) replicas.ar_call(counts[shards.r], es);
  }
  void ag(const std::vector<std::size_t>& counts, std::size_t es, bool) { shards.ag_call(counts, es); }
  void ar(std::size_t count, std::size_t es, bool on_device) {
    if (!hybrid) return shards.ar_call(count, es);
    const auto counts = balanced_counts(count, shards.n);
    rs(counts, es, on_device);
    ag(counts, es, on_device);
  }
  void loss(std::size_t a) { (hybrid ? data : shards).ag_call(std::vector<std::size_t>(data.n, a), 4); }
};

// The copies a staged group (collective/staged_collective.h) makes around a call on device
// buffers: the input down, the output up (a zero-byte side makes no copy).
struct Staging {
  device::CopyStats s;
  std::size_t r;
  void copy(device::CopyKind kind, std::size_t bytes) {
    if (bytes == 0) return;
    ++s.copies[static_cast<std::size_t>(kind)];
    s.bytes[static_cast<std::size_t>(kind)] += static_cast<int64_t>(bytes);
  }
  void staged(std::size_t down, std::size_t up) {
    copy(device::CopyKind::device_to_host, down);
    copy(device::CopyKind::host_to_device, up);
  }
  void rs(const std::vector<std::size_t>& counts, std::size_t es, bool on_device) {
    if (on_device) staged(total_of(counts) * es, counts[r] * es);
  }
  void ag(const std::vector<std::size_t>& counts, std::size_t es, bool on_device) {
    if (on_device) staged(counts[r] * es, total_of(counts) * es);
  }
  void ar(std::size_t count, std::size_t es, bool on_device) {
    if (on_device) staged(count * es, count * es);
  }
  void loss(std::size_t) {}  // host-side values
};

}  // namespace

DpCommByGroup predict_dp_comm_by_group(const ZeroPlan& p) {
  const Layout& l = p.layout;
  const std::size_t replicas = p.dp_size / l.world_size;
  DpModel m{{{}, l.world_size, l.rank}, {{}, replicas, p.replica_rank()}, {{}, p.dp_size, p.dp_rank}, replicas > 1};
  if (l.world_size > 1) for_each_dp_call(p, m);
  return {m.shards.s, m.replicas.s, m.data.s};
}

CommStats predict_comm_per_step(const ZeroPlan& p) {
  const DpCommByGroup g = predict_dp_comm_by_group(p);
  return g.shard + g.replica + g.whole;
}

device::CopyStats predict_device_copies_per_step(const ZeroPlan& p) {
  const Layout& l = p.layout;
  Staging st{{}, l.rank};
  if (l.world_size > 1) for_each_dp_call(p, st);
  // per micro-batch: the token ids staged in by forward and again by backward (two grids each),
  // the per-token losses read back (model/model_ops.h)
  const std::size_t ids = p.shape.micro_batch * p.shape.context * sizeof(int32_t);
  for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j) {
    for (int k = 0; k < 4; ++k) st.copy(device::CopyKind::host_to_device, ids);
    st.copy(device::CopyKind::device_to_host, ids);  // as many FP32 losses as ids
  }
  // tensor parallelism: every all-reduce that completes a split Linear's block sum
  // (predict_mp_comm_per_step's 4 or 6 per block and micro-batch) stages its [B T, C] FP32 partial
  // sum down and the completed sum back up
  if (p.mp.size > 1) {
    const std::size_t partial = ids / sizeof(int32_t) * static_cast<std::size_t>(p.shape.model.width) * sizeof(float);
    const std::size_t per_block = p.shape.checkpoint_activations ? 6 : 4;
    for (std::size_t k = 0; k < p.micro_batches_per_rank * static_cast<std::size_t>(p.shape.model.layers) * per_block;
         ++k)
      st.staged(partial, partial);
  }
  // P_a over a model-parallel group: before each block's recomputation, the all-gather of the
  // checkpoint slices stages this rank's slice down and the N_m slices up (with N_m = 1 the
  // restore is a device-to-device copy)
  if (p.partition_activations && p.mp.size > 1) {
    const std::size_t slice = checkpoint_slice_of(p) * model::bytes_of(p.shape.precision);
    for (std::size_t k = 0; k < p.micro_batches_per_rank * static_cast<std::size_t>(p.shape.model.layers); ++k)
      st.staged(slice, slice * static_cast<std::size_t>(p.mp.size));
  }
  // the host tier's transfers (predict_transfers_per_step) are copies between host and device
  // memory one for one, less those of no bytes: P_a+cpu's slices, out in forward and back in
  // backward, and ZeRO-Offload's owned gradient down and refreshed parameters up per unit
  if (p.offload_activations) {
    const std::size_t slice = checkpoint_slice_of(p) * model::bytes_of(p.shape.precision);
    for (std::size_t k = 0; k < p.micro_batches_per_rank * static_cast<std::size_t>(p.shape.model.layers); ++k)
      st.staged(slice, slice);
  }
  if (p.offload_optimizer)
    for (std::size_t u = 0; u < l.units.size(); ++u)
      st.staged(p.owned_real(u) * (p.grad_storage_16bit ? 2 : 4), p.owned_real(u) * model::bytes_of(p.shape.precision));
  // the parameter tier on a device (offload/param_file_tier.h): every record read from the file
  // is copied up into the ring, every record written back is first copied down; a shard read per
  // gather of a unit in the file, and per such unit one read and one write in the update
  if (p.offload_params) {
    const std::size_t t = model::bytes_of(p.shape.precision);
    for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j)
      for (std::size_t u : p.acquire_order)
        if (p.params_in_file(u)) st.copy(device::CopyKind::host_to_device, l.units[u].shard * t);
    for (std::size_t u = 0; u < l.units.size(); ++u)
      if (p.params_in_file(u)) st.staged(l.units[u].shard * t, l.units[u].shard * t);
  }
  // per unit, protocol steps 4-6 (step_device/step_ops.h): the overflow flag zeroed and
  // read back, the norm's block sums read back, and with 16-bit parameters updated on the device
  // (not in ZeRO-Offload's host tier) the counts of kept values
  for (std::size_t u = 0; u < l.units.size(); ++u) {
    const std::size_t reduced = p.reduce_scatters_grad ? l.shard_real(u, l.rank) : l.units[u].numel;
    const std::size_t owned = p.spec.optimizer ? l.shard_real(u, l.rank) : l.units[u].numel;
    if (reduced) {
      st.copy(device::CopyKind::host_to_device, sizeof(uint32_t));
      st.copy(device::CopyKind::device_to_host, sizeof(uint32_t));
      st.copy(device::CopyKind::device_to_host, norm_block_count(reduced, l.block) * sizeof(float));
    }
    if (owned && p.shape.precision != model::Precision::fp32 && !p.offload_optimizer)
      st.copy(device::CopyKind::device_to_host, (owned + step::kKeptGroup - 1) / step::kKeptGroup * sizeof(uint32_t));
  }
  return st.s;
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
  const int64_t blocks = model::stage_end(p.shape.model, p.pipe) - p.pipe.begin;  // a pipeline stage's own
  for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j)
    for (int64_t l = 0; l < blocks; ++l)
      for (std::size_t k = 0; k < per_block; ++k) m.ar_call(tokens * static_cast<std::size_t>(p.shape.model.width), 4);
  // P_a: before block l is recomputed, one all-gather of the L checkpoint slices' S values each
  if (p.partition_activations)
    for (std::size_t j = 0; j < p.micro_batches_per_rank; ++j)
      for (int64_t l = 0; l < p.shape.model.layers; ++l)
        m.ag_call(std::vector<std::size_t>(n, checkpoint_slice_of(p)), model::bytes_of(p.shape.precision));
  m.ar_call(1, 4);  // the overflow flag (max), agreed over the model-parallel group too
  std::vector<std::size_t> counts;
  for (const auto& contributions : mp_norm_contributions(p, p.pipe)) {
    counts.push_back(0);
    for (const auto& c : contributions) counts.back() += c.blocks;
  }
  m.ag_call(counts, 4);  // norm block sums of the whole model
  return m.s;
}

CommStats predict_pp_comm_per_step(const ZeroPlan& p) {
  const auto P = static_cast<std::size_t>(p.pp_size), s = static_cast<std::size_t>(p.pp_rank);
  Model m{{}, P, s};
  if (P == 1) return m.s;
  // the step program's sends and receives (pipeline/stage_runner.h): each batch is one call
  auto& io = m.s[CollKind::point_to_point];
  const StepProgram prog = step_program(p, /*overlap=*/true);
  for (const Op& o : prog.ops) {
    io.bytes_sent += o.kind == OpKind::send ? o.bytes : 0;
    io.bytes_received += o.kind == OpKind::recv ? o.bytes : 0;
    const OpKind first = o.waits.empty() ? OpKind::wait : prog.ops[o.waits.front()].kind;
    io.calls += o.kind == OpKind::wait && (first == OpKind::send || first == OpKind::recv) ? 1 : 0;
  }
  // the stages' agreement: the loss sum from the last stage (one float), the overflow flag (max),
  // the norm's block counts and then the block sums, stage after stage
  ++m.s[CollKind::broadcast].calls;
  uint64_t sends = 0;                 // the binomial tree over ranks renumbered from the root (gloo_ops.cc)
  const std::size_t v = (s + 1) % P;  // root P - 1 is 0
  for (std::size_t step = 1; step < P; step *= 2)
    if (v < step && v + step < P) ++sends;
  m.s[CollKind::broadcast].bytes_sent += sends * sizeof(float);
  m.ar_call(1, 4);
  m.ag_call(std::vector<std::size_t>(P, 1), 4);
  std::vector<std::size_t> blocks;
  for (std::size_t q = 0; q < static_cast<std::size_t>(p.pp_size); ++q) {  // the stage's units on every mp rank
    blocks.push_back(0);
    for (const auto& per_rank : mp_norm_contributions(p, {p.pp_offsets[q], p.pp_offsets[q + 1]}))
      for (const auto& c : per_rank) blocks.back() += c.blocks;
  }
  m.ag_call(blocks, 4);
  return m.s;
}

offload::TransferStats predict_transfers_per_step(const ZeroPlan& p) {
  offload::TransferStats t;
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

offload::TransferStats predict_file_io_per_step(const ZeroPlan& p) {
  offload::TransferStats io;
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
