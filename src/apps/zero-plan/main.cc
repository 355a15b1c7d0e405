// zero-plan — plan a zero-train run before running it: per-rank bytes by ledger category, traffic
// per step by collective and group, an alpha-beta time estimate, the breakeven batch and the
// largest model that fits; or the paper's closed forms for a model of --params ψ.
//
// Its inputs are zero-train's own flags (any zero-train command line is a plan; --steps and the
// output flags are accepted and ignored, except --memory-trace FILE: there it writes rank 0's
// predicted arena trace, what zero-train --memory-trace writes for --steps 1) plus the planner's
// flags below, which are taken out of argv first. Every number comes from the src/plan library,
// which calls the same predictions the training engine checks itself against
// (predict/zero_memory.h, predict/zero_trace.h, predict/zero_comm.h, train/memory_plan.h). The printed lines are a
// stable format quoted by chapters and exercises: new lines may be added, existing ones are never reformatted. It
// trains nothing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/zero-plan/rank_report.h"
#include "core/atomic_file.h"
#include "core/check.h"
#include "core/cli.h"
#include "core/output_place.h"
#include "plan/max_model.h"
#include "plan/paper_scale.h"
#include "plan/print_step.h"
#include "plan/rank_prediction.h"
#include "plan/roofline.h"
#include "plan/time_estimate.h"
#include "report/report.h"
#include "train/train_config.h"
#include "train/train_flags.h"

namespace {

using nlohmann::ordered_json;
using zt::train::TrainConfig;
using namespace zt::zero_plan;

/// The planner's own settings (everything else is zero-train's).
struct PlanFlags {
  std::optional<double> params;  // ψ: paper scale instead of the shape
  double alpha_us = 10;          // α per collective call
  double beta_gbs = 100;         // β per rank, GB/s (1e9 bytes/s)
  double tflops = 150;           // sustained per rank
  double comm_fraction = 0.05;   // breakeven: communication at most this share of compute
  std::optional<int64_t> seq;    // T for the estimate; default --context, 2048 with --params
  std::optional<int64_t> batch;  // B sequences per rank per step; default --global-batch / N_d
  zt::plan::TrafficModel traffic_model = zt::plan::TrafficModel::exact;
  bool max_model = false;
  double budget_gb = 80;             // --max-model at paper scale
  bool layers_given = false;         // --layers on the command line; else at paper scale GPT-3's depth for ψ
  std::optional<zt::plan::Gpu> gpu;  // --device cuda: the step on this GPU's roofline
  double launch_us = 3;              // the cost of one kernel launch
  std::string json;
};

zt::ArgParser plan_parser(PlanFlags& f) {
  zt::ArgParser p("zero-plan",
                  "Plan a zero-train run: per-rank bytes, traffic per step, time estimate, breakeven batch,\n"
                  "largest model. Its inputs are every zero-train flag (the run to plan) and these:");
  p.add_double("params", &f.params,
               "plan a model of this many parameters by the paper's formulas (e.g. 7.5e9); without --layers the "
               "call count takes GPT-3's depth for it, L = round(cbrt(psi / (12 x 128^2))): 34 for 7.5e9; without "
               "--seq the time estimate and the breakeven take GPT-3's context, T = 2048 tokens",
               "off: the shape of --layers/--width/...", 1, 1e16);
  p.add_double("alpha-us", &f.alpha_us, "latency per collective call, microseconds", 0, 1e9);
  p.add_double("beta-gbs", &f.beta_gbs, "bandwidth per rank, GB/s (1 GB = 1e9 bytes)", 1e-9, 1e9);
  p.add_double("tflops", &f.tflops, "sustained compute per rank, TFLOP/s", 1e-9, 1e9);
  p.add_double("comm-fraction", &f.comm_fraction, "breakeven: communication at most this fraction of compute", 1e-9,
               1e9);
  p.add_int("seq", &f.seq, "tokens per sequence T of the estimate and the breakeven",
            "--context; with --params 2048, GPT-3's context", 1, int64_t{1} << 40);
  p.add_int("batch", &f.batch, "sequences per rank per step B of the estimate", "--global-batch / N_d (at least 1)", 1,
            int64_t{1} << 40);
  p.add_enum("traffic-model", &f.traffic_model,
             "paper-scale traffic: exact keeps (N-1)/N, paper drops it (6 psi bytes per step for ZeRO-3)");
  p.add_flag("max-model", &f.max_model,
             "find the largest model that fits: psi under --budget-gb (with --params), else --layers under "
             "--memory-budget-mb");
  p.add_double("budget-gb", &f.budget_gb, "per-rank budget of --max-model --params, GB", 1e-9, 1e12);
  p.add_enum("gpu", &f.gpu,
             "with --device cuda: predict the step on this GPU's roofline (published peaks): each kernel's time, "
             "the launches, tokens/s and MFU",
             "off");
  p.add_double("launch-us", &f.launch_us, "the roofline's cost of one kernel launch, microseconds", 0, 1e6);
  p.add_string("json", &f.json, "also write the plan as JSON to this file (atomically)");
  return p;
}

/// A flag neither the planner nor zero-train declares gets one error that suggests the nearest
/// names of both (zero-train's parser alone would offer only its own).
void reject_unknown(const zt::ArgParser& planner, const std::string& name) {
  TrainConfig ignored;
  zt::ArgParser train("zero-train", "");
  zt::train::declare_train_flags(train, ignored);
  if (train.flag(name) != nullptr || name == "help" || name == "help-markdown") return;
  const std::string ours = planner.suggestion(name), theirs = train.suggestion(name);
  const std::string meant = ours.empty() ? theirs : theirs.empty() ? ours : ours + " or " + theirs;
  ZT_FAIL("unknown flag --", name, meant.empty() ? "" : "; did you mean " + meant + "?", " (see --help)");
}

/// Split argv into the planner's flags (those its parser declares) and zero-train's (both keep
/// argv[0]).
void split_args(const zt::ArgParser& planner, int argc, char** argv, std::vector<char*>& plan,
                std::vector<char*>& train, bool& help) {
  plan.push_back(argv[0]);
  train.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      help = true;
      continue;
    }
    if (a == "--help-markdown") {  // the planner's own flags as Markdown (docs/cli.md)
      plan.push_back(argv[i]);
      continue;
    }
    const std::string name = a.rfind("--", 0) == 0
                                 ? a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2)
                                 : std::string();
    if (const zt::ArgParser::Flag* own = name.empty() ? nullptr : planner.flag(name)) {
      plan.push_back(argv[i]);
      if (own->takes_value && a.find('=') == std::string::npos && i + 1 < argc) plan.push_back(argv[++i]);
    } else {
      if (!name.empty()) reject_unknown(planner, name);
      train.push_back(argv[i]);
    }
  }
}

