// zero-launch with each ZT_STORE kind a job can use across machines: Gloo's FileStore in a
// directory (a shared filesystem in real use) and Gloo's RedisStore against a real redis-server
// (support/redis_server.h: started on a port it really bound, ready when it says so).
// The TCP store (the default) is covered in test_zero_launch.cc.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/redis_server.h"
#include "support/run_program.h"

using zt::test::bin;
using zt::test::count_lines_starting;
using zt::test::run_program;

namespace {
// Every rank read every rank's key and the Gloo sum over the store came out as n(n+1)/2.
void check_rendezvous(const zt::test::ProgramOutput& r, int n) {
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  CHECK(r.status == 0);
  const std::string sum = std::to_string(n * (n + 1) / 2);
  for (int k = 0; k < n; ++k) {
    std::string p = "[rank " + std::to_string(k) + "] rank " + std::to_string(k);
    CHECK(count_lines_starting(r.out, p + " read keys of " + std::to_string(n) + " ranks") == 1);
    CHECK(count_lines_starting(r.out, p + " allreduce sum " + sum) == 1);
  }
}
std::vector<std::string> launch_with_store(int n, const std::string& store) {
  return {bin("zero-launch"),     "-n",           std::to_string(n), "--store", store, "--",
          bin("zt-launch-probe"), "--rendezvous", "--timeout-ms",    "60000"};
}
}  // namespace

TEST_CASE("zero-launch: rendezvous through ZT_STORE=file:DIR", "[ch5][launch]") {
  char tmpl[] = "/tmp/zt-filestore-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  check_rendezvous(run_program(launch_with_store(3, "file:" + dir)), 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("zero-launch: rendezvous through ZT_STORE=redis:HOST:PORT", "[ch5][launch]") {
  if (!zt::test::RedisServer::installed()) {
    WARN("redis-server not installed: skipping the RedisStore rendezvous");
    return;
  }
  zt::test::RedisServer redis;  // ready: the probe's RedisStore does not retry
  check_rendezvous(run_program(launch_with_store(3, "redis:127.0.0.1:" + std::to_string(redis.port()))), 3);
}
