// The ZeRO engine on the emulated device (device/emulated_runtime.h) trains bit for bit as on the
// host: stages 0-3 × N = 1, 2, 4 ranks × fp32 / fp16 / bf16, two micro-batches per rank, every
// rank's step records, the held-out evaluations, step 1's gradient and the final master weights
// equal to the same run with --device cpu. Each rank's arena is device memory that host code
// cannot touch (a host dereference kills the process), its collectives are staged through pinned
// host memory around Gloo, and its ledger equals the closed-form prediction on every rank, the
// token ids and predictions in a host-side arena with a prediction of its own; the last step's
// copies between host and device memory equal their closed form by kind. A checkpoint saved
// on either device resumes on the other with the bits of an unbroken run. Tensor parallelism too
// (N_d 2 × N_m 2 at every stage, the block sums completed across ranks through staging), ZeRO-R's
// P_a and P_a+cpu, ZeRO-Offload's host and file tiers (a pinned host tier, a copy stream) and the
// parameter tier (its ring in device memory, its records through a pinned bounce buffer).
// Both GEMMs: the canonical one (the default) and `--gemm blas` (OpenBLAS inside the device's
// kernels, against the host's OpenBLAS). Each row runs in its own Catch2 section named after it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "collective/staged_collective.h"
#include "core/atomic_file.h"
#include "offload/param_file_tier.h"
#include "step/categories.h"
#include "support/run_program.h"
#include "zero/mp_fixtures.h"
#include "zero/offload_fixtures.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

void check_device_equals_host(train::TrainConfig c) {
  c.eval_every = 2;
  c.device = device::Device::cpu;
  const ZeroRun host = run_zero(c);
  c.device = device::Device::emulated;
  const ZeroRun dev = run_zero(c);
  REQUIRE(host.errors == "");
  REQUIRE(dev.errors == "");
  REQUIRE(host.ranks.size() == dev.ranks.size());
  for (std::size_t r = 0; r < dev.ranks.size(); ++r) {
    INFO("rank " << r);
    const train::RunResult& h = host.ranks[r].value->run;
    const train::RunResult& d = dev.ranks[r].value->run;
    CHECK(compare_steps(d.steps, h.steps) == "");
    CHECK(compare_evals(d.evals, h.evals) == "");
    REQUIRE(d.memory.size() == 1);
    const train::RankMemory& m = d.memory[0];
    CHECK(m.by_category == m.by_category_predicted);  // the device arena: ledger == prediction
    CHECK(m.peak_bytes == m.high_water_bytes_predicted);
    CHECK(m.host_by_category == m.host_by_category_predicted);  // the host side (and the host tier)
    // the device holds what the host run's arena holds, less the token ids and predictions, which
    // join the host run's host tier (if it has one) in host memory
    auto on_device = h.memory[0].by_category;
    auto on_host = h.memory[0].host_by_category;
    for (const char* name : {step::category::batch, step::category::eval}) {
      on_host[name] = on_device[name];
      on_device.erase(name);
    }
    // the parameter tier's ring is device memory as it was the host arena's; its records pass
    // through one pinned bounce record of the largest shard (offload/param_file_tier.h)
    if (c.offload_params.offloaded())
      on_host[offload::kParamStagingCategory] =
          plan_of(c, static_cast<int>(r)).largest_param_record() * model::bytes_of(c.precision);
    // the staged groups' pinned rooms, taken from the host side for their largest calls (their
    // size is checked against the plan's by the prediction above); none on one rank
    const bool staged = m.host_by_category.count(kCollectiveStagingCategory) > 0;
    CHECK(staged == (c.world_size > 1));
    if (staged) on_host[kCollectiveStagingCategory] = m.host_by_category.at(kCollectiveStagingCategory);
    CHECK(m.by_category == on_device);
    CHECK(m.host_by_category == on_host);
    // the last step's copies between host and device memory, by kind, equal their closed form
    // (predict/zero_comm.h); device-to-device copies are not host traffic and are not predicted
    REQUIRE(!d.steps.back().skipped);
    for (const auto kind : {device::CopyKind::host_to_device, device::CopyKind::device_to_host}) {
      INFO(word_of(kind));
      CHECK(d.device_copies_per_step.copies_of(kind) == d.device_copies_predicted_per_step.copies_of(kind));
      CHECK(d.device_copies_per_step.bytes_of(kind) == d.device_copies_predicted_per_step.bytes_of(kind));
      CHECK(d.device_copies_per_step.bytes_of(kind) > 0);
    }
    CHECK(h.device_copies_total == device::CopyStats{});  // none on the host
  }
  CHECK(compare_params(dev.artifacts.final_params, host.artifacts.final_params) == "");
  CHECK(compare_params(dev.artifacts.step1_grad, host.artifacts.step1_grad) == "");
}

}  // namespace

