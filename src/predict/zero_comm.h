// predict/zero_comm.h — closed-form communication of one training step of a ZeRO rank.
//
// From the unit and bucket layout alone, in the deterministic collectives' cost model
// (collective/stats.h): a reduce-scatter sends every range but the rank's own, a ring all-gather
// every range but the next rank's, an all-reduce both over a balanced split. So per gradient
// sync a unit of full_u padded elements costs (N−1)/N · full_u elements sent as a reduce-scatter,
// twice that as an all-reduce, and a stage-1/2 step adds (N−1)/N · full_u 16-bit elements of
// parameter all-gather; stage 3 all-gathers every unit once per use (forward and backward, the
// tied wte twice more) per micro-batch — except a persistent unit (--persist-below-mb), which
// instead gets one post-update all-gather per step like stage 2. This is the paper's 2ψ (stages 0-2) and 3ψ (stage 3)
// with the factor (N−1)/N kept, padding counted, and the small scalar collectives (loss sums, overflow flag, norm block
// sums) listed too. It computes; it does not communicate.
#pragma once

#include "collective/stats.h"
#include "device/runtime.h"
#include "offload/transfer_thread.h"
#include "zero/zero_plan.h"

namespace zt::predict {

/// Predicted calls and bytes sent by this rank in one applied (not skipped) step, per kind, with
/// deterministic collectives (call-check headers not included).
/// @param plan the rank's plan. @return the counters.
CommStats predict_comm_per_step(const zero::ZeroPlan& plan);

/// With hybrid sharding, where predict_comm_per_step's traffic runs: inside the shard group
/// (the reduce-scatters, all-gathers and the small agreements), across shard groups (each
/// reduce-scatter's all-reduce of this rank's part over the N_d / G replicas:
/// 2 (R - 1)/R · S/G per reduction of S bytes), and over all N_d ranks at once (the loss sums).
/// Without it, all of it is `shard` (the data-parallel group). The three add up to
/// predict_comm_per_step.
struct DpCommByGroup {
  CommStats shard;    ///< inside the shard group (intra)
  CommStats replica;  ///< across shard groups (inter)
  CommStats whole;    ///< over all N_d data-parallel ranks
};
/// @param plan the rank's plan. @return the split.
DpCommByGroup predict_dp_comm_by_group(const zero::ZeroPlan& plan);

/// On a device (--device emulated|cuda): the copies between host and device memory in one applied
/// step, by kind. Every data-parallel collective on the engine's tensors is staged through pinned
/// memory (collective/staged_collective.h): its input down, its output up — so a stage-2
/// reduce-scatter of a bucket of k elements costs k·s_g bytes down and its shard's part up. Per
/// micro-batch the token ids go up four times (two grids, forward and backward) and the losses
/// come down; per unit the step's overflow flag goes up and down, its norm block sums and, with
/// 16-bit parameters, its per-group counts of kept values come down. With tensor parallelism each
// all-reduce of a block sum (predict_mp_comm_per_step) moves its [B T, C] FP32 partial sum down and
// up: 4 or 6 per block and micro-batch, 4 B T C bytes each way. Device-to-device copies are
/// not host traffic and are not predicted.
/// @param plan the rank's plan. @return copies and bytes by kind.
device::CopyStats predict_device_copies_per_step(const zero::ZeroPlan& plan);

/// The same for the model-parallel group (zero without model parallelism): per micro-batch and
/// block, 2 all-reduces of the [B T, C] FP32 partial sums in forward (Megatron's g), 2 in backward
/// (f), and 2 more in the recomputed forward with checkpointing — per sequence of T tokens
/// 12 (N_m − 1)/N_m · T · C elements sent per block with checkpointing, the paper's Sec. 8 figure
/// with its factor kept; then the overflow flag and the whole model's norm block sums per step.
/// @param plan the rank's plan. @return the counters.
CommStats predict_mp_comm_per_step(const zero::ZeroPlan& plan);

/// The pipeline group's traffic per step (N_p > 1; zero otherwise): the point-to-point batches
/// and bytes of pipeline/stage_runner.h — 2 (N_p - 1) M b s h t over the pipeline for the
/// activations and their gradients, (M + 1) V C t for the tied embedding — and the stages'
/// agreement (the loss broadcast, the overflow flag, the norm's block sums).
/// @param p the plan. @return the counters this rank's pipeline group moves in one step.
CommStats predict_pp_comm_per_step(const zero::ZeroPlan& p);

/// The host tier's transfers per applied step (zero without one). P_a+cpu: per micro-batch every
/// block's checkpoint slice goes to the host tier in forward and comes back in backward, L copies
/// of S values each way — twice the host tier's checkpoint bytes per micro-batch. ZeRO-Offload:
/// per unit one copy down of the owned reduced gradient (s_g bytes per owned real element) and
/// one copy up of the owned refreshed parameters (2 bytes, 4 in fp32): over all N ranks
/// s_g·ψ down and 2ψ up per step, the paper's 2ψ + 2ψ when s_g = 2.
/// @param plan the rank's plan. @return bytes and calls (times are measurements only).
offload::TransferStats predict_transfers_per_step(const zero::ZeroPlan& plan);

/// The file tiers' I/O per applied step (zero without one): every unit's record (e_u elements of
/// K bytes: FP32 master and moments) read once and written once; with --offload-params also
/// every sharded use of the acquire order's shard read per micro-batch, and every sharded unit's
/// shard read and written once by the update (t bytes per element).
/// @param plan the rank's plan. @return bytes and calls (times are measurements only).
offload::TransferStats predict_file_io_per_step(const zero::ZeroPlan& plan);

}  // namespace zt::predict
