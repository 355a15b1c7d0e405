// checkpoint/writer.h — writing one checkpoint atomically from every rank of a job.
//
// The protocol (every step fsynced before the next, so a crash anywhere leaves the previous
// checkpoint intact and the new one invisible):
//   1. rank 0: begin_save makes DIR/step-<8 digits>.tmp/ empty (a stale one from a crash is removed);
//   2. every rank (after a barrier): a RankFileWriter appends its owned intervals to
//      rank-<5 digits>.bin, then finish() fsyncs it and writes its fragment rank-<5 digits>.json
//      (its file entry and intervals), fsynced;
//   3. rank 0 (after a barrier): publish merges the fragments into manifest.json (fsynced, the
//      fragments removed), fsyncs the directory, renames it to DIR/step-<8 digits>/ and fsyncs DIR.
// A directory without the .tmp suffix is therefore always complete. The directory must be one
// filesystem that every rank sees (as for DeepSpeed's checkpoints).
// Fault injection for the crash-safety tests: with ZT_CHECKPOINT_CRASH_AT set to one of
// "data-half", "data-written", "fragment-written", "manifest-written", "renamed" the writer
// kills its own process (SIGKILL, no clean-up) at that point (rank 0 only for the last two).
// Not the engine's knowledge of what a rank owns (zero/checkpoint_io.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "checkpoint/manifest.h"

namespace zt::checkpoint {

/// Intervals longer than this are split, so a reader that needs a few elements verifies a
/// bounded number of bytes (2^18 elements = 1 MiB).
inline constexpr int64_t kMaxIntervalElements = int64_t{1} << 18;

/// The directory of the checkpoint of `step` under `save_dir`. @param save_dir DIR.
/// @param step the step. @return DIR/step-<8 digits>.
std::string step_dir(const std::string& save_dir, int64_t step);

/// A rank's data file name. @param world_rank the rank. @return "rank-<5 digits>.bin".
std::string rank_data_name(int world_rank);

/// A rank's fragment name. @param world_rank the rank. @return "rank-<5 digits>.json".
std::string rank_fragment_name(int world_rank);

/// Protocol step 1 (rank 0): create save_dir if needed and an empty temporary directory for
/// `step`. @param save_dir DIR. @param step the step. @return the temporary directory's path.
std::string begin_save(const std::string& save_dir, int64_t step);

/// Protocol step 2: one rank's data file and fragment.
class RankFileWriter {
 public:
  /// Open the rank's data file (rank_data_name) in the temporary directory. @param temp_dir from begin_save.
  /// @param world_rank this rank's index in the whole job.
  RankFileWriter(const std::string& temp_dir, int world_rank);
  ~RankFileWriter();
  RankFileWriter(const RankFileWriter&) = delete;
  RankFileWriter& operator=(const RankFileWriter&) = delete;

  /// Append `length` canonical elements of `param` of `state` starting at element `offset`. A run
  /// that continues the previous one (same state and parameter, the next element) extends its
  /// interval; intervals are cut at kMaxIntervalElements; length 0 adds nothing.
  /// @param state the state's name. @param param canonical index. @param offset first element.
  /// @param values the values. @param length how many.
  void add(const std::string& state, int param, int64_t offset, const float* values, int64_t length);

  /// Flush and fsync the data file, then write and fsync the fragment.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Protocol step 3 (rank 0, once every rank's finish() returned): the manifest from `header`
/// (model, sharding, run, states, params; files and intervals come from the fragments of ranks
/// 0..world_size-1), then the rename. Checks that the intervals cover every element of every
/// parameter exactly once per state before publishing (a bug would otherwise be saved).
/// @param save_dir DIR. @param step the step. @param header the manifest without files and
/// intervals. @param world_size ranks that wrote fragments. @return the published directory.
std::string publish(const std::string& save_dir, int64_t step, Manifest header, int world_size);

}  // namespace zt::checkpoint