const char* stage_name(int64_t stage) {
  static const char* names[] = {"plain data parallel", "P_os", "P_os+g", "P_os+g+p"};
  return names[stage];
}

/// The time estimate and the breakeven, printed and put in the JSON (both modes).
void time_section(const PlanFlags& f, const TrainConfig& c, double psi_rank, double calls, double bytes,
                  const zt::plan::PaperQuestion& paper_q, ordered_json& out) {
  zt::plan::TimeInputs in;
  in.alpha_s = f.alpha_us * 1e-6;
  in.beta_bytes_s = f.beta_gbs * 1e9;
  in.flops = f.tflops * 1e12;
  in.flops_per_param_token = c.checkpoint_activations ? 8 : 6;
  in.comm_fraction = f.comm_fraction;
  // T: --seq; else at paper scale GPT-3's context (the family whose depth ψ takes), else the run's own
  const bool gpt3_seq = !f.seq && f.params;
  const int64_t seq = f.seq ? *f.seq : gpt3_seq ? zt::plan::kGpt3Context : c.context;
  const int64_t batch = f.batch ? *f.batch : std::max<int64_t>(1, c.global_batch / c.dp_size());
  const auto e = zt::plan::estimate_step(in, psi_rank, static_cast<double>(batch * seq), calls, bytes);
  std::printf(
      "time estimate: alpha %g us, beta %g GB/s, %g TFLOP/s, %g psi flops per token, B = %lld sequences x T = "
      "%lld tokens%s per rank: compute %.6g s, communication %.6g s (%.0f calls, %.0f B), communication/compute "
      "%.6g\n",
      f.alpha_us, f.beta_gbs, f.tflops, in.flops_per_param_token, static_cast<long long>(batch),
      static_cast<long long>(seq), gpt3_seq ? " (the default with --params: GPT-3's context)" : "", e.compute_s,
      e.comm_s, calls, bytes, e.ratio);
  // the breakeven uses the paper-scale traffic of this ψ and stage: it does not change with B
  const auto a = zt::plan::paper_answer(paper_q);
  const int64_t b =
      zt::plan::breakeven_batch(in, paper_q.psi, static_cast<double>(seq), a.calls_per_step, a.bytes_per_step);
  std::printf(
      "breakeven: communication <= %g of compute from B = %lld sequences of T = %lld tokens per rank per step "
      "(%s traffic model: %.0f B and %.0f calls per step at psi = %.6g)\n",
      f.comm_fraction, static_cast<long long>(b), static_cast<long long>(seq),
      zt::word_of(paper_q.traffic_model).c_str(), a.bytes_per_step, a.calls_per_step, paper_q.psi);
  out["time_estimate"] = {{"alpha_us", f.alpha_us}, {"beta_gbs", f.beta_gbs},
                          {"tflops", f.tflops},     {"flops_per_param_token", in.flops_per_param_token},
                          {"batch", batch},         {"seq", seq},
                          {"psi", psi_rank},        {"calls", calls},
                          {"bytes", bytes},         {"compute_s", e.compute_s},
                          {"comm_s", e.comm_s},     {"ratio", e.ratio}};
  out["time_estimate"]["seq_from"] = f.seq ? "--seq" : gpt3_seq ? "gpt3_context" : "--context";  // where T came from
  out["breakeven"] = {{"comm_fraction", f.comm_fraction},
                      {"batch", b},
                      {"seq", seq},
                      {"traffic_model", zt::word_of(paper_q.traffic_model)},
                      {"bytes_per_step", a.bytes_per_step},
                      {"calls_per_step", a.calls_per_step},
                      {"psi", paper_q.psi}};
}

