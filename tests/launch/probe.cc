// zt-launch-probe — a rank program for the launcher tests: it reports its rank environment, can
// be told to fail, crash, sleep, ignore SIGTERM or print a lot, and can rendezvous through the
// store the environment selects (then check a Gloo all-reduce over it). With --wait-ready every
// rank announces through the store that its signal handlers are in place, and the failing rank
// fails only once every rank has: the tests order events by that, not by sleeping. With
// --echo-rank one rank plays a rank that stops because a peer failed (exit status 3), and
// --fail-after-echo makes the failing rank fail only after the launcher has reaped that one.
//
// Not a user program: every flag exists so that one test can provoke one launcher behaviour.
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/check.h"
#include "core/cli.h"
#include "core/error_report.h"
#include "launch/rank_env.h"
#include "launch/store_spec.h"

namespace {

int g_rank = -1;

void on_sigterm(int) {
  char line[64];
  int n = std::snprintf(line, sizeof line, "rank %d got SIGTERM\n", g_rank);
  if (::write(1, line, static_cast<std::size_t>(n)) < 0) {
  }
  ::_exit(128 + SIGTERM);
}

using zt::launch::open_store;  // the one every program uses (launch/store_spec.h)

// Every rank sets one key and reads everyone's, then the same store carries Gloo's own
// rendezvous and a sum of (rank + 1) over the ranks, which must be W(W+1)/2.
void rendezvous(const zt::launch::RankEnv& env, std::chrono::milliseconds timeout) {
  auto store = open_store(env, timeout);
  std::string mine = "hello from " + std::to_string(env.rank);
  store->set("probe/" + std::to_string(env.rank), std::vector<char>(mine.begin(), mine.end()));
  int seen = 0;
  for (int r = 0; r < env.world_size; ++r) {
    store->wait({"probe/" + std::to_string(r)}, timeout);
    auto v = store->get("probe/" + std::to_string(r));
    ZT_CHECK(std::string(v.begin(), v.end()) == "hello from " + std::to_string(r), "wrong value for rank ", r);
    ++seen;
  }
  std::printf("rank %d read keys of %d ranks\n", env.rank, seen);

  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(env.rank, env.world_size);
  context->setTimeout(timeout);
  context->connectFullMesh(*store, device);
  float value = static_cast<float>(env.rank + 1);
  gloo::AllreduceOptions opts(context);
  opts.setOutput(&value, 1);
  opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
  gloo::allreduce(opts);
  std::printf("rank %d allreduce sum %g\n", env.rank, static_cast<double>(value));
  // If rank 0 serves the store (no launcher does), it is kept until every rank is past
  // rendezvous: the all-reduce above needed all of them, so they are.
}

// Announce "ready/R" through the store; the failing rank then waits for every rank's.
void announce_ready(const zt::launch::RankEnv& env, bool failing, std::chrono::milliseconds timeout) {
  static std::shared_ptr<gloo::rendezvous::Store> store;  // kept open while this rank lives
  store = open_store(env, timeout);
  const std::string mine = "ready/" + std::to_string(env.rank);
  store->set(mine, std::vector<char>{'1'});
  if (!failing) return;
  std::vector<std::string> all;
  for (int r = 0; r < env.world_size; ++r) all.push_back("ready/" + std::to_string(r));
  store->wait(all, timeout);
}

// Wait until the launcher has reaped rank `echo`'s process (its /proc entry is gone): the launcher
// has then recorded the echo's exit before the cause's, a fact rather than a guess about timing.
// An ended process that is not yet reaped (a zombie) is not enough: the launcher would find both
// exits in one pass over its ranks and take them in rank order, the cause first.
void wait_until_ended(const zt::launch::RankEnv& env, int64_t echo, int64_t timeout_ms) {
  auto store = open_store(env, std::chrono::milliseconds(timeout_ms));
  const std::string key = "pid/" + std::to_string(echo);
  store->wait({key}, std::chrono::milliseconds(timeout_ms));
  const auto bytes = store->get(key);
  const std::string stat = "/proc/" + std::string(bytes.begin(), bytes.end()) + "/stat";
  while (::access(stat.c_str(), F_OK) == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a fact, not ordering by time
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return zt::run_main("zt-launch-probe", [&]() -> int {
    int64_t lines = 1, line_bytes = 0, fail_rank = -1, exit_code = 4, signo = 0, fail_after_ms = 0, timeout_ms = 10000,
            world_size = 0, echo_rank = -1;
    bool fail_after_echo = false;
    std::string fail_message;
    double sleep_s = 0;
    bool ignore_sigterm = false, report_sigterm = false, do_rendezvous = false, wait_ready = false;
    zt::ArgParser p("zt-launch-probe", "A rank program for the launcher tests.");
    p.add_int("lines", &lines, "lines to print", 0, 1000000);
    p.add_int("line-bytes", &line_bytes, "pad each line to about this many bytes", 0, 1 << 20);
    p.add_int("fail-rank", &fail_rank, "this rank fails", -1, 1 << 20);
    p.add_int("exit-code", &exit_code, "exit code of the failing rank", 1, 255);
    p.add_int("signal", &signo, "the failing rank raises this signal instead of exiting", 0, 64);
    p.add_int("fail-after-ms", &fail_after_ms, "the failing rank waits this long first", 0, 1 << 30);
    p.add_double("sleep-s", &sleep_s, "the other ranks sleep this long before exiting 0", 0, 3600);
    p.add_flag("ignore-sigterm", &ignore_sigterm, "ignore SIGTERM (only SIGKILL stops it)");
    p.add_flag("report-sigterm", &report_sigterm, "on SIGTERM print 'rank R got SIGTERM', exit 143");
    p.add_flag("rendezvous", &do_rendezvous, "exchange keys through the store, then a Gloo sum");
    p.add_flag("wait-ready", &wait_ready,
               "announce readiness through the store; the failing rank waits for every rank's");
    p.add_int("timeout-ms", &timeout_ms, "store and Gloo timeout", 1, 1 << 30);
    p.add_int("echo-rank", &echo_rank,
              "this rank exits 3 (kExitPeerFailed: 'a peer failed') at once, after putting its pid in the store", -1,
              1 << 20);
    p.add_flag(
        "fail-after-echo", &fail_after_echo,
        "the failing rank fails only once the --echo-rank process is reaped by the launcher (its /proc entry gone)");
    p.add_string("fail-message", &fail_message, "the failing rank prints 'zt-launch-probe: error: MESSAGE' first");
    p.add_int("world-size", &world_size, "world size flag, reconciled with the environment", 1, 1 << 20);
    if (!p.parse(argc, argv)) return 0;

    auto env = zt::launch::parse_rank_env(zt::launch::process_env());
    auto decision =
        zt::launch::decide_launch(p.given("world-size") ? std::optional<int64_t>(world_size) : std::nullopt, env);
    g_rank = env.rank;
    if (ignore_sigterm) ::signal(SIGTERM, SIG_IGN);
    if (report_sigterm) ::signal(SIGTERM, on_sigterm);

    std::printf("%s local %d master %s:%d store %s mode %d launcher-store %s\n", env.describe().c_str(), env.local_rank,
                env.master_addr.c_str(), env.master_port, env.store.empty() ? "-" : env.store.c_str(),
                static_cast<int>(decision.mode), env.launcher_store.empty() ? "-" : env.launcher_store.c_str());
    std::string pad(static_cast<std::size_t>(line_bytes), 'x');
    for (int64_t i = 0; i < lines; ++i)
      std::printf("line %lld of rank %d %s\n", static_cast<long long>(i), env.rank, pad.c_str());
    if (wait_ready) announce_ready(env, env.rank == fail_rank, std::chrono::milliseconds(timeout_ms));
    std::printf("rank %d ready\n", env.rank);

    if (do_rendezvous) rendezvous(env, std::chrono::milliseconds(timeout_ms));

    if (env.rank == echo_rank) {  // a rank that only learnt of a failure elsewhere
      auto store = open_store(env, std::chrono::milliseconds(timeout_ms));
      const std::string pid = std::to_string(::getpid());
      store->set("pid/" + std::to_string(env.rank), std::vector<char>(pid.begin(), pid.end()));
      store.reset();
      std::fprintf(stderr, "zt-launch-probe: error: rank %d: another rank failed\n", env.rank);
      return zt::kExitPeerFailed;
    }
    if (env.rank == fail_rank && fail_after_echo) wait_until_ended(env, echo_rank, timeout_ms);
    if (env.rank == fail_rank) {
      if (!fail_message.empty()) std::fprintf(stderr, "zt-launch-probe: error: %s\n", fail_message.c_str());
      // the deliberate wait is the behaviour under test (a rank failing some time in), not an
      // ordering: with --wait-ready every rank is known to be ready already
      std::this_thread::sleep_for(std::chrono::milliseconds(fail_after_ms));
      if (signo != 0) {
        ::prctl(PR_SET_DUMPABLE, 0);  // a deliberate crash should not leave a core file
        ::signal(static_cast<int>(signo), SIG_DFL);
        ::raise(static_cast<int>(signo));
      }
      return static_cast<int>(exit_code);
    }
    // Sleep in short steps so that an ignored SIGTERM does not end the sleep early.
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(sleep_s);
    while (std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return 0;
  });
}
