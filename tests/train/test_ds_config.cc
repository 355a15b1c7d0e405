// --config: a DeepSpeed-style JSON file read into zero-train's settings (train/ds_config.h). Unit
// tests of the mapping (units, adam_w_mode, the batch identity, errors naming the key) and runs of
// the chapters' config files against the equivalent flags, compared bit for bit (--dump-params).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/check.h"
#include "support/run_program.h"
#include "train/ds_config.h"

namespace {
using zt::train::Allocator;
using zt::train::Optimizer;
using zt::train::PartitionActivations;
using zt::train::TrainConfig;

TrainConfig applied(const std::string& json, const std::vector<std::string>& given = {}, TrainConfig c = {}) {
  zt::train::apply_ds_config_text(json, "test.json", c, given);
  return c;
}

std::string error_of(const std::string& json, const std::vector<std::string>& given = {}, TrainConfig c = {}) {
  try {
    applied(json, given, c);
  } catch (const zt::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("ds config: element counts become MiB exactly", "[ch7][config]") {
  TrainConfig c;
  c.precision = zt::model::Precision::fp16;
  // fp32 gradients (the default --reduce-dtype): 4 bytes an element; 5e8 elements = 1907.3486328125 MiB
  CHECK(zt::train::bucket_mb_from_elements(5e8, c) == 1907.3486328125);
  c.reduce_dtype = zt::train::ReduceDtype::compute;
  CHECK(zt::train::bucket_mb_from_elements(5e8, c) == 953.67431640625);
  // and back: zero_plan's floor(MiB * 2^20) / width gives the element count again
  for (double e : {1.0, 1000.0, 12345.0, 5e8, 2e8 + 3}) {
    const double mb = zt::train::bucket_mb_from_elements(e, c);
    CHECK(static_cast<double>(static_cast<std::size_t>(mb * 1048576.0) / 2) == e);
  }
  const TrainConfig t = applied(R"({"zero_optimization": {"stage3_param_persistence_threshold": 1e5}})");
  // DeepSpeed keeps numel <= T whole; the flag keeps numel * 4 < MiB * 2^20 (fp32: 4 bytes an element)
  CHECK(t.persist_below_mb == (1e5 + 1) * 4 / 1048576.0);
  CHECK(applied(R"({"zero_optimization": {"stage3_param_persistence_threshold": 0}})").persist_below_mb == 0);
}

TEST_CASE("ds config: Adam decays weights the AdamW way unless adam_w_mode is false", "[ch6][config]") {
  CHECK(applied(R"({"optimizer": {"type": "Adam", "params": {"weight_decay": 0.1}}})").optimizer == Optimizer::adamw);
  CHECK(applied(R"({"optimizer": {"type": "Adam", "params": {"adam_w_mode": false}}})").optimizer == Optimizer::adam);
  CHECK(applied(R"({"optimizer": {"type": "AdamW"}})").optimizer == Optimizer::adamw);
  const TrainConfig s = applied(R"({"optimizer": {"type": "SGD", "params": {"lr": 0.5, "momentum": 0.8}}})");
  CHECK((s.optimizer == Optimizer::sgd && s.lr == 0.5 && s.momentum == 0.8));
  const TrainConfig b = applied(R"({"optimizer": {"type": "adam", "params": {"betas": [0.8, 0.99], "eps": 1e-6}}})");
  CHECK((b.beta1 == 0.8 && b.beta2 == 0.99 && b.eps == 1e-6));
}

TEST_CASE("ds config: train_batch_size = micro x GAS x data-parallel ranks", "[ch6][config]") {
  TrainConfig c;
  c.world_size = 4;
  const TrainConfig a = applied(R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 3})", {}, c);
  CHECK((a.global_batch == 24 && a.micro_batch == 2));
  const TrainConfig b = applied(R"({"train_batch_size": 16, "gradient_accumulation_steps": 2})", {}, c);
  CHECK((b.global_batch == 16 && b.micro_batch == 2));
  CHECK(error_of(R"({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 2,
                     "gradient_accumulation_steps": 3})",
                 {}, c)
            .find("train_batch_size 16 is not") != std::string::npos);
  // a launcher may set the world size after the file was read: validate() checks the identity again
  TrainConfig g = applied(R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 3})", {}, c);
  CHECK_NOTHROW(zt::train::validate(g));
  g.world_size = 2;
  CHECK_THROWS_WITH(zt::train::validate(g), Catch::Contains("gradient_accumulation_steps 3"));
  CHECK(error_of(R"({"gradient_accumulation_steps": 3})").find("gradient_accumulation_steps") != std::string::npos);
}

