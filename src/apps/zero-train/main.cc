// zero-train — train a GPT-2-style model with mixed precision (the project's main program).
//
// Parses the flags (train/train_config.h), builds the dataset (embedded addition language, or a
// byte-level --data file), runs the loop, prints a progress line on a terminal and a final
// summary, and writes the requested JSON and raw dumps atomically. --world-size 1 --stage 0 runs
// the single-rank reference loop (train/single_rank.h); anything else runs the ZeRO engine
// (zero/train_zero.h) on N ranks: threads of this process (--ranks-as threads), N child processes
// of this program (the default, launch/spawn.h), or the ranks an outside launcher started
// (torchrun / zero-launch variables). All work happens in the modules; this file only wires them
// to the command line.
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>
#include <memory>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/cli.h"
#include "data/addition.h"
#include "data/dataset.h"
#include "collective/gloo_collective.h"
#include "collective/store.h"
#include "collective/thread_ranks.h"
#include "launch/rank_env.h"
#include "launch/spawn.h"
#include "launch/store_spec.h"
#include "model/manifest.h"
#include "train/single_rank.h"
#include "train/step_start.h"
#include "train/summary_json.h"
#include "zero/report.h"
#include "zero/train_zero.h"

namespace {

std::unique_ptr<zt::Dataset> open_dataset(const zt::train::TrainConfig& c) {
  if (!c.data.empty()) return zt::make_dataset(c.data, static_cast<std::size_t>(c.context));
  zt::AdditionConfig a;
  a.context = static_cast<std::size_t>(c.context);
  a.digits = static_cast<int>(c.digits);
  return std::make_unique<zt::AdditionDataset>(a);
}

template <typename V>
void dump_raw(const std::string& path, const V& values) {
  // raw little-endian: this program only builds for little-endian hosts (x86-64, aarch64)
  static_assert(std::endian::native == std::endian::little, "dumps are little-endian");
  zt::write_file_atomic(path, values.data(), values.size() * sizeof(values[0]));
}

void print_summary(const zt::train::TrainConfig& c, const zt::train::RunResult& r) {
  std::printf("zero-train: %s, %lld parameters, %s, %s\n", r.dataset.c_str(),
              static_cast<long long>(r.param_count), c.precision.c_str(), c.optimizer.c_str());
  if (!r.steps.empty()) {
    std::printf("  loss  step 1: %.6f   step %lld: %.6f\n", static_cast<double>(r.steps.front().loss),
                static_cast<long long>(r.steps.back().step), static_cast<double>(r.steps.back().loss));
    int skipped = 0;
    for (const auto& s : r.steps) skipped += s.skipped;
    if (skipped) std::printf("  skipped steps (fp16 overflow): %d\n", skipped);
    if (!zt::reaches_peak(zt::train::lr_schedule(c)))
      std::printf("  learning rate: the %lld-step warm-up outlasts the run; it ended at %g, below the peak --lr %g\n",
                  static_cast<long long>(c.resolved_warmup_steps()), static_cast<double>(r.steps.back().lr), c.lr);
  }
  if (!r.evals.empty()) {
    const auto& e = r.evals.back();
    std::printf("  held-out: loss %.6f, exact-match accuracy %.1f%% of %zu problems\n",
                static_cast<double>(e.loss), 100.0 * e.accuracy, e.problems);
  }
  if (r.frozen_fraction >= 0)
    std::printf("  16-bit parameters unchanged by the last step: %.2f%%, over the last %lld steps: %.2f%%\n",
                100.0 * r.frozen_fraction, static_cast<long long>(r.frozen_window_steps),
                100.0 * r.frozen_window_fraction);
  const auto& m = r.memory.front();
  std::printf("  memory: model states %zu B (predicted %zu), peak %zu B of %zu B budget\n",
              m.model_states_bytes, m.model_states_bytes_predicted, m.peak_bytes, m.arena_capacity);
  std::printf("  speed: %.0f tokens/s over %.2f s\n", r.tokens_per_s, r.seconds);
}


/// The per-step callback of rank 0 (or the single rank): a line per held-out evaluation on
/// stdout, terminal or not (make run logs them), and a progress line on a terminal's stderr.
zt::train::StepCallback progress_printer(const zt::train::TrainConfig& c) {
  const bool tty = ::isatty(STDERR_FILENO);
  return [&c, tty, evals_shown = std::size_t{0}](const zt::train::StepRecord& s, const zt::train::RunResult& r) mutable {
    for (; evals_shown < r.evals.size(); ++evals_shown) {
      const auto& e = r.evals[evals_shown];
      if (tty) std::fputc('\n', stderr);
      std::printf("step %lld: loss %.4f, held-out loss %.4f, exact match %.1f%% of %zu problems\n",
                  static_cast<long long>(e.step), static_cast<double>(s.loss),
                  static_cast<double>(e.loss), 100.0 * e.accuracy, e.problems);
      std::fflush(stdout);
    }
    if (!tty) return;
    std::fprintf(stderr, "\rstep %lld/%lld  loss %.4f  scale %g%s  %.0f tok/s   ",
                 static_cast<long long>(s.step), static_cast<long long>(c.steps),
                 static_cast<double>(s.loss), static_cast<double>(s.loss_scale),
                 s.skipped ? " (skipped)" : "", r.tokens_per_s);
    if (s.step == c.steps) std::fputc('\n', stderr);
  };
}

/// The collective options every rank of one job shares (store and prefix set by the caller).
zt::GlooOptions rank_options(const zt::train::TrainConfig& c) {
  zt::GlooOptions o;
  o.size = static_cast<int>(c.world_size);
  o.mode = c.collective_mode == "fast" ? zt::ReduceMode::fast : zt::ReduceMode::deterministic;
  // --reduce-dtype compute: 16-bit sums round after every add, as a 16-bit wire format would
  o.accumulation = c.reduce_dtype == "compute" ? zt::Accumulation::storage : zt::Accumulation::fp32;
  o.timeout = std::chrono::milliseconds(120000);
  return o;
}

/// Write every output of a finished job (rank 0 / the main thread only).
int finish_job(const zt::train::TrainConfig& c, const zt::Dataset& data, zt::train::RunResult r,
               const zt::zero::ZeroRunResult& rank0, const zt::train::RunArtifacts& artifacts) {
  const int64_t vocab = c.vocab ? c.vocab : data.vocab_size();
  if (!c.dump_params.empty()) dump_raw(c.dump_params, artifacts.final_params);
  if (!c.dump_grads.empty()) {
    ZT_CHECK(c.steps >= 1, "--dump-grads needs at least one step");
    dump_raw(c.dump_grads, artifacts.step1_grad);
  }
  if (!c.dump_batch.empty()) {  // a pure function of (seed, step, index): regenerate step 1's batch
    ZT_CHECK(c.steps >= 1, "--dump-batch needs at least one step");
    std::vector<int32_t> batch(static_cast<std::size_t>(c.global_batch * (c.context + 1)));
    for (int64_t i = 0; i < c.global_batch; ++i)
      data.sample(static_cast<uint64_t>(c.seed), 1, static_cast<uint64_t>(i), batch.data() + i * (c.context + 1));
    dump_raw(c.dump_batch, batch);
  }
  int status = 0;
  std::string verdict;
  if (c.verify) {
    zt::train::TrainConfig ref = c;
    ref.stage = 0;
    ref.world_size = 1;
    zt::train::RunArtifacts ref_art;
    ref.dump_params = "verify";
    const auto ref_result = zt::train::train_single_rank(ref, data, {}, &ref_art);
    const auto manifest = zt::model::make_manifest({vocab, c.context, c.layers, c.heads, c.width});
    verdict = zt::zero::first_difference(manifest, artifacts.final_params, ref_art.final_params);
    bool steps_equal = ref_result.steps.size() == r.steps.size();
    for (std::size_t i = 0; steps_equal && i < r.steps.size(); ++i) {
      const auto& a = r.steps[i];
      const auto& b = ref_result.steps[i];
      steps_equal = std::bit_cast<uint32_t>(a.loss) == std::bit_cast<uint32_t>(b.loss) &&
                    std::bit_cast<uint32_t>(a.loss_scale) == std::bit_cast<uint32_t>(b.loss_scale) &&
                    a.skipped == b.skipped && a.grad_norm.has_value() == b.grad_norm.has_value() &&
                    (!a.grad_norm || std::bit_cast<uint32_t>(*a.grad_norm) == std::bit_cast<uint32_t>(*b.grad_norm));
    }
    // the held-out evaluations too: rank 0's combine every rank's rounds (zero/heldout_eval.h)
    bool evals_equal = ref_result.evals.size() == r.evals.size();
    for (std::size_t i = 0; evals_equal && i < r.evals.size(); ++i) {
      const auto& a = r.evals[i];
      const auto& b = ref_result.evals[i];
      evals_equal = a.step == b.step && std::bit_cast<uint32_t>(a.loss) == std::bit_cast<uint32_t>(b.loss) &&
                    a.accuracy == b.accuracy && a.problems == b.problems;
    }
    if (verdict.empty() && steps_equal && evals_equal) {
      std::printf("verify: final FP32 master weights, every step's loss, grad_norm, loss_scale, "
                  "skipped and every held-out evaluation are bitwise equal to the single-rank reference\n");
    } else {
      std::printf("verify: NOT bitwise equal to the single-rank reference: %s%s%s\n",
                  verdict.empty() ? "master weights equal" : ("first differing parameter " + verdict).c_str(),
                  steps_equal ? "" : "; per-step records differ", evals_equal ? "" : "; held-out evaluations differ");
      status = 1;
    }
  }
  if (!c.summary_json.empty()) {
    auto j = nlohmann::ordered_json::parse(zt::train::summary_json(c, r));
    j["config"]["stage"] = c.stage;
    j["config"]["world_size"] = c.world_size;
    j["config"]["grad_sync"] = c.resolved_grad_sync();
    j["config"]["bucket_mb"] = c.bucket_mb;
    j["config"]["prefetch"] = c.prefetch;
    j["config"]["overlap"] = c.overlap;
    j["config"]["collective_mode"] = c.collective_mode;
    j["comm"] = nlohmann::ordered_json::parse(zt::zero::comm_json(rank0.comm_per_step, rank0.comm_predicted_per_step));
    if (c.verify) j["verify"] = {{"bitwise_equal", status == 0}, {"first_difference", verdict}};
    zt::write_file_atomic(c.summary_json, j.dump(2) + "\n");
  }
  print_summary(c, r);
  return status;
}

/// --ranks-as threads: N ranks in this process over an in-memory store.
int run_threads(const zt::train::TrainConfig& c, const zt::Dataset& data) {
  zt::ThreadGroup group = zt::thread_group(static_cast<int>(c.world_size));
  group.base.mode = rank_options(c).mode;
  group.base.accumulation = rank_options(c).accumulation;
  std::vector<zt::train::RunArtifacts> arts(static_cast<std::size_t>(c.world_size));
  auto outcomes = zt::run_thread_ranks(static_cast<int>(c.world_size), [&](int r) {
    zt::GlooCollective coll(group.for_rank(r));
    // rank 0 reports progress and the held-out evaluations, as the single-rank run does
    return zt::zero::train_zero(c, data, coll, r == 0 ? progress_printer(c) : zt::train::StepCallback{},
                                &arts[static_cast<std::size_t>(r)]);
  });
  for (std::size_t r = 0; r < outcomes.size(); ++r)
    if (!outcomes[r].ok()) {
      for (std::size_t q = 0; q < outcomes.size(); ++q)
        if (!outcomes[q].ok()) std::fprintf(stderr, "zero-train: rank %zu: %s\n", q, outcomes[q].error.c_str());
      return 1;
    }
  zt::train::RunResult r = outcomes[0].value->run;
  r.memory.clear();
  std::vector<std::vector<zt::zero::TimelineEvent>> timelines;
  for (const auto& o : outcomes) {
    r.memory.push_back(o.value->run.memory.front());
    timelines.push_back(o.value->timeline);
  }
  if (!c.trace.empty()) zt::write_file_atomic(c.trace, zt::zero::chrome_trace_json(timelines));
  return finish_job(c, data, r, *outcomes[0].value, arts[0]);
}

/// One rank of a job whose processes a launcher started (or this program spawned).
int run_launched_rank(const zt::train::TrainConfig& c, const zt::Dataset& data, const zt::launch::RankEnv& env) {
  const zt::launch::StoreSpec spec = zt::launch::select_store(env);
  zt::GlooOptions o = rank_options(c);
  o.rank = env.rank;
  o.prefix = "zero-train";
  std::shared_ptr<gloo::rendezvous::Store> store;
  switch (spec.kind) {
    case zt::launch::StoreSpec::Kind::kTcp:
      store = zt::launch::open_tcp_store(spec, env.rank, o.timeout);
      break;
    case zt::launch::StoreSpec::Kind::kFile:
      store = zt::make_store("file:" + spec.path);
      break;
    case zt::launch::StoreSpec::Kind::kRedis:
      store = zt::make_store("redis:" + spec.host + ":" + std::to_string(spec.port));
      break;
    case zt::launch::StoreSpec::Kind::kNone:
      ZT_CHECK(false, "rank ", env.rank, " of ", env.world_size,
               ": no rendezvous store (set MASTER_ADDR and MASTER_PORT, or ZT_STORE)");
  }
  o.store = store;
  zt::GlooCollective coll(o);
  zt::train::RunArtifacts artifacts;
  const zt::zero::ZeroRunResult res = zt::zero::train_zero(
      c, data, coll, env.rank == 0 ? progress_printer(c) : zt::train::StepCallback{}, &artifacts);
  // per-rank memory travels to rank 0 as JSON through the store
  store->set("zero-train/memory/" + std::to_string(env.rank),
             [&] { auto t = zt::zero::rank_memory_to_json(res.run.memory.front()); return std::vector<char>(t.begin(), t.end()); }());
  if (!c.trace.empty()) {
    const std::string t = zt::zero::timeline_to_json(res.timeline);
    store->set("zero-train/timeline/" + std::to_string(env.rank), std::vector<char>(t.begin(), t.end()));
  }
  int status = 0;
  if (env.rank == 0) {
    zt::train::RunResult r = res.run;
    r.memory.clear();
    std::vector<std::vector<zt::zero::TimelineEvent>> timelines;
    for (int q = 0; q < env.world_size; ++q) {
      const auto bytes = store->get("zero-train/memory/" + std::to_string(q));
      r.memory.push_back(zt::zero::rank_memory_from_json(std::string(bytes.begin(), bytes.end())));
      if (!c.trace.empty()) {
        const auto t = store->get("zero-train/timeline/" + std::to_string(q));
        timelines.push_back(zt::zero::timeline_from_json(std::string(t.begin(), t.end())));
      }
    }
    if (!c.trace.empty()) zt::write_file_atomic(c.trace, zt::zero::chrome_trace_json(timelines));
    status = finish_job(c, data, r, res, artifacts);
  }
  coll.barrier();  // rank 0 has read every report before the store's server (rank 0) goes away
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("zero-train", [&] {
    zt::train::TrainConfig c;
    if (!zt::train::parse_train_config(argc, argv, c)) return 0;
    const zt::launch::RankEnv env = zt::launch::parse_rank_env(zt::launch::process_env());
    // under a launcher the world size comes from it; a --world-size that disagrees is an error
    std::optional<int64_t> flag;
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]).rfind("--world-size", 0) == 0) flag = c.world_size;
    const auto decision = zt::launch::decide_launch(flag, env);
    c.world_size = decision.world_size;
    zt::train::validate(c);
    if (decision.mode == zt::launch::LaunchDecision::Mode::kSpawn && c.ranks_as == "processes") {
      std::vector<std::string> command{zt::launch::self_executable()};
      for (int i = 1; i < argc; ++i) command.emplace_back(argv[i]);
      zt::launch::SpawnOptions o;
      o.world_size = static_cast<int>(c.world_size);
      o.name = "zero-train";
      o.report = true;
      return zt::launch::spawn_ranks(command, o).status;
    }
    auto data = open_dataset(c);
    const int64_t vocab = c.vocab ? c.vocab : data->vocab_size();
    if (!c.dump_manifest.empty() && env.rank == 0) zt::write_file_atomic(c.dump_manifest, zt::train::manifest_json(c, vocab));
    // a launcher's world of one needs no rendezvous: run it like a plain single process
    if (decision.mode == zt::launch::LaunchDecision::Mode::kLaunched && c.world_size > 1)
      return run_launched_rank(c, *data, env);
    if (c.world_size > 1 || c.stage > 0) {
      if (c.world_size == 1 || c.ranks_as == "threads") return run_threads(c, *data);
    }
    zt::train::RunArtifacts artifacts;
    const zt::train::RunResult r = zt::train::train_single_rank(c, *data, progress_printer(c), &artifacts);
    if (!c.dump_params.empty()) dump_raw(c.dump_params, artifacts.final_params);
    if (!c.dump_grads.empty()) {
      ZT_CHECK(c.steps >= 1, "--dump-grads needs at least one step");
      dump_raw(c.dump_grads, artifacts.step1_grad);
    }
    if (!c.dump_batch.empty()) {
      ZT_CHECK(c.steps >= 1, "--dump-batch needs at least one step");
      dump_raw(c.dump_batch, artifacts.step1_batch);
    }
    if (!c.summary_json.empty()) zt::write_file_atomic(c.summary_json, zt::train::summary_json(c, r));
    print_summary(c, r);
    return 0;
  });
}
