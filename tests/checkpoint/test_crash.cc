// Crash safety of the save protocol: a child process saves over a complete checkpoint and kills
// itself (SIGKILL, ZT_CHECKPOINT_CRASH_AT) at each point of writer.h's protocol. Whatever it left
// behind, resolving the save directory and reading gives the previous checkpoint intact, or (once
// the rename happened) the new one complete — never an error — and the next save succeeds.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "checkpoint/fixtures.h"

using namespace zt;
using namespace zt::checkpoint;
using namespace zt::test::ckpt;

namespace {

uint64_t bytes_of(const std::vector<Piece>& pieces) {
  uint64_t n = 0;
  for (const auto& p : pieces) n += 4 * static_cast<uint64_t>(p.length);
  return n;
}

// Run save() in a child that has ZT_CHECKPOINT_CRASH_AT=point; return its wait status.
int save_in_child(const std::string& point, const std::string& save_dir, int64_t step, const Manifest& h,
                  const Values& v, const std::vector<std::vector<Piece>>& plan) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("ZT_CHECKPOINT_CRASH_AT", point.c_str(), 1);
    try {
      save(save_dir, step, h, v, plan);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);  // the crash point was never reached
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

}  // namespace

TEST_CASE("checkpoint: a crash at any point of the save leaves the old checkpoint or the new one", "[ch14]") {
  const std::vector<std::string> states = {"master", "adam.m", "adam.v"};
  const Manifest old_h = synthetic_header({kMaxIntervalElements + 300, 999, 4}, states, 1);
  const Manifest new_h = synthetic_header({kMaxIntervalElements + 300, 999, 4}, states, 2);
  const Values old_v = make_values(old_h, 1), new_v = make_values(new_h, 2);
  const auto old_plan = deal(old_h, 2, 1), new_plan = deal(new_h, 3, 2);
  for (const std::string point : {"data-half", "data-written", "fragment-written", "manifest-written", "renamed"})
    for (const bool same_step : {false, true}) {  // step 2 beside step 1, or step 1 saved again (a re-run)
      INFO("crash at " << point << (same_step ? ", saving step 1 again" : ", saving step 2"));
      TempDir dir("crash");
      save(dir.path(), 1, old_h, old_v, old_plan);
      const int64_t step = same_step ? 1 : 2;
      const int status = save_in_child(point, dir.path(), step, new_h, new_v, new_plan);
      REQUIRE(WIFSIGNALED(status));
      CHECK(WTERMSIG(status) == SIGKILL);

      // what the crash left: rank 0 dies in its finish() for the data points, rank 0 in publish after
      const std::string temp = step_dir(dir.path(), step) + ".tmp";
      const auto size = [&](const std::string& name) {
        std::error_code ec;
        const auto n = fs::file_size(fs::path(temp) / name, ec);
        return ec ? int64_t{-1} : static_cast<int64_t>(n);
      };
      const auto rank0 = static_cast<int64_t>(bytes_of(new_plan[0]));
      if (point == "data-half") {
        CHECK(size("rank-00000.bin") == rank0 / 2);
        CHECK(size("rank-00000.json") == -1);
      } else if (point == "data-written") {
        CHECK(size("rank-00000.bin") == rank0);
        CHECK(size("rank-00000.json") == -1);
      } else if (point == "fragment-written") {
        CHECK(size("rank-00000.json") > 0);
        CHECK(size("rank-00001.bin") == -1);
      } else if (point == "manifest-written") {
        CHECK(size("manifest.json") > 0);
        CHECK(size("rank-00002.json") > 0);  // not yet removed
      }

      const bool published = point == "renamed";
      Reader r(resolve_checkpoint(dir.path()));
      CHECK(r.dir() == step_dir(dir.path(), published ? step : 1));
      CHECK(reads_back(r, published ? new_v : old_v));
      CHECK_NOTHROW(r.verify_files());

      // the next save clears the debris and succeeds
      save(dir.path(), step, new_h, new_v, new_plan);
      Reader again(resolve_checkpoint(dir.path()));
      CHECK(again.dir() == step_dir(dir.path(), step));
      CHECK(reads_back(again, new_v));
      CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}) == (same_step ? 1 : 2));
    }
}