TEST_CASE("ds config: unknown keys, wrong types, conflicts and unmapped values are errors", "[ch6][config]") {
  CHECK(error_of(R"({"zero_optimization": {"stage": 2, "foo": 1}})").find("zero_optimization.foo") !=
        std::string::npos);
  CHECK(error_of(R"({"scheduler": {}})").find("unknown key scheduler") != std::string::npos);
  CHECK(error_of(R"({"zero_optimization": {"stage": "two"}})").find("zero_optimization.stage") != std::string::npos);
  CHECK(error_of(R"({"fp16": {"enabled": true, "hysteresis": 2}})").find("fp16.hysteresis") != std::string::npos);
  CHECK(error_of(R"({"fp16": {"enabled": true, "loss_scale": 128}})").find("fp16.loss_scale") != std::string::npos);
  CHECK(error_of("{ not json").find("is not JSON") != std::string::npos);
  TrainConfig c;
  c.stage = 1;
  const std::string conflict = error_of(R"({"zero_optimization": {"stage": 2}})", {"stage"}, c);
  CHECK(conflict.find("zero_optimization.stage") != std::string::npos);
  CHECK(conflict.find("--stage 1") != std::string::npos);
  // the same value as the flag is no conflict
  CHECK(error_of(R"({"zero_optimization": {"stage": 1}})", {"stage"}, c).empty());
  CHECK(applied(R"({"fp16": {"enabled": true, "initial_scale_power": 10}})").loss_scale_init == 1024);
  CHECK(error_of("[1, 2]").find("not a JSON object") != std::string::npos);
  CHECK(error_of(R"({"zero_optimization": {"offload_param": {"device": "cpu"}}})").find("offload_param.device") !=
        std::string::npos);
}

TEST_CASE("ds config: a key sets only what its flag accepts, and batch products are checked", "[ch6][config]") {
  // each value the command line would refuse, with the key and the flag's own message
  CHECK(error_of(R"({"gradient_clipping": -1})") == "gradient_clipping: --clip-grad-norm: -1 is outside [0, 1e+30]");
  CHECK(error_of(R"({"optimizer": {"type": "Adam", "params": {"betas": [5.8, 0.999]}}})") ==
        "optimizer.params.betas: --beta1: 5.8 is outside [0, 0.999999]");
  CHECK(error_of(R"({"zero_optimization": {"reduce_bucket_size": 0}})")
            .find("zero_optimization.reduce_bucket_size: --bucket-mb: 0 is outside") == 0);
  CHECK(error_of(R"({"zero_optimization": {"offload_optimizer": {"device": "nvme", "nvme_path": "/x",
                                                                 "buffer_count": 5000}}})") ==
        "zero_optimization.offload_optimizer.buffer_count: --offload-buffers: 5000 is outside [1, 1024]");
  CHECK(error_of(R"({"train_batch_size": 2e12})") ==
        "train_batch_size: --global-batch: 2000000000000 is outside [1, "
        "1099511627776]");
  // micro x GAS x N_d beyond int64_t: refused before it is computed (it would overflow)
  CHECK(error_of(R"({"train_micro_batch_size_per_gpu": 4e15, "gradient_accumulation_steps": 4e15})")
            .find("is above 2^40 sequences") != std::string::npos);
  // the limits are the flags' own: the largest values they accept pass
  CHECK(error_of(R"({"optimizer": {"type": "SGD", "params": {"lr": 1000, "momentum": 0.999999}}})").empty());
}

TEST_CASE("ds config: offload devices map to the host and file tiers", "[ch6][config]") {
  const TrainConfig o = applied(R"({"zero_optimization": {"stage": 3,
      "offload_optimizer": {"device": "nvme", "nvme_path": "/tmp/a", "buffer_count": 5},
      "offload_param": {"device": "nvme", "nvme_path": "/tmp/b"}}})");
  CHECK((o.offload_optimizer.text() == "file:/tmp/a" && o.offload_buffers == 5 &&
         o.offload_params.text() == "file:/tmp/b"));
  CHECK(applied(R"({"zero_optimization": {"offload_optimizer": {"device": "cpu"}}})").offload_optimizer.text() ==
        "host");
  const TrainConfig r = applied(R"({"activation_checkpointing": {"partition_activations": true,
      "cpu_checkpointing": true}})");
  CHECK((r.checkpoint_activations && r.partition_activations == PartitionActivations::cpu &&
         r.allocator == Allocator::general));
}

