// zero-plan's roofline (plan/roofline.h) against independent counts. The recording device counts
// exactly the kernels the emulated device runs for the same micro-batches and the optimizer step
// (both GEMM settings, every precision), so the plan's launches per step are the engine's; the linear layers' GEMM
// flops sum to the closed form 2 N (12 L C^2 + V C) forward; each op's time is its larger wall; tokens/s and MFU follow
// from the step's time and the model flops (6 psi + 12 L C T) per token.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "device/emulated_runtime.h"
#include "kernels/blas.h"
#include "model/gpt.h"
#include "model/model_ops.h"
#include "model/param_provider.h"
#include "model/workspace.h"
#include "plan/roofline.h"
#include "step_device/step_ops.h"
#include "train/memory_plan.h"

namespace {

using zt::plan::Gpu;

zt::train::RunOptions small(zt::model::Precision p, zt::kernels::GemmBackend gemm) {
  zt::train::RunOptions c;
  c.layers = 2;
  c.width = 24;
  c.heads = 3;
  c.context = 9;
  c.vocab = 13;
  c.micro_batch = 2;
  c.global_batch = 6;
  c.precision = p;
  c.gemm = gemm;
  c.device = zt::device::Device::cuda;
  return c;
}

// The kernels one micro-batch's forward and backward launch on the emulated device, which runs them.
template <typename T>
int64_t emulated_launches(const zt::train::RunOptions& c) {
  using namespace zt::model;
  const zt::train::SingleRankShape shape = zt::train::single_rank_shape(c, c.vocab);
  zt::device::EmulatedRuntime rt;
  const zt::device::Stream s = rt.create_stream("compute");
  ModelOps<T> ops(rt, s);
  const auto B = static_cast<int64_t>(shape.micro_batch);
  const ModelOptions o = zt::train::model_options(shape);
  Gpt<T> gpt(shape.model, B, o);
  gpt.set_ops(&ops);
  const std::size_t pb = static_cast<std::size_t>(gpt.manifest().param_count) * sizeof(T);
  const Precision p = precision_of<T>();
  const std::size_t a = activation_bytes(shape.model, B, p, o), sc = scratch_bytes(shape.model, B, p, o);
  std::byte *params = rt.allocate(pb, "params"), *grads = rt.allocate(pb, "grads");
  std::byte *acts = rt.allocate(a, "activations"), *scratch = rt.allocate(sc, "scratch");
  const Workspace ws{acts, a, scratch, sc, nullptr, 0};
  DenseParamProvider<T> provider(gpt.manifest(), reinterpret_cast<T*>(params), reinterpret_cast<T*>(grads));
  const std::vector<int32_t> batch(static_cast<std::size_t>(B * (c.context + 1)), 1);
  const zt::kernels::GemmBackend was = zt::kernels::gemm_backend();
  zt::kernels::set_gemm_backend(c.gemm);
  const int64_t before = rt.launches();
  gpt.forward(provider, batch_inputs(batch.data(), B, c.context), batch_targets(batch.data(), B, c.context), ws);
  gpt.backward(provider, batch_inputs(batch.data(), B, c.context), batch_targets(batch.data(), B, c.context), 1.0f, ws);
  rt.synchronize();
  zt::kernels::set_gemm_backend(was);
  for (std::byte* b : {params, grads, acts, scratch}) rt.release(b);
  return rt.launches() - before;
}

// The kernels of the optimizer step over psi elements on the emulated device, which runs them.
template <typename T>
int64_t emulated_update_launches(const zt::train::RunOptions& c) {
  const zt::train::SingleRankShape shape = zt::train::single_rank_shape(c, c.vocab);
  const std::size_t n = shape.psi;
  zt::device::EmulatedRuntime rt;
  const zt::device::Stream s = rt.create_stream("compute");
  zt::step::StepOps<T> ops(rt, s);
  std::byte *params = rt.allocate(n * sizeof(T), "params"), *grad = rt.allocate(n * 4, "grads");
  std::byte *master = rt.allocate(n * 4, "master"), *state = rt.allocate(2 * n * 4, "optimizer");
  const zt::step::GradSpan<T> g{reinterpret_cast<float*>(grad), nullptr};
  std::vector<float> sums;
  const int64_t before = rt.launches();
  ops.any_nonfinite(g, n);
  ops.append_norm_block_sums(g, n, static_cast<std::size_t>(c.norm_block), 1.0f, sums);
  const auto opt =
      zt::step::element_optimizer(zt::train::optimizer_settings(c), 1e-3, 1, reinterpret_cast<float*>(state), n);
  ops.apply_update(
      {reinterpret_cast<T*>(params), std::is_same_v<T, float> ? nullptr : reinterpret_cast<float*>(master), 0, g, n},
      1.0f, zt::ClipDecision{}, opt);
  rt.synchronize();
  for (std::byte* b : {params, grad, master, state}) rt.release(b);
  return rt.launches() - before;
}

}  // namespace

