// zero-launch end to end, as a user runs it: ranks as processes running zt-launch-probe, with
// prefixed output, cross-process rendezvous through the TCP store zero-launch serves (bound to
// port 0 before any rank starts, so ranks only connect), and every failure path (exit code,
// signal, SIGTERM ignored, SIGTERM to the launcher, bad command lines, a --master-port in use).
// Events are ordered by what the ranks print or announce through the store, never by sleeping;
// no wall-time upper bound says anything about speed (the generous ones only catch a hang).
#include <catch2/catch.hpp>

#include <signal.h>

#include <string>
#include <vector>

#include "store/socket.h"
#include "support/run_program.h"

using Catch::Matchers::Contains;
using zt::test::bin;
using zt::test::count_lines_starting;
using zt::test::run_program;

namespace {
// Guards a job whose ranks would otherwise sleep an hour: only a hang takes this long.
constexpr double kLaunchHang = 120.0;

std::vector<std::string> launch(int n, std::vector<std::string> probe_args,
                                std::vector<std::string> launcher_args = {}) {
  std::vector<std::string> argv{bin("zero-launch"), "-n", std::to_string(n)};
  argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
  argv.push_back("--");
  argv.push_back(bin("zt-launch-probe"));
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  return argv;
}
std::string prefix(int r) { return "[rank " + std::to_string(r) + "] "; }
}  // namespace

TEST_CASE("zero-launch: 1 to 4 ranks succeed, every line prefixed and whole", "[ch5][launch]") {
  const int lines = 200;
  for (int n = 1; n <= 4; ++n) {
    auto r = run_program(launch(n, {"--lines", std::to_string(lines), "--line-bytes", "300"}));
    INFO("n=" << n << "\nstderr:\n" << r.err);
    CHECK(r.status == 0);
    int total = 0;
    for (int k = 0; k < n; ++k) {
      const std::string p = prefix(k);
      CHECK(count_lines_starting(r.out, p + "rank " + std::to_string(k) + " of " + std::to_string(n) + " (torchrun") ==
            1);
      // Each payload line names its own rank: a line glued from two ranks would not match.
      CHECK(count_lines_starting(r.out, p + "line ") == lines);
      CHECK(count_lines_starting(r.out, p + "rank " + std::to_string(k) + " ready") == 1);
      total += lines + 2;
    }
    CHECK(count_lines_starting(r.out, "") == total);  // nothing unprefixed, nothing extra
    CHECK(count_lines_starting(r.out, "[rank ") == total);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        if (j != k) CHECK(r.out.find(prefix(k) + "line 7 of rank " + std::to_string(j)) == std::string::npos);
  }
}

TEST_CASE("zero-launch: ranks rendezvous through the TCP store and Gloo", "[ch5][launch]") {
  for (int n : {2, 4}) {
    auto r = run_program(launch(n, {"--rendezvous", "--timeout-ms", "60000"}));
    INFO("n=" << n << "\nstdout:\n" << r.out << "\nstderr:\n" << r.err);
    CHECK(r.status == 0);
    const std::string sum = std::to_string(n * (n + 1) / 2);
    for (int k = 0; k < n; ++k) {
      CHECK(count_lines_starting(
                r.out, prefix(k) + "rank " + std::to_string(k) + " read keys of " + std::to_string(n) + " ranks") == 1);
      CHECK(count_lines_starting(r.out, prefix(k) + "rank " + std::to_string(k) + " allreduce sum " + sum) == 1);
    }
  }
}

TEST_CASE("zero-launch: the launcher serves the TCP store at MASTER_PORT; ranks only connect", "[ch5][launch]") {
  auto r = run_program(launch(3, {}));
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  REQUIRE(r.status == 0);
  // "... master 127.0.0.1:PORT store - mode 2 launcher-store 127.0.0.1:PORT": the same PORT
  for (int k = 0; k < 3; ++k) {
    const std::string head = prefix(k) + "rank " + std::to_string(k) + " of 3";
    const auto at = r.out.find(head);
    REQUIRE(at != std::string::npos);
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    const auto words = zt::test::tokens(line);
    REQUIRE(words.size() >= 2);
    const auto master = line.find(" master ");
    REQUIRE(master != std::string::npos);
    const std::string addr = zt::test::tokens(line.substr(master + 8)).at(0);
    CHECK(addr.rfind("127.0.0.1:", 0) == 0);
    CHECK(words.back() == addr);  // launcher-store: the address the launcher already serves
  }
  // An explicit --master-port that something else holds: a clear error before any rank starts.
  zt::store::Fd taken = zt::store::listen_tcp("127.0.0.1", 0);
  const std::string port = std::to_string(zt::store::local_port(taken.get()));
  auto busy = run_program(launch(2, {}, {"--master-port", port}));
  CHECK(busy.status == 2);
  CHECK_THAT(busy.err, Contains("127.0.0.1:" + port) && Contains("already in use"));
  CHECK(busy.out.empty());  // no rank ran
}

