// train/ds_config.cc — the DeepSpeed JSON keys and their zero-train flags (see ds_config.h and
// docs/deepspeed-config.md, which lists the same keys for users).
#include "train/ds_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/atomic_file.h"
#include "core/check.h"

namespace zt::train {
namespace {

using nlohmann::json;

// The shortest decimal that reads back as the same double, so a printed flag re-parses exactly.
std::string shortest(double x) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

std::string shown(const std::string& s) { return s; }
std::string shown(double x) { return shortest(x); }
std::string shown(int64_t x) { return std::to_string(x); }
std::string shown(bool b) { return b ? "on" : "off"; }

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
    ZT_CHECK(std::floor(x) == x && x >= 0 && x < 9.0e15, where(k), " ", shortest(x), " is not a whole number >= 0");
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

// Writes a value into the settings unless a flag on the command line holds a different one.
struct Applier {
  TrainConfig& c;
  std::vector<std::string> given;
  template <typename T, typename V>
  void set(const std::string& key, const std::string& flag, T& field, const V& value) {
    const T v = static_cast<T>(value);
    if (std::find(given.begin(), given.end(), flag) != given.end())
      ZT_CHECK(field == v, key, " sets --", flag, " ", shown(v), ", which contradicts --", flag, " ", shown(field),
               " on the command line");
    field = v;
  }
};

int64_t param_width(const TrainConfig& c) { return c.precision == "fp32" ? 4 : 2; }

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
  if (tb && mb && gas)
    ZT_CHECK(*tb == *mb * *gas * dp, "train_batch_size ", *tb, " is not train_micro_batch_size_per_gpu ", *mb,
             " x gradient_accumulation_steps ", *gas, " x ", dp, " data-parallel ranks = ", *mb * *gas * dp);
  if (!tb) tb = *mb * gas.value_or(1) * dp;
  if (!mb && gas) {
    ZT_CHECK(*tb % (*gas * dp) == 0, "train_batch_size ", *tb, " does not split into gradient_accumulation_steps ",
             *gas, " x ", dp, " data-parallel ranks");
    mb = *tb / (*gas * dp);
  }
  a.set("train_batch_size", "global-batch", a.c.global_batch, *tb);
  if (mb) {
    a.set("train_micro_batch_size_per_gpu", "micro-batch", a.c.micro_batch, *mb);
    a.c.micro_batch_given = true;
  }
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
    if (bf16) a.set("bf16.enabled", "precision", a.c.precision, std::string("bf16"));
    return;
  }
  Section s(root.at("fp16"), "fp16");
  if (s.has("enabled")) fp16 = s.boolean("enabled");
  ZT_CHECK(!(fp16 && bf16), "fp16.enabled and bf16.enabled are both true: choose one precision");
  if (fp16) a.set("fp16.enabled", "precision", a.c.precision, std::string("fp16"));
  if (bf16) a.set("bf16.enabled", "precision", a.c.precision, std::string("bf16"));
  if (s.has("loss_scale"))
    ZT_CHECK(s.number("loss_scale") == 0, "fp16.loss_scale ", shortest(s.number("loss_scale")),
             " asks for a static scale; zero-train's fp16 scaler is always dynamic (use 0 and "
             "initial_scale_power)");
  if (s.has("initial_scale_power")) {
    const int64_t p = s.integer("initial_scale_power");
    ZT_CHECK(p <= 24, "fp16.initial_scale_power ", p, " is above 24 (the scaler's ceiling is 2^24)");
    a.set("fp16.initial_scale_power", "loss-scale-init", a.c.loss_scale_init, std::ldexp(1.0, static_cast<int>(p)));
  }
  if (s.has("loss_scale_window"))
    a.set("fp16.loss_scale_window", "loss-scale-growth-interval", a.c.loss_scale_growth_interval,
          std::max<int64_t>(1, s.integer("loss_scale_window")));
  if (s.has("hysteresis"))
    ZT_CHECK(s.integer("hysteresis") == 1, "fp16.hysteresis ", s.integer("hysteresis"),
             " delays the scale's backoff; zero-train backs off at every overflow, which is hysteresis 1");
  if (s.has("consecutive_hysteresis"))
    ZT_CHECK(!s.boolean("consecutive_hysteresis"), "fp16.consecutive_hysteresis true needs a hysteresis above 1, ",
             "which zero-train does not have");
  if (s.has("min_loss_scale"))
    ZT_CHECK(s.number("min_loss_scale") == 1, "fp16.min_loss_scale ", shortest(s.number("min_loss_scale")),
             " has no flag here: zero-train's scale floor is fixed at 1");
  s.refuse_unknown();
}

