// tests/support/run_program.h — the one way tests run a built program (chapters, zero-train,
// zero-launch, probes, redis-server) and capture what it printed.
//
// No shell: the program gets an argv vector, its path is absolute (bin(NAME) is the build's
// bin/NAME, from the ZT_BUILD_DIR compile definition, so the working directory does not matter),
// extra environment variables are passed explicitly, stdout and stderr are captured separately
// (or merged, as 2>&1 would), and the exit status or the killing signal is decoded. A program
// still running after RunOptions::timeout_s (generous: it only guards against a hang) is killed
// and run_program throws an exception naming it, so the test fails clearly instead of hanging.
// A BackgroundProgram is one that keeps running while the test goes on (a redis-server),
// declared ready by a line of its own output, never by a sleep.
// Also the small parsers the chapter-output tests share: tokens, "== N." sections, keyed rows.
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace zt::test {

/// The build directory (absolute). @return ZT_BUILD_DIR.
std::string build_dir();

/// Absolute path of a program the build puts in bin/. @param name e.g. "zero-train".
/// @return <build>/bin/<name>.
std::string bin(const std::string& name);

/// Split a plain argument string on spaces into argv words. No shell, no quoting, no escapes:
/// text with quotes, redirections, pipes, `$`, `;`, `&` or a leading NAME=value is rejected
/// (std::invalid_argument), since it would mean something else to a shell; use the argv API.
/// @param text e.g. "--layers 1 --heads 2". @return the words.
std::vector<std::string> split_args(const std::string& text);

/// How to run a program.
struct RunOptions {
  /// NAME=value pairs added to (or replacing in) the test's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  /// Kill the program (SIGKILL to its process group) after this many seconds and throw. Only a
  /// guard against a hang: never a statement about speed.
  double timeout_s = 300;
  /// Send stderr into the stdout pipe (as `2>&1` does), so `out` has both, in order.
  bool merge_stderr = false;
  /// If set, `signo` is sent once, the first time signal_when(stdout so far) returns true.
  std::function<bool(const std::string&)> signal_when;
  int signo = 0;  ///< the signal for signal_when
};

/// What a finished program left behind.
struct ProgramOutput {
  int status = -1;      ///< exit code, or -1 if it did not exit normally
  int term_signal = 0;  ///< the signal that ended it, 0 if it exited
  std::string out;      ///< everything on stdout (and stderr with merge_stderr)
  std::string err;      ///< everything on stderr
  double seconds = 0;   ///< wall time from start to exit (for lower bounds only)
};

/// Run argv[0] (an absolute path) with argv and wait for it. Throws std::runtime_error when it
/// cannot be started, or when it outlives opt.timeout_s (then it has been killed).
/// @param argv program path and arguments. @param opt environment, limit, signal.
/// @return status and output.
ProgramOutput run_program(const std::vector<std::string>& argv, const RunOptions& opt = {});

/// Convenience: bin(program) (or program itself when it contains a '/') followed by
/// split_args(args). @param program a built program's name or an absolute path.
/// @param args plain space-separated arguments. @param opt as above. @return status and output.
ProgramOutput run_program(const std::string& program, const std::string& args, const RunOptions& opt = {});

/// argv words: `head` followed by split_args(tail). @param head explicit words (paths).
/// @param tail plain space-separated arguments. @return the joined argv.
std::vector<std::string> argv_of(std::vector<std::string> head, const std::string& tail);

/// A program started in the background with stdout and stderr merged into one pipe. Readiness
/// is a line of its output (wait_for_output); the destructor stops it (SIGTERM, then SIGKILL).
class BackgroundProgram {
 public:
  /// Start it. @param argv absolute program path and arguments. @param opt only env is used.
  explicit BackgroundProgram(const std::vector<std::string>& argv, const RunOptions& opt = {});
  /// Stops it if still running (stop()).
  ~BackgroundProgram();
  BackgroundProgram(const BackgroundProgram&) = delete;
  BackgroundProgram& operator=(const BackgroundProgram&) = delete;

  /// Read its output until ready(output so far) is true (returns true), or it closes its output
  /// / exits first (returns false). Throws after timeout_s, which only guards against a hang.
  /// Once ready, a thread keeps draining the output so the program never blocks on the pipe.
  /// @param ready condition on the output. @param timeout_s hang guard.
  /// @return whether it became ready.
  bool wait_for_output(const std::function<bool(const std::string&)>& ready, double timeout_s = 300);
  /// @return everything it has printed so far.
  std::string output() const;
  /// SIGTERM, then SIGKILL if it is still running after `grace_s`; reaps it. Idempotent.
  /// @param grace_s seconds between the two signals. @return its exit status (-1 if killed).
  int stop(double grace_s = 30);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int wake_[2] = {-1, -1};  // stop() writes here to end the drain thread
  bool reaped_ = false;
  int status_ = -1;
  std::string argv0_;
  mutable std::mutex mu_;  // guards output_ once the drain thread runs
  std::string output_;
  std::thread drain_;
};

/// Number of lines in a text. @param s the text. @return the count of '\n'.
inline std::size_t line_count(const std::string& s) {
  std::size_t lines = 0;
  for (char ch : s) lines += ch == '\n';
  return lines;
}

/// Number of lines of `text` that start with `prefix`. @param text the text.
/// @param prefix the prefix ("" counts every line). @return the count.
inline int count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.compare(0, prefix.size(), prefix) == 0;
  return n;
}

/// Whitespace-separated words of a line. @param line the text. @return its tokens.
inline std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

/// The lines of section "== N." of a chapter program's output, up to the next "== " header,
/// tokenised (the header itself and empty lines left out).
/// @param out the program's stdout. @param n the section number. @return its rows.
inline std::vector<std::vector<std::string>> section(const std::string& out, int n) {
  std::istringstream in(out);
  std::vector<std::vector<std::string>> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0)
      inside = line.rfind("== " + std::to_string(n) + ".", 0) == 0;
    else if (inside && !line.empty())
      rows.push_back(tokens(line));
  }
  return rows;
}

}  // namespace zt::test