TEST_CASE("zero-launch: a rank exiting 5 stops the job quickly", "[ch5][launch]") {
  // The other ranks would sleep an hour; the launcher must terminate them (SIGTERM).
  auto r = run_program(launch(4, {"--fail-rank", "1", "--exit-code", "5", "--fail-after-ms", "200", "--sleep-s", "3600",
                                  "--fail-message", "the disk is full"}));
  INFO("stderr:\n" << r.err);
  CHECK(r.status == 5);
  CHECK(r.seconds < kLaunchHang);  // only guards against a hang
  CHECK_THAT(r.err, Contains("job failed: rank 1 failed (exited with code 5): the disk is full"));
  for (int k : {0, 2, 3}) CHECK_THAT(r.err, Contains("rank " + std::to_string(k) + " killed by SIGTERM"));
}

TEST_CASE("zero-launch: the cause is the rank that failed, not the first to exit", "[ch5][launch]") {
  // Rank 1 exits 3 ("a peer failed") first; rank 0, the real cause, fails only once rank 1's
  // process has been reaped by the launcher. The launcher must wait for rank 0 rather than terminate it, report it as
  // the cause with its message, and exit with its code. The long grace period only bounds the
  // wait: the job ends as soon as rank 0 does.
  auto r = run_program(
      launch(3,
             {"--echo-rank", "1", "--fail-rank", "0", "--fail-after-echo", "--exit-code", "2", "--fail-message",
              "checkpoint rank-00000.bin: checksum mismatch", "--sleep-s", "3600", "--timeout-ms", "60000"},
             {"--grace-s", "600"}));
  INFO("stderr:\n" << r.err);
  CHECK(r.status == 2);
  CHECK(r.seconds < kLaunchHang);  // only guards against a hang
  CHECK_THAT(r.err, Contains("rank 1 exited with code 3: it stopped because a peer failed"));
  CHECK_THAT(r.err, Contains("job failed: rank 0 failed (exited with code 2): checkpoint rank-00000.bin: checksum "
                             "mismatch"));
  CHECK_THAT(r.err, Contains("rank 2 killed by SIGTERM"));
  CHECK(r.err.find("rank 1 failed") == std::string::npos);
}

TEST_CASE("zero-launch: only echoes of a failure: the job fails with status 3", "[ch5][launch]") {
  // Rank 1 says a peer failed, but no rank ever fails on its own (as when a peer stalls): after
  // the grace period the launcher terminates the rest and reports rank 1's message.
  auto r = run_program(launch(2, {"--echo-rank", "1", "--sleep-s", "3600"}, {"--grace-s", "0.5"}));
  INFO("stderr:\n" << r.err);
  CHECK(r.status == 3);
  CHECK(r.seconds < kLaunchHang);  // only guards against a hang
  CHECK_THAT(r.err, Contains("rank 0 killed by SIGTERM"));
  CHECK_THAT(r.err, Contains("job failed: no rank reported an error of its own; rank 1 stopped because a peer "
                             "failed: rank 1: another rank failed"));
}

TEST_CASE("zero-launch: a rank killed by a signal", "[ch5][launch]") {
  auto r = run_program(launch(
      3, {"--fail-rank", "2", "--signal", std::to_string(SIGSEGV), "--fail-after-ms", "100", "--sleep-s", "3600"}));
  INFO("stderr:\n" << r.err);
  CHECK(r.status == 128 + SIGSEGV);
  CHECK(r.seconds < kLaunchHang);  // only guards against a hang
  CHECK_THAT(r.err, Contains("job failed: rank 2 failed (killed by SIGSEGV)\n"));
}

