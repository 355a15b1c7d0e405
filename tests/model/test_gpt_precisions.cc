// 16-bit compute types against FP32, and bitwise determinism of all three precisions.
//
// Bounds for the 16-bit loss. With unit roundoff u (fp16 2^-11, bf16 2^-8), the compute copy of
// the parameters and every stored activation carry relative error <= u. At GPT-2 initialisation
// the logits are O(0.1) and the loss ~ ln V, and the loss moves by at most ~|dL/dlogit| * |logit|
// * u per rounding; through the ~30 stored stages of a 2-layer model adding in quadrature this is
// ~sqrt(30) u * O(0.1), far below 1% of ln V. We assert |mean loss_16 - mean loss_32| <= u * ln V
// (one rounding of the loss itself), which a precision bug (a missing widening, a double
// rounding of a whole GEMM, a wrong accumulation type) breaks by orders of magnitude.
// Gradients: relative difference in the 2-norm <= 16 u (same quadrature argument with a larger
// constant: gradients pass through twice as many stages and through cancelling LayerNorm sums).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <thread>
#include <type_traits>

#include "kernels/blas.h"
#include "model/gpt_harness.h"
#include "support/gemm_backend.h"

using zt::bf16;
using zt::fp16;
using zt::model::GptConfig;

namespace {

const GptConfig kCfg{.vocab = 32, .context = 16, .layers = 2, .heads = 2, .width = 32};
constexpr int64_t kB = 2;

double rel_norm_diff(const std::vector<float>& a, const std::vector<float>& ref) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<double>(a[i]) - ref[i]) * (static_cast<double>(a[i]) - ref[i]);
    n += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(d / n);
}

template <typename T>
void check_against_fp32(double u) {
  const auto master = zt_test::gpt_init(kCfg, 5);
  const auto batch = zt_test::random_batch(kB, kCfg.context, kCfg.vocab, 6);
  const double tokens = static_cast<double>(kB * kCfg.context);
  // A loss scale of 1024 keeps the per-token gradients clear of fp16's subnormal range, as the
  // trainer's loss scaler does; grad_scale = loss_scale / tokens.
  const float grad_scale = static_cast<float>(1024.0 / tokens);
  zt_test::Harness<float> ref(kCfg, kB, master);
  const double loss32 = ref.forward(batch) / tokens;
  ref.backward(batch, grad_scale);
  zt_test::Harness<T> h(kCfg, kB, master);
  const double loss16 = h.forward(batch) / tokens;
  h.backward(batch, grad_scale);
  static_assert(std::is_same_v<typename decltype(h.grads)::value_type, T>, "16-bit gradients");
  const double grad_diff = rel_norm_diff(h.grads_f(), ref.grads_f());
  INFO("loss fp32 " << loss32 << " 16-bit " << loss16 << "; gradient rel. diff " << grad_diff);
  CHECK(std::fabs(loss16 - loss32) <= u * std::log(static_cast<double>(kCfg.vocab)));
  CHECK(grad_diff <= 16 * u);
  CHECK(grad_diff > 0);  // the 16-bit path really rounds
}

template <typename T>
void check_deterministic() {
  const auto master = zt_test::gpt_init(kCfg, 8);
  const auto batch = zt_test::random_batch(kB, kCfg.context, kCfg.vocab, 9);
  // Different garbage in the workspaces: any read of an unwritten byte would show.
  zt_test::Harness<T> a(kCfg, kB, master, 0x00), b(kCfg, kB, master, 0xA5);
  const float la = a.forward(batch), lb = b.forward(batch);
  a.backward(batch, 0.25f);
  b.backward(batch, 0.25f);
  CHECK(std::memcmp(&la, &lb, sizeof(float)) == 0);
  CHECK(std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(T)) == 0);
  CHECK(a.guards_intact());
  CHECK(b.guards_intact());
  // A second micro-batch through the same instance and workspace gives the same bits again.
  const float la2 = a.forward(batch);
  CHECK(std::memcmp(&la, &la2, sizeof(float)) == 0);
}