zt::plan::PaperQuestion paper_question(const TrainConfig& c, const PlanFlags& f, double psi) {
  zt::plan::PaperQuestion q;
  // a model-parallel rank holds ψ / N_m; a pipeline stage ψ / N_p (the blocks split evenly: at paper
  // scale the embedding's and the head's share is not told apart)
  q.psi = psi / static_cast<double>(c.mp_size) / static_cast<double>(c.pp_size);
  q.k = zt::optimizer_k(zt::word_of(c.optimizer));
  q.stage = static_cast<int>(c.stage);
  q.dp = static_cast<std::size_t>(c.resolved_shard_group());  // ZeRO shards over G (hybrid sharding) or N_d
  // a shape (no --params) has its real depth; a bare ψ takes GPT-3's unless --layers is given
  const long long layers = !f.params || f.layers_given ? c.layers : zt::plan::gpt3_shape_layers(psi);
  q.layers = std::max<long long>(1, layers / c.pp_size);  // a stage's blocks
  q.traffic_model = f.traffic_model;
  return q;
}

void plan_paper(const TrainConfig& c, const PlanFlags& f, ordered_json& out) {
  const double psi = *f.params;
  const auto q = paper_question(c, f, psi);
  const auto a = zt::plan::paper_answer(q);
  const auto n = static_cast<long long>(q.dp);
  std::printf("zero-plan: paper scale, psi = %.6g parameters, %s (K = %d), stage %lld (%s), N_d = %lld, N_m = %lld\n",
              psi, zt::word_of(c.optimizer).c_str(), q.k, static_cast<long long>(c.stage), stage_name(c.stage),
              static_cast<long long>(c.dp_size()), static_cast<long long>(c.mp_size));
  if (c.hybrid_sharding())
    std::printf("hybrid sharding: the states sharded over groups of G = %lld ranks, replicated across %lld groups\n", n,
                static_cast<long long>(c.dp_size()) / n);
  if (c.pp_size > 1)
    std::printf(
        "pipeline: N_p = %lld stages, each holding psi_s = psi / N_p = %.6g parameters (blocks split evenly); the "
        "activations across the cuts are not modelled at paper scale (they need b, s, h: plan a shape)\n",
        static_cast<long long>(c.pp_size), q.psi * static_cast<double>(c.mp_size));
  std::printf("model states per rank (GB = 1e9 bytes):\n");
  const auto spec = zt::shard_spec_for_stage(q.stage, q.dp);
  const char* psi_name = c.pp_size > 1 ? "psi_s" : "psi";  // a stage's share with a pipeline
  const struct {
    const char* name;
    int bytes_per_param;
    bool sharded;
    double bytes;
  } states[] = {{"params", 2, spec.params, a.states.params},
                {"grads", 2, spec.grads, a.states.grads},
                {"optimizer", q.k, spec.optimizer, a.states.optimizer}};
  for (const auto& s : states) {  // e.g. "params     2 psi / 4", "optimizer 12 psi"
    char what[64];
    std::snprintf(what, sizeof what, "%-9s %2d %s%s", s.name, s.bytes_per_param, psi_name,
                  s.sharded ? (" / " + std::to_string(n)).c_str() : "");
    bytes_line("", what, s.bytes);
  }
  bytes_line("", "total", a.states.total);
  std::printf("traffic per rank per step: %g %s elements of 2 B x %.6g (%s) = %.0f B = %s in %.6g calls (L = %lld%s)\n",
              a.elements_factor, psi_name, a.ring_factor,
              f.traffic_model == zt::plan::TrafficModel::paper ? "paper model, no (N-1)/N" : "(N-1)/N",
              a.bytes_per_step, gb(a.bytes_per_step).c_str(), a.calls_per_step, static_cast<long long>(q.layers),
              f.layers_given ? "" : ", GPT-3's depth for this psi");
  // hybrid sharding: each gradient reduction adds an all-reduce of this rank's 1/G of the 16-bit
  // gradient (2 psi / G bytes) over the R = N_d / G replicas, 2 (R - 1) / R of it sent
  double across = 0;
  if (c.hybrid_sharding()) {
    const double r = static_cast<double>(c.dp_size()) / static_cast<double>(n);
    across = 2.0 * (r - 1.0) / r * 2.0 * q.psi / static_cast<double>(n);
    std::printf(
        "traffic across shard groups per rank per step: 2 (R-1)/R x 2 psi / G = %.0f B = %s (R = %.0f); the "
        "line above stays inside the shard group\n",
        across, gb(across).c_str(), r);
  }
  out["mode"] = "paper";
  out["psi"] = psi;
  out["k"] = q.k;
  out["stage"] = c.stage;
  out["dp_size"] = c.dp_size();
  out["shard_group"] = n;
  out["mp_size"] = c.mp_size;
  out["pp_size"] = c.pp_size;
  out["model_states"] = {{"params", a.states.params},
                         {"grads", a.states.grads},
                         {"optimizer", a.states.optimizer},
                         {"total", a.states.total}};
  out["traffic"] = {{"model", zt::word_of(f.traffic_model)},
                    {"elements_factor", a.elements_factor},
                    {"ring_factor", a.ring_factor},
                    {"bytes_per_step", a.bytes_per_step},
                    {"calls_per_step", a.calls_per_step},
                    {"across_shard_groups_bytes_per_step", across},
                    {"layers", q.layers},
                    {"layers_given", f.layers_given}};
  time_section(f, c, q.psi, a.calls_per_step, a.bytes_per_step, q, out);
  if (f.max_model) {
    const double best = zt::plan::max_paper_psi(q, f.budget_gb * 1e9) * static_cast<double>(c.mp_size);
    std::printf("max model: psi = %.6g (%.0f parameters) fits %g GB of model states per rank\n", best, best,
                f.budget_gb);
    out["max_model"] = {{"budget_gb", f.budget_gb}, {"psi", best}};
  }
}

