// tests/support/run_program.h — run a built program from a test and capture what it printed.
//
// One helper for every test that runs a program (chapters, zero-train, zero-launch probes):
// stdout through a pipe, stderr through a private temporary file, the exit status decoded.
// Tests run in the build directory (ctest sets it), so "bin/PROGRAM" finds the builds.
// Also the small parsers the chapter-output tests share: tokens, "== N." sections, keyed rows.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace zt::test {

/// What a finished program left behind.
struct ProgramOutput {
  int status = -1;   ///< exit status (or -1 if it did not exit normally)
  std::string out;   ///< everything on stdout
  std::string err;   ///< everything on stderr
};

/// Run a shell command line and capture its output. @param command the command line.
/// @return status and output; throws if the command cannot be started.
inline ProgramOutput run_program(const std::string& command) {
  char err_path[] = "/tmp/zt_test_stderr_XXXXXX";
  const int fd = ::mkstemp(err_path);
  if (fd < 0) throw std::runtime_error("run_program: cannot create a temporary file");
  ::close(fd);
  ProgramOutput result;
  FILE* pipe = ::popen((command + " 2>" + err_path).c_str(), "r");
  if (!pipe) throw std::runtime_error("run_program: cannot start: " + command);
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) result.out.append(buf.data(), n);
  const int raw = ::pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(err_path);
  std::stringstream text;
  text << in.rdbuf();
  result.err = text.str();
  std::remove(err_path);
  return result;
}

/// Number of lines in a text. @param s the text. @return the count of '\n'.
inline std::size_t line_count(const std::string& s) {
  std::size_t lines = 0;
  for (char ch : s) lines += ch == '\n';
  return lines;
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
    if (line.rfind("== ", 0) == 0) inside = line.rfind("== " + std::to_string(n) + ".", 0) == 0;
    else if (inside && !line.empty()) rows.push_back(tokens(line));
  }
  return rows;
}

}  // namespace zt::test
