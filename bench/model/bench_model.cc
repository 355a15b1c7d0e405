// bench/model/bench_model.cc — tokens/s of one forward+backward of the GPT on one rank, and its
// model FLOP utilisation (MFU) against the sgemm rate measured at the same thread count.
//
// Model FLOPs per token (matrix products only, the usual MFU convention; causal attention counts
// its useful half): forward 2 (12 L C^2 + V C) + 2 L T C, and the backward twice the forward.
// Not a test: it prints figures (and a JSON line) for the benchmark table in the lead's docs.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/cpu_pool.h"
#include "fp/bulk_convert.h"
#include "kernels/blas.h"
#include "kernels/cast.h"
#include "model/gpt.h"
#include "model/init.h"

namespace {

using Clock = std::chrono::steady_clock;

// Best of `reps` single products: the least disturbed timing on a shared machine.
double sgemm_gflops(int64_t m, int64_t n, int64_t k, int reps) {
  std::vector<float> a(m * k, 0.5f), b(n * k, 0.25f), c(m * n);
  zt::kernels::gemm_f32(false, true, m, n, k, a.data(), k, b.data(), k, c.data(), n);  // warm-up
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    zt::kernels::gemm_f32(false, true, m, n, k, a.data(), k, b.data(), k, c.data(), n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = s < best ? s : best;
  }
  return 2.0 * m * n * k / best / 1e9;
}

template <typename T>
void run(const zt::model::GptConfig& cfg, int64_t B, int steps, double gemm_rate) {
  using namespace zt::model;
  Gpt<T> model(cfg, B);
  std::vector<float> master(static_cast<std::size_t>(param_count(cfg)));
  init_params(cfg, 1, master.data());
  std::vector<T> params(master.size()), grads(master.size());
  for (std::size_t i = 0; i < master.size(); ++i) params[i] = zt::kernels::from_f<T>(master[i]);
  DenseParamProvider<T> provider(model.manifest(), params.data(), grads.data());
  const std::size_t ab = activation_bytes(cfg, B, precision_of<T>()), sb = scratch_bytes(cfg, B, precision_of<T>());
  void* acts = std::aligned_alloc(64, ab);
  void* scr = std::aligned_alloc(64, sb);
  const Workspace ws{acts, ab, scr, sb};
  std::vector<int32_t> batch(static_cast<std::size_t>(B * (cfg.context + 1)));
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<int32_t>((i * 7919) % cfg.vocab);
  const auto in = batch_inputs(batch.data(), B, cfg.context);
  const auto tg = batch_targets(batch.data(), B, cfg.context);
  const double tokens = static_cast<double>(B * cfg.context);
  float loss = model.forward(provider, in, tg, ws);  // warm-up
  model.backward(provider, in, tg, 1.0f / static_cast<float>(tokens), ws);
  double best = 1e30, total = 0, fwd_total = 0;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = Clock::now();
    loss = model.forward(provider, in, tg, ws);
    const auto t1 = Clock::now();
    model.backward(provider, in, tg, 1.0f / static_cast<float>(tokens), ws);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    fwd_total += std::chrono::duration<double>(t1 - t0).count();
    total += dt;
    best = dt < best ? dt : best;
  }
  const double L = cfg.layers, C = cfg.width, V = cfg.vocab, Tc = cfg.context;
  const double flops_per_token = 3 * (2 * (12 * L * C * C + V * C) + 2 * L * Tc * C);
  const double tps_mean = tokens * steps / total, tps_best = tokens / best;
  const double mfu = tps_mean * flops_per_token / 1e9 / gemm_rate;
  const std::string precision = zt::word_of(precision_of<T>());
  std::printf(
      "%s: params %lld, B %lld, T %lld: %.0f tokens/s mean (best %.0f), forward %.0f%% of "
      "step, %.2f GFLOP/token -> %.1f GFLOP/s = MFU %.1f%% of sgemm %.1f GFLOP/s (loss %.4f, "
      "activations %.1f MiB, scratch %.1f MiB)\n",
      precision.c_str(), static_cast<long long>(param_count(cfg)), static_cast<long long>(B),
      static_cast<long long>(cfg.context), tps_mean, tps_best, 100 * fwd_total / total, flops_per_token / 1e9,
      tps_mean * flops_per_token / 1e9, 100 * mfu, gemm_rate, loss / tokens, ab / 1048576.0, sb / 1048576.0);
  std::printf(
      "{\"peer\": \"zero-teach\", \"gemm\": \"%s\", \"precision\": \"%s\", \"tokens_per_s\": %.1f, "
      "\"tokens_per_s_best\": %.1f, \"mfu\": %.4f, \"mfu_best\": %.4f, \"sgemm_gflops\": %.2f}\n",
      zt::kernels::gemm_backend() == zt::kernels::GemmBackend::blas ? "blas" : "canonical", precision.c_str(), tps_mean,
      tps_best, mfu, tps_best * flops_per_token / 1e9 / gemm_rate, gemm_rate);
  std::free(acts);
  std::free(scr);
}

}  // namespace

int main(int argc, char** argv) {
  // usage: bench-model [B] [steps] [threads] [precisions...]   (defaults 4 5 1 fp32)
  // precisions: fp32, bf16, fp16, fp16-scalar (fp16 with the scalar array conversions)
  const int64_t B = argc > 1 ? std::atoll(argv[1]) : 4;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 5;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  // T threads for every kernel, as zero-train --threads T gives a rank (core/cpu_pool.h), and
  // for OpenBLAS when it is the GEMM
  zt::kernels::set_blas_threads(threads);
  const zt::RankThreads rank_threads(threads);
  // the canonical GEMM, zero-train's default, unless ZT_BENCH_GEMM=blas (OpenBLAS, a vendor BLAS
  // like the peer's)
  const char* which = std::getenv("ZT_BENCH_GEMM");
  zt::kernels::set_gemm_backend(which && std::string(which) == "blas" ? zt::kernels::GemmBackend::blas
                                                                      : zt::kernels::GemmBackend::canonical);
  const zt::model::GptConfig cfg{.vocab = 256, .context = 256, .layers = 6, .heads = 6, .width = 384};
  // The rate this model's largest GEMM shape gets (N = B T rows, C -> 4C), best of 20: a fair
  // MFU denominator (the step timings are means, so MFU on a busy machine is conservative).
  const double rate = sgemm_gflops(B * cfg.context, 4 * cfg.width, cfg.width, 20);
  std::printf("threads %d; sgemm %lldx%lldx%lld: %.1f GFLOP/s\n", zt::kernels::blas_threads(),
              static_cast<long long>(B * cfg.context), static_cast<long long>(4 * cfg.width),
              static_cast<long long>(cfg.width), rate);
  bool any = false;
  for (int i = 4; i < argc; ++i) {
    any = true;
    const std::string p = argv[i];
    if (p == "fp32") run<float>(cfg, B, steps, rate);
    zt::set_bulk_fp16_scalar_only(p == "fp16-scalar");  // A/B of fp/bulk_convert.h's F16C path
    if (p == "fp16" || p == "fp16-scalar") {
      std::printf("fp16 array conversions: %s\n", zt::bulk_fp16_uses_f16c() ? "F16C" : "scalar loop");
      run<zt::fp16>(cfg, B, steps, rate);
    }
    if (p == "bf16") run<zt::bf16>(cfg, B, steps, rate);
  }
  if (!any) run<float>(cfg, B, steps, rate);
  return 0;
}
