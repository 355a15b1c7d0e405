// apps/zero-ckpt/commands.h — the three subcommands of zero-ckpt, each a function of checked
// arguments (main.cc parses the command line). Every failure is a zt::Error that main.cc reports
// as one line with exit status 1; nothing here reads argv or decides an exit status.
#pragma once

#include <string>

namespace zt::ckpt_tool {

/// `inspect`: print what the checkpoint holds. @param dir a checkpoint or save directory.
/// @param verify also check every file's CRC-32C. @param json print JSON instead of text.
void inspect(const std::string& dir, bool verify, bool json);

/// `consolidate`: write one state's canonical dense FP32 values (as zero-train --dump-params).
/// @param dir a checkpoint or save directory. @param out the file to create (must not exist).
/// @param state the state to write.
void consolidate(const std::string& dir, const std::string& out, const std::string& state);

/// `export --format safetensors`: OUT/model.safetensors and OUT/config.json for Hugging Face's
/// GPT2LMHeadModel, from the master weights. @param dir a checkpoint or save directory.
/// @param out the directory to create (must not exist).
void export_safetensors(const std::string& dir, const std::string& out);

/// Refuse an output path that exists (zt::Error naming it). @param out the path.
void require_absent(const std::string& out);

}  // namespace zt::ckpt_tool