void apply_optimizer(Section& s, Applier& a) {
  std::string type;
  if (s.has("type")) type = s.string("type");
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char ch) { return std::tolower(ch); });
  ZT_CHECK(type == "adam" || type == "adamw" || type == "sgd", s.where("type"), " '", type,
           "' is not Adam, AdamW or SGD");
  // DeepSpeed's Adam decays weights the AdamW way (adam_w_mode true) unless told otherwise
  bool decoupled = true;
  if (s.has("params")) {
    Section p(s.raw("params"), s.where("params"));
    if (p.has("adam_w_mode")) {
      ZT_CHECK(type == "adam", p.where("adam_w_mode"), " applies to type Adam only");
      decoupled = p.boolean("adam_w_mode");
    }
    if (p.has("lr")) a.set(p.where("lr"), "lr", a.c.lr, p.number("lr"));
    if (p.has("weight_decay"))
      a.set(p.where("weight_decay"), "weight-decay", a.c.weight_decay, p.number("weight_decay"));
    if (type == "sgd") {
      if (p.has("momentum")) a.set(p.where("momentum"), "momentum", a.c.momentum, p.number("momentum"));
    } else {
      if (p.has("betas")) {
        const json& b = p.raw("betas");
        ZT_CHECK(b.is_array() && b.size() == 2 && b[0].is_number() && b[1].is_number(), p.where("betas"),
                 " is not a list of two numbers");
        a.set(p.where("betas"), "beta1", a.c.beta1, b[0].get<double>());
        a.set(p.where("betas"), "beta2", a.c.beta2, b[1].get<double>());
      }
      if (p.has("eps")) a.set(p.where("eps"), "eps", a.c.eps, p.number("eps"));
    }
    p.refuse_unknown();
  }
  a.set(s.where("type"), "optimizer", a.c.optimizer, std::string(type == "sgd" ? "sgd" : decoupled ? "adamw" : "adam"));
  s.refuse_unknown();
}

void apply_zero(Section& s, Applier& a) {
  if (s.has("stage")) a.set(s.where("stage"), "stage", a.c.stage, s.integer("stage"));
  if (s.has("reduce_bucket_size"))
    a.set(s.where("reduce_bucket_size"), "bucket-mb", a.c.bucket_mb,
          bucket_mb_from_elements(static_cast<double>(s.integer("reduce_bucket_size")), a.c));
  if (s.has("stage3_prefetch_bucket_size")) {
    const int64_t e = s.integer("stage3_prefetch_bucket_size");
    ZT_CHECK(e == 0, s.where("stage3_prefetch_bucket_size"), " ", e,
             " counts elements; zero-train prefetches whole units, counted by --prefetch K (units differ in size, so "
             "no element count maps exactly); 0 (no prefetch) is accepted");
    a.set(s.where("stage3_prefetch_bucket_size"), "prefetch", a.c.prefetch, int64_t{0});
  }
  if (s.has("stage3_param_persistence_threshold")) {
    // elements -> MiB of compute-dtype parameters: numel * w < T * w / 2^20 * 2^20 exactly when numel < T
    const double t = static_cast<double>(s.integer("stage3_param_persistence_threshold"));
    a.set(s.where("stage3_param_persistence_threshold"), "persist-below-mb", a.c.persist_below_mb,
          t * static_cast<double>(param_width(a.c)) / 1048576.0);
  }
  if (s.has("overlap_comm"))
    a.set(s.where("overlap_comm"), "overlap", a.c.overlap_flag, std::string(s.boolean("overlap_comm") ? "on" : "off"));
  if (s.has("reduce_scatter")) {
    const bool rs = s.boolean("reduce_scatter");
    ZT_CHECK(rs || a.c.stage <= 1, s.where("reduce_scatter"), " false: stages 2 and 3 always reduce-scatter here");
    if (a.c.stage == 1)
      a.set(s.where("reduce_scatter"), "stage1-reduce", a.c.stage1_reduce,
            std::string(rs ? "reduce-scatter" : "all-reduce"));
  }
  if (s.has("contiguous_gradients") && s.boolean("contiguous_gradients"))
    a.set(s.where("contiguous_gradients"), "allocator", a.c.allocator, std::string("zero"));
  if (s.has("offload_optimizer")) {
    Section o(s.raw("offload_optimizer"), s.where("offload_optimizer"));
    std::string device = "none", path;
    if (o.has("device")) device = o.string("device");
    if (o.has("nvme_path")) path = o.string("nvme_path");
    ZT_CHECK(device == "none" || device == "cpu" || device == "nvme", o.where("device"), " '", device,
             "' is not none, cpu or nvme");
    ZT_CHECK(device != "nvme" || !path.empty(), o.where("device"), " nvme needs ", o.where("nvme_path"));
    ZT_CHECK(path.empty() || device == "nvme", o.where("nvme_path"), " is used only with device nvme");
    a.set(o.where("device"), "offload-optimizer", a.c.offload_optimizer,
          device == "cpu"    ? std::string("host")
          : device == "nvme" ? "file:" + path
                             : std::string("none"));
    if (o.has("buffer_count")) {
      ZT_CHECK(device == "nvme", o.where("buffer_count"), " sets the nvme tier's buffers: it needs device nvme");
      a.set(o.where("buffer_count"), "offload-buffers", a.c.offload_buffers, o.integer("buffer_count"));
    }
    o.refuse_unknown();
  }
  if (s.has("offload_param")) {
    Section o(s.raw("offload_param"), s.where("offload_param"));
    std::string device = "none", path;
    if (o.has("device")) device = o.string("device");
    if (o.has("nvme_path")) path = o.string("nvme_path");
    ZT_CHECK(device == "none" || device == "nvme", o.where("device"), " '", device,
             "' is not none or nvme (zero-train has no host tier for parameters)");
    ZT_CHECK(device != "nvme" || !path.empty(), o.where("device"), " nvme needs ", o.where("nvme_path"));
    a.set(o.where("device"), "offload-params", a.c.offload_params,
          device == "nvme" ? "file:" + path : std::string("none"));
    o.refuse_unknown();
  }
  s.refuse_unknown();
}

