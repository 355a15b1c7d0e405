// train/train_config.cc — flag table and validation of TrainConfig (see train_config.h).
#include "train/train_config.h"

#include <cstdio>

#include "core/check.h"
#include "core/cli.h"
#include "train/ds_config.h"

namespace zt::train {

namespace {

// The ZeRO paper's Table 3 configurations as flags. A preset sets what the user left alone and
// refuses a flag that contradicts it (never silently overrides either side).
void apply_zero_config(TrainConfig& c, const ArgParser& p) {
  const int n = c.zero_config[1] - '0';
  const int64_t stage = n <= 2 ? 1 : 2;  // C1-C2: P_os; C3-C5: P_os+g
  const std::string partition = n == 2 || n == 4 ? "on" : n == 5 ? "cpu" : "off";
  const auto set = [&](const char* flag, auto& field, auto value, const std::string& shown) {
    if (p.given(flag))
      ZT_CHECK(field == value, "--zero-config ", c.zero_config, " sets --", flag, " ", shown, ", which contradicts --",
               flag, " ", field, " on the command line");
    field = value;
  };
  set("stage", c.stage, stage, std::to_string(stage));
  set("partition-activations", c.partition_activations, partition, partition);
  set("allocator", c.allocator, std::string("zero"), "zero");
  c.checkpoint_activations = true;  // every preset checkpoints (a switch: nothing can contradict it)
}

/// --offload-optimizer none | host | file:DIR, --offload-params none | file:DIR (stage 3).
void validate_offload(const TrainConfig& c) {
  const bool file = c.offload_optimizer.rfind("file:", 0) == 0;
  ZT_CHECK(c.offload_optimizer == "none" || c.offload_optimizer == "host" || file, "--offload-optimizer ",
           c.offload_optimizer, " is not none, host or file:DIR");
  ZT_CHECK(!file || !c.offload_optimizer_dir().empty(), "--offload-optimizer file: names no directory (file:DIR)");
  ZT_CHECK(!c.offloads_optimizer() || !c.no_master_weights, "--offload-optimizer moves the FP32 master weights to ",
           "the host tier: it cannot run with --no-master-weights");
  const bool params_file = c.offload_params.rfind("file:", 0) == 0;
  ZT_CHECK(c.offload_params == "none" || (params_file && c.offload_params.size() > 5), "--offload-params ",
           c.offload_params, " is not none or file:DIR");
  ZT_CHECK(c.offload_params == "none" || c.stage == 3,
           "--offload-params keeps stage 3's parameter shards in files: ", "it needs --stage 3");
}

}  // namespace

bool parse_train_config(int argc, char** argv, TrainConfig& c, std::vector<std::string>* given) {
  ArgParser p("zero-train",
              "Train a GPT-2-style model with mixed precision, on one rank or data-parallel over N ranks\n"
              "with ZeRO stage 0-3 (chapters 2-7).");
  const int64_t big = int64_t{1} << 40;
  p.add_choice("model", &c.model, {"gpt"}, "model family");
  p.add_int("layers", &c.layers, "transformer blocks L", 1, 1024);
  p.add_int("heads", &c.heads, "attention heads H", 1, 1024);
  p.add_int("width", &c.width, "channels C (divisible by heads)", 1, 65536);
  p.add_int("context", &c.context, "sequence length T", 1, 65536);
  p.add_int("vocab", &c.vocab, "vocabulary size V", 1, 1 << 24);
  p.set_default_text("vocab", "the dataset's alphabet");
  p.add_choice("precision", &c.precision, {"fp32", "fp16", "bf16"}, "compute precision");
  p.add_choice("optimizer", &c.optimizer, {"adam", "adamw", "sgd"}, "optimizer");
  p.add_choice("reduce-dtype", &c.reduce_dtype, {"fp32", "compute"}, "gradient storage width");
  p.add_flag("no-master-weights", &c.no_master_weights, "update the 16-bit copy directly (teaching)");
  p.add_double("lr", &c.lr, "peak learning rate", 0.0, 1e3);
  p.add_double("min-lr", &c.min_lr, "cosine schedule floor (at most --lr)", "--lr / 10", 0.0, 1e3);
  p.add_int("warmup-steps", &c.warmup_steps,
            "linear warm-up steps; longer than --steps is allowed (the peak is then never reached)", "min(20, --steps)",
            0, big);
  p.add_double("weight-decay", &c.weight_decay, "AdamW weight decay", 0.0, 1e3);
  p.add_double("beta1", &c.beta1, "Adam beta1", 0.0, 0.999999);
  p.add_double("beta2", &c.beta2, "Adam beta2", 0.0, 0.999999999);
  p.add_double("eps", &c.eps, "Adam epsilon", 1e-30, 1.0);
  p.add_double("momentum", &c.momentum, "SGD momentum", 0.0, 0.999999);
  p.add_double("clip-grad-norm", &c.clip_grad_norm, "global-norm clip (0: off)", 0.0, 1e30);
  p.add_int("norm-block", &c.norm_block, "gradient-norm block size (power of two)", 1, 1 << 20);
  p.add_choice("loss-scale", &c.loss_scale, {"dynamic", "none"},
               "fp16 loss scaling: the dynamic scaler, or none (S = 1, never skips; gradients underflow)");
  p.add_double("loss-scale-init", &c.loss_scale_init, "initial loss scale (fp16), at most 2^24", 1.0, 16777216.0);
  p.add_int("loss-scale-growth-interval", &c.loss_scale_growth_interval, "clean steps before growth", 1, big);
  p.add_double("loss-scale-growth-factor", &c.loss_scale_growth_factor, "growth factor", 1.0, 1e6);
  p.add_double("loss-scale-backoff", &c.loss_scale_backoff, "backoff factor", 1e-6, 1.0);
  p.add_int("steps", &c.steps, "optimizer steps", 0, big);
  p.add_int("global-batch", &c.global_batch, "sequences per optimizer step", 1, big);
  p.add_int("micro-batch", &c.micro_batch, "sequences per micro-batch", 1, big);
  p.set_default_text("micro-batch", "--global-batch / data-parallel ranks");
  p.add_int("seed", &c.seed, "seed of init and data", 0, INT64_MAX);
  p.add_double("memory-budget-mb", &c.memory_budget_mb, "per-rank arena capacity in MiB", 1e-6, 1e9);
  p.add_int("blas-threads", &c.blas_threads, "OpenBLAS threads per rank (--gemm blas)", 1, 256);
  p.add_choice("gemm", &c.gemm, {"canonical", "blas"},
               "GEMM: the canonical GEMM (the same bits on every CPU and GPU) or OpenBLAS (a little faster; bits "
               "depend on the CPU model's kernel)");
  p.add_choice("device", &c.device, {"cpu", "cuda"}, "where the engine runs");
  p.add_string("data", &c.data, "train byte-level on this text file instead of the embedded set");
  p.add_int("digits", &c.digits, "operand digits of the embedded addition task", 1, 9);
  p.add_int("eval-every", &c.eval_every, "held-out evaluation period (0: end only)", 0, big);
  p.add_string("summary-json", &c.summary_json, "write the run summary as JSON");
  p.add_string("dump-manifest", &c.dump_manifest, "write the parameter manifest as JSON");
  p.add_string("dump-params", &c.dump_params, "write final FP32 master weights (raw float32 LE)");
  p.add_string("dump-grads", &c.dump_grads, "write step 1's FP32 gradient (raw float32 LE)");
  p.add_string("dump-batch", &c.dump_batch, "write step 1's global batch (int32 [B, T+1])");
  p.add_int("stage", &c.stage, "ZeRO stage: 0 (data parallel), 1, 2, 3", 0, 3);
  p.add_int("world-size", &c.world_size, "ranks in all: N_d data-parallel x N_m model-parallel", 1, 4096);
  p.add_int("mp-size", &c.mp_size, "model-parallel (tensor-parallel) ranks N_m per group; must divide --world-size", 1,
            4096);
  p.add_int("mp-blocks", &c.mp_blocks,
            "tensor-parallel blocks B of every split Linear (power of two; the numerics depend on B, not N_m)",
            "--mp-size", 1, 4096);
  p.add_flag("checkpoint-activations", &c.checkpoint_activations,
             "keep only each block's input in forward; recompute the block in backward (same bits)");
  p.add_optional_choice("partition-activations", &c.partition_activations, {"off", "on", "cpu"}, "on",
                        "ZeRO-R P_a: each checkpoint as a 1/N_m slice per model-parallel rank, all-gathered "
                        "before its block is recomputed; cpu: the slices in host memory (P_a+cpu). Needs "
                        "--checkpoint-activations; with --mp-size 1, on is plain checkpointing");
  p.add_double("host-memory-budget-mb", &c.host_memory_budget_mb, "capacity of the host tier (P_a+cpu) in MiB", 1e-6,
               1e9);
  p.add_choice("allocator", &c.allocator, {"general", "zero"},
               "arena policy: general = one first-fit region; zero = ZeRO-R's M_D (long-lived tensors in "
               "pre-allocated contiguous regions)");
  p.add_choice("zero-config", &c.zero_config, {"C1", "C2", "C3", "C4", "C5"},
               "the ZeRO paper's Table 3: C1 = P_os, C2 = P_os + P_a, C3 = P_os+g, C4 = P_os+g + P_a, "
               "C5 = P_os+g + P_a+cpu; each with checkpointing, C_B and M_D (sets --stage, "
               "--checkpoint-activations, --partition-activations, --allocator zero)");
  p.set_default_text("zero-config", "none");
  p.add_string("memory-trace", &c.memory_trace,
               "write rank 0's every arena allocation and release as JSON (replayed by zero-memreplay)");
  p.add_choice("ranks-as", &c.ranks_as, {"processes", "threads"}, "how --world-size starts ranks");
  p.add_double("bucket-mb", &c.bucket_mb, "stage-2 gradient bucket size in MiB (decimal; PyTorch DDP's default)", 1e-6,
               1e6);
  p.add_int("prefetch", &c.prefetch, "stage 3: units all-gathered ahead", 0, 64);
  p.add_double("persist-below-mb", &c.persist_below_mb,
               "stage 3: keep units whose compute-dtype params are under this many MiB whole (0: off)", 0.0, 1e9);
  p.add_choice("overlap", &c.overlap_flag, {"on", "off"},
               "asynchronous gradient reductions (and P_a+cpu's overlapped copies)");
  p.add_choice("grad-sync", &c.grad_sync, {"step", "micro-batch"},
               "reduce gradients once per step or after every micro-batch");
  p.set_default_text("grad-sync", "step for stages 0-1, micro-batch for stages 2-3");
  p.add_choice("stage1-reduce", &c.stage1_reduce, {"reduce-scatter", "all-reduce"},
               "stage 1 gradient reduction variant");
  p.add_choice("collective-mode", &c.collective_mode, {"deterministic", "fast"}, "reduction order");
  p.add_flag("verify", &c.verify, "also run the single-rank reference and compare master weights");
  p.add_string("trace", &c.trace, "write a Chrome-trace timeline (compute, blocked on collectives)");
  p.add_double("timeout-s", &c.timeout_s,
               "ranks as processes: a peer that does not take part in the rendezvous or a collective within this "
               "many seconds has failed (every rank then stops with a message naming it)",
               0.001, 86400);
  p.add_string("local-addr", &c.local_addr,
               "ranks as processes: the address this rank's transport binds and advertises to its peers");
  p.set_default_text("local-addr", "the address that routes to MASTER_ADDR (loopback on one machine)");
  p.add_string("socket-ifname", &c.socket_ifname,
               "ranks as processes: bind the address of this network interface (as GLOO_SOCKET_IFNAME)");
  p.set_default_text("socket-ifname", "GLOO_SOCKET_IFNAME, else the route to MASTER_ADDR");
  p.add_string("save-dir", &c.save_dir,
               "write sharded checkpoints into DIR/step-<N>/ (every rank its own shards, one manifest; atomic)");
  p.add_int("save-every", &c.save_every, "with --save-dir: save every K steps and after the last (0: the last only)", 0,
            big);
  p.add_string("resume", &c.resume,
               "continue from this checkpoint (a step-<N> directory, or a --save-dir: its latest complete one) at "
               "any stage, N_d and N_m; the other settings come from this command line");
  p.add_string("offload-optimizer", &c.offload_optimizer,
               "ZeRO-Offload: none | host (FP32 master, optimizer state and update in the host tier; gradients "
               "copied down, parameters up) | file:DIR (ZeRO-Infinity style: in a file per rank under DIR, streamed "
               "through --offload-buffers buffers)");
  p.add_string("offload-params", &c.offload_params,
               "none | file:DIR: stage 3's parameter shards in a file per rank, read ahead of each gather");
  p.add_int("offload-buffers", &c.offload_buffers, "file tier: unit records held in RAM at once", 1, 1024);
  p.add_choice("offload-read-ahead", &c.offload_read_ahead, {"on", "off"},
               "file tier: read the next units while one updates (off: each read when its unit starts)");
  p.add_string("config", &c.config_file,
               "read a DeepSpeed-style JSON config (docs/deepspeed-config.md); a key that contradicts a flag on the "
               "command line is an error");
  p.add_flag("print-config", &c.print_config,
             "print the effective settings as zero-train flags (those that differ from the default) and exit");
  if (!p.parse(argc, argv)) return false;
  c.micro_batch_given = c.micro_batch != 0;
  if (given) *given = p.given_flags();
  if (!c.zero_config.empty()) apply_zero_config(c, p);
  c.overlap = c.overlap_flag == "on";
  if (!c.config_file.empty()) apply_ds_config_file(c.config_file, c, p.given_flags());
  ZT_CHECK(p.rest().empty(), "unexpected arguments after --");
  for (const char* knob : {"offload-buffers", "offload-read-ahead"})
    ZT_CHECK(!p.given(knob) || !c.offload_optimizer_dir().empty(), "--", knob,
             " sets the file tier's streaming: it needs --offload-optimizer file:DIR");
  resolve_micro_batch(c);
  if (c.print_config) {
    std::printf("%s\n", config_as_flags(c).c_str());
    return false;
  }
  return true;
}

std::vector<OutputPlace> TrainConfig::output_places() const {
  std::vector<OutputPlace> out;
  const auto file = [&](const char* flag, const std::string& path) {
    if (!path.empty()) out.push_back({std::string("--") + flag, path, PlaceKind::file});
  };
  const auto dir = [&](const char* flag, const std::string& path) {
    if (!path.empty()) out.push_back({std::string("--") + flag, path, PlaceKind::directory});
  };
  file("summary-json", summary_json);
  file("dump-manifest", dump_manifest);
  file("dump-params", dump_params);
  file("dump-grads", dump_grads);
  file("dump-batch", dump_batch);
  file("memory-trace", memory_trace);
  file("trace", trace);
  dir("save-dir", save_dir);
  dir("offload-optimizer file:", offload_optimizer_dir());
  dir("offload-params file:", offload_params_dir());
  return out;
}

void resolve_micro_batch(TrainConfig& c) {
  // one micro-batch per data-parallel rank, so that `--world-size N` alone is a valid run; a
  // global batch that does not split over the ranks keeps the whole batch, and validate() says why
  if (c.micro_batch_given) return;
  const int64_t dp = c.mp_size >= 1 && c.world_size % c.mp_size == 0 ? c.dp_size() : 1;
  c.micro_batch = dp >= 1 && c.global_batch % dp == 0 ? c.global_batch / dp : c.global_batch;
}

void validate(const TrainConfig& c) {
  ZT_CHECK(c.partition_activations == "off" || c.checkpoint_activations, "--partition-activations ",
           c.partition_activations, " partitions activation checkpoints: it needs --checkpoint-activations");
  ZT_CHECK(c.width % c.heads == 0, "--width ", c.width, " is not divisible by --heads ", c.heads);
  ZT_CHECK(c.micro_batch > 0 && c.global_batch % c.micro_batch == 0, "--global-batch ", c.global_batch,
           " does not split into micro-batches of ", c.micro_batch);
  ZT_CHECK(c.stage >= 0 && c.stage <= 3, "--stage ", c.stage, " is not 0, 1, 2 or 3");
  ZT_CHECK(c.world_size >= 1, "--world-size ", c.world_size, " is not positive");
  ZT_CHECK(c.mp_size >= 1 && c.world_size % c.mp_size == 0, "--world-size ", c.world_size,
           " is not a multiple of --mp-size ", c.mp_size, " (world = data-parallel x model-parallel ranks)");
  const int64_t B = c.resolved_mp_blocks();
  ZT_CHECK(B >= 1 && (B & (B - 1)) == 0, "--mp-blocks ", B, " is not a power of two");
  ZT_CHECK(B % c.mp_size == 0, "--mp-size ", c.mp_size, " does not divide --mp-blocks ", B,
           " (every model-parallel rank holds whole blocks)");
  ZT_CHECK(c.heads % B == 0, "--mp-blocks ", B, " does not divide --heads ", c.heads, " (a block holds whole heads)");
  ZT_CHECK(c.micro_batch_given || c.global_batch % c.dp_size() == 0, "--global-batch ", c.global_batch,
           " does not split over ", c.dp_size(), " data-parallel ranks: make it a multiple of ", c.dp_size());
  ZT_CHECK(c.global_batch % (c.dp_size() * c.micro_batch) == 0, "--global-batch ", c.global_batch,
           " does not split into ", c.dp_size(), " data-parallel ranks x micro-batches of ", c.micro_batch);
  ZT_CHECK(!c.no_master_weights || (c.stage == 0 && c.world_size == 1),
           "--no-master-weights is a single-rank teaching mode (--world-size 1 --stage 0)");
  ZT_CHECK((c.norm_block & (c.norm_block - 1)) == 0, "--norm-block ", c.norm_block, " is not a power of two");
  ZT_CHECK(c.persist_below_mb >= 0, "--persist-below-mb ", c.persist_below_mb,
           " is negative (a size in MiB; 0 turns persistence off)");
  // only an explicit floor can exceed the peak (the derived one is lr / 10)
  ZT_CHECK(!c.min_lr || *c.min_lr <= c.lr, "--min-lr ", c.min_lr.value_or(0), " is above the peak --lr ", c.lr);
  ZT_CHECK(c.save_every == 0 || !c.save_dir.empty(), "--save-every ", c.save_every, " needs --save-dir");
  ZT_CHECK((c.save_dir.empty() && c.resume.empty()) || !c.no_master_weights,
           "--save-dir and --resume checkpoint the ZeRO engine's FP32 master weights; --no-master-weights has none");
  ZT_CHECK(c.resume.empty() || !c.verify,
           "--verify compares a whole run with the reference from step 1; a --resume run starts later");
  ZT_CHECK(!c.no_master_weights || c.precision != "fp32",
           "--no-master-weights needs --precision fp16 or bf16 (fp32 has no separate master)");
  validate_offload(c);
  ZT_CHECK(c.ds_gradient_accumulation_steps == 0 || c.micro_batches_per_rank() == c.ds_gradient_accumulation_steps,
           "--config's gradient_accumulation_steps ", c.ds_gradient_accumulation_steps, " is not --global-batch ",
           c.global_batch, " / (", c.dp_size(), " data-parallel ranks x micro-batches of ", c.micro_batch, ")");
}

}  // namespace zt::train
