// Ranks as separate processes (fork) meeting through a FileStore: the deterministic all-reduce
// gives every process the reference tree's bits; a process that dies makes the others exit with
// an error, not a hang. The parent learns that a child ended from the child's end of a pipe
// closing (poll), never by sleeping; its deadline only guards against a hang.
// The same holds for the groups of a 2 x 2 data-parallel x model-parallel grid (collective/grid.h)
// built over processes. (Launching with zero-launch is tested in tests/launch.)
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "collective/gloo_collective.h"
#include "collective/grid.h"
#include "collective/store.h"
#include "core/error_report.h"
#include "reference.h"

using namespace zt;
namespace fs = std::filesystem;
using zt_test::bitwise_mismatches;
using zt_test::order_sensitive_inputs;
using zt_test::reference_sums;

namespace {

constexpr std::size_t kCount = 1001;

// Start n children running body(rank) (exit code 0 unless it throws: then 1, message on stderr);
// wait for all, killing what is left at the deadline (a hang guard, never a statement about
// speed). Each child holds the write end of a pipe that closes when it exits, so the parent
// sleeps in poll() until a child ends. @return exit codes (-1 if killed or signalled).
std::vector<int> run_processes(int n, const std::function<void(int)>& body, double deadline_s) {
  std::vector<pid_t> pids;
  std::vector<int> ended;  // read ends: end of file when child r has exited
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < n; ++r) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      for (int fd : ended) close(fd);  // not ours to hold
      int code = 0;
      try {
        body(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "[rank %d] %s\n", r, e.what());
        code = 1;
      }
      std::fflush(stderr);
      _exit(code);
    }
    close(fds[1]);
    pids.push_back(pid);
    ended.push_back(fds[0]);
  }
  std::vector<int> codes(n, -2);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_s);
  for (int left = n; left > 0;) {
    std::vector<pollfd> fds;
    for (int r = 0; r < n; ++r)
      if (ended[r] >= 0) fds.push_back({ended[r], POLLIN, 0});
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (ms.count() <= 0 || poll(fds.data(), fds.size(), static_cast<int>(ms.count()) + 1) == 0) break;
    for (int r = 0; r < n; ++r) {
      if (ended[r] < 0) continue;
      pollfd p{ended[r], POLLIN, 0};
      if (poll(&p, 1, 0) <= 0) continue;
      char c;
      if (read(ended[r], &c, 1) > 0) continue;  // nobody writes: only end of file counts
      close(ended[r]);
      ended[r] = -1;
      int status = 0;
      while (waitpid(pids[r], &status, 0) < 0 && errno == EINTR) {
      }
      codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      --left;
    }
  }
  for (int r = 0; r < n; ++r)  // the deadline passed: a hang
    if (codes[r] == -2) {
      kill(pids[r], SIGKILL);
      waitpid(pids[r], nullptr, 0);
      close(ended[r]);
      codes[r] = -1;
    }
  return codes;
}

GlooOptions process_options(int rank, int n, const std::string& dir, std::chrono::milliseconds timeout) {
  GlooOptions o;
  o.rank = rank;
  o.size = n;
  o.store = make_store("file:" + dir);
  o.timeout = timeout;
  return o;
}

void write_floats(const fs::path& path, const std::vector<float>& x) {
  std::ofstream(path.string(), std::ios::binary)
      .write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
}

std::vector<float> read_floats(const fs::path& path) {
  std::vector<float> x(kCount);
  std::ifstream(path.string(), std::ios::binary)
      .read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
  return x;
}

}  // namespace

TEST_CASE("processes meeting through a FileStore reduce along the canonical tree", "[ch4][collective][process]") {
  for (int n : {2, 3}) {
    const fs::path dir = fs::temp_directory_path() / ("zt-proc-" + std::to_string(getpid()) + "-" + std::to_string(n));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto codes = run_processes(
        n,
        [&](int r) {
          GlooCollective coll(process_options(r, n, (dir / "store").string(), std::chrono::milliseconds(10000)));
          auto x = order_sensitive_inputs(r, kCount);
          coll.all_reduce(std::span<float>(x));
          write_floats(dir / ("out" + std::to_string(r)), x);
        },
        120.0);
    std::vector<int> world(n);
    for (int q = 0; q < n; ++q) world[q] = q;
    const auto want = reference_sums(world, kCount);
    for (int r = 0; r < n; ++r) {
      INFO("N=" << n << " rank " << r);
      REQUIRE(codes[r] == 0);
      CHECK(bitwise_mismatches(read_floats(dir / ("out" + std::to_string(r))), want) == 0);
    }
    fs::remove_all(dir);
  }
}

