// checkpoint/crash_point.h — fault injection for the crash-safety tests: ZT_CHECKPOINT_CRASH_AT.
//
// With the variable set to one of the points below, the writer kills its own process with
// SIGKILL when it reaches that point: no destructor, no flush, no clean-up, as a power cut or an
// OOM kill would leave things (only what was already handed to the kernel survives). Unset, or
// empty, nothing happens. Any other value is a zt::Error, so a typo never silently tests nothing.
// Not a general fault-injection framework: five named points of one protocol (writer.h).
#pragma once

#include <string>

namespace zt::checkpoint {

/// The environment variable naming the crash point.
inline constexpr const char* kCrashEnv = "ZT_CHECKPOINT_CRASH_AT";

/// The armed crash point: "" when ZT_CHECKPOINT_CRASH_AT is unset or empty; zt::Error when it
/// names no point ("data-half", "data-written", "fragment-written", "manifest-written", "renamed").
/// @return the point's name.
std::string armed_crash_point();

/// raise(SIGKILL) if `point` is the armed crash point. @param point one of the five names.
void crash_if_armed(const std::string& point);

}  // namespace zt::checkpoint
