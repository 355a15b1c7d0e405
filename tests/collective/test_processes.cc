// Ranks as separate processes (fork) meeting through a FileStore: the deterministic all-reduce
// gives every process the reference tree's bits; a process that dies makes the others exit with
// an error quickly. (Launching with zero-launch is tested in tests/launch.)
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "collective/gloo_collective.h"
#include "collective/store.h"
#include "reference.h"

using namespace zt;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kCount = 1001;

// Start n children running body(rank) (exit code 0 unless it throws: then 1, message on stderr);
// wait for all with a deadline, killing leftovers. @return exit codes (-1 if killed).
std::vector<int> run_processes(int n, const std::function<void(int)>& body, double deadline_s) {
  std::vector<pid_t> pids;
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
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
    pids.push_back(pid);
  }
  std::vector<int> codes(n, -2);
  const auto t0 = std::chrono::steady_clock::now();
  int left = n;
  while (left > 0) {
    for (int r = 0; r < n; ++r) {
      if (codes[r] != -2) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        --left;
      }
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > deadline_s) {
      for (int r = 0; r < n; ++r)
        if (codes[r] == -2) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          codes[r] = -1;
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
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

}  // namespace

TEST_CASE("processes meeting through a FileStore reduce along the canonical tree", "[ch4][collective][process]") {
  for (int n : {2, 3}) {
    const fs::path dir = fs::temp_directory_path() / ("zt-proc-" + std::to_string(getpid()) + "-" + std::to_string(n));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto codes = run_processes(n, [&](int r) {
      GlooCollective coll(process_options(r, n, (dir / "store").string(), std::chrono::milliseconds(10000)));
      std::vector<float> x(kCount);
      for (std::size_t i = 0; i < kCount; ++i) x[i] = zt_test::order_sensitive_value<float>(r, i);
      coll.all_reduce(std::span<float>(x));
      std::ofstream((dir / ("out" + std::to_string(r))).string(), std::ios::binary)
          .write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
    }, 30.0);
    for (int r = 0; r < n; ++r) {
      INFO("N=" << n << " rank " << r);
      REQUIRE(codes[r] == 0);
      std::vector<float> got(kCount);
      std::ifstream((dir / ("out" + std::to_string(r))).string(), std::ios::binary)
          .read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(got.size() * sizeof(float)));
      int wrong = 0;
      for (std::size_t i = 0; i < kCount; ++i) {
        std::vector<float> leaves(n);
        for (int q = 0; q < n; ++q) leaves[q] = zt_test::order_sensitive_value<float>(q, i);
        const float ref = zt_test::reference_tree(leaves, [](float a, float b) { return a + b; });
        wrong += !zt_test::same_bits(got[i], ref);
      }
      CHECK(wrong == 0);
    }
    fs::remove_all(dir);
  }
}

TEST_CASE("a process that dies makes the others fail quickly", "[ch4][collective][process][fault]") {
  const int n = 3;
  const fs::path dir = fs::temp_directory_path() / ("zt-proc-die-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const auto t0 = std::chrono::steady_clock::now();
  const auto codes = run_processes(n, [&](int r) {
    GlooCollective coll(process_options(r, n, dir.string(), std::chrono::milliseconds(2000)));
    coll.barrier();
    if (r == 2) _exit(7);  // dies without a word
    std::vector<float> x(100, 1.0f);
    coll.all_reduce(std::span<float>(x));
  }, 20.0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(codes[2] == 7);
  CHECK(codes[0] == 1);
  CHECK(codes[1] == 1);
  CHECK(took < 2.0 + 3.0);
  fs::remove_all(dir);
}