TEST_CASE("ZeRO on the emulated device: stages 0-3 x N = 1, 2, 4 x fp32 / fp16 / bf16, bitwise the host's", "[ch13]") {
  // every (stage, N) once, the precision chosen so that every (stage, precision) and (N,
  // precision) pair is in some row too; the case below, tagged [full], runs all 36 combinations
  const char* precisions[] = {"fp32", "fp16", "bf16"};
  const int worlds[] = {1, 2, 4};
  for (int j = 0; j < 3; ++j)
    for (const int stage : {0, 1, 2, 3}) {
      const char* precision = precisions[(stage + j) % 3];
      const std::string row =
          std::string(precision) + " N=" + std::to_string(worlds[j]) + " stage " + std::to_string(stage);
      SECTION(row) { check_device_equals_host(zero_config(stage, worlds[j], 2, precision)); }
    }
}

TEST_CASE("ZeRO on the emulated device, full product: stages 0-3 x N = 1, 2, 4 x fp32 / fp16 / bf16", "[ch13][full]") {
  for (const char* precision : {"fp32", "fp16", "bf16"})
    for (const int world : {1, 2, 4})
      for (const int stage : {0, 1, 2, 3}) {
        const std::string row =
            std::string(precision) + " N=" + std::to_string(world) + " stage " + std::to_string(stage);
        SECTION(row) { check_device_equals_host(zero_config(stage, world, 2, precision)); }
      }
}

TEST_CASE("ZeRO on the emulated device: a 16-bit wire, buckets, prefetch and M_D, bitwise the host's", "[ch13]") {
  SECTION("bf16 stage 1, --reduce-dtype compute (the sum narrowed on the device)") {
    train::TrainConfig c = zero_config(1, 2, 2, "bf16");
    c.reduce_dtype = train::ReduceDtype::compute;
    check_device_equals_host(c);
  }
  SECTION("fp16 stage 2, --reduce-dtype compute, one micro-batch per rank (the wire is the gradient)") {
    train::TrainConfig c = zero_config(2, 2, 1, "fp16");
    c.reduce_dtype = train::ReduceDtype::compute;
    check_device_equals_host(c);
  }
  SECTION("fp32 stage 2 with small buckets, stage 3 with prefetch 2") {
    train::TrainConfig c = zero_config(2, 2, 2, "fp32");
    c.bucket_mb = 0.0005;
    check_device_equals_host(c);
    c = zero_config(3, 4, 1, "bf16");
    c.prefetch = 2;
    check_device_equals_host(c);
  }
  SECTION("bf16 stage 2 with checkpointing and --allocator zero (M_D's regions in the device slab)") {
    train::TrainConfig c = zero_config(2, 2, 2, "bf16");
    c.checkpoint_activations = true;
    c.allocator = train::Allocator::zero;
    check_device_equals_host(c);
  }
}

TEST_CASE(
    "ZeRO on the emulated device: tensor parallelism (N_d 2 x N_m 2, and Q = 4 blocks on one rank), bitwise "
    "the host's",
    "[ch13]") {
  // the split Linears' block sums completed across the model-parallel group through the staged
  // group, every partial sum's copies down and up in the closed form
  for (const MpCase& cs :
       {MpCase{2, 2, 0, "fp32", false}, MpCase{2, 2, 1, "bf16", true}, MpCase{2, 2, 2, "fp16", false},
        MpCase{2, 2, 3, "bf16", true}, MpCase{1, 2, 3, "fp32", true}})
    SECTION(cs.name()) { check_device_equals_host(cs.config()); }
  SECTION("one rank holding all Q = 4 blocks (no model-parallel group), fp16") {
    check_device_equals_host(MpCase{1, 1, 0, "fp16", false}.config());
  }
}

TEST_CASE("ZeRO on the emulated device: --gemm blas (OpenBLAS inside the device's kernels), bitwise the host's",
          "[ch13]") {
  // the GEMM and triangular-product kernels call the very OpenBLAS routines the host's kernels
  // call, at the same shapes, strides and scratch offsets, so the bits are the host's --gemm blas
  const auto blas = [](train::TrainConfig c) {
    c.gemm = kernels::GemmBackend::blas;
    return c;
  };
  SECTION("stage 2, fp16, N = 2") { check_device_equals_host(blas(zero_config(2, 2, 2, "fp16"))); }
  SECTION("N_d 2 x N_m 2, stage 3, bf16 (the split Linears' block GEMMs)") {
    check_device_equals_host(blas(MpCase{2, 2, 3, "bf16", true}.config()));
  }
}

