// train/ds_config.h — a DeepSpeed-style JSON config read into zero-train's settings (`--config`).
//
// Users coming from DeepSpeed bring a JSON file. This reads the keys that have an equivalent here,
// with DeepSpeed's meanings and units (bucket sizes and thresholds in ELEMENTS, converted exactly
// to this project's MiB), and writes them into a TrainConfig whose command-line flags are already
// parsed. A key it does not know, a value with no equivalent, a wrong type, or a value that
// contradicts a flag on the command line is one zt::Error naming the key (never silently ignored).
// docs/deepspeed-config.md lists every key. It is not a DeepSpeed runtime: no schedulers, no
// engine, only the mapping.
#pragma once

#include <string>
#include <vector>

#include "train/train_config.h"

namespace zt::train {

/// Apply a DeepSpeed JSON config (already read as text) to parsed settings.
/// @param text the file's contents. @param source the file name, for error lines.
/// @param config the settings from the command line, updated in place.
/// @param given the flags that were on the command line (a key may not contradict one).
void apply_ds_config_text(const std::string& text, const std::string& source, TrainConfig& config,
                          const std::vector<std::string>& given);

/// Read a DeepSpeed JSON config file and apply it (apply_ds_config_text).
/// @param path the file. @param config updated in place. @param given the command line's flags.
void apply_ds_config_file(const std::string& path, TrainConfig& config, const std::vector<std::string>& given);

/// DeepSpeed's reduce_bucket_size (elements) as this project's --bucket-mb: elements times the
/// bytes of one reduced gradient element, over 2^20. Exact in a double (a power-of-two division),
/// and zero_plan's floor(bucket_mb * 2^20) / width gives back the same element count.
/// @param elements the bucket in elements. @param config precision and --reduce-dtype decide the
/// width. @return MiB.
double bucket_mb_from_elements(double elements, const TrainConfig& config);

}  // namespace zt::train
