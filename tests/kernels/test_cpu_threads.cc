// The model's CPU kernels split over a rank's threads (core/cpu_pool.h) give the bits of their
// item ops run one after another: the shared kernel cases (tests/support/kernel_cases/, the same
// ones that hold the GPU's threads to the CPU kernels) run here with a pool of 2, 3 and 4 threads
// installed that splits EVERY loop, so the cases' small and odd shapes (131 rows of 77, 5 of 259,
// one element) put part boundaries at every kind of edge. The item ops are the per-output bodies
// of the serial loops, so equal bits here mean: the thread count changes nothing. The last case
// holds the training step's own slice functions (step/owned_slice.h) to their serial bytes.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cpu_pool.h"
#include "device/item_grid.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "optim/grad_norm.h"
#include "step/element_optimizer.h"
#include "step/owned_slice.h"
#include "support/kernel_cases/attention.h"
#include "support/kernel_cases/cross_entropy.h"
#include "support/kernel_cases/elementwise.h"
#include "support/kernel_cases/embedding.h"
#include "support/kernel_cases/host_env.h"
#include "support/kernel_cases/layernorm.h"
#include "support/kernel_cases/linear.h"
#include "support/kernel_cases/optim.h"

namespace {

// Run a case on pools of 2, 3 and 4 threads that split every loop.
template <typename Case>
void on_every_pool(const Case& run_case) {
  for (const int threads : {2, 3, 4}) {
    INFO(threads << " threads");
    zt::CpuPool pool(threads, zt::CpuPool::Split::every_loop);
    zt::UseCpuPool use(&pool);
    run_case();
  }
}

}  // namespace

TEMPLATE_TEST_CASE("threads: LayerNorm split over a rank's threads keeps its bits", "[ch2]", float, zt::fp16,
                   zt::bf16) {
  on_every_pool([] { zt::test::case_layernorm<TestType>(zt::test::HostEnv{}); });
}

TEMPLATE_TEST_CASE("threads: GELU split over a rank's threads keeps its bits", "[ch2]", float, zt::fp16, zt::bf16) {
  on_every_pool([] { zt::test::case_gelu<TestType>(zt::test::HostEnv{}); });
}

TEMPLATE_TEST_CASE("threads: residual add and join split over a rank's threads keep their bits", "[ch2]", float,
                   zt::fp16, zt::bf16) {
  on_every_pool([] { zt::test::case_residual<TestType>(zt::test::HostEnv{}); });
}

TEMPLATE_TEST_CASE("threads: casts split over a rank's threads keep their bits", "[ch2]", zt::fp16, zt::bf16) {
  on_every_pool([] { zt::test::case_cast<TestType>(zt::test::HostEnv{}); });
}

TEMPLATE_TEST_CASE("threads: cross-entropy split over a rank's threads keeps its bits", "[ch2]", float, zt::fp16,
                   zt::bf16) {
  on_every_pool([] { zt::test::case_cross_entropy<TestType>(zt::test::HostEnv{}); });
}

TEMPLATE_TEST_CASE("threads: attention split over a rank's threads keeps its bits", "[ch2]", float, zt::fp16,
                   zt::bf16) {
  on_every_pool([] { zt::test::case_attention_blocks<TestType>(zt::test::HostEnv{}); });
}

TEMPLATE_TEST_CASE("threads: embedding split over a rank's threads keeps its bits", "[ch2]", float, zt::fp16,
                   zt::bf16) {
  on_every_pool([] { zt::test::case_embedding<TestType>(zt::test::HostEnv{}); });
}

TEMPLATE_TEST_CASE("threads: linear epilogue and bias gradient split over a rank's threads keep their bits", "[ch2]",
                   float, zt::fp16, zt::bf16) {
  on_every_pool([] { zt::test::case_linear<TestType>(zt::test::HostEnv{}); });
}

TEST_CASE("threads: Adam, SGD and the unscale check split over a rank's threads keep their bits", "[ch2]") {
  on_every_pool([] { zt::test::case_optim(zt::test::HostEnv{}); });
}

namespace {

// The step of one slice (step/owned_slice.h) on the calling thread's pool: the overflow check,
// the norm's block sums (b = 8 over 1003 elements: the last block partial) and two AdamW updates
// with clipping, returning every byte they leave so that runs at different thread counts compare.
template <typename T>
std::string step_bytes(bool master_weights, bool poison) {
  const std::size_t n = 1003;
  auto grad = zt::test::sensitive<std::vector<float>>(n, 31, 4);
  if (poison) grad[n - 2] = std::numeric_limits<float>::infinity();
  const auto start = zt::test::sensitive<std::vector<float>>(n, 32, -4);
  std::vector<float> master(start), state(2 * n, 0.0f);
  std::vector<T> params(n);
  for (std::size_t k = 0; k < n; ++k) params[k] = T(start[k]);
  const zt::step::GradSpan<T> g{grad.data(), nullptr};
  std::string out;
  auto keep = [&out](const void* p, std::size_t bytes) { out.append(static_cast<const char*>(p), bytes); };
  const bool nonfinite = zt::step::any_nonfinite(g, n);
  keep(&nonfinite, sizeof nonfinite);
  std::vector<float> sums{-1.0f};  // appended to, after what is there
  zt::step::append_norm_block_sums(g, n, 8, 0x1p-3f, sums);
  keep(sums.data(), sums.size() * sizeof(float));
  zt::step::OptimizerSettings settings;
  settings.adam_config.weight_decay = 0.1;
  float* m32 = std::is_same_v<T, float> ? nullptr : (master_weights ? master.data() : nullptr);
  for (int64_t t = 1; t <= 2; ++t) {
    const auto opt = zt::step::element_optimizer(settings, 1e-2, t, state.data(), n);
    const zt::ClipDecision clip = zt::clip_decision(4.0f, 1.0f);  // clipped by 1/4
    const std::size_t kept =
        zt::step::apply_update(zt::step::OwnedSlice<T>{params.data(), m32, 0, g, n}, 0x1p-3f, clip, opt);
    keep(&kept, sizeof kept);
  }
  keep(params.data(), n * sizeof(T));
  keep(master.data(), n * sizeof(float));
  keep(state.data(), state.size() * sizeof(float));
  return out;
}

template <typename T>
void step_keeps_its_bits(bool master_weights) {
  for (const bool poison : {false, true}) {
    std::string serial;
    {
      zt::UseCpuPool none(nullptr);
      serial = step_bytes<T>(master_weights, poison);
    }
    on_every_pool([&] { CHECK(step_bytes<T>(master_weights, poison) == serial); });
  }
}

}  // namespace

TEST_CASE("threads: the step's overflow check, norm blocks and update split over a rank's threads keep their bits",
          "[ch2]") {
  step_keeps_its_bits<float>(true);
  step_keeps_its_bits<zt::bf16>(true);
  step_keeps_its_bits<zt::bf16>(false);
  step_keeps_its_bits<zt::fp16>(true);
  step_keeps_its_bits<zt::fp16>(false);
}
