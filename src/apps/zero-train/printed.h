// apps/zero-train/printed.h — what zero-train prints while and after it trains: a line per
// held-out evaluation (and a progress line on a terminal), then the closing summary and, with
// ZeRO-Offload, the tiers' traffic beside its closed form. Printing only; the figures are the
// run's and report/'s. The lines are a stable format quoted by the chapters.
#pragma once

#include "train/run_loop.h"
#include "train/run_result.h"
#include "train/train_config.h"
#include "zero/train_zero.h"

namespace zt::zero_train {

/// The per-step callback of rank 0 (or the single rank). @param c the run. @return the callback.
train::StepCallback progress_printer(const train::TrainConfig& c);
/// The closing summary of a run. @param c the run. @param r its result. @param zero the ZeRO
/// engine's result (null: the reference loop).
void print_summary(const train::TrainConfig& c, const train::RunResult& r, const zero::ZeroRunResult* zero);
/// ZeRO-Offload's traffic of rank 0's last step beside its closed form. @param c the run.
/// @param z the engine's result.
void print_offload(const train::TrainConfig& c, const zero::ZeroRunResult& z);

}  // namespace zt::zero_train
