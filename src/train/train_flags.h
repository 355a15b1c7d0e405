// train/train_flags.h — every flag of zero-train, declared once.
//
// declare_train_flags() is the single list: each flag's name, help, default, range or words, and
// whether the ranks of a job must share it (core/cli.h's registry). Parsing (train_config.h),
// --help, --print-config (config_as_flags), the start-up agreement of the ranks (config_hash,
// exchanged by zero/config_check.h) and the sources that set flags besides the command line (a
// --zero-config preset, a --config file: set_flag_from) all walk it, so a new flag is one
// declaration here and nothing else. Not here: the checks that need several settings together
// (train_config.h's validate).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/cli.h"
#include "train/train_config.h"

namespace zt::train {

/// Declare every flag of zero-train on a parser, with a config's fields as targets (their
/// current values are the defaults --help shows, and what as_flags compares with).
/// @param parser the registry to fill. @param config the targets; must outlive the parser's use.
void declare_train_flags(ArgParser& parser, TrainConfig& config);

/// A 64-bit hash of the hashed flags of a registry (FNV-1a over ArgParser::hashed_settings:
/// every value as its flag text, numbers exactly, so the smallest difference counts).
/// @param flags a registry whose targets hold the settings. @return the hash.
uint64_t settings_hash(const ArgParser& flags);

/// A 64-bit hash of every setting of zero-train that must agree across ranks (the ranks' start-up
/// agreement, zero/config_check.h): settings_hash of the declarations below, resolved values
/// where a default is derived. @param config the run's settings. @return the hash.
uint64_t config_hash(const RunOptions& config);

/// The settings as a zero-train command line: every flag whose value differs from the default, in
/// declaration order (what --print-config prints; it parses back to the same settings).
/// @param config the effective settings. @return e.g. "--stage 2 --bucket-mb 1.9073486328125".
std::string config_as_flags(const TrainConfig& config);

/// Set a flag from another source than the command line: its value is parsed and checked as
/// `--flag=value` would be, and must not contradict the flag when the command line gave it.
/// @param parser the registry (declare_train_flags). @param given the flags on the command line.
/// @param source what sets it, for error lines (e.g. "--zero-config C3", "zero_optimization.stage").
/// @param flag the flag without dashes. @param value its text.
/// zt::Error "source: --flag: ..." for a value the flag refuses, "source sets --flag v, which
/// contradicts --flag w on the command line" for a contradiction.
void set_flag_from(ArgParser& parser, const std::vector<std::string>& given, const std::string& source,
                   const std::string& flag, const std::string& value);

/// The flags a ZeRO paper Table 3 preset sets, with their values, in the order they are applied.
/// @param preset C1..C5. @return (flag, value) pairs; every preset checkpoints activations and
/// uses the M_D allocator.
std::vector<std::pair<std::string, std::string>> zero_preset_flags(ZeroPreset preset);

}  // namespace zt::train
