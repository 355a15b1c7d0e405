// zero-collbench — bandwidth of each collective in both reduction modes, ranks as processes.
//
// For every world size the program forks that many ranks, which meet through a fresh FileStore
// directory and time each collective (bench_rank.h). It then prints, per measurement, the time
// per call, algorithm bandwidth algbw = S / t and bus bandwidth (nccl-tests definitions:
// busbw = algbw * 2(N-1)/N for all-reduce, * (N-1)/N for reduce-scatter and all-gather, * 1 for
// broadcast), next to a single-process memcpy of the same S on this machine; --json writes the
// same table. S is the full buffer (all-reduce buffer, reduce-scatter input, all-gather output).
// It is a measurement tool, not a test: it checks no values.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench_rank.h"
#include "core/atomic_file.h"
#include "core/check.h"
#include "core/cli.h"
#include "core/output_place.h"

using namespace zt;
using namespace zt::collbench;

namespace {

std::vector<int64_t> parse_list(const std::string& text, const std::string& what, bool sizes) {
  std::vector<int64_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t scale = 1;
    if (sizes && !item.empty()) {
      const char unit = item.back();
      if (unit == 'K' || unit == 'M' || unit == 'G') {
        scale = unit == 'K' ? 1 << 10 : (unit == 'M' ? 1 << 20 : 1 << 30);
        item.pop_back();
      }
    }
    const int64_t v = parse_int_strict(item, what) * scale;
    ZT_CHECK(v > 0, what, ": values must be positive, got ", v);
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

double memcpy_seconds(std::size_t bytes, int iters) {
  std::vector<unsigned char> a(bytes, 1), b(bytes, 0);
  std::memcpy(b.data(), a.data(), bytes);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    a[i % bytes] = static_cast<unsigned char>(i);
    std::memcpy(b.data(), a.data(), bytes);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  if (b[0] == 0xAB && b[bytes - 1] == 0xCD) std::puts("");  // keep the copies observable
  return s;
}

double bus_factor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "broadcast") return 1.0;
  return static_cast<double>(n - 1) / n;
}

/// Every rank of one world size as a forked process. @param plan the ranks' plan. @return
/// whether all of them succeeded.
bool run_world(const RankPlan& plan) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < plan.world; ++r) {
    const pid_t pid = fork();
    ZT_CHECK(pid >= 0, "fork failed: ", std::strerror(errno));
    if (pid == 0) {
      int code = 0;
      try {
        run_bench_rank(plan, r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "zero-collbench rank %d: %s\n", r, e.what());
        code = 1;
      }
      std::fflush(stderr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

int run(int argc, char** argv) {
  std::string ranks_text = "2,4", sizes_text = "1M,8M,64M", json_path;
  int64_t iters = 5, timeout_s = 60;
  ArgParser args("zero-collbench", "Bandwidth of each collective (both modes) with ranks as local processes.");
  args.add_string("ranks", &ranks_text, "comma-separated world sizes");
  args.add_string("sizes", &sizes_text, "comma-separated buffer sizes, suffix K/M/G");
  args.add_int("iters", &iters, "timed calls per measurement", 1, 1000);
  args.add_int("timeout", &timeout_s, "collective timeout in seconds", 1, 3600);
  args.add_string("json", &json_path, "also write the results as JSON to this file");
  if (!args.parse(argc, argv)) return 0;
  std::vector<std::size_t> sizes;
  for (int64_t s : parse_list(sizes_text, "--sizes", true)) sizes.push_back(static_cast<std::size_t>(s));
  const auto worlds = parse_list(ranks_text, "--ranks", false);
  for (int64_t w : worlds) ZT_CHECK(w <= 64, "--ranks: ", w, " processes is more than this tool allows (64)");

  if (!json_path.empty()) prepare_output_place({"--json", json_path, PlaceKind::file});
  const auto work = std::filesystem::temp_directory_path() / ("zero-collbench-" + std::to_string(getpid()));
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  const std::string results = (work / "results.txt").string();
  for (int64_t w : worlds) {
    RankPlan plan;
    plan.world = static_cast<int>(w);
    plan.sizes = sizes;
    plan.iters = static_cast<int>(iters);
    plan.store_dir = (work / ("store" + std::to_string(w))).string();
    plan.results_file = results;
    plan.timeout_ms = static_cast<int>(timeout_s * 1000);
    const bool ok = run_world(plan);
    ZT_CHECK(ok, "a rank failed at world size ", w, " (see its message above)");
  }

  const auto rows = read_rows(results);
  std::filesystem::remove_all(work);
  nlohmann::json out = nlohmann::json::array();
  std::printf("%-15s %-13s %3s %12s %11s %12s %12s %13s\n", "op", "mode", "N", "bytes", "time_ms", "algbw_GB/s",
              "busbw_GB/s", "memcpy_GB/s");
  std::map<std::size_t, double> memcpy_gbs;
  for (const Row& r : rows) {
    if (!memcpy_gbs.count(r.bytes))
      memcpy_gbs[r.bytes] = r.bytes / memcpy_seconds(r.bytes, static_cast<int>(iters)) / 1e9;
    const double algbw = r.bytes / r.seconds / 1e9;
    const double busbw = algbw * bus_factor(r.op, r.world);
    std::printf("%-15s %-13s %3d %12zu %11.3f %12.3f %12.3f %13.3f\n", r.op.c_str(), r.mode.c_str(), r.world, r.bytes,
                r.seconds * 1e3, algbw, busbw, memcpy_gbs[r.bytes]);
    out.push_back({{"op", r.op},
                   {"mode", r.mode},
                   {"world", r.world},
                   {"bytes", r.bytes},
                   {"seconds", r.seconds},
                   {"algbw_GBps", algbw},
                   {"busbw_GBps", busbw},
                   {"memcpy_GBps", memcpy_gbs[r.bytes]}});
  }
  if (!json_path.empty())
    write_file_atomic(json_path,
                      nlohmann::json{{"program", "zero-collbench"}, {"iters", iters}, {"results", out}}.dump(2) + "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_main("zero-collbench", [&] { return run(argc, argv); });
}
