// report/run_summary.cc — zero-train's closing table (see run_summary.h).
#include "report/run_summary.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "memory/model_states.h"
#include "step/categories.h"
#include "zero/zero_plan.h"

namespace zt::report {

namespace {

/// 1 234 567: the thousands apart, as the chapters write bytes.
std::string spaced(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ' ';
    out += digits[i];
  }
  return out;
}

std::string fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

/// The paper's layout: plain data parallelism, every unit sharded by its stage, the states on the
/// device. Only there do its formulas describe the run.
bool papers_layout(const train::RunOptions& c) {
  return c.mp_size == 1 && c.pp_size == 1 && !c.hybrid_sharding() && c.persist_below_mb == 0 &&
         !c.offloads_optimizer() && !c.offload_params.offloaded();
}

/// "4ψ", "4ψ/N" or "12ψ/N": bytes per element times ψ, over N where the state is sharded.
std::string psi_term(int bytes, bool sharded) { return std::to_string(bytes) + "ψ" + (sharded ? "/N" : ""); }

std::size_t sum_of(const std::map<std::string, std::size_t>& m, std::initializer_list<const char*> names) {
  std::size_t s = 0;
  for (const char* n : names)
    if (auto it = m.find(n); it != m.end()) s += it->second;
  return s;
}

}  // namespace

namespace {

/// The bytes per parameter of one run: the compute copy p, the gradient g, the optimizer's K.
struct Widths {
  int p, g, k;
};

/// Rank 0's memory by the paper's categories, measured, predicted and (the paper's layout) its formula.
void memory_rows(RunSummary& s, const train::RankMemory& m, Widths w, const ShardSpec& spec, double psi, int64_t n,
                 bool formulas) {
  namespace cat = step::category;
  const auto [p, g, k] = w;
  const bool fp32 = p == 4;
  const auto shard = [&](bool sharded) { return sharded ? 1.0 / static_cast<double>(n) : 1.0; };
  const auto row = [&](std::string name, std::initializer_list<const char*> cats, std::string formula, double bytes) {
    s.memory.push_back({std::move(name), sum_of(m.by_category, cats), sum_of(m.by_category_predicted, cats),
                        formulas ? std::move(formula) : "", formulas ? bytes : -1});
  };
  row(std::string("parameters (") + (fp32 ? "fp32" : "16-bit") + ")", {cat::params}, psi_term(p, spec.params),
      p * psi * shard(spec.params));
  row(std::string("gradients (") + (g == 4 ? "FP32" : "16-bit") + ")", {cat::grads}, psi_term(g, spec.grads),
      g * psi * shard(spec.grads));
  row("optimizer states", {cat::master, cat::optimizer}, psi_term(k, spec.optimizer), k * psi * shard(spec.optimizer));
  const double states = s.memory[0].formula_bytes + s.memory[1].formula_bytes + s.memory[2].formula_bytes;
  // the paper's way of writing it: the replicated terms, then the sharded ones over N
  std::string whole, split;
  for (const auto& [bytes, sharded] : {std::pair{p, spec.params}, {g, spec.grads}, {k, spec.optimizer}})
    (sharded ? split : whole) +=
        (sharded ? split : whole).empty() ? std::to_string(bytes) : " + " + std::to_string(bytes);
  const auto term = [](const std::string& sum) { return sum.find('+') == std::string::npos ? sum : "(" + sum + ")"; };
  const std::string states_formula = (whole.empty() ? "" : term(whole) + "ψ") +
                                     (whole.empty() || split.empty() ? "" : " + ") +
                                     (split.empty() ? "" : term(split) + "ψ/N");
  s.memory.push_back({"model states", m.model_states_bytes, m.model_states_bytes_predicted,
                      formulas ? states_formula : "", formulas ? states : -1});
  row("activations", {cat::activations, cat::activation_checkpoints}, "", -1);
  std::size_t buffers = 0, buffers_predicted = 0;
  const auto residual = [](const std::string& name) {
    for (const char* const* ms = step::model_state_categories(); *ms; ++ms)
      if (name == *ms) return false;
    return name != cat::activations && name != cat::activation_checkpoints;
  };
  for (const auto& [name, bytes] : m.by_category)
    if (residual(name)) buffers += bytes;
  for (const auto& [name, bytes] : m.by_category_predicted)
    if (residual(name)) buffers_predicted += bytes;
  s.memory.push_back({"buffers", buffers, buffers_predicted, "", -1});
}

/// A step's traffic by group and collective, with its multiple of ψ and (the paper's layout) the
/// closed form's coefficient.
void traffic_rows(RunSummary& s, const train::RunOptions& c, const zero::ZeroPlan& rules,
                  const zero::ZeroRunResult& zero, Widths w, double psi, bool formulas) {
  const auto [p, g, k] = w;
  const auto a = static_cast<int64_t>(rules.micro_batches_per_rank);
  const int64_t syncs = rules.reduce_each_micro_batch ? a : 1;
  const auto add_group = [&](const char* group, const zero::GroupComm& gc) {
    for (std::size_t kind = 0; kind < kCollKinds; ++kind) {
      const auto ck = static_cast<CollKind>(kind);
      if (ck == CollKind::call_check || ck == CollKind::barrier) continue;
      const CollCounters& got = gc.per_step[ck];
      if (got.bytes_sent == 0 && got.calls == 0) continue;
      TrafficRow t{group, coll_kind_name(ck), got.bytes_sent, gc.predicted_per_step[ck].bytes_sent, got.calls};
      // the data-parallel group moves model states: gradients are reduced at their width,
      // parameters gathered at theirs; the all-reduce of stages 1-3 carries only scalars
      const bool dp = std::string(group) == "dp";
      const bool grad_all_reduce = ck == CollKind::all_reduce && !rules.reduce_scatters_grad;
      if (dp && (ck == CollKind::reduce_scatter || grad_all_reduce)) t.element_bytes = g;
      if (dp && ck == CollKind::all_gather && c.stage > 0) t.element_bytes = p;  // stage 0 gathers scalars
      if (t.element_bytes > 0 && psi > 0)
        t.psi_multiple = static_cast<double>(got.bytes_sent) / (t.element_bytes * psi);
      if (formulas && t.element_bytes > 0) {
        if (ck == CollKind::all_reduce) t.closed_form_coefficient = 2 * syncs;
        if (ck == CollKind::reduce_scatter) t.closed_form_coefficient = syncs;
        // stages 1-2 gather the updated parameters once; stage 3 every unit in forward and backward
        if (ck == CollKind::all_gather) t.closed_form_coefficient = c.stage < 3 ? 1 : 2 * a;
      }
      s.traffic.push_back(t);
    }
  };
  add_group("dp", zero.dp);
  if (c.mp_size > 1) add_group("mp", zero.mp);
  if (c.pp_size > 1) add_group("pp", zero.pp);
}

}  // namespace

