// The training engine on a CUDA device: `zero-train --device cuda` trains the grid that
// `ctest -L device` runs on the emulated device (tests/zero/test_zero_on_device.cc), and every run's
// final FP32 master weights and step-1 gradient equal the same run's with --device cpu, byte for
// byte: stages 0-3 × N = 1, 2 ranks × fp32 / fp16 / bf16 (the ranks share the one GPU through
// Gloo staging), tensor parallelism N_d 2 × N_m 2, P_a+cpu, and ZeRO-Offload's host tier. The
// reference loop too (one rank, stage 0). With `--gemm blas` (cuBLAS, whose bits are the GPU's own)
// two runs of the same job on the GPU must equal each other instead; `--trace` shows the compute
// stream's kernels, timed by CUDA events. `--collective nccl`: one rank through NcclCollective and,
// with two GPUs, two ranks, each bitwise equal to the job over Gloo on the CPU (with two GPUs the
// N = 2 rows above run over NCCL too: `--collective auto` takes it). Not a Catch2 program: without a device it prints
// why and exits 77, which CTest reports as skipped (`make test-gpu` counts a skip as a failure).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "device/cuda_probe.h"
#include "support/run_program.h"

namespace {

const std::string kModel =
    "--layers 2 --heads 4 --width 32 --context 16 --micro-batch 2 --steps 4 --eval-every 2 --clip-grad-norm 0.05 ";

struct Row {
  std::string name, args;
};

std::vector<Row> rows() {
  std::vector<Row> out;
  for (const char* precision : {"fp32", "fp16", "bf16"})
    for (const int n : {1, 2})
      for (int stage = 0; stage <= 3; ++stage)
        out.push_back({std::string(precision) + " N=" + std::to_string(n) + " stage " + std::to_string(stage),
                       "--precision " + std::string(precision) + " --world-size " + std::to_string(n) + " --stage " +
                           std::to_string(stage) + " --global-batch " + std::to_string(4 * n)});
  out.push_back({"N_d 2 x N_m 2, stage 3, bf16, checkpointing",
                 "--precision bf16 --world-size 4 --mp-size 2 --mp-blocks 4 --stage 3 --global-batch 8 "
                 "--checkpoint-activations"});
  out.push_back({"P_a+cpu, N_d 2 x N_m 2, stage 1, fp16",
                 "--precision fp16 --world-size 4 --mp-size 2 --stage 1 --global-batch 8 --checkpoint-activations "
                 "--partition-activations cpu"});
  out.push_back({"ZeRO-Offload host tier, stage 2, fp16, N=2",
                 "--precision fp16 --world-size 2 --stage 2 --global-batch 8 --offload-optimizer host"});
  return out;
}

// One run's dumps; empty strings where the run failed (its stderr is printed).
struct Dumps {
  std::string params, grads;
};

Dumps run_on(const Row& row, const char* device, const std::string& dir, const std::string& tag = "") {
  const std::string params = dir + "/" + device + tag + ".params", grads = dir + "/" + device + tag + ".grads";
  zt::test::RunOptions o;
  o.timeout_s = 600;
  const auto out = zt::test::run_program(
      "zero-train", kModel + row.args + " --device " + device + " --dump-params " + params + " --dump-grads " + grads,
      o);
  if (out.status != 0) {
    std::printf("  %s on %s: exit %d: %s\n", row.name.c_str(), device, out.status, out.err.c_str());
    return {};
  }
  return {zt::read_file(params), zt::read_file(grads)};
}

}  // namespace

int main() {
  const zt::device::CudaProbe probe = zt::device::probe_cuda();
  if (!probe.compiled || probe.devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  const std::string dir = "/tmp/zt_gpu_engine_" + std::to_string(::getpid());
  int failures = 0, checked = 0;
  for (const Row& row : rows()) {
    std::filesystem::create_directories(dir);
    const Dumps host = run_on(row, "cpu", dir), gpu = run_on(row, "cuda", dir);
    std::filesystem::remove_all(dir);
    ++checked;
    const bool same = !host.params.empty() && host.params == gpu.params && host.grads == gpu.grads;
    if (!same) ++failures;
    std::printf("%s: %s\n", row.name.c_str(), same ? "bitwise equal to --device cpu" : "DIFFERS");
  }
  std::printf("the engine on the GPU: %d of %d runs bitwise equal to --device cpu\n", checked - failures, checked);
  // NCCL in training (train/collective_choice.h): one rank through NcclCollective; with two GPUs,
  // two ranks over NCCL, each against the same job over Gloo on the CPU
  std::vector<Row> nccl_rows = {{"--collective nccl, bf16 N=1 stage 2", "--precision bf16 --stage 2 --global-batch 4"}};
  if (probe.devices >= 2)
    nccl_rows.push_back(
        {"--collective nccl, bf16 N=2 stage 2", "--precision bf16 --world-size 2 --stage 2 --global-batch 8"});
  for (const Row& row : nccl_rows) {
    std::filesystem::create_directories(dir);
    const Dumps host = run_on(row, "cpu", dir), gpu = run_on({row.name, row.args + " --collective nccl"}, "cuda", dir);
    std::filesystem::remove_all(dir);
    ++checked;
    const bool same = !host.params.empty() && host.params == gpu.params && host.grads == gpu.grads;
    if (!same) ++failures;
    std::printf("%s: %s\n", row.name.c_str(), same ? "bitwise equal to Gloo on --device cpu" : "DIFFERS");
  }
  // cuBLAS under its reproducibility conditions (gemm/cuda/blas_gemm_cuda.h): the same job twice
  int repeat_failures = 0;
  for (const Row& row : {Row{"--gemm blas, fp32 N=1 stage 0", "--gemm blas --precision fp32 --global-batch 4"},
                         Row{"--gemm blas, bf16 N=2 stage 2",
                             "--gemm blas --precision bf16 --world-size 2 --stage 2 --global-batch 8"}}) {
    std::filesystem::create_directories(dir);
    const Dumps first = run_on(row, "cuda", dir, "-1"), second = run_on(row, "cuda", dir, "-2");
    std::filesystem::remove_all(dir);
    const bool same = !first.params.empty() && first.params == second.params && first.grads == second.grads;
    if (!same) ++repeat_failures;
    std::printf("%s: %s\n", row.name.c_str(), same ? "two runs bitwise equal" : "RUNS DIFFER");
  }
  // --trace on the GPU: the compute stream's kernels, timed by CUDA events, as a track of their own
  const std::string trace = dir + ".trace.json";
  const auto traced =
      zt::test::run_program("zero-train", kModel + "--precision bf16 --global-batch 4 --device cuda --trace " + trace);
  const std::string json = traced.status == 0 && std::filesystem::exists(trace) ? zt::read_file(trace) : "";
  if (traced.status != 0) std::printf("  --trace run: exit %d: %s\n", traced.status, traced.err.c_str());
  std::filesystem::remove(trace);
  const bool trace_ok =
      json.find("\"device stream compute\"") != std::string::npos && json.find("\"kernel '") != std::string::npos;
  std::printf("--trace on the GPU: %s\n", trace_ok ? "the compute stream's kernels are a track" : "MISSING");
  return failures == 0 && repeat_failures == 0 && trace_ok ? 0 : 1;
}
