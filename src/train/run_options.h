// train/run_options.h — a run's settings, one struct per feature, as the modules below the
// programs read them.
//
// Each struct is one feature's settings (the model, the optimizer, the batch, the device, the
// grid of ranks, ZeRO, ZeRO-R's activations, the offload tiers, checkpoints, outputs); RunOptions
// is all of them, with the values derived from several (N_d, micro-batches per rank, the resolved
// defaults). A module takes the narrowest it needs: the held-out evaluation a BatchOptions, the
// engine a RunOptions. The programs fill them from the command line once, through their flag
// registry (train/train_flags.h, train/train_config.h: TrainConfig is a RunOptions plus the
// settings only a program reads). Defaults are the `make run` job.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/output_place.h"
#include "device/cuda_probe.h"
#include "kernels/blas.h"
#include "model/precision.h"
#include "schedule/pipeline.h"
#include "step/element_optimizer.h"
#include "train/offload_target.h"
#include "train/settings_enums.h"

namespace zt::train {

/// Settings of the model (chapter 2): its shape and the compute type.
struct ModelOptions {
  ModelFamily model = ModelFamily::gpt;                 ///< model family (gpt)
  int64_t layers = 2;                                   ///< L, transformer blocks
  int64_t heads = 4;                                    ///< H, attention heads
  int64_t width = 64;                                   ///< C, channels
  int64_t context = 32;                                 ///< T, sequence length
  int64_t vocab = 0;                                    ///< V; 0 means the dataset's alphabet size
  model::Precision precision = model::Precision::fp32;  ///< fp32 | fp16 | bf16
  bool checkpoint_activations = false;                  ///< keep only each block's input; recompute it in backward
  std::optional<int64_t> mp_blocks;                     ///< B, tensor-parallel blocks (power of two); empty: mp_size
};

/// Settings of the optimizer, the gradients' width and the loss scale (chapter 2).
struct OptimizerOptions {
  Optimizer optimizer = Optimizer::adamw;        ///< adam | adamw | sgd
  ReduceDtype reduce_dtype = ReduceDtype::fp32;  ///< gradient storage/reduction width: fp32 | compute
  bool no_master_weights = false;                ///< update the 16-bit copy directly (teaching only)
  double lr = 3e-3;                              ///< peak learning rate
  std::optional<double> min_lr;                  ///< floor of the cosine schedule; empty: lr / 10 (resolved_min_lr)
  std::optional<int64_t> warmup_steps;        ///< linear warm-up steps; empty: min(20, steps) (resolved_warmup_steps)
  double weight_decay = 0.0;                  ///< AdamW decoupled weight decay
  double beta1 = 0.9;                         ///< Adam first-moment decay
  double beta2 = 0.95;                        ///< Adam second-moment decay
  double eps = 1e-8;                          ///< Adam epsilon
  double momentum = 0.9;                      ///< SGD momentum
  double clip_grad_norm = 1.0;                ///< global-norm clipping threshold; 0 disables
  int64_t norm_block = 256;                   ///< gradient-norm block size b (a power of two)
  LossScale loss_scale = LossScale::dynamic;  ///< fp16: the dynamic scaler, or none (S = 1, chapter 2's underflow demo)
  double loss_scale_init = 65536.0;           ///< initial dynamic loss scale
  int64_t loss_scale_growth_interval = 2000;  ///< clean steps before the scale grows
  double loss_scale_growth_factor = 2.0;      ///< growth multiplier
  double loss_scale_backoff = 0.5;            ///< multiplier after an overflow
  /// The cosine floor actually used: one tenth of the peak unless given (as nanoGPT sets it), so
  /// a --lr below the floor's usual value never meets a floor above it.
  /// @return min_lr, or lr / 10 when it was not given.
  double resolved_min_lr() const { return min_lr ? *min_lr : lr / 10; }
};

/// Settings of the run's length, batch and data.
struct BatchOptions {
  int64_t steps = 300;        ///< optimizer steps
  int64_t global_batch = 32;  ///< sequences per optimizer step
  int64_t micro_batch = 0;    ///< sequences per micro-batch; 0 until resolve_micro_batch()
  int64_t seed = 1234;        ///< seed of init and data
  std::string data;           ///< byte-level text file; empty means the embedded dataset
  int64_t digits = 2;         ///< operand digits of the embedded addition task
  int64_t eval_every = 50;    ///< held-out evaluation period in steps; 0 = only at the end
};

/// Settings of where a rank runs and with what (chapters 3, 11).
struct DeviceOptions {
  double memory_budget_mb = 1024.0;  ///< per-rank arena capacity, MiB
  int64_t threads = 0;               ///< CPU threads per rank (core/cpu_pool.h); 0 until resolve_threads()
  int64_t blas_threads = 1;          ///< BLAS threads per rank
  kernels::GemmBackend gemm = kernels::GemmBackend::canonical;  ///< canonical | blas
  device::Device device =
      device::Device::cpu;  ///< cpu | cuda | emulated (device/cuda_probe.h decides whether cuda can run)
};

/// Settings of the ranks: N_d x N_m x N_p and how they talk (chapters 4, 5, 10, 15).
struct GridOptions {
  int64_t world_size = 1;  ///< all ranks: N_d data-parallel x N_p pipeline x N_m model-parallel
  int64_t mp_size = 1;     ///< N_m, model-parallel (tensor-parallel) ranks per group
  int64_t pp_size = 1;     ///< N_p, pipeline stages (contiguous runs of blocks)
  /// The pipeline's order of forward and backward passes (schedule/pipeline.h).
  schedule::PipeSchedule pp_schedule = schedule::PipeSchedule::one_f_one_b;
  std::string pp_split;                ///< blocks per stage, "3,2,2"; empty: the balanced split
  std::optional<int64_t> shard_group;  ///< G, hybrid sharding's shard group (divides N_d); empty: N_d
  CollectiveMode collective_mode = CollectiveMode::deterministic;  ///< deterministic | fast
  CollectiveBackend collective = CollectiveBackend::automatic;     ///< auto | nccl | gloo
  double timeout_s = 120;     ///< rendezvous and every collective: a peer silent this long has failed
  std::string local_addr;     ///< --local-addr: the address this rank's transport binds ("" = chosen)
  std::string socket_ifname;  ///< --socket-ifname: bind the address of this interface (GLOO_SOCKET_IFNAME)
};

/// Settings of ZeRO's stage and its schedule (chapters 6-9, 12).
struct ZeroOptions {
  int64_t stage = 0;                  ///< ZeRO stage 0 (plain data parallel), 1, 2, 3
  std::optional<GradSync> grad_sync;  ///< step | micro-batch; empty = step for stages 0-1, else micro-batch
  Stage1Reduce stage1_reduce = Stage1Reduce::reduce_scatter;  ///< reduce-scatter | all-reduce
  double bucket_mb = 25;        ///< stage-2 gradient bucket, MiB (fractions allowed; DDP's bucket_cap_mb)
  int64_t prefetch = 1;         ///< stage 3: units all-gathered ahead of use
  double persist_below_mb = 0;  ///< stage 3: units with compute-dtype params under this many MiB stay whole (0: off)
  bool overlap = true;          ///< --overlap on: start gradient reductions asynchronously during backward
  Allocator allocator = Allocator::general;  ///< arena policy: general (one first-fit region) | zero (M_D)
  std::optional<ZeroPreset> zero_config;     ///< the ZeRO paper's Table 3 preset C1..C5 that set these (empty = none)
};

/// Settings of ZeRO-R's partitioned activations (chapter 12).
struct ActivationOptions {
  PartitionActivations partition_activations = PartitionActivations::off;  ///< ZeRO-R P_a: off | on | cpu (P_a+cpu)
  double host_memory_budget_mb = 4096;  ///< capacity of the host tier's arena (P_a+cpu), MiB
};

/// Settings of ZeRO-Offload and the file tier (chapter 14).
struct OffloadOptions {
  OffloadTarget offload_optimizer;  ///< none | host | file:DIR: where FP32 master, optimizer state and update live
  OffloadTarget offload_params;     ///< none | file:DIR: stage 3's parameter shards in files
  int64_t offload_buffers = 3;      ///< file tier: unit records in RAM at once (the ring's buffers)
  bool offload_read_ahead = true;   ///< file tier: read the next units while one updates (--offload-read-ahead on)
  /// Whether the optimizer is offloaded (--offload-optimizer host or file:DIR). @return true if so.
  bool offloads_optimizer() const { return offload_optimizer.offloaded(); }
  /// The directory of a file tier. @return DIR of --offload-optimizer file:DIR, else "".
  const std::string& offload_optimizer_dir() const { return offload_optimizer.dir; }
  /// The directory of the parameter tier. @return DIR of --offload-params file:DIR, else "".
  const std::string& offload_params_dir() const { return offload_params.dir; }
};

/// Settings of checkpoints (chapter 14).
struct CheckpointOptions {
  std::string save_dir;    ///< --save-dir DIR: write sharded checkpoints DIR/step-N/ ("" = none)
  int64_t save_every = 0;  ///< save every K steps (and after the last); 0 = after the last step only
  std::string resume;      ///< --resume PATH: continue from a checkpoint (or a save dir's latest)
};

/// Settings of what a run writes besides its log, and its self-check.
struct OutputOptions {
  std::string summary_json;   ///< --summary-json FILE
  std::string dump_manifest;  ///< --dump-manifest FILE
  std::string dump_params;    ///< --dump-params FILE
  std::string dump_grads;     ///< --dump-grads FILE
  std::string dump_batch;     ///< --dump-batch FILE
  std::string memory_trace;   ///< --memory-trace FILE: rank 0's arena events as JSON (M_D replay)
  std::string trace;          ///< --trace FILE: Chrome-trace timeline of every rank (ZeRO path)
  std::string step_trace;     ///< --step-trace FILE: the step operations rank 0 ran
  bool verify = false;        ///< also run the single-rank reference and compare masters
};

/// Every setting of a run below the programs: each feature's struct, and what follows from several.
struct RunOptions : ModelOptions,
                    OptimizerOptions,
                    BatchOptions,
                    DeviceOptions,
                    GridOptions,
                    ZeroOptions,
                    ActivationOptions,
                    OffloadOptions,
                    CheckpointOptions,
                    OutputOptions {
  /// Warm-up steps without --warmup-steps: 20, or the whole run when it is shorter, so a short run
  /// still reaches --lr at its last step. A warm-up the user set is kept as given, even when it is
  /// longer than the run (then the peak is never reached; optim/lr_schedule.h).
  static constexpr int64_t kDefaultWarmupSteps = 20;
  /// The warm-up actually used. @return warmup_steps, or min(20, steps) when it was not given.
  int64_t resolved_warmup_steps() const { return warmup_steps ? *warmup_steps : std::min(kDefaultWarmupSteps, steps); }

  /// The gradient synchronisation actually used (resolves the stage-dependent default).
  /// @return step or micro_batch.
  GradSync resolved_grad_sync() const {
    if (grad_sync) return *grad_sync;
    return stage <= 1 ? GradSync::step : GradSync::micro_batch;
  }
  /// The tensor-parallel blocks actually used: --mp-blocks, or --mp-size (the fewest that let
  /// every model-parallel rank hold whole blocks). @return B.
  int64_t resolved_mp_blocks() const { return mp_blocks ? *mp_blocks : mp_size; }
  /// Data-parallel ranks: world_size / (mp_size · pp_size) (validated to divide). @return N_d.
  int64_t dp_size() const { return world_size / (mp_size * pp_size); }
  /// Blocks per pipeline stage: --pp-split, or the balanced split. @return N_p counts (zt::Error
  /// naming the flag when they cannot be).
  std::vector<int> resolved_pp_split() const {
    return pp_split.empty() ? schedule::balanced_split(static_cast<int>(layers), static_cast<int>(pp_size))
                            : schedule::parse_pipe_split(pp_split, static_cast<int>(layers), static_cast<int>(pp_size));
  }
  /// The ranks ZeRO shards the model states over: --shard-group G (hybrid sharding), or all N_d.
  /// @return G.
  int64_t resolved_shard_group() const { return shard_group ? *shard_group : dp_size(); }
  /// Whether the states are sharded over groups smaller than the data-parallel group.
  /// @return G < N_d.
  bool hybrid_sharding() const { return resolved_shard_group() < dp_size(); }
  /// Micro-batches per data-parallel rank per step: global_batch / (N_d * micro_batch); the
  /// model-parallel ranks of one data-parallel rank share its micro-batches.
  /// @return the count (validated to divide exactly).
  int64_t micro_batches_per_rank() const { return global_batch / (dp_size() * micro_batch); }

  /// Micro-batches per step on one rank: global_batch / micro_batch.
  /// @return the count (validated to divide exactly).
  int64_t micro_batches() const { return global_batch / micro_batch; }

  /// Every place this run writes that a flag named (files, and directories to write into), the
  /// one list zero-train prepares before it trains (core/output_place.h) and the tests walk.
  /// @return the places of the flags that were given.
  std::vector<OutputPlace> output_places() const;
};

/// Checks that need only the settings (sizes, divisibility, batch arithmetic).
/// @param config the settings to check; throws zt::Error naming the first problem.
void validate(const RunOptions& config);

/// The optimizer the settings choose, with its hyper-parameters, for step/element_optimizer.h.
/// @param c the settings. @return --optimizer with --beta1/--beta2/--eps/--weight-decay/--momentum.
inline step::OptimizerSettings optimizer_settings(const OptimizerOptions& c) {
  return {.adam = c.optimizer != Optimizer::sgd,
          .adam_config = {.beta1 = c.beta1,
                          .beta2 = c.beta2,
                          .eps = c.eps,
                          .weight_decay = c.weight_decay,
                          .decoupled = c.optimizer == Optimizer::adamw},
          .sgd_config = {.momentum = c.momentum, .weight_decay = c.weight_decay, .nesterov = false}};
}

}  // namespace zt::train
