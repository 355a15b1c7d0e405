// zero/checkpoint_io.h — what a ZeRO rank saves and loads, in the checkpoint's canonical space.
//
// A rank's per-element state (the FP32 master, Adam's m and v or SGD's momentum) is stored per
// unit of its storage manifest, in unit coordinates. A checkpoint (checkpoint/manifest.h) keys
// every element by canonical coordinates instead: (parameter, element). This file is the bridge:
// it cuts a range of a unit into CanonicalPieces — runs that are consecutive both in the unit and
// in one canonical parameter (model/manifest.h's CanonicalRun) — and it builds and checks the
// manifest's descriptive parts (model, sharding, run). Who writes what:
//   - every data-parallel rank writes the elements of its own shard range [r·shard_u, r·shard_u +
//     real) of each unit, whether the stage keeps the state sharded or whole (a stage-0 rank
//     slices its whole copy), so the bytes are spread over all ranks and each element is written
//     exactly once;
//   - a unit replicated over the model-parallel group (embeddings, LayerNorms, row-parallel
//     biases: UnitInfo::block < 0) is written by model-parallel rank 0 only.
// On load every rank reads, by the same pieces, whatever its own (stage, N_d, N_m) keeps: the
// reader intersects them with the saved intervals. The engine does the copying
// (zero/train_zero.cc); this file reads and writes no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/manifest.h"
#include "train/run_options.h"
#include "zero/zero_plan.h"

namespace zt::zero {

/// Consecutive elements of one unit that are consecutive elements of one canonical parameter.
struct CanonicalPiece {
  std::size_t unit_offset = 0;  ///< first element, in unit coordinates
  int param = 0;                ///< canonical parameter index
  int64_t offset = 0;           ///< first element, relative to the canonical parameter
  int64_t length = 0;           ///< elements
};

/// Cut [begin, end) of unit `unit` of a storage manifest into canonical pieces, in unit order
/// (padding past the unit's last parameter yields nothing). @param storage the rank's storage
/// manifest. @param unit the unit. @param begin first element (unit coordinates).
/// @param end one past the last. @return the pieces, covering the real elements of the range.
std::vector<CanonicalPiece> canonical_pieces(const model::Manifest& storage, std::size_t unit, std::size_t begin,
                                             std::size_t end);

/// The per-element states of a run: "master", then "adam.m", "adam.v" or "sgd.momentum".
/// @param c the settings. @return the names in save order.
std::vector<std::string> checkpoint_states(const train::RunOptions& c);

/// The scalars a run continues from.
struct RunScalars {
  int64_t step = 0;            ///< optimizer steps taken (applied or skipped)
  int64_t optimizer_step = 0;  ///< steps applied (Adam's t)
  float loss_scale = 1;        ///< S in force for the next step
  int64_t good_steps = 0;      ///< the loss scaler's clean-step count
};

/// The manifest of a checkpoint without its files and intervals: the model, how this run is
/// sharded, the run's scalars and settings, the states and the canonical parameters.
/// @param c the settings. @param plan a rank's plan (any rank: the layout's rank-free parts are
/// used). @param dataset the dataset's description. @param s the scalars. @return the header.
checkpoint::Manifest checkpoint_header(const train::RunOptions& c, const ZeroPlan& plan, const std::string& dataset,
                                       const RunScalars& s);

/// Check that a checkpoint can continue this run: the same model (shape and --mp-blocks), the
/// same precision, optimizer and dataset, and a step before --steps; read its scalars.
/// zt::Error naming the checkpoint and the first difference otherwise.
/// @param m the checkpoint's manifest. @param where its directory, for messages.
/// @param c this run's settings. @param plan this rank's plan. @param dataset this run's
/// dataset description. @return the scalars to continue from.
RunScalars check_resumable(const checkpoint::Manifest& m, const std::string& where, const train::RunOptions& c,
                           const ZeroPlan& plan, const std::string& dataset);

}  // namespace zt::zero