void plan_shape(const TrainConfig& c, const PlanFlags& f, ordered_json& out) {
  const int64_t vocab = zt::plan::resolve_vocab(c);
  const auto run = zt::plan::predict_run(c, vocab);
  std::printf(
      "zero-plan: gpt L=%lld H=%lld C=%lld T=%lld V=%lld, psi = %zu, %s, %s (K = %d), stage %lld, N_d = %lld, N_m = "
      "%lld, %lld x %lld sequences per rank per step, %s\n",
      static_cast<long long>(c.layers), static_cast<long long>(c.heads), static_cast<long long>(c.width),
      static_cast<long long>(c.context), static_cast<long long>(vocab), run.psi, zt::word_of(c.precision).c_str(),
      zt::word_of(c.optimizer).c_str(), zt::optimizer_k(zt::word_of(c.optimizer)), static_cast<long long>(c.stage),
      static_cast<long long>(c.dp_size()), static_cast<long long>(c.mp_size),
      static_cast<long long>(c.micro_batches_per_rank()), static_cast<long long>(c.micro_batch),
      run.reference_loop ? "single-rank reference loop" : "ZeRO engine");
  std::printf("memory per rank, predicted peak bytes by ledger category (GB = 1e9 bytes):\n");
  out["mode"] = "shape";
  out["psi"] = run.psi;
  out["vocab"] = vocab;
  out["reference_loop"] = run.reference_loop;
  out["arena_capacity"] = run.arena_capacity;
  ordered_json ranks = ordered_json::array();
  for (const auto& r : run.ranks) {
    const std::string label = rank_label(r, c);
    for (const auto& [name, bytes] : r.device) bytes_line(label, "device " + name, static_cast<double>(bytes));
    for (const auto& [name, bytes] : r.host) bytes_line(label, "host " + name, static_cast<double>(bytes));
    bytes_line(label, "model states", static_cast<double>(r.model_states_bytes));
    bytes_line(label, "peak (sum of categories)", static_cast<double>(r.peak_bytes));
    bytes_line(label, "high-water (replayed trace)", static_cast<double>(r.high_water_bytes));
    ranks.push_back(rank_json(r, c));
  }
  std::printf("arena capacity (--memory-budget-mb %g): %zu B\n", c.memory_budget_mb, run.arena_capacity);
  for (const auto& r : run.ranks)  // the predicted trace replayed through a first-fit arena of that capacity
    if (r.fit.ok)
      std::printf("  %s  fits: %zu allocations replayed, high-water %zu B\n", rank_label(r, c).c_str(),
                  allocations(r.trace), r.high_water_bytes);
    else
      std::printf("  %s  does not fit: %s (at allocation event %zu)\n", rank_label(r, c).c_str(), r.fit.message.c_str(),
                  r.fit.failed_event);
  if (!c.memory_trace.empty())  // rank 0's predicted trace, as zero-train --memory-trace writes it for --steps 1
    zt::write_file_atomic(c.memory_trace, zt::report::arena_trace_json(run.ranks.front().trace, c));
  std::printf("traffic per step, predicted calls and bytes sent by collective and group:\n");
  const bool any = print_traffic(run, c);
  if (!any) std::printf("  none (one rank)\n");
  out["ranks"] = ranks;
  const auto& r0 = run.ranks.front();
  const auto q = paper_question(c, f, static_cast<double>(run.psi));
  const auto sum = [&](uint64_t zt::CollCounters::*field) {  // over dp and mp
    return comm_total(r0.dp_comm, field) + comm_total(r0.mp_comm, field);
  };
  time_section(f, c, q.psi, sum(&zt::CollCounters::calls), sum(&zt::CollCounters::bytes_sent), q, out);
  if (f.max_model) {
    const auto m = zt::plan::max_layers(c, vocab);
    std::printf("max model: --layers %lld (predicted peak %zu B) fits the arena of %zu B; --layers %lld needs %zu B\n",
                static_cast<long long>(m.layers), m.peak_bytes, m.capacity, static_cast<long long>(m.layers + 1),
                m.next_peak_bytes);
    std::printf("  --layers %lld, rank %d: %s\n", static_cast<long long>(m.layers + 1), m.next_rank,
                m.next_fit.message.c_str());
    out["max_model"] = {{"dimension", "layers"},      {"layers", m.layers},
                        {"peak_bytes", m.peak_bytes}, {"next_peak_bytes", m.next_peak_bytes},
                        {"next_rank", m.next_rank},   {"next_failure", m.next_fit.message},
                        {"capacity", m.capacity}};
  }
}

