// train/train_config.cc — parsing and validation of TrainConfig (see train_config.h; the flags
// themselves are declared in train_flags.cc).
#include "train/train_config.h"

#include <cstdlib>

#include <algorithm>
#include <cstdio>

#include "core/check.h"
#include "core/cli.h"
#include "core/cpu_pool.h"
#include "train/ds_config.h"
#include "train/train_flags.h"

namespace zt::train {

namespace {

// The ZeRO paper's Table 3 configurations as flags. A preset sets what the user left alone and
// refuses a flag that contradicts it (never silently overrides either side).
void apply_zero_config(ArgParser& p, const TrainConfig& c) {
  const std::vector<std::string> given = p.given_flags();
  for (const auto& [flag, value] : zero_preset_flags(*c.zero_config))
    set_flag_from(p, given, "--zero-config " + word_of(*c.zero_config), flag, value);
}

/// --offload-optimizer and --offload-params with the other settings (their own grammar, none |
/// host | file:DIR, is checked when they are parsed: offload_target.h).
void validate_offload(const RunOptions& c) {
  ZT_CHECK(!c.offloads_optimizer() || !c.no_master_weights, "--offload-optimizer moves the FP32 master weights to ",
           "the host tier: it cannot run with --no-master-weights");
  ZT_CHECK(!c.offload_params.offloaded() || c.stage == 3,
           "--offload-params keeps stage 3's parameter shards in files: ", "it needs --stage 3");
}

// What a pipeline run composes with: the engine's host path, its own activation checkpoints per
// micro-batch in flight, the model states in this rank's arena.
void validate_pipeline(const RunOptions& c) {
  if (c.pp_size == 1) return;
  const std::string with = "--pp-size " + std::to_string(c.pp_size) + " with ";
  ZT_CHECK(c.device == device::Device::cpu, with, "--device ", word_of(c.device),
           ": the pipeline's stages run on the host engine (--device cpu)");
  ZT_CHECK(c.partition_activations == PartitionActivations::off, with, "--partition-activations: a stage holds ",
           "the checkpoints of several micro-batches at once, P_a's keeper those of one");
  ZT_CHECK(!c.offloads_optimizer() && !c.offload_params.offloaded(), with,
           "--offload-optimizer or --offload-params: the offload tiers are not staged per pipeline stage");
  ZT_CHECK(c.allocator == Allocator::general, with, "--allocator zero: M_D's regions are sized from one stage's ",
           "replay, which does not yet cover the pipeline's workspaces");
}

}  // namespace

bool parse_train_config(int argc, char** argv, TrainConfig& c, std::vector<std::string>* given) {
  ArgParser p("zero-train",
              "Train a GPT-2-style model with mixed precision, on one rank or data-parallel over N ranks\n"
              "with ZeRO stage 0-3 (chapters 2-9).");
  declare_train_flags(p, c);
  if (!p.parse(argc, argv)) return false;
  if (given) *given = p.given_flags();
  if (c.zero_config) apply_zero_config(p, c);
  if (!c.config_file.empty()) apply_ds_config_file(c.config_file, c, p.given_flags());
  ZT_CHECK(p.rest().empty(), "unexpected arguments after --");
  // ZT_RANKS_AS sets --ranks-as for every run that does not give it: a course, a CI job or the
  // exercise checker runs the same commands with ranks as threads and as processes
  if (const char* env = std::getenv("ZT_RANKS_AS"); env && *env && !p.given("ranks-as"))
    c.ranks_as = parse_word<RanksAs>(env, "ZT_RANKS_AS");
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

std::vector<OutputPlace> RunOptions::output_places() const {
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
  file("step-trace", step_trace);
  dir("save-dir", save_dir);
  dir("offload-optimizer file:", offload_optimizer_dir());
  dir("offload-params file:", offload_params_dir());
  return out;
}

void resolve_micro_batch(TrainConfig& c) {
  // one micro-batch per data-parallel rank, so that `--world-size N` alone is a valid run; a
  // global batch that does not split over the ranks keeps the whole batch, and validate() says why
  if (c.micro_batch_given) return;
  const int64_t dp = c.mp_size >= 1 && c.pp_size >= 1 && c.world_size % (c.mp_size * c.pp_size) == 0 ? c.dp_size() : 1;
  c.micro_batch = dp >= 1 && c.global_batch % dp == 0 ? c.global_batch / dp : c.global_batch;
}

void resolve_threads(TrainConfig& c, int64_t local_ranks) {
  if (c.threads_given) return;
  c.threads = default_cpu_threads(static_cast<int>(std::clamp<int64_t>(local_ranks, 1, 1 << 20)));
}

void validate(const RunOptions& c) {
  ZT_CHECK(c.partition_activations == PartitionActivations::off || c.checkpoint_activations, "--partition-activations ",
           word_of(c.partition_activations), " partitions activation checkpoints: it needs --checkpoint-activations");
  ZT_CHECK(c.width % c.heads == 0, "--width ", c.width, " is not divisible by --heads ", c.heads);
  ZT_CHECK(c.micro_batch > 0 && c.global_batch % c.micro_batch == 0, "--global-batch ", c.global_batch,
           " does not split into micro-batches of ", c.micro_batch);
  ZT_CHECK(c.stage >= 0 && c.stage <= 3, "--stage ", c.stage, " is not 0, 1, 2 or 3");
  ZT_CHECK(c.world_size >= 1, "--world-size ", c.world_size, " is not positive");
  ZT_CHECK(c.mp_size >= 1 && c.world_size % c.mp_size == 0, "--world-size ", c.world_size,
           " is not a multiple of --mp-size ", c.mp_size, " (world = data-parallel x model-parallel ranks)");
  ZT_CHECK(c.pp_size >= 1 && c.world_size % (c.mp_size * c.pp_size) == 0, "--world-size ", c.world_size,
           " is not a multiple of --pp-size ", c.pp_size, " x --mp-size ", c.mp_size,
           " (world = data-parallel x pipeline x model-parallel ranks)");
  const std::vector<int> split = c.resolved_pp_split();  // --pp-size <= L, --pp-split's counts
  (void)split;
  const int64_t B = c.resolved_mp_blocks();
  ZT_CHECK(B >= 1 && (B & (B - 1)) == 0, "--mp-blocks ", B, " is not a power of two");
  ZT_CHECK(B % c.mp_size == 0, "--mp-size ", c.mp_size, " does not divide --mp-blocks ", B,
           " (every model-parallel rank holds whole blocks)");
  ZT_CHECK(c.heads % B == 0, "--mp-blocks ", B, " does not divide --heads ", c.heads, " (a block holds whole heads)");
  const int64_t G = c.resolved_shard_group(), Nd = c.dp_size();
  ZT_CHECK(G >= 1 && Nd % G == 0, "--shard-group ", G, " does not divide the ", Nd,
           " data-parallel ranks (--world-size / --mp-size)");
  ZT_CHECK(G == Nd || G >= 2,
           "--shard-group 1 keeps every state whole on every rank: that is stage 0, plain data "
           "parallelism (--stage 0)");
  // the two-level sum is the flat canonical tree only over aligned power-of-two blocks
  // (collective/hybrid_group.h)
  ZT_CHECK(G == Nd || (G & (G - 1)) == 0 || c.collective_mode == CollectiveMode::fast, "--shard-group ", G,
           " is not a power of two: the sum inside the shard groups, then across them, would bracket the ", Nd,
           " ranks' gradients differently from one device's tree (use 2, 4, 8, ... or --collective-mode fast)");
  ZT_CHECK(c.global_batch % (c.dp_size() * c.micro_batch) == 0, "--global-batch ", c.global_batch,
           " does not split into ", c.dp_size(), " data-parallel ranks x micro-batches of ", c.micro_batch);
  // every stage must be busy beside the others: M >= N_p micro-batches per data-parallel rank
  if (c.pp_size > 1)
    schedule::check_micro_batches(static_cast<int>(c.micro_batches_per_rank()), static_cast<int>(c.pp_size));
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
  ZT_CHECK(!c.no_master_weights || c.precision != model::Precision::fp32,
           "--no-master-weights needs --precision fp16 or bf16 (fp32 has no separate master)");
  validate_offload(c);
  validate_pipeline(c);
}

void validate(const TrainConfig& c) {
  ZT_CHECK(c.micro_batch_given || c.global_batch % c.dp_size() == 0, "--global-batch ", c.global_batch,
           " does not split over ", c.dp_size(), " data-parallel ranks: make it a multiple of ", c.dp_size());
  validate(static_cast<const RunOptions&>(c));
  ZT_CHECK(c.ds_gradient_accumulation_steps == 0 || c.micro_batches_per_rank() == c.ds_gradient_accumulation_steps,
           "--config's gradient_accumulation_steps ", c.ds_gradient_accumulation_steps, " is not --global-batch ",
           c.global_batch, " / (", c.dp_size(), " data-parallel ranks x micro-batches of ", c.micro_batch, ")");
}

}  // namespace zt::train