TEST_CASE("ZeRO on the emulated device: ZeRO-R's P_a and P_a+cpu, bitwise the host's", "[ch13]") {
  // the slices cut and padded by the loop's ops, gathered over the staged model-parallel group;
  // P_a+cpu's host tier pinned and its copies on a copy stream after the compute stream's work
  const auto partitioned = [](MpCase cs, const char* partition) {
    train::TrainConfig c = cs.config();
    c.partition_activations = word<train::PartitionActivations>(partition);
    return c;
  };
  SECTION("P_a, N_d 2 x N_m 2, stage 3, bf16") { check_device_equals_host(partitioned({2, 2, 3, "bf16", true}, "on")); }
  SECTION("P_a+cpu, N_d 2 x N_m 2, stage 1, fp16") {
    check_device_equals_host(partitioned({2, 2, 1, "fp16", true}, "cpu"));
  }
  SECTION("P_a+cpu without model parallelism (the slice is the whole checkpoint), N_d 2, stage 2, fp32") {
    check_device_equals_host(partitioned({2, 1, 2, "fp32", true}, "cpu"));
  }
}

TEST_CASE("ZeRO on the emulated device: ZeRO-Offload's host and file tiers and the parameter tier, bitwise the host's",
          "[ch13]") {
  // the owned gradient down and the refreshed parameters up on the copy stream, the update on the
  // host as without a device; the parameter tier's records up into its ring (device memory) after
  // each read and down before each write, on a stream of its own
  SECTION("host tier, stage 2, fp16, N = 2") {
    check_device_equals_host(offloaded(zero_config(2, 2, 2, "fp16"), "host"));
  }
  SECTION("host tier, stage 1, fp32, N = 2") {
    check_device_equals_host(offloaded(zero_config(1, 2, 2, "fp32"), "host"));
  }
  ScratchDir params;  // --offload-params file:DIR, for the sections that use it
  const auto param_tier = [&params](train::TrainConfig c) {
    c.offload_params = train::parse_offload_target(params.file_target(), "--offload-params", false);
    return c;
  };
  SECTION("the parameter tier (--offload-params), stage 3, bf16, N = 2, the optimizer on the device") {
    check_device_equals_host(param_tier(zero_config(3, 2, 2, "bf16")));
  }
  SECTION("the parameter tier and the optimizer's file tier, stage 3, fp16, N = 2, prefetch 2") {
    ScratchDir states;
    train::TrainConfig c = param_tier(offloaded(zero_config(3, 2, 2, "fp16"), states.file_target()));
    c.prefetch = 2;
    check_device_equals_host(c);
  }
  SECTION("the parameter tier on one rank (its shard copied into the gathered buffer), fp32") {
    check_device_equals_host(param_tier(zero_config(3, 1, 2, "fp32")));
  }
  SECTION("file tier, stage 3, bf16, N = 2, with P_a+cpu") {
    ScratchDir dir;
    train::TrainConfig c = offloaded(zero_config(3, 2, 2, "bf16"), dir.file_target());
    c.checkpoint_activations = true;
    c.partition_activations = train::PartitionActivations::cpu;
    check_device_equals_host(c);
  }
}

TEST_CASE("ZeRO on the emulated device: a checkpoint saved on one device resumes on the other, bitwise", "[ch13]") {
  struct Case {
    int stage;
    const char* precision;
    device::Device save_on, resume_on;
    bool offload;              // the optimizer states in ZeRO-Offload's host tier
    bool params_tier = false;  // stage 3's shards in the parameter tier's file
  };
  const Case cases[] = {{1, "fp32", device::Device::emulated, device::Device::cpu, false},
                        {3, "fp16", device::Device::cpu, device::Device::emulated, false},
                        {2, "bf16", device::Device::emulated, device::Device::emulated, false},
                        {2, "fp16", device::Device::emulated, device::Device::cpu, true},
                        {3, "bf16", device::Device::emulated, device::Device::cpu, false, true}};
  for (const Case& k : cases) {
    const std::string row = "stage " + std::to_string(k.stage) + " " + k.precision + (k.offload ? " offloaded" : "") +
                            (k.params_tier ? " with the parameter tier" : "") + ", saved on " + word_of(k.save_on) +
                            ", resumed on " + word_of(k.resume_on);
    SECTION(row) {
      const std::string dir = "/tmp/zt_device_ckpt_" + std::to_string(::getpid()) + "_" + std::to_string(k.stage);
      std::filesystem::remove_all(dir);
      ScratchDir params_dir;
      train::TrainConfig c = zero_config(k.stage, 2, 2, k.precision);
      if (k.offload) c = offloaded(c, "host");
      if (k.params_tier)
        c.offload_params = train::parse_offload_target(params_dir.file_target(), "--offload-params", false);
      c.steps = 4;
      const ZeroRun whole = run_zero(c);  // on the host, without a break
      train::TrainConfig first = c;       // the same run, saved after steps 2 and 4
      first.device = k.save_on;
      first.save_dir = dir;
      first.save_every = 2;
      REQUIRE(run_zero(first).errors == "");
      train::TrainConfig rest = c;
      rest.device = k.resume_on;
      rest.resume = dir + "/step-00000002";
      const ZeroRun resumed = run_zero(rest);
      std::filesystem::remove_all(dir);
      REQUIRE(whole.errors == "");
      REQUIRE(resumed.errors == "");
      CHECK(compare_params(resumed.artifacts.final_params, whole.artifacts.final_params) == "");
      const auto& all = whole.ranks[0].value->run.steps;
      const std::vector<train::StepRecord> last_two(all.end() - 2, all.end());
      CHECK(compare_steps(resumed.ranks[0].value->run.steps, last_two) == "");
    }
  }
}

