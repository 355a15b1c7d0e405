// train/ds_config.cc — the DeepSpeed JSON keys and their zero-train flags (see ds_config.h and
// docs/deepspeed-config.md, which lists the same keys for users).
#include "train/ds_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/cli.h"
#include "train/train_flags.h"

namespace zt::train {
namespace {

using nlohmann::json;

// A JSON number as the flag text that parses back to the same value (core/cli.h).
std::string text_of(double x) { return shortest_decimal(x); }
std::string text_of(int64_t x) { return std::to_string(x); }

// One JSON object of the config: reads its keys by type and, at the end, refuses any it did not read.
class Section {
 public:
  Section(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    ZT_CHECK(j_.is_object(), where(""), " is not a JSON object");
  }
  bool has(const std::string& k) {
    read_.push_back(k);
    return j_.contains(k);
  }
  std::string where(const std::string& k) const {
    if (path_.empty()) return k.empty() ? std::string("the config") : k;
    return k.empty() ? path_ : path_ + "." + k;
  }
  const json& raw(const std::string& k) const { return j_.at(k); }
  bool boolean(const std::string& k) const {
    ZT_CHECK(j_.at(k).is_boolean(), where(k), " is not true or false");
    return j_.at(k).get<bool>();
  }
  double number(const std::string& k) const {
    ZT_CHECK(j_.at(k).is_number(), where(k), " is not a number");
    return j_.at(k).get<double>();
  }
  // DeepSpeed writes sizes such as 5e8 as floats; any number with an integral value is accepted
  int64_t integer(const std::string& k) const {
    const double x = number(k);
    ZT_CHECK(std::floor(x) == x && x >= 0 && x < 9.0e15, where(k), " ", shortest_decimal(x),
             " is not a whole number >= 0");
    return static_cast<int64_t>(x);
  }
  std::string string(const std::string& k) const {
    ZT_CHECK(j_.at(k).is_string(), where(k), " is not a string");
    return j_.at(k).get<std::string>();
  }
  // every key of the object must have been asked for by has()
  void refuse_unknown() const {
    for (const auto& item : j_.items())
      ZT_CHECK(std::find(read_.begin(), read_.end(), item.key()) != read_.end(), "unknown key ", where(item.key()),
               " (docs/deepspeed-config.md lists the accepted keys)");
  }