TEST_CASE("zero-launch: a rank ignoring SIGTERM gets SIGKILL after the grace period", "[ch5][launch]") {
  // --wait-ready: rank 0 fails only once ranks 1 and 2 have said (through the store) that they
  // ignore SIGTERM, so the SIGTERM can never arrive before they do.
  auto r = run_program(launch(3,
                              {"--fail-rank", "0", "--fail-after-ms", "100", "--sleep-s", "3600", "--ignore-sigterm",
                               "--wait-ready", "--timeout-ms", "60000"},
                              {"--grace-s", "0.7"}));
  INFO("stderr:\n" << r.err);
  CHECK(r.status == 4);
  CHECK(r.seconds >= 0.8);         // 0.1 s until the failure, then the whole grace period
  CHECK(r.seconds < kLaunchHang);  // only guards against a hang
  CHECK_THAT(r.err, Contains("rank 1 killed by SIGKILL"));
  CHECK_THAT(r.err, Contains("rank 2 killed by SIGKILL"));
  CHECK_THAT(r.err, Contains("job failed: rank 0 failed (exited with code 4)"));
}

TEST_CASE("zero-launch: SIGTERM to the launcher is forwarded to every rank", "[ch5][launch]") {
  const int n = 3;
  zt::test::RunOptions o;
  o.signal_when = [](const std::string& out) {            // every rank printed its ready line
    return count_lines_starting(out, "[rank ") >= 3 * 3;  // env line, 1 line, ready line each
  };
  o.signo = SIGTERM;
  auto r = run_program(launch(n, {"--report-sigterm", "--sleep-s", "3600"}), o);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  for (int k = 0; k < n; ++k)
    CHECK(count_lines_starting(r.out, prefix(k) + "rank " + std::to_string(k) + " got SIGTERM") == 1);
  CHECK(r.status == 128 + SIGTERM);
  CHECK(r.seconds < kLaunchHang);  // only guards against a hang
  CHECK_THAT(r.err, Contains("received SIGTERM"));
}

TEST_CASE("zero-launch: a rank told a different world size stops the job", "[ch5][launch]") {
  auto r = run_program(launch(2, {"--world-size", "3", "--sleep-s", "3600"}));
  INFO("stderr:\n" << r.err);
  CHECK(r.status == 2);
  CHECK(r.seconds < kLaunchHang);  // only guards against a hang
  CHECK_THAT(r.err, Contains("--world-size 3 disagrees with the launcher's WORLD_SIZE=2"));
}

TEST_CASE("zero-launch: bad command lines are one error line", "[ch5][launch]") {
  auto missing_n = run_program({bin("zero-launch"), "--", "true"});
  CHECK(missing_n.status == 2);
  CHECK_THAT(missing_n.err, Contains("number of ranks is required"));
  auto no_prog = run_program({bin("zero-launch"), "-n", "2"});
  CHECK(no_prog.status == 2);
  CHECK_THAT(no_prog.err, Contains("no program given"));
  auto zero = run_program({bin("zero-launch"), "-n", "0", "--", "true"});
  CHECK(zero.status == 2);
  CHECK_THAT(zero.err, Contains("--nproc: 0 is outside"));
  auto not_found = run_program({bin("zero-launch"), "-n", "2", "--", "no-such-program-zt"});
  CHECK(not_found.status == 2);
  CHECK_THAT(not_found.err, Contains("cannot run 'no-such-program-zt': not found on PATH"));
  auto bad_store = run_program({bin("zero-launch"), "-n", "2", "--store", "nfs:x", "--", "true"});
  CHECK(bad_store.status == 2);
  CHECK_THAT(bad_store.err, Contains("ZT_STORE=nfs:x is not understood"));
  for (const auto& r : {missing_n, no_prog, zero, not_found, bad_store}) CHECK(count_lines_starting(r.err, "") == 1);
}

TEST_CASE("zero-launch: ZT_STORE=file: reaches the ranks", "[ch5][launch]") {
  auto r = run_program(launch(2, {}, {"--store", "file:/tmp/zt-store-dir"}));
  CHECK(r.status == 0);
  CHECK(count_lines_starting(r.out,
                             "[rank 0] rank 0 of 2 (torchrun: RANK, WORLD_SIZE) local 0 "
                             "master 127.0.0.1:") == 1);
  CHECK_THAT(r.out, Contains("store file:/tmp/zt-store-dir"));
}
