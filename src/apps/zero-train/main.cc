// zero-train — train a GPT-2-style model with mixed precision (the project's main program).
//
// This file only wires modules to the command line: it parses the flags (train/train_config.h),
// opens the dataset, picks one of four ways to run (RunMode below), and hands the finished run to
// one writer of every output (dumps, summary JSON, --verify, the printed summary). The training
// is reference/single_rank.h (the reference) or zero/train_zero.h (ZeRO on N ranks); the comparison
// of --verify is report/compare_runs.h, the same one the tests use; spawning and rendezvous are
// launch/. Outputs are written atomically (core/atomic_file.h).
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "apps/zero-train/printed.h"
#include "collective/gloo_collective.h"
#include "collective/grid.h"
#include "collective/hybrid_group.h"
#include "collective/thread_ranks.h"
#include "core/atomic_file.h"
#include "core/check.h"
#include "core/cli.h"
#include "core/cpu_pool.h"
#include "core/error_report.h"
#include "core/output_place.h"
#include "data/dataset.h"
#include "device/cuda_probe.h"
#include "launch/bind_address.h"
#include "launch/rank_env.h"
#include "launch/spawn.h"
#include "launch/store_spec.h"
#include "model/manifest.h"
#include "plan/print_step.h"
#include "plan/rank_prediction.h"
#include "predict/predicted_run.h"
#include "reference/single_rank.h"
#if defined(ZT_WITH_NCCL)
#include "collective/nccl/nccl_collective.h"
#endif
#include "report/compare_runs.h"
#include "report/report.h"
#include "report/run_summary.h"
#include "report/summary_json.h"
#include "step_device/placement.h"
#include "train/collective_choice.h"
#include "train/step_report.h"
#include "train/step_start.h"
#include "train/train_config.h"

