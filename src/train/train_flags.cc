// train/train_flags.cc — zero-train's flag declarations and what walks them (see train_flags.h).
#include "train/train_flags.h"

#include <algorithm>

#include "core/check.h"

namespace zt::train {

// The order of the declarations is the order of --print-config and of the hashed settings; --help
// lists the flags by topic, in the groups' order and, within a group, in declaration order (a
// flag joins its group where it is declared: p.group() reopens a group). A flag is hashed
// (zero/config_check.h) unless it says not_hashed(): what a rank may hold alone is an output path,
// an address, a timeout, a capacity or how the ranks are started; every setting that changes the
// numbers or the collectives a rank issues is hashed. A derived default hashes its resolved value
// (hash_as): ranks agree on what runs, however each got there; a path whose presence changes the
// collectives (a dump, a checkpoint, a resume) hashes whether it is given, not where it points.
namespace {
/// What the config hash sees of a path whose presence changes the collectives a rank issues.
std::string given(const std::string& path) { return path.empty() ? "" : "given"; }
}  // namespace

void declare_train_flags(ArgParser& p, TrainConfig& c) {
  const int64_t big = int64_t{1} << 40;
  const auto number = [](int64_t v) { return std::to_string(v); };
  // the topics of --help, in the order it prints them, each with an example command
  p.group("model", "zero-train --layers 4 --heads 4 --width 128 --optimizer adamw --lr 1e-3");
  p.group("data", "zero-train --digits 3 --steps 200 --global-batch 16 --micro-batch 4 --eval-every 50");
  p.group("precision", "zero-train --precision fp16 --loss-scale-init 1024 --reduce-dtype compute");
  p.group("ZeRO", "zero-train --stage 3 --world-size 4 --verify");
  p.group("ZeRO-R", "zero-train --zero-config C4 --world-size 4 --mp-size 2");
  p.group("layout", "zero-train --world-size 8 --mp-size 2 --pp-size 2 --micro-batch 4 --ranks-as threads");
  p.group("offload", "zero-train --stage 2 --world-size 2 --offload-optimizer host");
  p.group("checkpoints", "zero-train --steps 100 --save-dir ckpt --save-every 50");
  p.group("output", "zero-train --summary-json run.json --dump-params params.bin");
  p.group("diagnostics", "zero-train --stage 2 --world-size 2 --verify --trace trace.json");

  p.group("model");
  p.add_enum("model", &c.model, "model family");
  p.add_int("layers", &c.layers, "transformer blocks L", 1, 1024);
  p.add_int("heads", &c.heads, "attention heads H", 1, 1024);
  p.add_int("width", &c.width, "channels C (divisible by heads)", 1, 65536);
  p.add_int("context", &c.context, "sequence length T", 1, 65536);
  p.add_int("vocab", &c.vocab, "vocabulary size V", 1, 1 << 24);
  p.set_default_text("vocab", "the dataset's alphabet");
  p.group("precision");
  p.add_enum("precision", &c.precision, "compute precision");
  p.group("model");
  p.add_enum("optimizer", &c.optimizer, "optimizer");
  p.group("precision");
  p.add_enum("reduce-dtype", &c.reduce_dtype, "gradient storage width");
  p.add_flag("no-master-weights", &c.no_master_weights, "update the 16-bit copy directly (teaching)");
  p.group("model");
  p.add_double("lr", &c.lr, "peak learning rate", 0.0, 1e3);
  p.add_double("min-lr", &c.min_lr, "cosine schedule floor (at most --lr)", "--lr / 10", 0.0, 1e3).hash_as([&c] {
    return shortest_decimal(c.resolved_min_lr());
  });
  p.add_int("warmup-steps", &c.warmup_steps,
            "linear warm-up steps; longer than --steps is allowed (the peak is then never reached)", "min(20, --steps)",
            0, big)
      .hash_as([&c, number] { return number(c.resolved_warmup_steps()); });
  p.add_double("weight-decay", &c.weight_decay, "AdamW weight decay", 0.0, 1e3);
  p.add_double("beta1", &c.beta1, "Adam beta1", 0.0, 0.999999);
  p.add_double("beta2", &c.beta2, "Adam beta2", 0.0, 0.999999999);
  p.add_double("eps", &c.eps, "Adam epsilon", 1e-30, 1.0);
  p.add_double("momentum", &c.momentum, "SGD momentum", 0.0, 0.999999);
  p.add_double("clip-grad-norm", &c.clip_grad_norm, "global-norm clip (0: off)", 0.0, 1e30);
  p.add_int("norm-block", &c.norm_block, "gradient-norm block size (power of two)", 1, 1 << 20);
  p.group("precision");
  p.add_enum("loss-scale", &c.loss_scale,
             "fp16 loss scaling: the dynamic scaler, or none (S = 1, never skips; gradients underflow)");
  p.add_double("loss-scale-init", &c.loss_scale_init, "initial loss scale (fp16), at most 2^24", 1.0, 16777216.0);
  p.add_int("loss-scale-growth-interval", &c.loss_scale_growth_interval, "clean steps before growth", 1, big);
  p.add_double("loss-scale-growth-factor", &c.loss_scale_growth_factor, "growth factor", 1.0, 1e6);
  p.add_double("loss-scale-backoff", &c.loss_scale_backoff, "backoff factor", 1e-6, 1.0);
  p.group("data");
  p.add_int("steps", &c.steps, "optimizer steps", 0, big);
  p.add_int("global-batch", &c.global_batch, "sequences per optimizer step", 1, big);
  // micro_batch holds the resolved value (resolve_micro_batch) whether or not the flag was given
  p.add_int("micro-batch", &c.micro_batch, "sequences per micro-batch", 1, big)
      .given_marker(&c.micro_batch_given)
      .hash_as([&c, number] { return number(c.micro_batch); });
  p.set_default_text("micro-batch", "--global-batch / data-parallel ranks");
  p.add_int("seed", &c.seed, "seed of init and data", 0, INT64_MAX);
  p.group("layout");
  p.add_double("memory-budget-mb", &c.memory_budget_mb, "per-rank arena capacity in MiB", 1e-6, 1e9).not_hashed();
  // Not hashed: every output element is computed by one thread whatever the count (core/cpu_pool.h),
  // so ranks with different counts (hosts with different CPUs) train the same bits.
  p.add_int("threads", &c.threads, "CPU threads per rank; the bits do not depend on it", 1, 4096)
      .given_marker(&c.threads_given)
      .not_hashed();
  p.set_default_text("threads", "the CPUs this process may use / the ranks on this machine, at least 1");
  // OpenBLAS's bits may depend on its thread count (kernels/blas.h): hashed, and kept apart from
  // --threads (whose default follows the machine)
  p.add_int("blas-threads", &c.blas_threads, "OpenBLAS threads per rank (--gemm blas)", 1, 256);
  p.add_enum("gemm", &c.gemm,
             "the linear layers' GEMM: the canonical GEMM (the same bits on every CPU and GPU) or the vendor's: "
             "OpenBLAS (a little faster; bits depend on the CPU model's kernel), on a GPU cuBLAS, 16-bit operands "
             "on the tensor cores (the GPU's own bits, repeatable); attention is canonical in either");
  p.add_enum("device", &c.device, "where the engine runs");
  p.group("data");
  p.add_string("data", &c.data, "train byte-level on this text file instead of the embedded set");
  p.add_int("digits", &c.digits, "operand digits of the embedded addition task", 1, 9);
  // evaluations issue collectives (zero/heldout_eval.h): all ranks at the same steps
  p.add_int("eval-every", &c.eval_every, "held-out evaluation period (0: end only)", 0, big);
  p.group("layout");
  p.add_double("timeout-s", &c.timeout_s,
               "ranks as processes: a peer that does not take part in the rendezvous or a collective within this "
               "many seconds has failed (every rank then stops with a message naming it)",
               0.001, 86400)
      .not_hashed();
  p.add_string("local-addr", &c.local_addr,
               "ranks as processes: the address this rank's transport binds and advertises to its peers")
      .not_hashed();
  p.set_default_text("local-addr", "the address that routes to MASTER_ADDR (loopback on one machine)");
  p.add_string("socket-ifname", &c.socket_ifname,
               "ranks as processes: bind the address of this network interface (as GLOO_SOCKET_IFNAME)")
      .not_hashed();
  p.set_default_text("socket-ifname", "GLOO_SOCKET_IFNAME, else the route to MASTER_ADDR");
  p.group("output");
  p.add_string("summary-json", &c.summary_json, "write the run summary as JSON").not_hashed();
  p.add_string("dump-manifest", &c.dump_manifest, "write the parameter manifest as JSON").not_hashed();
  // the dumps gather over every rank (zero/dense_readback.h): whether they are asked is hashed, the path is not
  p.add_string("dump-params", &c.dump_params, "write final FP32 master weights (raw float32 LE)").hash_as([&c] {
    return given(c.dump_params);
  });
  p.add_string("dump-grads", &c.dump_grads, "write step 1's FP32 gradient (raw float32 LE)").hash_as([&c] {
    return given(c.dump_grads);
  });
  p.add_string("dump-batch", &c.dump_batch, "write step 1's global batch (int32 [B, T+1])").not_hashed();
  p.group("ZeRO");
  p.add_int("stage", &c.stage, "ZeRO stage: 0 (data parallel), 1, 2, 3", 0, 3);
  p.group("layout");
  p.add_int("world-size", &c.world_size, "ranks in all: N_d data-parallel x N_p pipeline x N_m model-parallel", 1,
            4096);
  p.add_int("mp-size", &c.mp_size, "model-parallel (tensor-parallel) ranks N_m per group; must divide --world-size", 1,
            4096);
  p.add_int("mp-blocks", &c.mp_blocks,
            "tensor-parallel blocks Q of every split Linear (power of two; the numerics depend on Q, not N_m)",
            "--mp-size", 1, 4096)
      .hash_as([&c, number] { return number(c.resolved_mp_blocks()); });
  p.add_int("pp-size", &c.pp_size,
            "pipeline stages N_p: the blocks cut into N_p contiguous runs (embedding with the first, head and loss "
            "with the last), activations passed by send/recv; ZeRO runs inside each stage",
            1, 4096);
  p.add_enum("pp-schedule", &c.pp_schedule,
             "order of a step's forward and backward passes on each stage: gpipe (all forwards, then all "
             "backwards) or 1f1b (warm-up forwards, then one forward / one backward)");
  p.add_string("pp-split", &c.pp_split,
               "blocks per pipeline stage, e.g. 3,2,2, summing to --layers; none: the balanced split, floor(L/N_p) "
               "blocks each and one more on the first L mod N_p stages");
  p.group("ZeRO");
  p.add_int("shard-group", &c.shard_group,
            "hybrid sharding: ZeRO shards the model states over groups of G consecutive data-parallel ranks and "
            "replicates them across the N_d/G groups (FSDP's HYBRID_SHARD, DeepSpeed's MiCS)",
            "N_d (--world-size / --mp-size)", 1, 4096)
      .hash_as([&c, number] { return number(c.resolved_shard_group()); });
  p.group("ZeRO-R");
  // recomputation issues model-parallel all-reduces, P_a all-gathers: hashed, both
  p.add_flag("checkpoint-activations", &c.checkpoint_activations,
             "keep only each block's input in forward; recompute the block in backward (same bits)");
  p.add_optional_enum("partition-activations", &c.partition_activations, PartitionActivations::on,
                      "ZeRO-R P_a: each checkpoint as a 1/N_m slice per model-parallel rank, all-gathered "
                      "before its block is recomputed; cpu: the slices in host memory (P_a+cpu). Needs "
                      "--checkpoint-activations; with --mp-size 1, on is plain checkpointing");
  p.add_double("host-memory-budget-mb", &c.host_memory_budget_mb, "capacity of the host tier (P_a+cpu) in MiB", 1e-6,
               1e9)
      .not_hashed();
  p.add_enum("allocator", &c.allocator,
             "arena policy: general = one first-fit region; zero = ZeRO-R's M_D (long-lived tensors in "
             "pre-allocated contiguous regions)")
      .not_hashed();
  // a preset is printed and hashed as the flags it sets (zero_preset_flags)
  p.add_enum("zero-config", &c.zero_config,
             "the ZeRO paper's Table 3: C1 = P_os, C2 = P_os + P_a, C3 = P_os+g, C4 = P_os+g + P_a, "
             "C5 = P_os+g + P_a+cpu; each with checkpointing, C_B and M_D (sets --stage, "
             "--checkpoint-activations, --partition-activations, --allocator zero)",
             "none")
      .input_only();
  p.group("diagnostics");
  p.add_string("memory-trace", &c.memory_trace,
               "write rank 0's every arena allocation and release as JSON (replayed by zero-memreplay)")
      .not_hashed();
  p.add_flag("print-step", &c.print_step,
             "print rank 0's step as its program: one line per operation, the bytes it moves, the buffers it "
             "allocates (+) and frees (-), the live bytes after it; then exit")
      .not_hashed();
  p.group("layout");
  p.add_enum("ranks-as", &c.ranks_as, "how --world-size starts ranks (unset: $ZT_RANKS_AS if set)").not_hashed();
  p.group("ZeRO-R");  // C_B, ZeRO-R's constant-size buffers
  p.add_double("bucket-mb", &c.bucket_mb,
               "stage-2 gradient bucket size in MiB, fractions allowed (PyTorch DDP's bucket_cap_mb)", 1e-6, 1e6);
  p.group("ZeRO");
  p.add_int("prefetch", &c.prefetch, "stage 3: units all-gathered ahead", 0, 64);
  p.add_double("persist-below-mb", &c.persist_below_mb,
               "stage 3: keep units whose compute-dtype params are under this many MiB whole (0: off)", 0.0, 1e9);
  p.add_on_off("overlap", &c.overlap, "asynchronous gradient reductions (and P_a+cpu's overlapped copies)");
  p.add_enum("grad-sync", &c.grad_sync, "reduce gradients once per step or after every micro-batch",
             "step for stages 0-1, micro-batch for stages 2-3")
      .hash_as([&c] { return word_of(c.resolved_grad_sync()); });
  p.add_enum("stage1-reduce", &c.stage1_reduce, "stage 1 gradient reduction variant");
  p.add_enum("collective-mode", &c.collective_mode, "reduction order");
  p.add_enum("collective", &c.collective,
             "the library between ranks: auto takes NCCL on device buffers when --device cuda gives every rank a "
             "GPU of its own in a plain data-parallel world, Gloo otherwise (on a device staged through pinned "
             "memory); nccl and gloo insist, nccl with one line where it cannot serve");
  p.group("diagnostics");
  p.add_flag("verify", &c.verify, "also run the single-rank reference and compare master weights");  // gathers: hashed
  p.add_string("trace", &c.trace, "write a Chrome-trace timeline (compute, blocked on collectives)").not_hashed();
  p.add_string("step-trace", &c.step_trace,
               "write the operations of rank 0's step program as it ran them, one line each: step, index, "
               "operation (compare with --print-step)")
      .not_hashed();
  p.group("checkpoints");
  // every rank enters the checkpoint's barriers at the same steps: whether it saves (not where) and
  // when are hashed, and whether it resumes
  p.add_string("save-dir", &c.save_dir,
               "write sharded checkpoints into DIR/step-<N>/ (every rank its own shards, one manifest; atomic)")
      .hash_as([&c] { return given(c.save_dir); });
  p.add_int("save-every", &c.save_every, "with --save-dir: save every K steps and after the last (0: the last only)", 0,
            big);
  p.add_string("resume", &c.resume,
               "continue from this checkpoint (a step-<N> directory, or a --save-dir: its latest complete one) at "
               "any stage, N_d and N_m; the other settings come from this command line")
      .hash_as([&c] { return given(c.resume); });
  p.group("offload");
  // where every rank keeps its optimizer and parameters (the same DIR text on every rank): hashed
  p.add_value(
      "offload-optimizer", "STR",
      "ZeRO-Offload: none | host (FP32 master, optimizer state and update in the host tier; gradients "
      "copied down, parameters up) | file:DIR (ZeRO-Infinity style: in a file per rank under DIR, streamed "
      "through --offload-buffers buffers)",
      [&c](const std::string& v) { c.offload_optimizer = parse_offload_target(v, "--offload-optimizer", true); },
      [&c] { return c.offload_optimizer.text(); }, {"none", "host", "file:DIR"});
  p.add_value(
      "offload-params", "STR",
      "none | file:DIR: stage 3's parameter shards in a file per rank, read ahead of each gather",
      [&c](const std::string& v) { c.offload_params = parse_offload_target(v, "--offload-params", false); },
      [&c] { return c.offload_params.text(); }, {"none", "file:DIR"});
  p.add_int("offload-buffers", &c.offload_buffers, "file tier: unit records held in RAM at once", 1, 1024);
  p.add_on_off("offload-read-ahead", &c.offload_read_ahead,
               "file tier: read the next units while one updates (off: each read when its unit starts)");
  p.group("ZeRO");  // DeepSpeed's config, whose zero_optimization is ZeRO's settings
  // a file is printed and hashed as the flags its keys set (ds_config.h)
  p.add_string("config", &c.config_file,
               "read a DeepSpeed-style JSON config (docs/deepspeed-config.md); a key that contradicts a flag on the "
               "command line is an error")
      .input_only();
  p.group("diagnostics");
  p.add_flag("print-config", &c.print_config,
             "print the effective settings as zero-train flags (those that differ from the default) and exit")
      .input_only();
}

std::string config_as_flags(const TrainConfig& c) {
  TrainConfig settings;  // declared at the defaults: each flag records its default's text
  ArgParser p("zero-train", "");
  declare_train_flags(p, settings);
  settings = c;
  return p.as_flags();
}

void set_flag_from(ArgParser& p, const std::vector<std::string>& given, const std::string& source,
                   const std::string& flag, const std::string& value) {
  const std::string before = p.value_text(flag);
  // A source may set only what the flag accepts (range, words): otherwise a config could run
  // settings the command line refuses, and --print-config would print a line that fails.
  try {
    p.assign(flag, value);
  } catch (const Error& e) {
    ZT_FAIL(source, ": ", e.what());
  }
  if (std::find(given.begin(), given.end(), flag) == given.end()) return;
  const std::string after = p.value_text(flag);
  ZT_CHECK(after == before, source, " sets --", flag, " ", after, ", which contradicts --", flag, " ", before,
           " on the command line");
}

std::vector<std::pair<std::string, std::string>> zero_preset_flags(ZeroPreset preset) {
  const int n = static_cast<int>(preset) + 1;
  const char* stage = n <= 2 ? "1" : "2";  // C1-C2: P_os; C3-C5: P_os+g
  const char* partition = n == 2 || n == 4 ? "on" : n == 5 ? "cpu" : "off";
  return {
      {"stage", stage}, {"partition-activations", partition}, {"allocator", "zero"}, {"checkpoint-activations", "on"}};
}

uint64_t settings_hash(const ArgParser& flags) {
  // Every value as its flag text, numbers as the shortest decimal that reads back as the same
  // value: eps = 1e-8 and 2e-8 (or any two doubles) hash apart, where six-decimal text would not.
  const std::string text = flags.hashed_settings();
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

uint64_t config_hash(const RunOptions& c) {
  TrainConfig settings;  // the settings only a program reads are not hashed: their defaults do
  static_cast<RunOptions&>(settings) = c;
  ArgParser flags("zero-train", "");
  train::declare_train_flags(flags, settings);
  return settings_hash(flags);
}

}  // namespace zt::train
