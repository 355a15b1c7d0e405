// zero/config_check.h — do all ranks run the same job? A hash of every setting that must agree,
// exchanged once at start-up; a mismatch fails every rank with the same clear message instead of
// a hang or silently different training. Which settings enter the hash is said where each flag is
// declared (train/train_flags.h), so a new flag cannot be forgotten here. Not a validation of the
// settings (train_config.h).
#pragma once

#include <cstdint>

#include "collective/collective.h"
#include "core/cli.h"
#include "train/train_config.h"

namespace zt::zero {

/// A 64-bit hash of the hashed flags of a registry (FNV-1a over ArgParser::hashed_settings:
/// every value as its flag text, numbers exactly, so the smallest difference counts).
/// @param flags a registry whose targets hold the settings. @return the hash.
uint64_t settings_hash(const ArgParser& flags);

/// A 64-bit hash of every setting of zero-train that must agree across ranks: settings_hash of
/// train/train_flags.h's declarations, resolved values where a default is derived.
/// @param config the settings. @return the hash.
uint64_t config_hash(const train::TrainConfig& config);

/// All-gather the config hashes; when any rank's differs from rank 0's, every rank fails with
/// the same message: a zt::Error on the ranks that differ (the cause), a zt::PeerFailed on the
/// ranks that agree with rank 0.
/// @param config this rank's settings. @param coll the group.
void check_same_config(const train::TrainConfig& config, Collective& coll);

/// The settings fit the groups (--world-size / --mp-size data-parallel ranks, --mp-size
/// model-parallel ones) and every rank of both groups has the same settings.
/// @param config this rank's settings. @param dp its data-parallel group.
/// @param mp its model-parallel group (null: N_m = 1).
void check_job_config(const train::TrainConfig& config, Collective& dp, Collective* mp, Collective* pp = nullptr);

}  // namespace zt::zero