RunSummary run_summary(const train::RunOptions& c, const train::RunResult& r, const zero::ZeroRunResult* zero) {
  namespace cat = step::category;
  RunSummary s;
  const bool fp32 = c.precision == model::Precision::fp32;
  const int p = fp32 ? 4 : 2;  // parameter width
  const int64_t n = c.dp_size();
  const int64_t a = c.micro_batches_per_rank();
  zero::ZeroPlan rules;  // the stage's reduction as the run does it (S_g, the 16-bit storage, ...)
  zero::plan_reduction(rules, c, static_cast<std::size_t>(n));
  const int g = rules.grad_storage_16bit ? 2 : 4;
  // K counts the FP32 master; an fp32 run's parameters are the master, and --no-master-weights has none
  const int k = optimizer_k(word_of(c.optimizer)) - (fp32 || c.no_master_weights ? 4 : 0);
  const double psi = static_cast<double>(r.param_count);

  s.layout = "ZeRO stage " + std::to_string(c.stage) + ", N_d × N_m × N_p = " + std::to_string(n) + " × " +
             std::to_string(c.mp_size) + " × " + std::to_string(c.pp_size) +
             (c.hybrid_sharding() ? ", shard groups of G = " + std::to_string(c.resolved_shard_group()) : "");
  s.numerics = word_of(c.precision) + (fp32 ? "" : " compute") + ", " + (g == 4 ? "FP32" : "16-bit") + " gradients, " +
               word_of(c.optimizer);
  s.batch = std::to_string(a) + " micro-batch" + (a == 1 ? "" : "es") + " of " + std::to_string(c.micro_batch) +
            (c.micro_batch == 1 ? " sequence" : " sequences") + " per rank a step (global batch " +
            std::to_string(c.global_batch) + ")";
  s.n = n;
  const train::RankMemory& m = r.memory.front();
  s.rank = m.rank;
  const bool formulas = papers_layout(c);
  memory_rows(s, m, {p, g, k}, rules.spec, psi, n, formulas);
  s.peak = m.peak_bytes;
  s.peak_predicted = m.high_water_bytes_predicted;
  s.budget = m.arena_capacity;

  if (zero) traffic_rows(s, c, rules, *zero, {p, g, k}, psi, formulas);
  s.tokens_per_s = r.tokens_per_s;
  s.seconds = r.seconds;
  return s;
}

namespace {

/// "(N-1)/N" with its coefficient: "2(N-1)/N", "3(N-1)/N".
std::string closed_form(int64_t coefficient) {
  return (coefficient == 1 ? "" : std::to_string(coefficient)) + "(N-1)/N";
}

/// A table line without the blanks an empty last column leaves.
std::string trimmed(const char* line) {
  std::string t(line);
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t + "\n";
}

}  // namespace

