// checkpoint/crash_point.cc — reading ZT_CHECKPOINT_CRASH_AT and dying on cue (see crash_point.h).
#include "checkpoint/crash_point.h"

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "core/check.h"

namespace zt::checkpoint {

namespace {

struct Armed {
  std::string point;  // "" when unset
  int64_t step = -1;  // -1: every save
};

Armed armed() {
  const char* value = std::getenv(kCrashEnv);
  if (value == nullptr || *value == '\0') return {};
  std::string point = value;
  int64_t step = -1;
  if (const auto colon = point.find(':'); colon != std::string::npos) {
    const std::string digits = point.substr(colon + 1);
    ZT_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos, kCrashEnv, "=", value,
             ": the step after ':' is not a number");
    step = std::stoll(digits);
    point.resize(colon);
  }
  for (const char* known : {"data-half", "data-written", "fragment-written", "manifest-written", "renamed"})
    if (point == known) return {point, step};
  ZT_FAIL(kCrashEnv, "=", value,
          " is not a crash point (data-half, data-written, fragment-written, manifest-written, renamed; "
          "optionally :STEP)");
}

/// The step a checkpoint directory is for: DIR/step-00000004 or DIR/step-00000004.tmp -> 4.
int64_t step_of(const std::string& dir) {
  std::string name = std::filesystem::path(dir).filename().string();
  if (name.empty()) name = std::filesystem::path(dir).parent_path().filename().string();
  if (name.rfind("step-", 0) != 0) return -1;
  const std::string digits =
      name.substr(5, name.find('.') == std::string::npos ? std::string::npos : name.find('.') - 5);
  return !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos ? std::stoll(digits) : -1;
}

}  // namespace

std::string armed_crash_point() { return armed().point; }

bool crash_armed_for(const std::string& point, const std::string& dir) {
  const Armed a = armed();
  return a.point == point && (a.step < 0 || a.step == step_of(dir));
}

void crash_if_armed(const std::string& point, const std::string& dir) {
  if (crash_armed_for(point, dir)) std::raise(SIGKILL);
}

}  // namespace zt::checkpoint