namespace {

using zt::train::RunArtifacts;
using zt::train::RunResult;
using zt::train::TrainConfig;
using namespace zt::zero_train;

/// How this process takes part in the job.
enum class RunMode {
  reference,          ///< one rank, stage 0: the single-rank reference loop (reference/single_rank.h)
  thread_ranks,       ///< N ranks as threads of this process (--ranks-as threads, or stage > 0 at N = 1)
  spawned_processes,  ///< start N copies of this program as ranks (launch/spawn.h) and wait
  launched_rank,      ///< one rank of a job a launcher started (torchrun / zero-launch variables)
};

RunMode run_mode(const TrainConfig& c, const zt::launch::LaunchDecision& d) {
  using Mode = zt::launch::LaunchDecision::Mode;
  // a launcher's world of one needs no rendezvous: it runs like a plain single process
  if (d.mode == Mode::kLaunched && c.world_size > 1) return RunMode::launched_rank;
  if (d.mode == Mode::kSpawn && c.ranks_as == zt::train::RanksAs::processes) return RunMode::spawned_processes;
  // ZeRO-R's partitioned checkpoints and ZeRO-Offload live in the ZeRO engine (even on one rank);
  // zero-plan predicts the same choice from the same function
  return zt::plan::uses_reference_loop(c) ? RunMode::reference : RunMode::thread_ranks;
}

// ---- the one writer of a finished job's outputs (rank 0 / the main thread) ------------------

template <typename V>
void dump_raw(const std::string& path, const V& values) {
  // raw little-endian: this program only builds for little-endian hosts (x86-64, aarch64)
  static_assert(std::endian::native == std::endian::little, "dumps are little-endian");
  zt::write_file_atomic(path, values.data(), values.size() * sizeof(values[0]));
}

/// --verify: run the single-rank reference on the same global batch, with the same --mp-blocks
/// (all blocks on one device), and compare every step record, every evaluation and the final
/// master weights bit for bit (report/compare_runs.h).
zt::report::RunComparison verify(const TrainConfig& c, const zt::Dataset& data, const RunResult& r,
                                 const RunArtifacts& artifacts) {
  TrainConfig ref = c;
  ref.stage = 0;
  ref.world_size = 1;
  ref.mp_size = 1;
  ref.shard_group.reset();  // one rank shards nothing
  ref.pp_size = 1;          // and runs every block itself
  ref.pp_split.clear();
  ref.mp_blocks = c.resolved_mp_blocks();                            // the same numerics: B blocks, all on one device
  ref.partition_activations = zt::train::PartitionActivations::off;  // where checkpoints are kept changes no bit
  ref.offload_optimizer = {};                                        // nor where the optimizer runs
  ref.offload_params = {};                                           // nor where stage 3's shards live
  ref.dump_params = "verify";                                        // asks the reference for its final master weights
  RunArtifacts ref_artifacts;
  // the ranks have finished: the reference may use every CPU (its bits do not depend on the count)
  const zt::RankThreads threads(c.threads_given ? c.threads : zt::default_cpu_threads(1));
  const RunResult ref_result = zt::reference::train_single_rank(ref, data, {}, &ref_artifacts);
  const int64_t vocab = c.vocab ? c.vocab : data.vocab_size();
  const auto manifest = zt::model::make_manifest({vocab, c.context, c.layers, c.heads, c.width});
  return zt::report::compare_runs(r, artifacts.final_params, ref_result, ref_artifacts.final_params, &manifest);
}

/// Every output of a finished job. @param comm rank 0's counters (ZeRO runs only).
/// @return the exit status: 1 when --verify found a difference.
int write_outputs(const TrainConfig& c, const zt::Dataset& data, const RunResult& r, const RunArtifacts& artifacts,
                  const zt::zero::ZeroRunResult* comm) {
  if (!c.dump_params.empty()) dump_raw(c.dump_params, artifacts.final_params);
  if (!c.dump_grads.empty()) {
    ZT_CHECK(c.steps >= 1, "--dump-grads needs at least one step");
    dump_raw(c.dump_grads, artifacts.step1_grad);
  }
  if (!c.dump_batch.empty()) {  // a pure function of (seed, step, index): step 1's global batch
    ZT_CHECK(c.steps >= 1, "--dump-batch needs at least one step");
    std::vector<int32_t> batch(static_cast<std::size_t>(c.global_batch * (c.context + 1)));
    zt::fill_batch(data, static_cast<uint64_t>(c.seed), 1, 0, static_cast<std::size_t>(c.global_batch), batch.data());
    dump_raw(c.dump_batch, batch);
  }
  int status = 0;
  std::vector<zt::report::JsonSection> sections;
  sections.emplace_back("mp_size", std::to_string(c.mp_size));
  sections.emplace_back("dp_size", std::to_string(c.dp_size()));
  if (comm)
    sections.emplace_back(
        "comm",
        zt::report::comm_json(comm->dp, comm->mp, c.hybrid_sharding() ? &comm->dp_replica : nullptr,
                              c.hybrid_sharding() ? &comm->dp_whole : nullptr, c.pp_size > 1 ? &comm->pp : nullptr));
  if (comm && (c.partition_activations == zt::train::PartitionActivations::cpu || c.offloads_optimizer()))
    sections.emplace_back("host_transfers",
                          zt::report::transfers_json(comm->transfers_per_step, comm->transfers_predicted_per_step,
                                                     comm->transfers_total));
  if (c.device != zt::device::Device::cpu)  // either loop
    sections.emplace_back("device_copies",
                          zt::report::device_copies_json(r.device_copies_per_step, r.device_copies_predicted_per_step,
                                                         r.device_copies_total));
  if (comm && !c.offload_optimizer_dir().empty())
    sections.emplace_back(
        "offload_file_io",
        zt::report::file_io_json(comm->file_io_per_step, comm->file_io_predicted_per_step, comm->file_io_total));
  if (c.verify) {
    const zt::report::RunComparison v = verify(c, data, r, artifacts);
    if (v.equal())
      std::printf(
          "verify: final FP32 master weights, every step's loss, loss_scale, lr, grad_norm, skipped, "
          "clipped and every held-out evaluation are bitwise equal to the single-rank reference\n");
    else
      std::printf("verify: NOT bitwise equal to the single-rank reference: %s\n", v.describe().c_str());
    status = v.equal() ? 0 : 1;
    const nlohmann::json verdict = {{"bitwise_equal", v.equal()},
                                    {"first_difference", v.params},
                                    {"first_step_difference", v.steps},
                                    {"first_eval_difference", v.evals}};
    sections.emplace_back("verify", verdict.dump());
  }
  sections.emplace_back("summary", zt::report::run_summary_json(zt::report::run_summary(c, r, comm)));
  if (!c.summary_json.empty()) zt::write_file_atomic(c.summary_json, zt::report::summary_json(c, r, sections));
  print_summary(c, r, comm);
  if (comm && c.offloads_optimizer()) print_offload(c, *comm);
  return status;
}

// ---- the four run modes ---------------------------------------------------------------------

int run_reference(const TrainConfig& c, const zt::Dataset& data) {
  RunArtifacts artifacts;
  const zt::RankThreads threads(c.threads);  // the one rank's pool (--threads), for the whole run
  const RunResult r = zt::reference::train_single_rank(c, data, progress_printer(c), &artifacts);
  return write_outputs(c, data, r, artifacts, nullptr);
}

/// The collective options every rank of one job shares (store, rank and prefix set by the caller).
zt::GlooOptions rank_options(const TrainConfig& c) {
  zt::GlooOptions o;
  o.size = static_cast<int>(c.world_size);
  o.mode = c.collective_mode == zt::train::CollectiveMode::fast ? zt::ReduceMode::fast : zt::ReduceMode::deterministic;
  // --reduce-dtype compute: 16-bit sums round after every add, as a 16-bit wire format would
  o.accumulation =
      c.reduce_dtype == zt::train::ReduceDtype::compute ? zt::Accumulation::storage : zt::Accumulation::fp32;
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(c.timeout_s * 1000.0)));
  return o;
}