void apply_checkpointing(Section& s, Applier& a) {
  // the model here is fixed: a config with this section is a run that checkpoints every block
  a.set(s.where(""), "checkpoint-activations", a.c.checkpoint_activations, true);
  bool partition = false, cpu = false;
  if (s.has("partition_activations")) partition = s.boolean("partition_activations");
  if (s.has("cpu_checkpointing")) cpu = s.boolean("cpu_checkpointing");
  ZT_CHECK(!cpu || partition, s.where("cpu_checkpointing"), " moves the partitioned checkpoints to the host: it needs ",
           s.where("partition_activations"), " true");
  if (partition)
    a.set(s.where(cpu ? "cpu_checkpointing" : "partition_activations"), "partition-activations",
          a.c.partition_activations, std::string(cpu ? "cpu" : "on"));
  if (s.has("contiguous_memory_optimization") && s.boolean("contiguous_memory_optimization"))
    a.set(s.where("contiguous_memory_optimization"), "allocator", a.c.allocator, std::string("zero"));
  s.refuse_unknown();
}

}  // namespace

double bucket_mb_from_elements(double elements, const TrainConfig& c) {
  const double width = c.precision != "fp32" && c.reduce_dtype == "compute" ? 2.0 : 4.0;
  return elements * width / 1048576.0;
}

void apply_ds_config_text(const std::string& text, const std::string& source, TrainConfig& c,
                          const std::vector<std::string>& given) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    ZT_FAIL("--config ", source, " is not JSON: ", e.what());
  }
  ZT_CHECK(root.is_object(), "--config ", source, " is not a JSON object of DeepSpeed keys");
  Applier a{c, given};
  if (!c.zero_config.empty())  // a preset's settings count as given: the file may not contradict them
    for (const char* f : {"stage", "partition-activations", "allocator", "checkpoint-activations"})
      a.given.push_back(f);
  Section s(root, "");
  apply_precision(root, a);  // first: bucket and threshold conversions depend on the element width
  s.has("fp16");
  s.has("bf16");
  apply_batch(s, a);
  if (s.has("gradient_clipping"))
    a.set("gradient_clipping", "clip-grad-norm", a.c.clip_grad_norm, s.number("gradient_clipping"));
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
  c.overlap = c.overlap_flag == "on";
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

