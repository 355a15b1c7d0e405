// tests/fuzz/cli.cc — fuzz target: zero-train's command line (train/train_config.cc on
// core/cli.cc's ArgParser, which every program shares). Each line of the input is one argv word.
// Parsing, then validation, must succeed or throw one zt::Error; a command line that parses must
// print (config_as_flags, --print-config) as flags that parse back to the same settings. Inputs
// naming --config are skipped: they would read whatever file they name (ds_config.cc fuzzes the
// config itself).
// Not the programs' main()s, which add only their own flags.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/print_config_check.h"
#include "train/train_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::vector<std::string> words = zt::fuzz::split(zt::fuzz::as_text(data, size), "\n");
  if (words.back().empty()) words.pop_back();  // a final newline ends the last word
  for (const auto& w : words)
    if (w.rfind("--config", 0) == 0) return 0;
  words.insert(words.begin(), "zero-train");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  zt::train::TrainConfig c;
  try {
    // false: --help or --print-config, which print instead of running
    if (!zt::train::parse_train_config(static_cast<int>(words.size()), argv.data(), c)) return 0;
    zt::train::validate(c);
  } catch (const zt::Error&) {
    return 0;
  }
  zt::fuzz::check_print_config(c);
  return 0;
}
