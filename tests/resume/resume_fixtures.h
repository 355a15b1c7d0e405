// tests/resume/resume_fixtures.h — running zero-train three ways for the resume tests: straight
// through, killed after a checkpoint (ZT_KILL_AFTER_STEP: SIGKILL, no clean-up), and resumed; and
// comparing what two runs recorded, bit for bit (final master weights from --dump-params, every
// step record and held-out evaluation from --summary-json, floats compared as JSON numbers,
// which nlohmann writes with round-trip precision).
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/atomic_file.h"
#include "support/run_program.h"

namespace zt::test {

/// A scratch directory for one test, removed at the end.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("zt_resume_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ScratchDir(const ScratchDir&) = delete;  // the copy's destructor would remove the folder
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& leaf) const { return (path / leaf).string(); }
};

/// What a finished zero-train run recorded.
struct Recorded {
  std::string params;    ///< --dump-params bytes
  nlohmann::json steps;  ///< summary "steps"
  nlohmann::json evals;  ///< summary "evals"
};

/// Run zero-train `args` to the end with --dump-params and --summary-json in `dir` (tag names
/// the files). @return what it recorded; REQUIREs a clean exit.
inline Recorded run_recorded(const ScratchDir& dir, const std::string& tag, const std::string& args,
                             const RunOptions& opt = {}) {
  const std::string params = dir / (tag + ".params"), summary = dir / (tag + ".json");
  const auto out =
      run_program(argv_of({bin("zero-train")}, args + " --dump-params " + params + " --summary-json " + summary), opt);
  INFO("zero-train " << args << "\n" << out.out << out.err);
  REQUIRE(out.status == 0);
  Recorded r;
  r.params = read_file(params);
  const auto j = nlohmann::json::parse(read_file(summary));
  r.steps = j["steps"];
  r.evals = j["evals"];
  return r;
}

/// Run zero-train `args` with ZT_KILL_AFTER_STEP=step; REQUIRE that SIGKILL ended it.
inline void run_killed_after(const std::string& args, int64_t step) {
  RunOptions opt;
  opt.env = {{"ZT_KILL_AFTER_STEP", std::to_string(step)}};
  const auto out = run_program(argv_of({bin("zero-train")}, args), opt);
  INFO("zero-train " << args << "\n" << out.out << out.err);
  REQUIRE(out.term_signal == SIGKILL);
}

/// What the sections of one resharding test all start from: the uninterrupted run's record and
/// the checkpoint its killed twin saved in `dir`. Made once per test process: Catch2 runs a test
/// case from the top again for each of its sections, and every section resumes from this one save,
/// so doing it in the case's body would repeat both runs for every section.
struct SavedRun {
  ScratchDir dir;
  Recorded whole;
  /// Run `args` to the end (the record), then killed_args(dir) killed after its save at step
  /// `step`; REQUIREs what run_recorded and run_killed_after do. @param name the scratch
  /// directory's name. @param killed_args gives the killed run's arguments, whose --save-dir is
  /// in dir.
  template <typename KilledArgs>
  SavedRun(const std::string& name, const std::string& args, KilledArgs killed_args, int64_t step)
      : dir(name), whole(run_recorded(dir, "whole", args)) {
    run_killed_after(killed_args(dir), step);
  }
};

/// The records of `whole` after step `after`. @param records a summary's steps or evals.
/// @param after the last step to drop. @return the rest.
inline nlohmann::json records_after(const nlohmann::json& records, int64_t after) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : records)
    if (r["step"].get<int64_t>() > after) out.push_back(r);
  return out;
}

/// REQUIRE that a resumed run (steps after `after`) continued `whole` bit for bit.
inline void check_continues(const Recorded& whole, const Recorded& resumed, int64_t after) {
  CHECK(resumed.steps == records_after(whole.steps, after));
  CHECK(resumed.evals == records_after(whole.evals, after));
  CHECK(resumed.params.size() == whole.params.size());
  CHECK((resumed.params == whole.params));  // every byte of the final FP32 master weights
}

}  // namespace zt::test