TEST_CASE("zero-train --device emulated: ranks as processes, --verify against the reference on the device", "[ch13]") {
  const auto out = run_program("zero-train",
                               "--layers 1 --heads 2 --width 16 --context 16 --global-batch 8 --steps 3 "
                               "--world-size 2 --stage 3 --precision bf16 --device emulated --verify");
  INFO(out.err);
  CHECK(out.status == 0);
  CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
}

TEST_CASE("zero-train --device emulated --trace: every rank's device streams as tracks, each in order", "[ch13]") {
  // the compute stream's kernels and copies, and the host tier's copy stream (ZeRO-Offload)
  const std::string trace = "/tmp/zt_device_trace_" + std::to_string(::getpid()) + ".json";
  const std::string summary = "/tmp/zt_device_trace_summary_" + std::to_string(::getpid()) + ".json";
  const auto out =
      run_program("zero-train",
                  "--layers 1 --heads 2 --width 16 --context 16 --global-batch 8 --steps 2 --world-size 2 "
                  "--ranks-as threads --stage 2 --precision fp16 --offload-optimizer host --device emulated "
                  "--trace " +
                      trace + " --summary-json " + summary);
  INFO(out.err);
  REQUIRE(out.status == 0);
  const auto j = nlohmann::json::parse(read_file(trace));
  const auto s = nlohmann::json::parse(read_file(summary));
  std::remove(trace.c_str());
  std::remove(summary.c_str());
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    std::map<int, std::string> track;                          // tid -> its name
    std::map<int, std::vector<std::pair<double, double>>> at;  // tid -> (start, end) of its spans
    std::size_t kernels = 0, down = 0, up = 0;
    for (const auto& e : j["traceEvents"]) {
      if (e["pid"] != rank) continue;
      const int tid = e["tid"].get<int>();
      if (e["ph"] == "M") {
        track[tid] = e["args"]["name"].get<std::string>();
        continue;
      }
      const double ts = e["ts"].get<double>();
      at[tid].push_back({ts, ts + e["dur"].get<double>()});
      const std::string name = e["name"].get<std::string>(), cat = e["cat"].get<std::string>();
      kernels += cat == "stream compute" && name.rfind("kernel '", 0) == 0;
      down += cat == "stream tier copies" && name == "copy device_to_host";
      up += cat == "stream tier copies" && name == "copy host_to_device";
    }
    CHECK(track[0] == "host");
    CHECK(kernels > 0);
    // per step and unit, the owned gradient goes down on the copy stream and the refreshed
    // parameters come up (none for a unit whose shard here is all padding): rank 0's calls per
    // step are in the summary, and it owns a part of every unit
    CHECK(down > 0);
    CHECK(up == down);
    if (rank == 0) CHECK(down == 2 * s["host_transfers"]["per_step"]["to_host_calls"].get<std::size_t>());
    std::size_t device_tracks = 0;
    for (auto& [tid, spans] : at) {
      if (track[tid].rfind("device stream ", 0) != 0) continue;
      ++device_tracks;
      // a stream runs its work one piece after another: its spans never overlap (1 ns of slack
      // for the microsecond doubles of the JSON)
      std::sort(spans.begin(), spans.end());
      for (std::size_t k = 1; k < spans.size(); ++k) CHECK(spans[k].first + 1e-3 >= spans[k - 1].second);
    }
    CHECK(device_tracks == 2);  // compute and tier copies
  }
}
