// zero-launch with each ZT_STORE kind a job can use across machines: Gloo's FileStore in a
// directory (a shared filesystem in real use) and Gloo's RedisStore against a real redis-server.
// The TCP store (the default) is covered in test_zero_launch.cc.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "launch/spawn.h"
#include "run_command.h"
#include "store/socket.h"

using Catch::Matchers::Contains;
using zt_test::bin_path;
using zt_test::count_lines_starting;
using zt_test::run_command;

namespace {
// Every rank read every rank's key and the Gloo sum over the store came out as n(n+1)/2.
void check_rendezvous(const zt_test::CommandResult& r, int n) {
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  CHECK(r.exit_code == 0);
  const std::string sum = std::to_string(n * (n + 1) / 2);
  for (int k = 0; k < n; ++k) {
    std::string p = "[rank " + std::to_string(k) + "] rank " + std::to_string(k);
    CHECK(count_lines_starting(r.out, p + " read keys of " + std::to_string(n) + " ranks") == 1);
    CHECK(count_lines_starting(r.out, p + " allreduce sum " + sum) == 1);
  }
}
std::vector<std::string> launch_with_store(int n, const std::string& store) {
  return {bin_path("zero-launch"), "-n",         std::to_string(n),
          "--store",               store,        "--",
          bin_path("zt-launch-probe"), "--rendezvous", "--timeout-ms", "10000"};
}
}  // namespace

TEST_CASE("zero-launch: rendezvous through ZT_STORE=file:DIR", "[ch4][launch]") {
  char tmpl[] = "/tmp/zt-filestore-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  check_rendezvous(run_command(launch_with_store(3, "file:" + dir)), 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("zero-launch: rendezvous through ZT_STORE=redis:HOST:PORT", "[ch4][launch]") {
  const std::string server = "/usr/bin/redis-server";
  if (::access(server.c_str(), X_OK) != 0) {
    WARN("redis-server not installed: skipping the RedisStore rendezvous");
    return;
  }
  uint16_t port = zt::launch::pick_free_port("127.0.0.1");
  int pid = zt_test::start_background({server, "--port", std::to_string(port), "--bind",
                                       "127.0.0.1", "--save", "", "--appendonly", "no"});
  // Wait until it accepts connections (the probe's RedisStore does not retry).
  bool up = false;
  try {
    zt::store::connect_tcp_retry("127.0.0.1", port, std::chrono::milliseconds(5000));
    up = true;
  } catch (...) {
  }
  if (up) {
    std::string store = "redis:127.0.0.1:";
    store.append(std::to_string(port));
    check_rendezvous(run_command(launch_with_store(3, store)), 3);
  }
  ::kill(pid, SIGTERM);
  int status;
  ::waitpid(pid, &status, 0);
  REQUIRE(up);
}