/// --gpu: the step's kernels on the GPU's roofline (plan/roofline.h), printed and in the JSON.
void plan_roofline(const TrainConfig& c, const PlanFlags& f, ordered_json& out) {
  const zt::plan::StepRoofline r = zt::plan::step_roofline(c, zt::plan::resolve_vocab(c), *f.gpu, f.launch_us);
  std::printf("\n%s", zt::plan::printed_roofline(r, *f.gpu).c_str());
  ordered_json j;
  j["gpu"] = zt::word_of(*f.gpu);
  j["launch_us"] = f.launch_us;
  j["micro_batches"] = r.micro_batches;
  j["launches_per_step"] = r.launches;
  j["step_seconds"] = r.seconds();
  j["tokens_per_step"] = r.tokens;
  j["model_flops_per_step"] = r.model_flops;
  j["bf16_dense_flops"] = zt::plan::peaks_of(*f.gpu).bf16_dense_flops;
  j["tokens_per_s"] = r.tokens / r.seconds();
  j["mfu"] = r.model_flops / r.seconds() / zt::plan::peaks_of(*f.gpu).bf16_dense_flops;
  for (const auto& op : r.ops)
    j["ops"].push_back({{"op", op.op},
                        {"launches", op.launches},
                        {"bytes", op.bytes},
                        {"flops", op.flops},
                        {"seconds", op.seconds},
                        {"bound", op.compute_bound ? "compute" : "memory"}});
  out["roofline"] = j;
}