TEMPLATE_TEST_CASE("roofline: the recording device counts the kernels the emulated device runs", "[ch13]", float,
                   zt::fp16, zt::bf16) {
  for (const auto gemm : {zt::kernels::GemmBackend::canonical, zt::kernels::GemmBackend::blas}) {
    const auto c = small(zt::model::precision_of<TestType>(), gemm);
    const zt::plan::StepRoofline r = zt::plan::step_roofline(c, c.vocab, Gpu::h200, 3);
    INFO("--gemm " << zt::word_of(gemm));
    CHECK(r.micro_batches == 3);
    CHECK(r.launches == 3 * emulated_launches<TestType>(c) + emulated_update_launches<TestType>(c));
  }
}

TEST_CASE("roofline: GEMM flops, each op's wall, tokens/s and MFU follow from closed forms", "[ch13]") {
  const auto c = small(zt::model::Precision::bf16, zt::kernels::GemmBackend::canonical);
  const zt::plan::StepRoofline r = zt::plan::step_roofline(c, c.vocab, Gpu::a100, 5);
  const double N = 2.0 * 9, C = 24, L = 2, V = 13, A = 3;
  double forward_gemm = 0;
  int64_t launches = 0;
  double kernels = 0;
  const zt::plan::GpuPeaks g = zt::plan::peaks_of(Gpu::a100);
  for (const auto& op : r.ops) {
    if (op.op == "linear_forward x W^T") forward_gemm = op.flops;
    launches += op.launches;
    kernels += op.seconds;
    // an op's time is at least its larger wall (equal when one launch carries all of it)
    CHECK(op.seconds >= std::max(op.bytes / g.bytes_per_s, op.flops / g.fp32_flops) * (1 - 1e-12));
  }
  CHECK(forward_gemm == A * 2 * N * (12 * L * C * C + V * C));
  CHECK(launches == r.launches);
  CHECK(kernels == Approx(r.kernel_seconds).epsilon(1e-12));
  CHECK(r.launch_seconds == Approx(static_cast<double>(r.launches) * 5e-6).epsilon(1e-12));
  const zt::train::SingleRankShape shape = zt::train::single_rank_shape(c, c.vocab);
  CHECK(r.tokens == A * N);
  CHECK(r.model_flops == (6.0 * static_cast<double>(shape.psi) + 12 * L * C * 9) * A * N);
  // with --gemm blas the linear layers' GEMMs take the 16-bit tensors themselves: no widenings (two
  // a linear forward, three a backward, over the 4 L + 1 linears of A micro-batches), and their
  // flops priced at the dense 16-bit rate
  const zt::plan::StepRoofline blas =
      zt::plan::step_roofline(small(zt::model::Precision::bf16, zt::kernels::GemmBackend::blas), c.vocab, Gpu::a100, 5);
  CHECK(blas.launches == r.launches - static_cast<int64_t>(A * (2 + 3) * (4 * L + 1)));
  int tensor_ops = 0;
  for (const auto& op : blas.ops) {
    CHECK(op.tensor_cores == (op.op.find("16-bit operands") != std::string::npos));
    if (!op.tensor_cores) continue;
    ++tensor_ops;
    CHECK(op.seconds >= std::max(op.bytes / g.bytes_per_s, op.flops / g.bf16_dense_flops) * (1 - 1e-12));
  }
  CHECK(tensor_ops == 3);  // x W^T, dy W, dy^T x
}
