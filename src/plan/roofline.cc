// plan/roofline.cc — a step's kernels on a GPU's roofline (see roofline.h).
#include "plan/roofline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <type_traits>

#include "core/check.h"
#include "device/recording_runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "kernels/blas.h"
#include "model/gpt.h"
#include "model/model_ops.h"
#include "model/param_provider.h"
#include "model/workspace.h"
#include "step_device/step_ops.h"
#include "train/memory_plan.h"

namespace zt::plan {

namespace {

// Reserve recording-device memory for a buffer (at least one byte: an empty buffer still has an address).
std::byte* reserve(device::RecordingRuntime& rt, std::size_t bytes, const char* what) {
  return rt.allocate(std::max<std::size_t>(bytes, 1), what);
}

// The optimizer step's kernels over a rank's owned elements (step_device/step_ops.h: the
// non-finite check, the norm's block sums, the update and refresh), on the recording device.
template <typename T>
std::vector<device::LaunchRecord> record_update(const train::RunOptions& c, std::size_t owned) {
  device::RecordingRuntime rt;
  const device::Stream compute = rt.create_stream("compute");
  step::StepOps<T> ops(rt, compute);
  auto* params = reinterpret_cast<T*>(reserve(rt, owned * sizeof(T), "params"));
  auto* grad = reinterpret_cast<float*>(reserve(rt, owned * sizeof(float), "grads"));
  constexpr bool kFp32 = std::is_same_v<T, float>;
  float* master = kFp32 || c.no_master_weights ? nullptr : reinterpret_cast<float*>(reserve(rt, owned * 4, "master"));
  auto* state = reinterpret_cast<float*>(reserve(rt, 2 * owned * 4, "optimizer"));
  const step::GradSpan<T> g{grad, nullptr};
  std::vector<float> sums;
  ops.any_nonfinite(g, owned);
  ops.append_norm_block_sums(g, owned, static_cast<std::size_t>(c.norm_block), 1.0f, sums);
  const step::ElementOptimizer opt = step::element_optimizer(train::optimizer_settings(c), 1e-3, 1, state, owned);
  ops.apply_update({params, master, 0, g, owned}, 1.0f, ClipDecision{}, opt);
  return rt.records();
}

// One micro-batch's forward and backward through the device ops on the recording device: every
// buffer reserved, nothing computed, each launch recorded.
template <typename T>
std::vector<device::LaunchRecord> record_micro_batch(const train::SingleRankShape& shape) {
  device::RecordingRuntime rt;
  const device::Stream compute = rt.create_stream("compute");
  model::ModelOps<T> ops(rt, compute);
  const auto B = static_cast<int64_t>(shape.micro_batch);
  const model::ModelOptions o = train::model_options(shape);
  model::Gpt<T> gpt(shape.model, B, o);
  gpt.set_ops(&ops);
  const std::size_t param_bytes = static_cast<std::size_t>(gpt.manifest().param_count) * sizeof(T);
  T* params = reinterpret_cast<T*>(reserve(rt, param_bytes, "params"));
  T* grads = reinterpret_cast<T*>(reserve(rt, param_bytes, "grads"));
  const model::Precision p = model::precision_of<T>();
  const std::size_t acts = model::activation_bytes(shape.model, B, p, o),
                    scratch = model::scratch_bytes(shape.model, B, p, o),
                    ckpt = model::checkpoint_bytes(shape.model, B, p, o);
  const model::Workspace ws{reserve(rt, acts, "activations"), acts, reserve(rt, scratch, "scratch"), scratch,
                            reserve(rt, ckpt, "checkpoints"), ckpt};
  model::DenseParamProvider<T> provider(gpt.manifest(), params, grads);
  const std::vector<int32_t> batch(static_cast<std::size_t>(B * (shape.model.context + 1)), 0);
  const auto in = model::batch_inputs(batch.data(), B, shape.model.context);
  const auto tg = model::batch_targets(batch.data(), B, shape.model.context);
  gpt.forward(provider, in, tg, ws);
  gpt.backward(provider, in, tg, 1.0f, ws);
  return rt.records();
}

// A step's kernels on the recording device: one micro-batch's, and the update's.
struct StepRecords {
  std::vector<device::LaunchRecord> micro_batch, update;
};

// The step in the run's compute type. @param owned the elements the rank updates.
StepRecords record_step(const train::RunOptions& c, const train::SingleRankShape& shape, std::size_t owned) {
  switch (shape.precision) {
    case model::Precision::fp32:
      return {record_micro_batch<float>(shape), record_update<float>(c, owned)};
    case model::Precision::fp16:
      return {record_micro_batch<fp16>(shape), record_update<fp16>(c, owned)};
    case model::Precision::bf16:
      return {record_micro_batch<bf16>(shape), record_update<bf16>(c, owned)};
  }
  ZT_FAIL("roofline: unknown precision");
}

}  // namespace

GpuPeaks peaks_of(Gpu gpu) {
  // NVIDIA's data sheets, SXM parts: HBM bandwidth, FP32 (non-tensor) and dense bf16 tensor rates.
  switch (gpu) {
    case Gpu::h100:
      return {"H100 SXM", 3.35e12, 67e12, 989e12};
    case Gpu::h200:
      return {"H200 SXM", 4.8e12, 67e12, 989e12};
    case Gpu::a100:
      return {"A100 SXM 80GB", 2.039e12, 19.5e12, 312e12};
  }
  ZT_FAIL("roofline: unknown GPU");
}

StepRoofline step_roofline(const train::RunOptions& c, int64_t vocab, Gpu gpu, double launch_us) {
  ZT_CHECK(c.mp_size == 1 && c.pp_size == 1,
           "--gpu: the roofline covers a data-parallel rank's whole model; with "
           "--mp-size or --pp-size above 1 it is not built");
  const train::SingleRankShape shape = train::single_rank_shape(c, vocab);
  // the update of the elements this rank owns: every element at stage 0 (each rank updates the
  // whole replica), its 1/N_d shard at stages 1-3
  const std::size_t owned = c.stage == 0 ? shape.psi : (shape.psi + c.dp_size() - 1) / c.dp_size();
  const kernels::GemmBackend was = kernels::gemm_backend();
  kernels::set_gemm_backend(c.gemm);  // the device ops choose attention's kernels by it
  StepRecords records;
  try {
    records = record_step(c, shape, owned);
  } catch (...) {
    kernels::set_gemm_backend(was);
    throw;
  }
  kernels::set_gemm_backend(was);

  const GpuPeaks peaks = peaks_of(gpu);
  StepRoofline r;
  r.micro_batches = static_cast<int64_t>(shape.micro_batches) / c.dp_size();
  std::map<std::string, std::size_t> at;
  // FP32 on the CUDA cores, or the dense 16-bit rate for a tensor-core GEMM (bf16 and fp16 alike)
  const auto peak_of = [&](bool tensor_cores) { return tensor_cores ? peaks.bf16_dense_flops : peaks.fp32_flops; };
  const auto add = [&](const std::vector<device::LaunchRecord>& launches, int64_t times) {
    const auto k = static_cast<double>(times);
    for (const device::LaunchRecord& l : launches) {
      auto [it, fresh] = at.emplace(l.name, r.ops.size());
      if (fresh) r.ops.push_back({l.name});
      OpRoofline& op = r.ops[it->second];
      op.tensor_cores = l.tensor_cores;  // one name, one kind of kernel
      const double memory = l.bytes / peaks.bytes_per_s, compute = l.flops / peak_of(l.tensor_cores);
      op.launches += times;
      op.bytes += k * l.bytes;
      op.flops += k * l.flops;
      op.seconds += k * std::max(memory, compute);
    }
  };
  add(records.micro_batch, r.micro_batches);
  add(records.update, 1);
  const auto A = static_cast<double>(r.micro_batches);
  for (OpRoofline& op : r.ops) {
    op.compute_bound = op.flops / peak_of(op.tensor_cores) > op.bytes / peaks.bytes_per_s;
    r.launches += op.launches;
    r.kernel_seconds += op.seconds;
  }
  r.launch_seconds = static_cast<double>(r.launches) * launch_us * 1e-6;
  const model::GptConfig& m = shape.model;
  r.tokens = A * static_cast<double>(shape.micro_batch) * static_cast<double>(m.context);
  r.model_flops = (6.0 * static_cast<double>(shape.psi) +
                   12.0 * static_cast<double>(m.layers * m.width) * static_cast<double>(m.context)) *
                  r.tokens;
  return r;
}

std::string printed_roofline(const StepRoofline& r, Gpu gpu) {
  const GpuPeaks peaks = peaks_of(gpu);
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "roofline on %s: %.2f TB/s, FP32 %.1f TFLOP/s (CUDA cores), bf16 dense %.0f TFLOP/s (tensor cores, "
                "MFU)\n",
                peaks.name, peaks.bytes_per_s / 1e12, peaks.fp32_flops / 1e12, peaks.bf16_dense_flops / 1e12);
  out += line;
  std::snprintf(line, sizeof line, "  %-46s %9s %12s %12s %10s  %s\n", "op", "launches", "MB", "GFLOP", "ms", "bound");
  out += line;
  std::vector<OpRoofline> ops = r.ops;
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpRoofline& a, const OpRoofline& b) { return a.seconds > b.seconds; });
  for (const OpRoofline& op : ops) {
    std::snprintf(line, sizeof line, "  %-46s %9lld %12.1f %12.1f %10.3f  %s\n", op.op.c_str(),
                  static_cast<long long>(op.launches), op.bytes / 1e6, op.flops / 1e9, op.seconds * 1e3,
                  op.compute_bound ? (op.tensor_cores ? "compute (tensor cores)" : "compute") : "memory");
    out += line;
  }
  const double t = r.seconds();
  std::snprintf(line, sizeof line, "  launches per step: %lld (%lld micro-batches), %.3f ms at the launch cost\n",
                static_cast<long long>(r.launches), static_cast<long long>(r.micro_batches), r.launch_seconds * 1e3);
  out += line;
  std::snprintf(line, sizeof line, "  predicted step: %.3f ms (kernels %.3f ms + launches %.3f ms)\n", t * 1e3,
                r.kernel_seconds * 1e3, r.launch_seconds * 1e3);
  out += line;
  std::snprintf(line, sizeof line, "  predicted tokens/s: %.0f per GPU\n", r.tokens / t);
  out += line;
  std::snprintf(
      line, sizeof line,
      "  predicted MFU: %.1f%% of bf16 dense peak (model flops (6 psi + 12 L C T) x tokens = %.2f TFLOP per step)\n",
      100.0 * r.model_flops / t / peaks.bf16_dense_flops, r.model_flops / 1e12);
  out += line;
  return out;
}

}  // namespace zt::plan
