// launch/child_process.h — the pieces of starting one rank process: finding the program,
// building its environment, and fork/exec with the launcher's conventions (stdin from /dev/null,
// own process group, death signal when the launcher dies, default signal dispositions).
//
// Internal to launch/spawn.cc (kept apart so each file stays one concept); not a general
// subprocess API.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "launch/spawn.h"

namespace zt::launch::detail {

/// Find the program like execvp would, but before forking, so "not found" is one clear error.
/// @param name a path (contains '/') or a name searched on PATH. @return the path to execute.
std::string resolve_program(const std::string& name);

/// The environment of one rank: ours, with the rank variables (and opt.store, opt.extra_env)
/// replaced; ZT_LAUNCHER_STORE is MASTER_ADDR:MASTER_PORT (the launcher serves that store).
/// @param opt spawn settings. @param rank the rank. @param port MASTER_PORT.
/// @return NAME=value strings.
std::vector<std::string> child_environment(const SpawnOptions& opt, int rank, uint16_t port);

/// Null-terminated char* view of strings (which must outlive it).
/// @param strings the strings. @return pointers to their data, then nullptr.
std::vector<char*> c_strings(std::vector<std::string>& strings);

/// Fork one rank and exec the program. Between fork and exec only async-signal-safe calls are
/// made, since the caller may have threads.
/// @param program resolved path. @param argv argument vector (c_strings).
/// @param envp environment (c_strings). @param out_w pipe end that becomes the child's stdout.
/// @param err_w pipe end that becomes its stderr. @param null_r /dev/null opened for reading.
/// @return the pid, or -errno when exec failed (reported through a close-on-exec pipe).
pid_t start_child(const std::string& program, std::vector<char*>& argv, std::vector<char*>& envp, int out_w, int err_w,
                  int null_r);

}  // namespace zt::launch::detail
