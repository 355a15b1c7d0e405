// zero/config_check.h — do all ranks run the same job? A hash of every setting that must agree,
// exchanged once at start-up; a mismatch fails every rank with the same clear message instead of
// a hang or silently different training. The hash is the flag registry's (train/train_flags.h's
// config_hash): which settings enter it is said where each flag is declared, so a new flag cannot
// be forgotten here. Not a validation of the
// settings (train_config.h).
#pragma once

#include <cstdint>

#include "collective/collective.h"
#include "train/run_options.h"

namespace zt::zero {

/// All-gather the config hashes; when any rank's differs from rank 0's, every rank fails with
/// the same message: a zt::Error on the ranks that differ (the cause), a zt::PeerFailed on the
/// ranks that agree with rank 0.
/// @param config this rank's settings. @param coll the group.
void check_same_config(const train::RunOptions& config, Collective& coll);

/// The settings fit the groups (--world-size / --mp-size data-parallel ranks, --mp-size
/// model-parallel ones) and every rank of both groups has the same settings.
/// @param config this rank's settings. @param dp its data-parallel group.
/// @param mp its model-parallel group (null: N_m = 1).
void check_job_config(const train::RunOptions& config, Collective& dp, Collective* mp, Collective* pp = nullptr);

}  // namespace zt::zero
