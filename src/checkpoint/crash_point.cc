// checkpoint/crash_point.cc — reading ZT_CHECKPOINT_CRASH_AT and dying on cue (see crash_point.h).
#include "checkpoint/crash_point.h"

#include <csignal>
#include <cstdlib>

#include "core/check.h"

namespace zt::checkpoint {

std::string armed_crash_point() {
  const char* value = std::getenv(kCrashEnv);
  if (value == nullptr || *value == '\0') return "";
  const std::string point = value;
  for (const char* known : {"data-half", "data-written", "fragment-written", "manifest-written", "renamed"})
    if (point == known) return point;
  ZT_FAIL(kCrashEnv, "=", point,
          " is not a crash point (data-half, data-written, fragment-written, manifest-written, renamed)");
}

void crash_if_armed(const std::string& point) {
  if (armed_crash_point() != point) return;
  std::raise(SIGKILL);
}

}  // namespace zt::checkpoint
