// tests/fuzz/checkpoint_manifest.cc — fuzz target: manifest.json's text, parsed and checked as the
// checkpoint reader does (parse_manifest: JSON, structure, references; then check_coverage).
// Every input must give a manifest or one zt::Error. A manifest that passes must also survive
// the writer's own layout: manifest_text(m) parses back to the same JSON. Not the data files
// (checkpoint_read.cc reads those).
#include <cstddef>
#include <cstdint>

#include "checkpoint/manifest.h"
#include "core/check.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace zt::checkpoint;
  Manifest m;
  try {
    m = parse_manifest(zt::fuzz::as_text(data, size), "manifest.json");
    check_coverage(m, "manifest.json");
  } catch (const zt::Error&) {
    return 0;  // refused with one line: the expected outcome for most inputs
  }
  for (const auto& iv : m.intervals) describe(m, iv);
  Manifest back;
  try {
    back = parse_manifest(manifest_text(m), "manifest.json written again");
  } catch (const zt::Error& e) {
    zt::fuzz::broken(std::string("a manifest that was accepted is refused once written again: ") + e.what());
  }
  if (to_json(back) != to_json(m)) zt::fuzz::broken("a manifest written again reads back differently");
  return 0;
}
