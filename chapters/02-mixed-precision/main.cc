// chapter-02 — the mixed-precision loop, shown with runs of the real loop.
//
// Every number printed comes from zt::reference::train_single_rank (src/reference/single_rank.cc) on the
// embedded 1-digit addition task; nothing is typed in. It is a demonstration, not a benchmark.
// Sections:
//   1. fp32 vs fp16 vs bf16 on the same seed: losses at a few steps, held-out loss and accuracy
//   2. dynamic loss scaling in fp16: the scale per step, with the skipped (overflowed) steps
//   3. the stall: bf16 with and without FP32 master weights at a small learning rate
// Each section ends with a "claim:" line that tests/chapter02 checks against the numbers above it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/cli.h"
#include "data/addition.h"
#include "reference/single_rank.h"
#include "train/train_config.h"

namespace {

using zt::train::RunResult;
using zt::train::TrainConfig;

/// The chapter's model and task: 2 layers, 4 heads, width 64, context 32, 1-digit addition.
TrainConfig chapter_config(int64_t steps, int64_t seed, const std::string& precision) {
  TrainConfig c;
  c.digits = 1;
  c.layers = 2;
  c.heads = 4;
  c.width = 64;
  c.context = 32;
  c.global_batch = 16;
  c.micro_batch = 16;
  c.steps = steps;
  c.warmup_steps = std::min<int64_t>(10, steps);
  c.eval_every = 0;  // held-out evaluation after the last step only
  c.seed = seed;
  c.precision = zt::parse_word<zt::model::Precision>(precision, "precision");
  return c;
}

RunResult train(const TrainConfig& c) {
  zt::AdditionConfig a;
  a.context = static_cast<std::size_t>(c.context);
  a.digits = static_cast<int>(c.digits);
  const zt::AdditionDataset data(a);
  return zt::reference::train_single_rank(c, data, {}, nullptr);
}

int skipped_steps(const RunResult& r) {
  int n = 0;
  for (const auto& s : r.steps) n += s.skipped;
  return n;
}

/// Steps at which section 1 prints the loss: 1, a few in between, and the last.
std::vector<int64_t> report_steps(int64_t steps) {
  std::vector<int64_t> at;
  for (int64_t s : {int64_t{1}, int64_t{10}, int64_t{25}, int64_t{50}, int64_t{75}, int64_t{100}, int64_t{125}})
    if (s < steps) at.push_back(s);
  at.push_back(steps);
  return at;
}

void compare_precisions(int64_t steps, int64_t seed) {
  const char* precisions[3] = {"fp32", "fp16", "bf16"};
  RunResult runs[3];
  for (int p = 0; p < 3; ++p) runs[p] = train(chapter_config(steps, seed, precisions[p]));
  std::printf("== 1. fp32 vs fp16 vs bf16: training loss (same seed %lld, lr 3e-3 cosine to 3e-4) ==\n",
              static_cast<long long>(seed));
  std::printf("%6s %12s %12s %12s\n", "step", "fp32", "fp16", "bf16");
  for (int64_t s : report_steps(steps)) {
    std::printf("%6lld", static_cast<long long>(s));
    for (const auto& r : runs) std::printf(" %12.6f", static_cast<double>(r.steps[s - 1].loss));
    std::printf("\n");
  }
  std::printf("%6s", "heldout");
  for (const auto& r : runs) std::printf(" %12.6f", static_cast<double>(r.evals.back().loss));
  std::printf("   (held-out loss)\n%6s", "acc%");
  for (const auto& r : runs) std::printf(" %12.1f", 100.0 * r.evals.back().accuracy);
  std::printf("   (exact-match accuracy over %zu held-out problems)\n", runs[0].evals.back().problems);
  std::printf("%6s %12d %12d %12d   (skipped steps)\n", "skip", skipped_steps(runs[0]), skipped_steps(runs[1]),
              skipped_steps(runs[2]));
  const float ref = runs[0].steps.back().loss;
  double worst = 0;
  for (int p = 1; p < 3; ++p)
    worst = std::max(worst, std::abs(static_cast<double>(runs[p].steps.back().loss) - ref) / ref);
  std::printf(
      "claim: fp16 and bf16 end within %.2f%% of the fp32 loss (bound 5%%); fp32 ends at "
      "%.1f%% of its first loss (bound 70%%)\n\n",
      100.0 * worst, 100.0 * ref / static_cast<double>(runs[0].steps.front().loss));
}

void loss_scaling(int64_t steps, int64_t seed, double init_scale, int64_t interval) {
  TrainConfig c = chapter_config(steps, seed, "fp16");
  c.loss_scale_init = init_scale;
  c.loss_scale_growth_interval = interval;
  const RunResult r = train(c);
  std::printf(
      "== 2. Dynamic loss scaling, fp16: initial scale %g, growth x2 every %lld clean "
      "steps, backoff x0.5 ==\n",
      init_scale, static_cast<long long>(interval));
  std::printf("%6s %14s %8s %14s\n", "step", "loss_scale", "skipped", "grad_norm");
  for (const auto& s : r.steps) {
    char norm[32] = "inf";  // the unscaled norm of an overflowed step is not finite
    if (s.grad_norm) std::snprintf(norm, sizeof norm, "%.6g", static_cast<double>(*s.grad_norm));
    std::printf("%6lld %14.0f %8s %14s\n", static_cast<long long>(s.step), static_cast<double>(s.loss_scale),
                s.skipped ? "yes" : "no", norm);
  }
  std::printf(
      "claim: %d of %lld steps skipped; every skip halves the next step's scale and "
      "every %lld clean steps double it\n\n",
      skipped_steps(r), static_cast<long long>(steps), static_cast<long long>(interval));
}

void stall(int64_t steps, int64_t seed, double lr) {
  TrainConfig c = chapter_config(steps, seed, "bf16");
  c.lr = lr;
  c.min_lr = lr;
  const RunResult with_master = train(c);
  c.no_master_weights = true;
  const RunResult without = train(c);
  std::printf(
      "== 3. The stall: bf16, constant lr %g, %lld steps, with vs without FP32 master "
      "weights ==\n",
      lr, static_cast<long long>(steps));
  std::printf("%-10s %12s %12s %16s %18s\n", "run", "first_loss", "final_loss", "frozen_last_step",
              "frozen_last_window");
  for (const auto* r : {&with_master, &without})
    std::printf("%-10s %12.6f %12.6f %15.2f%% %17.2f%%\n", r == &with_master ? "master" : "no-master",
                static_cast<double>(r->steps.front().loss), static_cast<double>(r->steps.back().loss),
                100.0 * r->frozen_fraction, 100.0 * r->frozen_window_fraction);
  std::printf("(window = the last %lld steps; frozen = 16-bit bits identical before and after)\n",
              static_cast<long long>(with_master.frozen_window_steps));
  std::printf(
      "claim: over the window %.2fx as many elements frozen without a master (bound >= 2); "
      "at one step only %.2fx (bound < 2)\n",
      without.frozen_window_fraction / with_master.frozen_window_fraction,
      without.frozen_fraction / with_master.frozen_fraction);
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("chapter-02", [&] {
    int64_t steps = 150, compare_steps = 0, scale_steps = 12, seed = 1234, interval = 3, section = 0;
    double stall_lr = 1e-4, init_scale = 16777216.0;
    zt::ArgParser args("chapter-02", "The mixed-precision loop: precisions, loss scaling, the stall.");
    args.add_int("steps", &steps, "optimizer steps of sections 1 and 3", 1, 100000);
    args.add_int("compare-steps", &compare_steps, "section 1's steps if not --steps (0: --steps)", 0, 100000);
    args.add_int("scale-steps", &scale_steps, "optimizer steps of section 2", 1, 1000);
    args.add_int("seed", &seed, "seed of init and data", 0, INT64_MAX);
    args.add_double("stall-lr", &stall_lr, "constant learning rate of the stall runs", 1e-12, 1.0);
    args.add_double("loss-scale-init", &init_scale, "section 2's initial fp16 loss scale", 1.0, 16777216.0);
    args.add_int("loss-scale-growth-interval", &interval, "section 2's clean steps per growth", 1, 1000);
    args.add_int("section", &section, "run only this section (0: all three)", 0, 3);
    if (!args.parse(argc, argv)) return 0;
    ZT_CHECK(args.rest().empty(), "unexpected arguments after --");
    if (section == 0 || section == 1) compare_precisions(compare_steps ? compare_steps : steps, seed);
    if (section == 0 || section == 2) loss_scaling(scale_steps, seed, init_scale, interval);
    if (section == 0 || section == 3) stall(steps, seed, stall_lr);
    return 0;
  });
}
