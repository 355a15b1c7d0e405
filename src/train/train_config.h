// train/train_config.h — every setting of a training run, parsed strictly from the command line.
//
// TrainConfig holds every setting of `zero-train` (docs/cli.md, chapter 2): the run's, one struct
// per feature (train/run_options.h, what the modules below the programs read), and those only a
// program reads. Its flags are declared once, in train_flags.h, which parses, prints
// (--print-config) and hashes them. Validation
// that needs only the settings themselves (sizes positive, width divisible by heads, batch
// arithmetic) happens here, so a bad run stops before any memory is touched. It is not where the
// dataset or the model are built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "train/run_options.h"

namespace zt::train {

/// All settings of one training run, as the command line gives them: the run's (RunOptions, which
/// the modules below the programs read) and those only a program reads (defaults are the `make
/// run` job).
struct TrainConfig : RunOptions {
  bool micro_batch_given = false;         ///< --micro-batch was on the command line (else derived from N_d)
  bool threads_given = false;             ///< --threads was on the command line (else derived from the CPUs)
  RanksAs ranks_as = RanksAs::processes;  ///< how --world-size N starts its ranks: processes | threads
  // a DeepSpeed-style JSON config (train/ds_config.h)
  std::string config_file;                     ///< --config FILE.json ("" = none)
  bool print_config = false;                   ///< --print-config: print the settings as flags, do not train
  bool print_step = false;                     ///< --print-step: print rank 0's step as its program, do not train
  int64_t ds_gradient_accumulation_steps = 0;  ///< the file's gradient_accumulation_steps (0 = not given)
};

/// Parse argv into a TrainConfig. Throws zt::Error on malformed input; the settings as a whole are
/// checked by validate() once the world size is known (a launcher may be what sets it).
/// @param argc as given to main. @param argv as given to main.
/// @param config filled in. @param given if not null, receives the names of the flags that were
/// on the command line (e.g. "world-size": a launcher's WORLD_SIZE must then agree with it).
/// @return false when --help was printed (nothing to run).
bool parse_train_config(int argc, char** argv, TrainConfig& config, std::vector<std::string>* given = nullptr);

/// The default --micro-batch, once the world size is known (a launcher may set it after parsing):
/// global batch / N_d, one micro-batch per data-parallel rank; an explicit --micro-batch stays.
/// @param config the parsed configuration, updated in place.
void resolve_micro_batch(TrainConfig& config);

/// The default --threads, once it is known how many ranks share this machine: the CPUs this
/// process may run on divided among them, at least 1; an explicit --threads stays.
/// @param config the parsed configuration, updated in place. @param local_ranks ranks of the job
/// on this machine (>= 1).
void resolve_threads(TrainConfig& config, int64_t local_ranks);

/// validate(RunOptions) (train/run_options.h), and the checks of how the command line gave them (a global batch that
/// splits over N_d when --micro-batch is derived; --config's gradient_accumulation_steps).
/// @param config the settings to check; throws zt::Error naming the first problem.
void validate(const TrainConfig& config);

}  // namespace zt::train
