// tests/fuzz/ds_config.cc — fuzz target: a DeepSpeed JSON config (`zero-train --config FILE`),
// applied to the default settings twice: once with no flag on the command line, once with every
// flag "given" at its default (so that every key that changes a setting is a contradiction the
// reader must report). The result is then validated as zero-train does. Each step must succeed
// or throw one zt::Error, and settings that pass must print (--print-config) as flags that parse
// back to them, as docs/deepspeed-config.md promises. Not the file reading (apply_ds_config_file only
// adds read_file in front of this).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/cli.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/print_config_check.h"
#include "train/ds_config.h"
#include "train/train_config.h"
#include "train/train_flags.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace zt::train;
  const std::string text = zt::fuzz::as_text(data, size);
  // every flag zero-train declares (train_flags.h's registry)
  static const std::vector<std::string> every_flag = [] {
    TrainConfig scratch;
    zt::ArgParser flags("zero-train", "");
    declare_train_flags(flags, scratch);
    std::vector<std::string> names;
    for (const auto& f : flags.flags()) names.push_back(f.name);
    return names;
  }();
  for (const auto* given : {static_cast<const std::vector<std::string>*>(nullptr), &every_flag}) {
    TrainConfig c;
    try {
      apply_ds_config_text(text, "fuzz.json", c, given ? *given : std::vector<std::string>{});
      resolve_micro_batch(c);
      validate(c);
    } catch (const zt::Error&) {
      continue;
    }
    zt::fuzz::check_print_config(c);
  }
  return 0;
}
