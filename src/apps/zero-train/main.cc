// zero-train — train a GPT-2-style model with mixed precision (the project's main program).
//
// Parses the flags (train/train_config.h), builds the dataset (embedded addition language, or a
// byte-level --data file), runs the loop, prints a progress line on a terminal and a final
// summary, and writes the requested JSON and raw dumps atomically. All work happens in the
// modules; this file only wires them to the command line.
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/cli.h"
#include "data/addition.h"
#include "data/dataset.h"
#include "train/single_rank.h"
#include "train/summary_json.h"

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

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("zero-train", [&] {
    zt::train::TrainConfig c;
    if (!zt::train::parse_train_config(argc, argv, c)) return 0;
    auto data = open_dataset(c);
    const int64_t vocab = c.vocab ? c.vocab : data->vocab_size();
    if (!c.dump_manifest.empty()) zt::write_file_atomic(c.dump_manifest, zt::train::manifest_json(c, vocab));
    const bool tty = ::isatty(STDERR_FILENO);
    zt::train::RunArtifacts artifacts;
    auto progress = [&](const zt::train::StepRecord& s, const zt::train::RunResult& r) {
      if (!tty) return;
      std::fprintf(stderr, "\rstep %lld/%lld  loss %.4f  scale %g%s  %.0f tok/s   ",
                   static_cast<long long>(s.step), static_cast<long long>(c.steps),
                   static_cast<double>(s.loss), static_cast<double>(s.loss_scale),
                   s.skipped ? " (skipped)" : "", r.tokens_per_s);
      if (s.step == c.steps) std::fputc('\n', stderr);
    };
    const zt::train::RunResult r = zt::train::train_single_rank(c, *data, progress, &artifacts);
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