int run(int argc, char** argv) {
  PlanFlags f;
  zt::ArgParser p = plan_parser(f);
  std::vector<char*> plan_argv, train_argv;
  bool help = false;
  split_args(p, argc, argv, plan_argv, train_argv, help);
  if (help) {
    std::fputs(p.usage().c_str(), stdout);
    std::printf("\nzero-train's flags (the plan's inputs):\n");
    char help_flag[] = "--help";
    std::vector<char*> h{argv[0], help_flag};
    TrainConfig ignored;
    zt::train::parse_train_config(2, h.data(), ignored);
    return 0;
  }
  if (!p.parse(static_cast<int>(plan_argv.size()), plan_argv.data())) return 0;  // --help-markdown
  for (char* a : train_argv)  // zero-train's parser keeps no record of what was given
    if (std::string(a) == "--layers" || std::string(a).rfind("--layers=", 0) == 0) f.layers_given = true;
  TrainConfig c;
  zt::train::parse_train_config(static_cast<int>(train_argv.size()), train_argv.data(), c);
  // the files it writes, created or refused before any planning (core/output_place.h)
  if (!f.json.empty()) zt::prepare_output_place({"--json", f.json, zt::PlaceKind::file});
  if (!c.memory_trace.empty()) zt::prepare_output_place({"--memory-trace", c.memory_trace, zt::PlaceKind::file});
  ordered_json out;
  out["program"] = "zero-plan";
  if (f.params) {
    ZT_CHECK(c.world_size % c.mp_size == 0, "--world-size ", c.world_size, " is not a multiple of --mp-size ",
             c.mp_size);
    ZT_CHECK(c.dp_size() % c.resolved_shard_group() == 0, "--shard-group ", c.resolved_shard_group(),
             " does not divide the ", c.dp_size(), " data-parallel ranks (--world-size / --mp-size)");
    plan_paper(c, f, out);
  } else {
    zt::train::resolve_micro_batch(c);
    zt::train::validate(c);
    if (c.print_step) return std::fputs(zt::plan::printed_step(c).c_str(), stdout), 0;  // zero-train's flag
    if (f.gpu) {  // refused before anything is printed
      ZT_CHECK(c.device == zt::device::Device::cuda, "--gpu ", zt::word_of(*f.gpu),
               " plans a GPU's step: it needs --device cuda (given: --device ", zt::word_of(c.device), ")");
      ZT_CHECK(c.mp_size == 1 && c.pp_size == 1,
               "--gpu: the roofline covers a data-parallel rank's whole model; "
               "with --mp-size or --pp-size above 1 it is not built");
    }
    plan_shape(c, f, out);
    if (f.gpu) plan_roofline(c, f, out);
  }
  if (!f.json.empty()) zt::write_file_atomic(f.json, out.dump(2) + "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("zero-plan", [&] { return run(argc, argv); });
}
