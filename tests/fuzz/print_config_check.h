// tests/fuzz/print_config_check.h — the promise --print-config makes, checked by the cli and
// ds_config targets: the settings printed as flags (config_as_flags), given back to zero-train,
// parse and print the same flags. Not a test of what the settings do.
#pragma once

#include "train/train_config.h"

namespace zt::fuzz {

/// Abort (fuzz_support.h's broken) unless config_as_flags(c) parses back to the same flags.
/// Settings with a path or name that holds a space are skipped: the printed line separates words
/// by spaces and does not quote. @param c settings that parsed and validated.
void check_print_config(const train::TrainConfig& c);

}  // namespace zt::fuzz