std::string config_as_flags(const TrainConfig& c) {
  const TrainConfig d;
  std::ostringstream out;
  const auto add = [&](const char* flag, const std::string& v, const std::string& dv) {
    if (v != dv) out << (out.tellp() > 0 ? " " : "") << "--" << flag << " " << v;
  };
  const auto sw = [&](const char* flag, bool v) {
    if (v) out << (out.tellp() > 0 ? " " : "") << "--" << flag;
  };
  const auto opt_i = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string(); };
  const auto opt_d = [](const std::optional<double>& v) { return v ? shortest(*v) : std::string(); };
  const auto i = [](int64_t v) { return std::to_string(v); };
  add("model", c.model, d.model);
  add("layers", i(c.layers), i(d.layers));
  add("heads", i(c.heads), i(d.heads));
  add("width", i(c.width), i(d.width));
  add("context", i(c.context), i(d.context));
  add("vocab", i(c.vocab), i(d.vocab));
  add("precision", c.precision, d.precision);
  add("optimizer", c.optimizer, d.optimizer);
  add("reduce-dtype", c.reduce_dtype, d.reduce_dtype);
  sw("no-master-weights", c.no_master_weights);
  add("lr", shortest(c.lr), shortest(d.lr));
  add("min-lr", opt_d(c.min_lr), "");
  add("warmup-steps", opt_i(c.warmup_steps), "");
  add("weight-decay", shortest(c.weight_decay), shortest(d.weight_decay));
  add("beta1", shortest(c.beta1), shortest(d.beta1));
  add("beta2", shortest(c.beta2), shortest(d.beta2));
  add("eps", shortest(c.eps), shortest(d.eps));
  add("momentum", shortest(c.momentum), shortest(d.momentum));
  add("clip-grad-norm", shortest(c.clip_grad_norm), shortest(d.clip_grad_norm));
  add("norm-block", i(c.norm_block), i(d.norm_block));
  add("loss-scale", c.loss_scale, d.loss_scale);
  add("loss-scale-init", shortest(c.loss_scale_init), shortest(d.loss_scale_init));
  add("loss-scale-growth-interval", i(c.loss_scale_growth_interval), i(d.loss_scale_growth_interval));
  add("loss-scale-growth-factor", shortest(c.loss_scale_growth_factor), shortest(d.loss_scale_growth_factor));
  add("loss-scale-backoff", shortest(c.loss_scale_backoff), shortest(d.loss_scale_backoff));
  add("steps", i(c.steps), i(d.steps));
  add("global-batch", i(c.global_batch), i(d.global_batch));
  add("micro-batch", c.micro_batch_given ? i(c.micro_batch) : "", "");
  add("seed", i(c.seed), i(d.seed));
  add("memory-budget-mb", shortest(c.memory_budget_mb), shortest(d.memory_budget_mb));
  add("blas-threads", i(c.blas_threads), i(d.blas_threads));
  add("gemm", c.gemm, d.gemm);
  add("device", c.device, d.device);
  add("data", c.data, d.data);
  add("digits", i(c.digits), i(d.digits));
  add("eval-every", i(c.eval_every), i(d.eval_every));
  add("timeout-s", shortest(c.timeout_s), shortest(d.timeout_s));
  add("local-addr", c.local_addr, d.local_addr);
  add("socket-ifname", c.socket_ifname, d.socket_ifname);
  add("summary-json", c.summary_json, d.summary_json);
  add("dump-manifest", c.dump_manifest, d.dump_manifest);
  add("dump-params", c.dump_params, d.dump_params);
  add("dump-grads", c.dump_grads, d.dump_grads);
  add("dump-batch", c.dump_batch, d.dump_batch);
  add("stage", i(c.stage), i(d.stage));
  add("world-size", i(c.world_size), i(d.world_size));
  add("mp-size", i(c.mp_size), i(d.mp_size));
  add("mp-blocks", opt_i(c.mp_blocks), "");
  sw("checkpoint-activations", c.checkpoint_activations);
  add("partition-activations", c.partition_activations, d.partition_activations);
  add("host-memory-budget-mb", shortest(c.host_memory_budget_mb), shortest(d.host_memory_budget_mb));
  add("allocator", c.allocator, d.allocator);
  add("memory-trace", c.memory_trace, d.memory_trace);
  add("ranks-as", c.ranks_as, d.ranks_as);
  add("bucket-mb", shortest(c.bucket_mb), shortest(d.bucket_mb));
  add("prefetch", i(c.prefetch), i(d.prefetch));
  add("persist-below-mb", shortest(c.persist_below_mb), shortest(d.persist_below_mb));
  add("overlap", c.overlap_flag, d.overlap_flag);
  add("grad-sync", c.grad_sync, d.grad_sync);
  add("stage1-reduce", c.stage1_reduce, d.stage1_reduce);
  add("collective-mode", c.collective_mode, d.collective_mode);
  sw("verify", c.verify);
  add("trace", c.trace, d.trace);
  add("save-dir", c.save_dir, d.save_dir);
  add("save-every", i(c.save_every), i(d.save_every));
  add("resume", c.resume, d.resume);
  add("offload-optimizer", c.offload_optimizer, d.offload_optimizer);
  add("offload-params", c.offload_params, d.offload_params);
  add("offload-buffers", i(c.offload_buffers), i(d.offload_buffers));
  add("offload-read-ahead", c.offload_read_ahead, d.offload_read_ahead);
  return out.str();
}

}  // namespace zt::train