/// A rank's device: its GPU, and its data-parallel group on device buffers where NCCL serves
/// (train/collective_choice.h; empty: the host group, staged on a device).
struct RankDevice {
  int gpu = 0;
  zt::DeviceGroupMaker group;
};

/// The rank's device for a job whose ranks meet in `store`. @param c the settings. @param nccl
/// use_nccl's answer. @param rank the rank. @param local_rank its rank on this machine.
/// @param store the job's rendezvous store (NCCL exchanges its id through it). @return it.
RankDevice rank_device(const TrainConfig& c, bool nccl, int rank, int local_rank,
                       const std::shared_ptr<gloo::rendezvous::Store>& store) {
  RankDevice d;
  d.gpu = zt::train::gpu_of_rank(nccl, local_rank);
  if (!nccl) return d;
#if defined(ZT_WITH_NCCL)
  const zt::GlooOptions host = rank_options(c);
  zt::NcclOptions o;
  o.rank = rank;
  o.size = static_cast<int>(c.world_size);
  o.store = store;
  o.prefix = "zero-train-nccl";
  o.mode = host.mode;
  o.accumulation = host.accumulation;
  o.timeout = host.timeout;
  o.local_rank = d.gpu;
  o.group = "dp";
  d.group = [o](zt::device::Runtime& rt, zt::device::Stream s) -> std::unique_ptr<zt::Collective> {
    zt::NcclOptions on_stream = o;
    on_stream.user_stream = static_cast<cudaStream_t>(rt.native_stream(s));  // calls start after its work
    return std::make_unique<zt::NcclCollective>(on_stream);
  };
#else
  (void)c, (void)rank, (void)store;
  ZT_FAIL("--collective nccl: this build has no NCCL");
#endif
  return d;
}

/// One rank's training: on the world as one data-parallel group, or, with --mp-size > 1 or
/// --shard-group, on its groups of the grid (collective/grid.h: rank = dp · N_m + mp; hybrid
/// sharding's shard and replica groups inside the data-parallel one).
/// An error is announced (core/error_report.h) while the groups are still open: their
/// destructors tell the peers, who then exit, and this rank's message must be out first.
zt::zero::ZeroRunResult train_on_grid(const TrainConfig& c, const zt::Dataset& data, zt::Collective& world,
                                      const zt::train::StepCallback& on_step, RunArtifacts* artifacts,
                                      const RankDevice& device) {
  // this rank's pool (--threads), installed on the rank's thread for its whole run: every kernel
  // the rank calls splits its outputs over it (core/cpu_pool.h)
  const zt::RankThreads threads(c.threads);
  if (c.mp_size == 1 && !c.hybrid_sharding() && c.pp_size == 1) {
    zt::zero::RankGroups groups{world};
    groups.device_dp = device.group;
    groups.gpu = device.gpu;
    return zt::announcing_errors([&] { return zt::predict::train_zero(c, data, groups, on_step, artifacts); });
  }
  zt::Grid grid = zt::make_grid(world, zt::GridDims{static_cast<int>(c.mp_size), static_cast<int>(c.pp_size),
                                                    static_cast<int>(c.resolved_shard_group())});
  std::optional<zt::HybridGroup> hybrid;  // --shard-group G < N_d: ZeRO shards over G ranks
  if (grid.shard) hybrid.emplace(*grid.shard, *grid.replica, *grid.dp);
  return zt::announcing_errors([&] {
    return zt::predict::train_zero(
        c, data, {*grid.dp, c.mp_size > 1 ? grid.mp.get() : nullptr, hybrid ? &*hybrid : nullptr, grid.pp.get()},
        on_step, artifacts);
  });
}

