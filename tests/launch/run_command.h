// run_command.h — run a program from a test, capture its stdout and stderr separately, time it,
// and optionally send it a signal once its output shows it is ready.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace zt_test {

/// What a finished command left behind.
struct CommandResult {
  int exit_code = -1;    ///< exit code, or -1 if it was killed
  int term_signal = 0;   ///< signal that killed it, 0 if it exited
  std::string out, err;  ///< everything it wrote
  double seconds = 0;    ///< wall time from start to exit
};

/// Run argv[0] (a path) with argv; kill it with SIGKILL after `limit_s` so a broken launcher
/// fails the test instead of hanging it. If `signal_when` is given, `signo` is sent once when
/// signal_when(stdout so far) first returns true.
/// @param argv program path and arguments. @param limit_s hard limit in seconds.
/// @param signal_when condition on stdout, or empty. @param signo signal to send.
/// @return the result.
CommandResult run_command(const std::vector<std::string>& argv, double limit_s = 30,
                          std::function<bool(const std::string&)> signal_when = {},
                          int signo = 0);

/// Start a program in the background with its output discarded (e.g. a redis-server).
/// @param argv program path and arguments. @return its pid.
int start_background(const std::vector<std::string>& argv);

/// Path of a program built into the project's bin/ folder. @param name program name.
/// @return its absolute path.
std::string bin_path(const std::string& name);

/// Number of lines of `text` that start with `prefix`. @param text the text.
/// @param prefix the prefix. @return the count.
int count_lines_starting(const std::string& text, const std::string& prefix);

}  // namespace zt_test