std::string run_summary_text(const RunSummary& s, int64_t threads) {
  std::string out = "  configuration: " + s.layout + ", " + s.numerics + "\n                 " + s.batch + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-26s %12s %12s   %s",
                ("memory of rank " + std::to_string(s.rank) + ", bytes").c_str(), "measured", "predicted",
                "the paper's formula");
  out += trimmed(line);
  for (const MemoryRow& m : s.memory) {
    const std::string formula =
        m.formula.empty() ? "" : m.formula + " = " + spaced(static_cast<uint64_t>(std::llround(m.formula_bytes)));
    std::snprintf(line, sizeof line, "    %-24s %12s %12s   %s", m.category.c_str(), spaced(m.measured).c_str(),
                  spaced(m.predicted).c_str(), formula.c_str());
    out += trimmed(line);
  }
  std::snprintf(line, sizeof line, "    %-24s %12s %12s   of %s (--memory-budget-mb)", "peak", spaced(s.peak).c_str(),
                spaced(s.peak_predicted).c_str(), spaced(s.budget).c_str());
  out += trimmed(line);
  if (!s.traffic.empty()) {
    std::snprintf(line, sizeof line, "  %-26s %12s %12s %6s  %s", "traffic a step, bytes", "sent", "predicted", "calls",
                  "elements sent, the paper's");
    out += trimmed(line);
    double total = 0;
    int64_t coefficient = 0;
    int counted = 0;
    for (const TrafficRow& t : s.traffic) {
      std::string multiple;
      if (t.psi_multiple >= 0) {
        multiple = fixed(t.psi_multiple, 3) + "ψ of " + std::to_string(t.element_bytes) + " B";
        total += t.psi_multiple, ++counted;
      }
      if (t.closed_form_coefficient > 0) {
        multiple += ", " + closed_form(t.closed_form_coefficient) + " ψ = " +
                    fixed(t.closed_form_coefficient * static_cast<double>(s.n - 1) / static_cast<double>(s.n), 3) + "ψ";
        coefficient += t.closed_form_coefficient;
      }
      std::snprintf(line, sizeof line, "    %-24s %12s %12s %6llu  %s", (t.group + " " + t.collective).c_str(),
                    spaced(t.bytes_sent).c_str(), spaced(t.predicted).c_str(), static_cast<unsigned long long>(t.calls),
                    multiple.c_str());
      out += trimmed(line);
    }
    if (counted > 1) {
      std::string sum = "    model states moved: " + fixed(total, 3) + "ψ";
      if (coefficient > 0)
        sum += "; the paper: " + closed_form(coefficient) +
               " ψ = " + fixed(coefficient * static_cast<double>(s.n - 1) / static_cast<double>(s.n), 3) +
               "ψ (N = " + std::to_string(s.n) + ")";
      out += sum + "\n";
    }
  }
  std::snprintf(line, sizeof line, "  speed: %.0f tokens/s over %.2f s, %lld thread%s per rank\n", s.tokens_per_s,
                s.seconds, static_cast<long long>(threads), threads == 1 ? "" : "s");
  out += line;
  return out;
}

std::string run_summary_json(const RunSummary& s) {
  nlohmann::json j;
  j["layout"] = s.layout;
  j["numerics"] = s.numerics;
  j["batch"] = s.batch;
  j["memory_rank"] = s.rank;
  for (const MemoryRow& m : s.memory) {
    nlohmann::json row = {{"category", m.category}, {"measured", m.measured}, {"predicted", m.predicted}};
    if (!m.formula.empty()) row["formula"] = m.formula, row["formula_bytes"] = std::llround(m.formula_bytes);
    j["memory"].push_back(row);
  }
  j["peak"] = {{"measured", s.peak}, {"predicted", s.peak_predicted}, {"budget", s.budget}};
  j["traffic"] = nlohmann::json::array();
  for (const TrafficRow& t : s.traffic) {
    nlohmann::json row = {{"group", t.group},
                          {"collective", t.collective},
                          {"bytes_sent", t.bytes_sent},
                          {"predicted", t.predicted},
                          {"calls", t.calls}};
    if (t.psi_multiple >= 0) row["element_bytes"] = t.element_bytes, row["psi_multiple"] = t.psi_multiple;
    if (t.closed_form_coefficient > 0)
      row["closed_form"] = closed_form(t.closed_form_coefficient),
      row["closed_form_value"] = t.closed_form_coefficient * static_cast<double>(s.n - 1) / static_cast<double>(s.n);
    j["traffic"].push_back(row);
  }
  j["tokens_per_s"] = s.tokens_per_s;
  return j.dump();
}

}  // namespace zt::report
