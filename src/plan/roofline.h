// plan/roofline.h — zero-plan --device cuda --gpu NAME: a step's kernels against a GPU's roofline.
//
// The roofline (Williams, Waterman & Patterson 2009): a kernel that moves B bytes and does F
// flops takes at least max(B / bandwidth, F / peak rate) on a machine, whichever wall it hits
// first; a kernel whose F / B (its arithmetic intensity) is below peak / bandwidth is bound by
// memory, above it by compute. The kernels come from the code itself: one micro-batch's forward
// and backward run through the model's ops (model/model_ops.h) on the recording device
// (device/recording_runtime.h), which keeps each launch's name, the bytes its spans name and the
// flops it declares. The step is that, times the rank's micro-batches, then the optimizer step's
// kernels over the elements the rank owns (step_device/step_ops.h: every element at stage 0, a
// 1/N_d shard above), plus a fixed cost per launch (--launch-us): thousands of small launches are
// a wall of their own.
//
// From the step's time follow tokens per second and MFU, model flops utilisation (PaLM, Chowdhery
// et al. 2022): the flops the model needs, 6 ψ + 12 L C T per token (the GEMMs forward and
// backward, then attention's two products per layer), over the time, as a fraction of the GPU's
// dense bf16 tensor-core peak: the figure GPU training is quoted in.
//
// What it leaves out, and says so: the reduction of gradients between ranks and the loop's own
// widenings and accumulator adds (chapter 7's alpha-beta estimate prices the reduction), overlap
// between kernels, caches (each
// span is counted once per launch, a GEMM's operands re-read from L2 are free here), and the
// CPU's side of each launch. It is a prediction to measure against, not a simulator.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/words.h"
#include "train/run_options.h"

namespace zt::plan {

/// A GPU of the roofline's table (--gpu).
enum class Gpu { h100, h200, a100 };
/// @return the words of --gpu, in the order --help lists them.
constexpr auto words(Gpu) {
  return std::array{Word{"h100", Gpu::h100}, Word{"h200", Gpu::h200}, Word{"a100", Gpu::a100}};
}

/// A GPU's published peaks (SXM parts, dense, no sparsity).
struct GpuPeaks {
  const char* name;         ///< e.g. "H200 SXM"
  double bytes_per_s;       ///< HBM bandwidth
  double fp32_flops;        ///< FP32 on the CUDA cores: every kernel but the tensor-core GEMMs
  double bf16_dense_flops;  ///< bf16 on the tensor cores, dense: MFU's denominator
};

/// @param gpu a GPU of the table. @return its peaks.
GpuPeaks peaks_of(Gpu gpu);

/// The kernels of one name in a step, and their time on the roofline.
struct OpRoofline {
  std::string op;              ///< the launch name (e.g. "attention_forward", "linear_forward x W^T")
  int64_t launches = 0;        ///< per step
  double bytes = 0;            ///< moved per step (the spans of every launch)
  double flops = 0;            ///< per step (0: the kernel declares none and is timed by its bytes)
  double seconds = 0;          ///< max(bytes / bandwidth, flops / its peak), summed over its launches
  bool compute_bound = false;  ///< the flops wall is the higher one
  bool tensor_cores = false;   ///< its peak is the dense 16-bit tensor-core rate, not FP32's
};

/// A rank's step on a GPU's roofline.
struct StepRoofline {
  std::vector<OpRoofline> ops;  ///< by launch name, in the order each first ran
  int64_t micro_batches = 0;    ///< the rank's micro-batches per step
  int64_t launches = 0;         ///< kernels per step
  double kernel_seconds = 0;    ///< the ops' roofline time
  double launch_seconds = 0;    ///< launches x the per-launch cost
  double tokens = 0;            ///< the rank's tokens per step
  double model_flops = 0;       ///< (6 psi + 12 L C T) x tokens
  /// @return the step's predicted time.
  double seconds() const { return kernel_seconds + launch_seconds; }
};

/// The roofline of a rank's step (see the file comment).
/// @param c the settings (one model-parallel and pipeline rank: --mp-size and --pp-size 1).
/// @param vocab the vocabulary. @param gpu the GPU. @param launch_us the cost of one launch, µs.
/// @return the step.
StepRoofline step_roofline(const train::RunOptions& c, int64_t vocab, Gpu gpu, double launch_us);

/// The roofline as zero-plan prints it: a line per op (launches, bytes, flops, time, which wall),
/// then the step's launches, time, tokens/s and MFU. @param r the step. @param gpu its GPU.
/// @return the text.
std::string printed_roofline(const StepRoofline& r, Gpu gpu);

}  // namespace zt::plan
