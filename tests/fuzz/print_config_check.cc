// tests/fuzz/print_config_check.cc — see print_config_check.h.
#include "fuzz/print_config_check.h"

#include <string>
#include <vector>

#include "core/check.h"
#include "fuzz/fuzz_support.h"
#include "train/train_flags.h"

namespace zt::fuzz {

void check_print_config(const train::TrainConfig& c) {
  // the printed line separates words by spaces and quotes nothing: a path with a space in it
  // cannot survive, so such settings are not checked
  for (const std::string* text :
       {&c.data, &c.summary_json, &c.dump_manifest, &c.dump_params, &c.dump_grads, &c.dump_batch, &c.memory_trace,
        &c.trace, &c.save_dir, &c.resume, &c.offload_optimizer.dir, &c.offload_params.dir})
    if (text->find_first_of(" \t\n") != std::string::npos) return;
  const std::string flags = train::config_as_flags(c);
  std::vector<std::string> words = flags.empty() ? std::vector<std::string>{} : split(flags, " ");
  words.insert(words.begin(), "zero-train");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  train::TrainConfig again;
  try {
    train::parse_train_config(static_cast<int>(words.size()), argv.data(), again);
  } catch (const Error& e) {
    broken("the settings printed as flags (" + flags + ") do not parse: " + e.what());
  }
  if (train::config_as_flags(again) != flags)
    broken("the settings printed as flags (" + flags + ") parse as " + train::config_as_flags(again));
}

}  // namespace zt::fuzz