TEST_CASE("a process that dies makes the others fail quickly", "[ch5][collective][process][fault]") {
  // "quickly": they fail (exit 1) from the closed connections instead of waiting forever
  const int n = 3;
  const fs::path dir = fs::temp_directory_path() / ("zt-proc-die-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const auto t0 = std::chrono::steady_clock::now();
  const auto codes = run_processes(
      n,
      [&](int r) {
        // a timeout long enough for a loaded machine's rendezvous; the failure itself comes from the
        // closed connections, not from this timeout
        GlooCollective coll(process_options(r, n, dir.string(), std::chrono::milliseconds(10000)));
        coll.barrier();
        if (r == 2) _exit(7);  // dies without a word
        std::vector<float> x(100, 1.0f);
        coll.all_reduce(std::span<float>(x));
      },
      120.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(codes[2] == 7);
  CHECK(codes[0] == 1);
  CHECK(codes[1] == 1);
  CHECK(took < 60.0);  // only guards against a hang
  fs::remove_all(dir);
}

TEST_CASE("a process that dies during a point-to-point transfer fails its receiver",
          "[ch5][collective][process][p2p][fault]") {
  // Rank 1 starts sending 64 MiB and exits at once, without waiting: the process ends before,
  // during or after the bytes cross, as the scheduler has it. Rank 0 waits for that message and
  // then a second one; in every case one of the two waits ends with the closed connection (exit
  // 3), never a hang, and never with the 60 s timeout (that would exit 4).
  const int n = 2;
  const fs::path dir = fs::temp_directory_path() / ("zt-proc-p2p-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::size_t count = 16u << 20;
  const auto t0 = std::chrono::steady_clock::now();
  const auto codes = run_processes(
      n,
      [&](int r) {
        GlooCollective coll(process_options(r, n, dir.string(), std::chrono::milliseconds(60000)));
        coll.barrier();
        std::vector<float> x(count, 1.0f);
        if (r == 1) {
          coll.send_async(x.data(), count, DType::fp32, 0);
          _exit(7);
        }
        try {
          coll.recv(std::span<float>(x), 1);
          coll.recv(std::span<float>(x), 1);
        } catch (const PeerFailed& e) {
          const std::string what = e.what();
          std::fprintf(stderr, "[rank 0] %s\n", e.what());
          std::fflush(stderr);
          _exit(what.find("closed its connection") != std::string::npos ? 3 : 4);
        }
      },
      180.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(codes[1] == 7);
  CHECK(codes[0] == 3);
  CHECK(took < 180.0);  // only guards against a hang
  fs::remove_all(dir);
}

TEST_CASE("processes form the groups of a 2 x 2 grid and reduce within them", "[ch11][collective][process][groups]") {
  // World ranks 0..3 = dp * 2 + mp: MP groups {0,1} {2,3}, DP groups {0,2} {1,3}. Both groups
  // reduce at once (each has its own connections); every result must be the reference sum over
  // exactly that group's ranks.
  const int n = 4, nm = 2;
  const fs::path dir = fs::temp_directory_path() / ("zt-proc-grid-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto codes = run_processes(
      n,
      [&](int r) {
        GlooCollective world(process_options(r, n, (dir / "store").string(), std::chrono::milliseconds(10000)));
        Grid grid = make_grid(world, GridDims{nm});
        auto mp = order_sensitive_inputs(r, kCount), dp = order_sensitive_inputs(r, kCount);
        Work a = grid.mp->all_reduce_async(std::span<float>(mp));
        Work b = grid.dp->all_reduce_async(std::span<float>(dp));
        a.wait();
        b.wait();
        write_floats(dir / ("mp" + std::to_string(r)), mp);
        write_floats(dir / ("dp" + std::to_string(r)), dp);
      },
      120.0);
  for (int r = 0; r < n; ++r) {
    INFO("world rank " << r);
    REQUIRE(codes[r] == 0);
    const int d = r / nm, m = r % nm;
    CHECK(bitwise_mismatches(read_floats(dir / ("mp" + std::to_string(r))),
                             reference_sums({d * nm, d * nm + 1}, kCount)) == 0);
    CHECK(bitwise_mismatches(read_floats(dir / ("dp" + std::to_string(r))), reference_sums({m, nm + m}, kCount)) == 0);
  }
  fs::remove_all(dir);
}
