// tests/fuzz/cli.cc — fuzz target: zero-train's command line (train/train_config.cc on
// core/cli.cc's ArgParser, which every program shares). Each line of the input is one argv word.
// Parsing, then validation, must succeed or throw one zt::Error; a command line that parses must
// print (config_as_flags) as flags that parse back to the same settings. Inputs naming --config
// are skipped: they would read whatever file they name (ds_config.cc fuzzes the config itself).
// Not the programs' main()s, which add only their own flags.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "fuzz/fuzz_support.h"
#include "train/ds_config.h"
#include "train/train_config.h"

namespace {

// Parse words as zero-train's argv (after the program name); false when parsing stops early
// (--help, --print-config), which prints and is not a run.
bool parse(std::vector<std::string> words, zt::train::TrainConfig& c) {
  words.insert(words.begin(), "zero-train");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return zt::train::parse_train_config(static_cast<int>(words.size()), argv.data(), c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace zt::train;
  std::vector<std::string> words = zt::fuzz::split(zt::fuzz::as_text(data, size), "\n");
  if (words.back().empty()) words.pop_back();  // a final newline ends the last word
  bool printable = true;  // config_as_flags separates words by spaces: values with one do not survive
  for (const auto& w : words) {
    if (w.rfind("--config", 0) == 0) return 0;
    if (w.empty() || w.find(' ') != std::string::npos) printable = false;
  }
  TrainConfig c;
  try {
    if (!parse(words, c)) return 0;
    validate(c);
  } catch (const zt::Error&) {
    return 0;
  }
  if (!printable) return 0;
  const std::string flags = config_as_flags(c);
  TrainConfig again;
  try {
    parse(flags.empty() ? std::vector<std::string>{} : zt::fuzz::split(flags, " "), again);
  } catch (const zt::Error& e) {
    zt::fuzz::broken("the settings printed as flags (" + flags + ") do not parse: " + e.what());
  }
  if (config_as_flags(again) != flags)
    zt::fuzz::broken("the settings printed as flags (" + flags + ") parse as " + config_as_flags(again));
  return 0;
}
