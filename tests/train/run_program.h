// Run a built program of the project from a test and capture its exit status and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace zt::test {

/// What a finished program left behind.
struct ProgramOutput {
  int status = -1;     ///< exit status (or -1 if it did not exit normally)
  std::string stdout_text;  ///< everything on stdout
  std::string stderr_text;  ///< everything on stderr
};

/// Run a shell command line (tests run in the build directory, so bin/PROGRAM finds the builds).
/// stderr is collected through a temporary file.
inline ProgramOutput run_program(const std::string& command) {
  const std::string err = std::string("/tmp/zt_test_stderr_") + std::to_string(::getpid());
  ProgramOutput out;
  FILE* pipe = ::popen((command + " 2>" + err).c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.stdout_text.append(buf.data(), n);
  const int raw = ::pclose(pipe);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (FILE* f = std::fopen(err.c_str(), "r")) {
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) out.stderr_text.append(buf.data(), n);
    std::fclose(f);
    std::remove(err.c_str());
  }
  return out;
}

/// Number of lines in a text. @param s the text.
inline std::size_t line_count(const std::string& s) {
  std::size_t lines = 0;
  for (char ch : s) lines += ch == '\n';
  return lines;
}

}  // namespace zt::test