namespace {
const std::string kRun =
    "--layers 1 --heads 2 --width 16 --context 16 --steps 3 --warmup-steps 0 --eval-every 0 --ranks-as threads ";

struct Case {
  std::string file, world, flags;
};

// The flags each chapter's file stands for, written out by hand from docs/deepspeed-config.md.
const std::vector<Case> kCases = {
    {"06-zero-1/ds_config_stage0.json", "--world-size 2 ",
     "--precision fp16 --weight-decay 0.1 --loss-scale-growth-interval 1000 --global-batch 8 --micro-batch 2"},
    {"06-zero-1/ds_config.json", "--world-size 2 ",
     "--precision fp16 --weight-decay 0.1 --loss-scale-growth-interval 1000 --global-batch 8 --micro-batch 2 --stage "
     "1"},
    {"07-zero-2/ds_config.json", "--world-size 2 ",
     "--precision bf16 --weight-decay 0.1 --global-batch 8 --micro-batch 2 --stage 2 --bucket-mb 0.003814697265625"},
    {"08-zero-3/ds_config.json", "--world-size 2 ",
     "--precision fp16 --optimizer adam --lr 0.002 --weight-decay 0.01 --loss-scale-init 4096 --global-batch 8 "
     "--micro-batch 2 --stage 3 --prefetch 0 --persist-below-mb 0.0039081573486328125"},
    {"07-zero-2/ds_config.json", "--world-size 4 ",
     "--precision bf16 --weight-decay 0.1 --global-batch 8 --micro-batch 2 --stage 2 --bucket-mb 0.003814697265625"},
    {"12-zero-r/ds_config.json", "--world-size 2 ",
     "--precision fp16 --global-batch 8 --stage 2 --checkpoint-activations --partition-activations on --allocator "
     "zero"},
    {"14-checkpoints-offload/ds_config.json", "--world-size 2 ",
     "--precision bf16 --global-batch 8 --stage 2 --offload-optimizer host"},
};
}  // namespace

TEST_CASE("ds config: each chapter's file prints and runs as its flags, bit for bit", "[ch6][config]") {
  const std::string dir = "/tmp/zt_dsconfig_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const Case& k : kCases) {
    INFO(k.file);
    const std::string file = std::string(ZT_SOURCE_DIR) + "/chapters/" + k.file;
    const auto printed = zt::test::run_program("zero-train", k.world + "--config " + file + " --print-config");
    REQUIRE(printed.status == 0);
    const auto direct = zt::test::run_program("zero-train", k.world + k.flags + " --print-config");
    CHECK(printed.out == direct.out);
    const auto a =
        zt::test::run_program("zero-train", kRun + k.world + "--config " + file + " --dump-params " + dir + "/a.bin");
    const auto b = zt::test::run_program("zero-train", kRun + k.world + k.flags + " --dump-params " + dir + "/b.bin");
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    CHECK(zt::read_file(dir + "/a.bin") == zt::read_file(dir + "/b.bin"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("print-config: --loss-scale (added after the print table) is printed back when not the default",
          "[ch6][config]") {
  // a flag added to the parser but not to config_as_flags would be dropped silently
  CHECK(zt::test::run_program("zero-train", "--precision fp16 --loss-scale none --print-config").out ==
        "--precision fp16 --loss-scale none\n");
}

TEST_CASE("ds config: bad files and conflicts are one line and a non-zero exit", "[ch6][config]") {
  const std::string dir = "/tmp/zt_dsconfig_bad_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  zt::write_file_atomic(dir + "/gas.json", R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
                                              "gradient_accumulation_steps": 1})");
  zt::write_file_atomic(dir + "/unknown.json", R"({"zero_optimization": {"stage": 1, "sub_group_size": 1e9}})");
  const std::string stage2 = std::string(ZT_SOURCE_DIR) + "/chapters/07-zero-2/ds_config.json";
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--world-size 2 --config " + dir + "/gas.json", "gradient_accumulation_steps"},
           {"--config " + dir + "/unknown.json", "zero_optimization.sub_group_size"},
           {"--config " + dir + "/missing.json", "cannot be read"},
           {"--world-size 2 --stage 1 --config " + stage2, "contradicts --stage 1"}}) {
    INFO(args);
    const auto out = zt::test::run_program("zero-train", kRun + args);
    CHECK(out.status != 0);
    CHECK(zt::test::line_count(out.err) == 1);
    CHECK(out.err.find(needle) != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("ds config: MiCS's shard size is --shard-group; ZeRO++'s hpZ is not mapped", "[ch9][config]") {
  CHECK(applied(R"({"zero_optimization": {"stage": 3, "mics_shard_size": 2}})").shard_group == 2);
  CHECK_FALSE(applied(R"({"zero_optimization": {"mics_shard_size": -1}})").shard_group.has_value());
  CHECK(error_of(R"({"zero_optimization": {"mics_shard_size": 0}})").find("mics_shard_size 0 is not a group size") !=
        std::string::npos);
  CHECK(applied(R"({"zero_optimization": {"zero_hpz_partition_size": 1}})").shard_group == std::nullopt);
  CHECK(error_of(R"({"zero_optimization": {"zero_hpz_partition_size": 8}})").find("secondary copy of the parameters") !=
        std::string::npos);
}