/// The errors of the ranks that failed, one line per distinct message, on stderr. The ranks
/// that failed on their own come first: they are the cause; the others only stopped because of
/// them (zt::PeerFailed), and say so after. A message several ranks raised word for word (every
/// rank of a symmetric step runs out of memory at the same allocation) is printed once, by the
/// lowest of them, with the others named. @return the exit status (0: no rank failed).
template <typename Outcomes>
int report_failed_ranks(const Outcomes& outcomes) {
  int status = 0;
  for (const bool echoes : {false, true}) {
    std::vector<std::pair<std::string, std::vector<std::size_t>>> messages;  // in rank order of first
    for (std::size_t q = 0; q < outcomes.size(); ++q) {
      if (outcomes[q].ok() || outcomes[q].peer_failed != echoes) continue;
      auto same = std::find_if(messages.begin(), messages.end(), [&](auto& m) { return m.first == outcomes[q].error; });
      if (same == messages.end()) same = messages.insert(messages.end(), {outcomes[q].error, {}});
      same->second.push_back(q);
      if (status == 0) status = echoes ? zt::kExitPeerFailed : zt::kExitError;
    }
    for (const auto& [message, ranks] : messages) {
      std::string who = "rank " + std::to_string(ranks[0]);
      for (std::size_t k = 1; k < ranks.size(); ++k)
        who += (k == 1 ? (ranks.size() > 2 ? " (and ranks " : " (and rank ") : ", ") + std::to_string(ranks[k]);
      if (ranks.size() > 1) who += ")";
      std::fprintf(stderr, "zero-train: %s %s: %s\n", echoes ? "stopped because a peer failed:" : "error:", who.c_str(),
                   message.c_str());
    }
  }
  return status;
}

int run_thread_ranks(const TrainConfig& c, const zt::Dataset& data, bool nccl) {
  zt::ThreadGroup group = zt::thread_group(static_cast<int>(c.world_size));
  group.base.mode = rank_options(c).mode;
  group.base.accumulation = rank_options(c).accumulation;
  std::vector<RunArtifacts> arts(static_cast<std::size_t>(c.world_size));
  auto outcomes = zt::run_thread_ranks(static_cast<int>(c.world_size), [&](int r) {
    zt::GlooCollective coll(group.for_rank(r));
    // rank 0 reports progress and the held-out evaluations, as the single-rank run does
    return train_on_grid(c, data, coll, r == 0 ? progress_printer(c) : zt::train::StepCallback{},
                         &arts[static_cast<std::size_t>(r)], rank_device(c, nccl, r, r, group.base.store));
  });
  if (const int status = report_failed_ranks(outcomes); status != 0) return status;
  RunResult r = outcomes[0].value->run;
  r.memory.clear();
  std::vector<std::vector<zt::zero::TimelineEvent>> timelines;
  for (const auto& o : outcomes) {
    r.memory.push_back(o.value->run.memory.front());
    timelines.push_back(o.value->timeline);
  }
  if (!c.trace.empty()) zt::write_file_atomic(c.trace, zt::zero::chrome_trace_json(timelines));
  if (!c.memory_trace.empty())
    zt::write_file_atomic(c.memory_trace, zt::report::arena_trace_json(outcomes[0].value->arena_trace, c));
  return write_outputs(c, data, r, arts[0], &*outcomes[0].value);
}

