// The model's CPU kernels split over a rank's threads (core/cpu_pool.h) give the bits of their
// item ops run one after another: the shared kernel cases (tests/support/kernel_cases/, the same
// ones that hold the GPU's threads to the CPU kernels) run here with a pool of 2, 3 and 4 threads
// installed that splits EVERY loop, so the cases' small and odd shapes (131 rows of 77, 5 of 259,
// one element) put part boundaries at every kind of edge. The item ops are the per-output bodies
// of the serial loops, so equal bits here mean: the thread count changes nothing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/cpu_pool.h"
#include "device/item_grid.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
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
  on_every_pool([] { zt::test::case_attention<TestType>(zt::test::HostEnv{}); });
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
