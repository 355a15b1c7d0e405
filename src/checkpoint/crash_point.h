// checkpoint/crash_point.h — fault injection for the crash-safety tests: ZT_CHECKPOINT_CRASH_AT.
//
// With the variable set to one of the points below — optionally as POINT:STEP, to strike only
// while the checkpoint of that step is written (a test can then crash the second save of a run
// and keep the first) — the writer kills its own process with SIGKILL when it reaches that point: no destructor, no
// flush, no clean-up, as a power cut or an OOM kill would leave things (only what was already handed to the kernel
// survives). Unset, or empty, nothing happens. Any other value is a zt::Error, so a typo never silently tests nothing.
// Not a general fault-injection framework: five named points of one protocol (writer.h).
#pragma once

#include <string>

namespace zt::checkpoint {

/// The environment variable naming the crash point.
inline constexpr const char* kCrashEnv = "ZT_CHECKPOINT_CRASH_AT";

/// The armed crash point: "" when ZT_CHECKPOINT_CRASH_AT is unset or empty; zt::Error when it
/// names no point ("data-half", "data-written", "fragment-written", "manifest-written", "renamed")
/// or its :STEP is not a number. @return the point's name (without :STEP).
std::string armed_crash_point();

/// Whether `point` is armed for the checkpoint directory `dir` (its step-N or step-N.tmp
/// name gives the step, compared with an armed :STEP). @param point one of the five names.
/// @param dir the checkpoint's final or temporary directory. @return true to crash there.
bool crash_armed_for(const std::string& point, const std::string& dir);

/// raise(SIGKILL) if crash_armed_for(point, dir). @param point one of the five names.
/// @param dir the checkpoint's final or temporary directory.
void crash_if_armed(const std::string& point, const std::string& dir);

}  // namespace zt::checkpoint