int run_spawned_processes(const TrainConfig& c, int argc, char** argv) {
  std::vector<std::string> command{zt::launch::self_executable()};
  command.insert(command.end(), argv + 1, argv + argc);  // each rank parses the same flags
  zt::launch::SpawnOptions o;
  o.world_size = static_cast<int>(c.world_size);
  o.name = "zero-train";
  o.report = true;
  o.plain_rank0_stdout = true;        // rank 0 speaks for the job, as it does when ranks are threads
  o.collapse_repeated_stderr = true;  // an error every rank meets (out of memory) is said once
  return zt::launch::spawn_ranks(command, o).status;
}

/// What a launched rank does once it has joined the job: train, then send its report to rank 0.
int launched_rank_body(const TrainConfig& c, const zt::Dataset& data, const zt::launch::RankEnv& env,
                       const std::shared_ptr<gloo::rendezvous::Store>& shared_store, zt::GlooCollective& coll,
                       bool nccl) {
  RunArtifacts artifacts;
  gloo::rendezvous::Store& store = *shared_store;
  const zt::zero::ZeroRunResult res =
      train_on_grid(c, data, coll, env.rank == 0 ? progress_printer(c) : zt::train::StepCallback{}, &artifacts,
                    rank_device(c, nccl, env.rank, env.local_rank, shared_store));
  // per-rank memory (and timeline) travel to rank 0 as JSON through the store
  auto put = [&](const std::string& key, const std::string& text) {
    store.set("zero-train/" + key + "/" + std::to_string(env.rank), std::vector<char>(text.begin(), text.end()));
  };
  auto get = [&](const std::string& key, int q) {
    const auto bytes = store.get("zero-train/" + key + "/" + std::to_string(q));
    return std::string(bytes.begin(), bytes.end());
  };
  put("memory", zt::report::rank_memory_json(res.run.memory.front()));
  if (!c.trace.empty()) put("timeline", zt::zero::timeline_to_json(res.timeline));
  int status = 0;
  if (env.rank == 0) {
    RunResult r = res.run;
    r.memory.clear();
    std::vector<std::vector<zt::zero::TimelineEvent>> timelines;
    for (int q = 0; q < env.world_size; ++q) {
      r.memory.push_back(zt::report::rank_memory_from_json(get("memory", q)));
      if (!c.trace.empty()) timelines.push_back(zt::zero::timeline_from_json(get("timeline", q)));
    }
    if (!c.trace.empty()) zt::write_file_atomic(c.trace, zt::zero::chrome_trace_json(timelines));
    if (!c.memory_trace.empty())
      zt::write_file_atomic(c.memory_trace, zt::report::arena_trace_json(res.arena_trace, c));
    status = write_outputs(c, data, r, artifacts, &res);
  }
  coll.barrier();  // rank 0 has read every report before the store (served by rank 0 or the launcher) goes away
  return status;
}

/// One rank of a job of processes. Its errors are announced before its connections close
/// (core/error_report.h): a launcher that sees the other ranks exit may stop this one next.
int run_launched_rank(const TrainConfig& c, const zt::Dataset& data, const zt::launch::RankEnv& env, bool nccl) {
  zt::EarlyErrorReport early_report("zero-train");
  zt::GlooOptions o = rank_options(c);
  o.rank = env.rank;
  o.prefix = "zero-train";
  // bind where the peers can reach this rank (launch/bind_address.h), and prove it before Gloo's
  // own rendezvous (collective/reachability.h)
  const zt::launch::StoreSpec spec = zt::launch::select_store(env);
  const std::string meeting = !env.master_addr.empty() ? env.master_addr : spec.host;
  const char* env_ifname = std::getenv("GLOO_SOCKET_IFNAME");
  const zt::launch::BindChoice bind =
      zt::launch::choose_bind_address(c.local_addr, c.socket_ifname, env_ifname ? env_ifname : "", meeting);
  o.hostname = bind.address;
  o.bind_reason = bind.reason;
  o.check_reachability = true;
  const auto store = zt::launch::open_store(env, o.timeout);
  o.store = store;
  zt::GlooCollective coll(o);
  return zt::announcing_errors([&] { return launched_rank_body(c, data, env, store, coll, nccl); });
}

