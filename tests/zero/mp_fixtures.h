// Shared by the model-parallel tests (test_model_parallel.cc, pairwise, and test_full.cc, the full
// product): one row of (N_d, N_m, stage, precision, checkpointing), its config, and the check that
// the run equals the one-device reference with the same --mp-blocks bit for bit.
#pragma once

#include <sstream>
#include <string>

#include "zero/zero_fixtures.h"

namespace zt::test {

/// One model-parallel equivalence row.
struct MpCase {
  int dp, mp, stage;
  const char* precision;
  bool checkpoint;
  /// @return the row's section name, e.g. "N_d 2, N_m 2, stage 3, bf16, checkpointing".
  std::string name() const {
    std::ostringstream s;
    s << "N_d " << dp << ", N_m " << mp << ", stage " << stage << ", " << precision
      << (checkpoint ? ", checkpointing" : "");
    return s.str();
  }
  /// The run: a 2-block GPT split in B = 4 tensor-parallel blocks, 5 steps, two micro-batches per
  /// data-parallel rank, clipping that fires, and for fp16 first steps whose scaled gradients
  /// overflow (skipped while the scale backs off).
  train::TrainConfig config() const {
    train::TrainConfig c = zero_config(stage, dp * mp, 2, precision);
    c.layers = 2;
    c.heads = 4;
    c.width = 32;
    c.context = 8;
    c.mp_size = mp;
    c.mp_blocks = 4;
    c.global_batch = dp * 2 * c.micro_batch;  // 2 micro-batches per data-parallel rank
    c.checkpoint_activations = checkpoint;
    c.clip_grad_norm = 0.05;
    c.steps = 5;  // fp16: two overflowing steps, then the scale has backed off enough
    if (std::string(precision) == "fp16") c.loss_scale_init = 524288;  // 2^19: the first steps overflow
    return c;
  }
};

/// Run a row and its reference (one device, all B blocks, no checkpointing); Catch2 checks that
/// every rank's step records and the final master weights and step-1 gradient are bitwise equal.
/// @param cs the row. @param partition --partition-activations of the row (off, on, cpu; the
/// reference never partitions). @return the run (for further checks).
inline ZeroRun check_mp_equal(const MpCase& cs, const char* partition = "off") {
  train::TrainConfig c = cs.config();
  c.partition_activations = word<train::PartitionActivations>(partition);
  train::TrainConfig ref_config = reference_of(c);
  ref_config.checkpoint_activations = false;
  ref_config.partition_activations = train::PartitionActivations::off;
  train::RunArtifacts ref_art;
  const train::RunResult ref = run(ref_config, &ref_art);
  ZeroRun z = run_zero(c);
  REQUIRE(z.errors == "");
  for (const auto& r : z.ranks) CHECK(compare_steps(r.value->run.steps, ref.steps) == "");
  CHECK(compare_params(z.artifacts.final_params, ref_art.final_params) == "");
  CHECK(compare_params(z.artifacts.step1_grad, ref_art.step1_grad) == "");
  bool clipped = false, skipped = false;
  for (const auto& s : ref.steps) clipped |= s.clipped, skipped |= s.skipped;
  CHECK(clipped);  // the norm path ran on a gathered norm
  CHECK(skipped == (std::string(cs.precision) == "fp16"));
  return z;
}

}  // namespace zt::test