 private:
  const json& j_;
  std::string path_;
  std::vector<std::string> read_;
};

// Writes a key's value into the settings through the flag it maps to (train_flags.h): the flag's
// own parsing, range and words, and no contradiction with the command line.
struct Applier {
  ArgParser& flags;
  TrainConfig& c;
  std::vector<std::string> given;
  void set(const std::string& key, const std::string& flag, const std::string& value) {
    set_flag_from(flags, given, key, flag, value);
  }
};

// DeepSpeed's offload devices: cpu is zero-train's host tier, nvme with nvme_path DIR its file:DIR.
enum class OffloadDevice { none, cpu, nvme };
constexpr auto words(OffloadDevice) {
  return std::array{Word{"none", OffloadDevice::none}, Word{"cpu", OffloadDevice::cpu},
                    Word{"nvme", OffloadDevice::nvme}};
}

std::string target_of(OffloadDevice device, const std::string& path) {
  const OffloadKind kind = device == OffloadDevice::cpu    ? OffloadKind::host
                           : device == OffloadDevice::nvme ? OffloadKind::file
                                                           : OffloadKind::none;
  return OffloadTarget{kind, kind == OffloadKind::file ? path : ""}.text();
}

int64_t param_width(const TrainConfig& c) { return model::bytes_of(c.precision); }

void apply_batch(Section& s, Applier& a) {
  std::optional<int64_t> tb, mb, gas;
  if (s.has("train_batch_size")) tb = s.integer("train_batch_size");
  if (s.has("train_micro_batch_size_per_gpu")) mb = s.integer("train_micro_batch_size_per_gpu");
  if (s.has("gradient_accumulation_steps")) gas = s.integer("gradient_accumulation_steps");
  for (const auto& [v, k] : {std::pair{tb, "train_batch_size"}, std::pair{mb, "train_micro_batch_size_per_gpu"},
                             std::pair{gas, "gradient_accumulation_steps"}})
    ZT_CHECK(!v || *v >= 1, k, " is not positive");
  if (!tb && !mb && !gas) return;
  ZT_CHECK(tb || mb, "gradient_accumulation_steps needs train_batch_size or train_micro_batch_size_per_gpu");
  ZT_CHECK(a.c.mp_size >= 1 && a.c.world_size % a.c.mp_size == 0, "--world-size is not a multiple of --mp-size");
  const int64_t dp = a.c.dp_size();  // DeepSpeed: train_batch_size = micro x GAS x data-parallel ranks
  // The keys may each be up to 9e15, so their product is checked: an unchecked one overflows
  // int64_t (undefined behaviour), and more than --global-batch's largest 2^40 is no run anyway.
  const auto times = [](int64_t x, int64_t y) {
    int64_t p = 0;
    ZT_CHECK(!__builtin_mul_overflow(x, y, &p) && p <= (int64_t{1} << 40),
             "train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel ranks is above 2^40 "
             "sequences, the largest --global-batch");
    return p;
  };
  if (tb && mb && gas)
    ZT_CHECK(*tb == times(times(*mb, *gas), dp), "train_batch_size ", *tb, " is not train_micro_batch_size_per_gpu ",
             *mb, " x gradient_accumulation_steps ", *gas, " x ", dp, " data-parallel ranks = ", *mb * *gas * dp);
  if (!tb) tb = times(times(*mb, gas.value_or(1)), dp);
  if (!mb && gas) {
    ZT_CHECK(*tb % times(*gas, dp) == 0, "train_batch_size ", *tb, " does not split into gradient_accumulation_steps ",
             *gas, " x ", dp, " data-parallel ranks");
    mb = *tb / (*gas * dp);
  }
  a.set("train_batch_size", "global-batch", text_of(*tb));
  if (mb) a.set("train_micro_batch_size_per_gpu", "micro-batch", text_of(*mb));
  if (gas) a.c.ds_gradient_accumulation_steps = *gas;  // re-checked by validate() once N_d is final
}

void apply_precision(const json& root, Applier& a) {
  bool fp16 = false, bf16 = false;
  if (root.contains("bf16")) {
    Section s(root.at("bf16"), "bf16");
    if (s.has("enabled")) bf16 = s.boolean("enabled");
    s.refuse_unknown();
  }
  if (!root.contains("fp16")) {
    if (bf16) a.set("bf16.enabled", "precision", "bf16");
    return;
  }
  Section s(root.at("fp16"), "fp16");
  if (s.has("enabled")) fp16 = s.boolean("enabled");
  ZT_CHECK(!(fp16 && bf16), "fp16.enabled and bf16.enabled are both true: choose one precision");
  if (fp16) a.set("fp16.enabled", "precision", "fp16");
  if (bf16) a.set("bf16.enabled", "precision", "bf16");
  if (s.has("loss_scale"))
    ZT_CHECK(s.number("loss_scale") == 0, "fp16.loss_scale ", shortest_decimal(s.number("loss_scale")),
             " asks for a static scale; zero-train's fp16 scaler is always dynamic (use 0 and "
             "initial_scale_power)");
  if (s.has("initial_scale_power")) {
    const int64_t p = s.integer("initial_scale_power");
    ZT_CHECK(p <= 24, "fp16.initial_scale_power ", p, " is above 24 (the scaler's ceiling is 2^24)");
    a.set("fp16.initial_scale_power", "loss-scale-init", text_of(std::ldexp(1.0, static_cast<int>(p))));
  }
  if (s.has("loss_scale_window"))
    a.set("fp16.loss_scale_window", "loss-scale-growth-interval",
          text_of(std::max<int64_t>(1, s.integer("loss_scale_window"))));
  if (s.has("hysteresis"))
    ZT_CHECK(s.integer("hysteresis") == 1, "fp16.hysteresis ", s.integer("hysteresis"),
             " delays the scale's backoff; zero-train backs off at every overflow, which is hysteresis 1");
  if (s.has("consecutive_hysteresis"))
    ZT_CHECK(!s.boolean("consecutive_hysteresis"), "fp16.consecutive_hysteresis true needs a hysteresis above 1, ",
             "which zero-train does not have");
  if (s.has("min_loss_scale"))
    ZT_CHECK(s.number("min_loss_scale") == 1, "fp16.min_loss_scale ", shortest_decimal(s.number("min_loss_scale")),
             " has no flag here: zero-train's scale floor is fixed at 1");
  s.refuse_unknown();
}

void apply_optimizer(Section& s, Applier& a) {
  std::string name;
  if (s.has("type")) name = s.string("type");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  // DeepSpeed's type names, lowered, are --optimizer's words
  const std::optional<Optimizer> type = find_word<Optimizer>(name);
  ZT_CHECK(type, s.where("type"), " '", name, "' is not Adam, AdamW or SGD");
  // DeepSpeed's Adam decays weights the AdamW way (adam_w_mode true) unless told otherwise
  bool decoupled = true;
  if (s.has("params")) {
    Section p(s.raw("params"), s.where("params"));
    if (p.has("adam_w_mode")) {
      ZT_CHECK(type == Optimizer::adam, p.where("adam_w_mode"), " applies to type Adam only");
      decoupled = p.boolean("adam_w_mode");
    }
    if (p.has("lr")) a.set(p.where("lr"), "lr", text_of(p.number("lr")));
    if (p.has("weight_decay")) a.set(p.where("weight_decay"), "weight-decay", text_of(p.number("weight_decay")));
    if (type == Optimizer::sgd) {
      if (p.has("momentum")) a.set(p.where("momentum"), "momentum", text_of(p.number("momentum")));
    } else {
      if (p.has("betas")) {
        const json& b = p.raw("betas");
        ZT_CHECK(b.is_array() && b.size() == 2 && b[0].is_number() && b[1].is_number(), p.where("betas"),
                 " is not a list of two numbers");
        a.set(p.where("betas"), "beta1", text_of(b[0].get<double>()));
        a.set(p.where("betas"), "beta2", text_of(b[1].get<double>()));
      }
      if (p.has("eps")) a.set(p.where("eps"), "eps", text_of(p.number("eps")));
    }
    p.refuse_unknown();
  }
  a.set(s.where("type"), "optimizer",
        word_of(type == Optimizer::sgd ? Optimizer::sgd
                : decoupled            ? Optimizer::adamw
                                       : Optimizer::adam));
  s.refuse_unknown();
}

void apply_zero(Section& s, Applier& a) {
  if (s.has("stage")) a.set(s.where("stage"), "stage", text_of(s.integer("stage")));
  if (s.has("reduce_bucket_size"))
    a.set(s.where("reduce_bucket_size"), "bucket-mb",
          text_of(bucket_mb_from_elements(static_cast<double>(s.integer("reduce_bucket_size")), a.c)));
  if (s.has("stage3_prefetch_bucket_size")) {
    const int64_t e = s.integer("stage3_prefetch_bucket_size");
    ZT_CHECK(e == 0, s.where("stage3_prefetch_bucket_size"), " ", e,
             " counts elements; zero-train prefetches whole units, counted by --prefetch K (units differ in size, so "
             "no element count maps exactly); 0 (no prefetch) is accepted");
    a.set(s.where("stage3_prefetch_bucket_size"), "prefetch", "0");
  }
  if (s.has("stage3_param_persistence_threshold")) {
    // DeepSpeed keeps a tensor whole when numel <= T; --persist-below-mb keeps a unit whole when
    // numel * w < MiB * 2^20. With MiB = (T + 1) * w / 2^20 (exact: a power-of-two division) the
    // two agree: numel * w < (T + 1) * w exactly when numel <= T. T = 0 keeps nothing: off.
    const int64_t t = s.integer("stage3_param_persistence_threshold");
    a.set(s.where("stage3_param_persistence_threshold"), "persist-below-mb",
          t == 0 ? std::string("0")
                 : text_of(static_cast<double>(t + 1) * static_cast<double>(param_width(a.c)) / 1048576.0));
  }
  if (s.has("mics_shard_size")) {  // MiCS: every model state sharded within groups, replicated across them
    const double v = s.number("mics_shard_size");  // DeepSpeed's default, -1, is off
    ZT_CHECK(v == -1 || (v >= 1 && v == static_cast<double>(static_cast<int64_t>(v))), s.where("mics_shard_size"), " ",
             v, " is not a group size (or -1: off)");
    if (v >= 1) a.set(s.where("mics_shard_size"), "shard-group", text_of(static_cast<int64_t>(v)));
  }
  if (s.has("zero_hpz_partition_size")) {
    const int64_t g = s.integer("zero_hpz_partition_size");
    ZT_CHECK(g == 1, s.where("zero_hpz_partition_size"), " ", g,
             ": ZeRO++'s hpZ keeps the optimizer states sharded over all data-parallel ranks and adds a secondary "
             "copy of the parameters per group of ",
             g,
             "; --shard-group shards every state within its group (MiCS, FSDP's HYBRID_SHARD), a different memory "
             "footprint, so it is not mapped (1, hpZ off, is accepted)");
  }
  if (s.has("overlap_comm")) a.set(s.where("overlap_comm"), "overlap", s.boolean("overlap_comm") ? "on" : "off");
  if (s.has("reduce_scatter")) {
    const bool rs = s.boolean("reduce_scatter");
    ZT_CHECK(rs || a.c.stage <= 1, s.where("reduce_scatter"), " false: stages 2 and 3 always reduce-scatter here");
    if (a.c.stage == 1) a.set(s.where("reduce_scatter"), "stage1-reduce", rs ? "reduce-scatter" : "all-reduce");
  }
  if (s.has("contiguous_gradients") && s.boolean("contiguous_gradients"))
    a.set(s.where("contiguous_gradients"), "allocator", "zero");
  if (s.has("offload_optimizer")) {
    Section o(s.raw("offload_optimizer"), s.where("offload_optimizer"));
    std::string name = "none", path;
    if (o.has("device")) name = o.string("device");
    if (o.has("nvme_path")) path = o.string("nvme_path");
    const std::optional<OffloadDevice> device = find_word<OffloadDevice>(name);
    ZT_CHECK(device, o.where("device"), " '", name, "' is not none, cpu or nvme");
    ZT_CHECK(device != OffloadDevice::nvme || !path.empty(), o.where("device"), " nvme needs ", o.where("nvme_path"));
    ZT_CHECK(path.empty() || device == OffloadDevice::nvme, o.where("nvme_path"), " is used only with device nvme");
    a.set(o.where("device"), "offload-optimizer", target_of(*device, path));
    if (o.has("buffer_count")) {
      ZT_CHECK(device == OffloadDevice::nvme, o.where("buffer_count"),
               " sets the nvme tier's buffers: it needs device nvme");
      a.set(o.where("buffer_count"), "offload-buffers", text_of(o.integer("buffer_count")));
    }
    o.refuse_unknown();
  }
  if (s.has("offload_param")) {
    Section o(s.raw("offload_param"), s.where("offload_param"));
    std::string name = "none", path;
    if (o.has("device")) name = o.string("device");
    if (o.has("nvme_path")) path = o.string("nvme_path");
    const std::optional<OffloadDevice> device = find_word<OffloadDevice>(name);
    ZT_CHECK(device && device != OffloadDevice::cpu, o.where("device"), " '", name,
             "' is not none or nvme (zero-train has no host tier for parameters)");
    ZT_CHECK(device != OffloadDevice::nvme || !path.empty(), o.where("device"), " nvme needs ", o.where("nvme_path"));
    a.set(o.where("device"), "offload-params", target_of(*device, path));
    o.refuse_unknown();
  }
  s.refuse_unknown();
}

void apply_checkpointing(Section& s, Applier& a) {
  // the model here is fixed: a config with this section is a run that checkpoints every block
  a.set(s.where(""), "checkpoint-activations", "on");
  bool partition = false, cpu = false;
  if (s.has("partition_activations")) partition = s.boolean("partition_activations");
  if (s.has("cpu_checkpointing")) cpu = s.boolean("cpu_checkpointing");
  ZT_CHECK(!cpu || partition, s.where("cpu_checkpointing"), " moves the partitioned checkpoints to the host: it needs ",
           s.where("partition_activations"), " true");
  if (partition)
    a.set(s.where(cpu ? "cpu_checkpointing" : "partition_activations"), "partition-activations", cpu ? "cpu" : "on");
  if (s.has("contiguous_memory_optimization") && s.boolean("contiguous_memory_optimization"))
    a.set(s.where("contiguous_memory_optimization"), "allocator", "zero");
  s.refuse_unknown();
}

}  // namespace

double bucket_mb_from_elements(double elements, const TrainConfig& c) {
  const double width = c.precision != model::Precision::fp32 && c.reduce_dtype == ReduceDtype::compute ? 2.0 : 4.0;
  return elements * width / 1048576.0;
}

void apply_ds_config_text(const std::string& text, const std::string& source, TrainConfig& c,
                          const std::vector<std::string>& given) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    // not only parse_error: a number too large for a double (1e400) is nlohmann's out_of_range
    ZT_FAIL("--config ", source, " is not JSON: ", e.what());
  }
  ZT_CHECK(root.is_object(), "--config ", source, " is not a JSON object of DeepSpeed keys");
  ArgParser flags("zero-train", "");
  declare_train_flags(flags, c);
  Applier a{flags, c, given};
  if (c.zero_config)  // a preset's settings count as given: the file may not contradict them
    for (const auto& [flag, value] : zero_preset_flags(*c.zero_config)) a.given.push_back(flag);
  Section s(root, "");
  apply_precision(root, a);  // first: bucket and threshold conversions depend on the element width
  s.has("fp16");
  s.has("bf16");
  apply_batch(s, a);
  if (s.has("gradient_clipping")) a.set("gradient_clipping", "clip-grad-norm", text_of(s.number("gradient_clipping")));
  if (s.has("optimizer")) {
    Section o(root.at("optimizer"), "optimizer");
    apply_optimizer(o, a);
  }
  if (s.has("zero_optimization")) {
    Section z(root.at("zero_optimization"), "zero_optimization");
    apply_zero(z, a);
  }
  if (s.has("activation_checkpointing")) {
    Section ac(root.at("activation_checkpointing"), "activation_checkpointing");
    apply_checkpointing(ac, a);
  }
  s.has("steps_per_print");  // logging only: zero-train prints every step's line anyway
  s.has("wall_clock_breakdown");
  s.refuse_unknown();
}

void apply_ds_config_file(const std::string& path, TrainConfig& c, const std::vector<std::string>& given) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    ZT_FAIL("--config ", path, " cannot be read: ", e.what());
  }
  apply_ds_config_text(text, path, c, given);
}

}  // namespace zt::train
