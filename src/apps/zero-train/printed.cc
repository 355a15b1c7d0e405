// apps/zero-train/printed.cc — what zero-train prints while and after it trains (see printed.h).
#include "apps/zero-train/printed.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "optim/lr_schedule.h"
#include "report/run_summary.h"
#include "train/step_report.h"
#include "train/step_start.h"

namespace zt::zero_train {

using train::RunResult;
using train::TrainConfig;

/// The per-step callback of rank 0 (or the single rank): a line per held-out evaluation on
/// stdout, terminal or not (make run logs them), and a progress line on a terminal's stderr.
/// Fault injection for the resume tests: ZT_KILL_AFTER_STEP=K kills the process with SIGKILL
/// (no clean-up, no outputs) right after step K, its evaluation and its checkpoint.
train::StepCallback progress_printer(const TrainConfig& c) {
  const bool tty = ::isatty(STDERR_FILENO);
  const char* kill_env = std::getenv("ZT_KILL_AFTER_STEP");
  const int64_t kill_after = kill_env ? std::atoll(kill_env) : -1;
  return [&c, tty, kill_after, evals_shown = std::size_t{0}](const train::StepRecord& s, const RunResult& r) mutable {
    for (; evals_shown < r.evals.size(); ++evals_shown) {
      const auto& e = r.evals[evals_shown];
      if (tty) std::fputc('\n', stderr);
      std::printf("step %lld: loss %.4f, held-out loss %.4f, exact match %.1f%% of %zu problems\n",
                  static_cast<long long>(e.step), static_cast<double>(s.loss), static_cast<double>(e.loss),
                  100.0 * e.accuracy, e.problems);
      std::fflush(stdout);
    }
    if (s.step == kill_after) {
      std::fflush(stdout);
      std::raise(SIGKILL);
    }
    if (!tty) return;
    std::fprintf(stderr, "\rstep %lld/%lld  loss %.4f  scale %g%s  %.0f tok/s   ", static_cast<long long>(s.step),
                 static_cast<long long>(c.steps), static_cast<double>(s.loss), static_cast<double>(s.loss_scale),
                 s.skipped ? " (skipped)" : "", r.tokens_per_s);
    if (s.step == c.steps) std::fputc('\n', stderr);
  };
}

void print_summary(const TrainConfig& c, const RunResult& r, const zero::ZeroRunResult* zero) {
  std::printf("zero-train: %lld parameters (ψ), %s, %s\n  data: %s\n", static_cast<long long>(r.param_count),
              word_of(c.precision).c_str(), word_of(c.optimizer).c_str(), r.dataset.c_str());
  if (!r.steps.empty()) {
    std::printf("  loss  step %lld: %.6f   step %lld: %.6f\n", static_cast<long long>(r.steps.front().step),
                static_cast<double>(r.steps.front().loss), static_cast<long long>(r.steps.back().step),
                static_cast<double>(r.steps.back().loss));
    const auto skipped = std::count_if(r.steps.begin(), r.steps.end(), [](const auto& s) { return s.skipped; });
    if (skipped) std::printf("  skipped steps (fp16 overflow): %lld\n", static_cast<long long>(skipped));
    if (const auto h = train::loss_scale_history(r.steps); !h.empty())
      std::printf("  loss scale by step: %s\n", h.c_str());
    if (const auto z = train::grad16_zeros_line(r.steps, r.param_count * c.micro_batches()); !z.empty())
      std::printf("  16-bit gradient elements exactly zero: %s\n", z.c_str());
    if (!reaches_peak(train::lr_schedule(c)))
      std::printf("  learning rate: the %lld-step warm-up outlasts the run; it ended at %g, below the peak --lr %g\n",
                  static_cast<long long>(c.resolved_warmup_steps()), static_cast<double>(r.steps.back().lr), c.lr);
  }
  if (!r.evals.empty()) {
    const auto& e = r.evals.back();
    std::printf("  held-out: loss %.6f, exact-match accuracy %.1f%% of %zu problems\n", static_cast<double>(e.loss),
                100.0 * e.accuracy, e.problems);
  }
  if (r.frozen_fraction >= 0)
    std::printf("  16-bit parameters unchanged by the last step: %.2f%%, over the last %lld steps: %.2f%%\n",
                100.0 * r.frozen_fraction, static_cast<long long>(r.frozen_window_steps),
                100.0 * r.frozen_window_fraction);
  if (!c.resume.empty() && !r.steps.empty())
    std::printf("  resumed after step %lld from %s\n", static_cast<long long>(r.steps.front().step - 1),
                c.resume.c_str());
  if (!c.save_dir.empty()) {
    if (c.save_every > 0)
      std::printf("  checkpoints: %s/step-<N>/ every %lld steps and after the last\n", c.save_dir.c_str(),
                  static_cast<long long>(c.save_every));
    else
      std::printf("  checkpoint: %s/step-<N>/ after the last step\n", c.save_dir.c_str());
  }
  // the configuration, memory by the paper's categories and traffic by collective (report/run_summary.h)
  std::fputs(report::run_summary_text(report::run_summary(c, r, zero), c.threads).c_str(), stdout);
}

/// ZeRO-Offload's traffic of rank 0's last step beside its closed form (predict/zero_comm.h).
void print_offload(const TrainConfig& c, const zero::ZeroRunResult& z) {
  const auto& t = z.transfers_per_step;
  const auto& p = z.transfers_predicted_per_step;
  std::printf(
      "  offload (%s), rank 0's last step: %llu B gradients down in %llu copies, %llu B parameters up in %llu "
      "(predicted %llu B and %llu B)\n",
      c.offload_optimizer.text().c_str(), static_cast<unsigned long long>(t.to_host_bytes),
      static_cast<unsigned long long>(t.to_host_calls), static_cast<unsigned long long>(t.to_device_bytes),
      static_cast<unsigned long long>(t.to_device_calls), static_cast<unsigned long long>(p.to_host_bytes),
      static_cast<unsigned long long>(p.to_device_bytes));
  if (c.offload_optimizer_dir().empty()) return;
  const auto& io = z.file_io_per_step;
  std::printf(
      "  file tier: %llu B read and %llu B written per step (predicted %llu B each); blocked on I/O %.3f s of "
      "%.3f s busy over the run\n",
      static_cast<unsigned long long>(io.read_bytes), static_cast<unsigned long long>(io.write_bytes),
      static_cast<unsigned long long>(z.file_io_predicted_per_step.read_bytes), z.file_io_total.wait_seconds,
      z.file_io_total.busy_seconds);
}

}  // namespace zt::zero_train