template <typename T>
void check_blas_repeatable() {
  // Big enough that OpenBLAS really splits its GEMMs over 2 threads. For a fixed thread count its
  // bits repeat; across thread counts they need not: Debian's OpenBLAS 0.3.21 with its Haswell
  // kernels (also chosen for AMD Zen) changes about 5% of a 1024^3 sgemm's outputs between 1 and 2
  // threads, while its SkylakeX and Sandybridge kernels do not. So the thread count is part of
  // the run's settings (zero/config_check.h hashes it), and the canonical GEMM (the default, one
  // thread per call) is the backend whose bits depend on nothing.
  const zt_test::ScopedGemmBackend blas(zt::kernels::GemmBackend::blas);
  const GptConfig cfg{.vocab = 64, .context = 64, .layers = 2, .heads = 4, .width = 64};
  const int64_t B = 4;
  const auto master = zt_test::gpt_init(cfg, 10);
  const auto batch = zt_test::random_batch(B, cfg.context, cfg.vocab, 11);
  for (int threads : {1, 2}) {
    INFO(threads << " BLAS threads");
    zt::kernels::set_blas_threads(threads);
    zt_test::Harness<T> first(cfg, B, master, 0x00), again(cfg, B, master, 0xA5);
    const float l1 = first.forward(batch), l2 = again.forward(batch);
    first.backward(batch, 1.0f / 256);
    again.backward(batch, 1.0f / 256);
    CHECK(std::memcmp(&l1, &l2, sizeof(float)) == 0);
    CHECK(std::memcmp(first.grads.data(), again.grads.data(), first.grads.size() * sizeof(T)) == 0);
  }
  zt::kernels::set_blas_threads(1);
}

}  // namespace

TEST_CASE("fp16 loss and gradient close to fp32", "[ch2][model][precision]") { check_against_fp32<fp16>(0x1p-11); }
TEST_CASE("bf16 loss and gradient close to fp32", "[ch2][model][precision]") { check_against_fp32<bf16>(0x1p-8); }

TEST_CASE("fp32 forward/backward bitwise deterministic", "[ch2][model][determinism]") { check_deterministic<float>(); }
TEST_CASE("fp16 forward/backward bitwise deterministic", "[ch2][model][determinism]") { check_deterministic<fp16>(); }
TEST_CASE("bf16 forward/backward bitwise deterministic", "[ch2][model][determinism]") { check_deterministic<bf16>(); }

TEST_CASE("fp32 model with OpenBLAS: the same bits again at 1 and at 2 threads", "[ch2][model][determinism]") {
  check_blas_repeatable<float>();
}
TEST_CASE("bf16 model with OpenBLAS: the same bits again at 1 and at 2 threads", "[ch2][model][determinism]") {
  check_blas_repeatable<bf16>();
}

TEST_CASE("blas thread count is pinned and validated", "[ch2][model][determinism]") {
  CHECK(zt::kernels::blas_threads() >= 1);
  CHECK_THROWS_AS(zt::kernels::set_blas_threads(0), zt::Error);
}

TEST_CASE("two model instances in concurrent threads give the sequential bits", "[ch2][model][determinism]") {
  // Ranks run as threads in the ZeRO tests: each has its own model and workspace, and the GEMM
  // (OpenBLAS pinned to one thread, or the canonical GEMM with its thread_local packing buffers)
  // is called from both at once. Nothing may leak between them.
  const auto backend = GENERATE(zt::kernels::GemmBackend::canonical, zt::kernels::GemmBackend::blas);
  const zt_test::ScopedGemmBackend use(backend);
  const auto master = zt_test::gpt_init(kCfg, 12);
  const auto batch_a = zt_test::random_batch(kB, kCfg.context, kCfg.vocab, 13);
  const auto batch_b = zt_test::random_batch(kB, kCfg.context, kCfg.vocab, 14);
  zt_test::Harness<float> seq_a(kCfg, kB, master), seq_b(kCfg, kB, master);
  const float la = seq_a.forward(batch_a), lb = seq_b.forward(batch_b);
  seq_a.backward(batch_a, 0.5f);
  seq_b.backward(batch_b, 0.5f);
  zt_test::Harness<float> par_a(kCfg, kB, master), par_b(kCfg, kB, master);
  float pa = 0, pb = 0;
  for (int round = 0; round < 3; ++round) {
    std::thread ta([&] {
      pa = par_a.forward(batch_a);
      par_a.backward(batch_a, 0.5f);
    });
    std::thread tb([&] {
      pb = par_b.forward(batch_b);
      par_b.backward(batch_b, 0.5f);
    });
    ta.join();
    tb.join();
    CHECK(std::memcmp(&pa, &la, sizeof(float)) == 0);
    CHECK(std::memcmp(&pb, &lb, sizeof(float)) == 0);
    CHECK(std::memcmp(par_a.grads.data(), seq_a.grads.data(), seq_a.grads.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(par_b.grads.data(), seq_b.grads.data(), seq_b.grads.size() * sizeof(float)) == 0);
  }
}