/// How many ranks of this job share this machine, for the default --threads: the ranks of this
/// process when they are threads; a launched rank's LOCAL_WORLD_SIZE (torchrun, zero-launch) or
/// OMPI_COMM_WORLD_LOCAL_SIZE (mpirun), else the whole world (the safe guess: no oversubscription).
int64_t local_ranks(RunMode mode, const TrainConfig& c) {
  if (mode == RunMode::reference) return 1;
  if (mode == RunMode::launched_rank)
    for (const char* name : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"})
      if (const char* v = std::getenv(name); v && std::atoll(v) >= 1) return std::atoll(v);
  return c.world_size;
}

/// What decides NCCL or Gloo for this rank (train/collective_choice.h). @param c the settings.
/// @param mode how the ranks run. @return the facts.
zt::train::CollectiveFacts collective_facts(const TrainConfig& c, RunMode mode) {
  zt::train::CollectiveFacts f;
  f.device = c.device;
  f.world_size = c.world_size;
  f.local_ranks = local_ranks(mode == RunMode::spawned_processes ? RunMode::thread_ranks : mode, c);
  f.gpus = c.device == zt::device::Device::cuda ? zt::device::probe_cuda().devices : 0;
#if defined(ZT_WITH_NCCL)
  f.nccl_built = true;
#endif
  f.plain_data_parallel = c.mp_size == 1 && c.pp_size == 1 && !c.hybrid_sharding();
  return f;
}

/// The threads each rank computes with, said once at the start (rank 0).
void announce_threads(const TrainConfig& c) {
  if (c.threads_given)
    std::printf("zero-train: %lld thread%s per rank (--threads)\n", static_cast<long long>(c.threads),
                c.threads == 1 ? "" : "s");
  else
    std::printf(
        "zero-train: %lld thread%s per rank (the default: its CPUs / its ranks on this machine; see "
        "--threads)\n",
        static_cast<long long>(c.threads), c.threads == 1 ? "" : "s");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("zero-train", [&] {
    TrainConfig c;
    std::vector<std::string> given;
    if (!zt::train::parse_train_config(argc, argv, c, &given)) return 0;
    // under a launcher the world size comes from it; a --world-size that disagrees is an error
    const zt::launch::RankEnv env = zt::launch::parse_rank_env(zt::launch::process_env());
    const bool flag_given = std::find(given.begin(), given.end(), "world-size") != given.end();
    const auto decision =
        zt::launch::decide_launch(flag_given ? std::optional<int64_t>(c.world_size) : std::nullopt, env);
    c.world_size = decision.world_size;
    zt::train::resolve_micro_batch(c);
    zt::train::validate(c);
    if (c.print_step) return std::fputs(zt::plan::printed_step(c).c_str(), stdout), 0;  // plan/print_step.h
    const RunMode mode = run_mode(c, decision);
    // NCCL or Gloo between the ranks, and the device: each refused in one line here, on every rank,
    // before any rank waits on another
    const bool nccl = zt::train::use_nccl(c.collective, collective_facts(c, mode));
    zt::device::require_device(c.device);
    // every place a flag names is created (or refused, in one line) before any rank starts
    for (const zt::OutputPlace& place : c.output_places()) zt::prepare_output_place(place);
    if (mode == RunMode::spawned_processes) return run_spawned_processes(c, argc, argv);
    zt::train::resolve_threads(c, local_ranks(mode, c));
    if (env.rank == 0) announce_threads(c);
    const auto data = zt::make_dataset(c.data, static_cast<std::size_t>(c.context), static_cast<int>(c.digits));
    if (!c.dump_manifest.empty() && env.rank == 0)
      zt::write_file_atomic(c.dump_manifest, zt::report::manifest_json(c, c.vocab ? c.vocab : data->vocab_size()));
    switch (mode) {
      case RunMode::reference:
        return run_reference(c, *data);
      case RunMode::thread_ranks:
        return run_thread_ranks(c, *data, nccl);
      case RunMode::launched_rank:
        return run_launched_rank(c, *data, env, nccl);
      case RunMode::spawned_processes:
        break;  // handled above: the spawner opens no dataset
    }
    ZT_FAIL("unreachable run mode");
  });
}
