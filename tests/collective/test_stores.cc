// Rendezvous stores: make_store specs, a reused FileStore directory, and a real redis-server when
// the binary exists (support/redis_server.h: on a port it really bound, retried if another program
// took the candidate port, ready when it says so).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "collective/store.h"
#include "collective/thread_ranks.h"
#include "support/redis_server.h"

using namespace zt;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("zt-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(p);
  return p.string();
}

// Each rank builds its own store object from the spec, as separate processes would.
std::vector<RankOutcome<float>> sum_over(const std::string& spec, int n, std::chrono::milliseconds timeout) {
  return run_thread_ranks(n, [&](int r) {
    GlooOptions o;
    o.rank = r;
    o.size = n;
    o.store = make_store(spec);
    o.timeout = timeout;
    GlooCollective coll(o);
    std::vector<float> x(5, static_cast<float>(r + 1));
    coll.all_reduce(std::span<float>(x));
    return x[4];
  });
}

}  // namespace

TEST_CASE("store specs: known schemes and errors", "[ch5][collective][store]") {
  CHECK(make_store("hash") != nullptr);
  CHECK_THROWS_WITH(make_store("zookeeper:somewhere"), Catch::Contains("unknown store spec 'zookeeper:somewhere'") &&
                                                           Catch::Contains("file, hash, redis"));
  CHECK_THROWS_WITH(make_store("redis:localhost"), Catch::Contains("redis:HOST:PORT expected"));
  CHECK_THROWS_WITH(make_store("redis:127.0.0.1:http"), Catch::Contains("bad port 'http'"));
  CHECK_THROWS_WITH(make_store("file:"), Catch::Contains("needs a directory"));
}

TEST_CASE("file store: a job, then a clear error when its directory is reused", "[ch5][collective][store]") {
  const std::string dir = fresh_dir("filestore");
  const auto first = sum_over("file:" + dir, 2, std::chrono::milliseconds(5000));
  for (const auto& o : first) {
    INFO(o.error);
    CHECK(o.value.value_or(-1) == 3.0f);
  }
  const auto again = sum_over("file:" + dir, 2, std::chrono::milliseconds(1500));
  for (const auto& o : again) {
    INFO(o.error);
    CHECK_FALSE(o.ok());
    CHECK(o.error.find("already holds rank") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("redis store against a real redis-server", "[ch5][collective][store]") {
  if (!zt::test::RedisServer::installed()) {
    WARN("redis-server not installed: redis store test skipped");
    return;
  }
  zt::test::RedisServer redis;
  const std::string spec = "redis:127.0.0.1:" + std::to_string(redis.port());
  const auto out = sum_over(spec, 3, std::chrono::milliseconds(5000));
  const auto again = sum_over(spec, 3, std::chrono::milliseconds(1500));  // same keys: a previous job
  for (const auto& o : out) {
    INFO(o.error);
    CHECK(o.value.value_or(-1) == 6.0f);
  }
  for (const auto& o : again) {
    INFO(o.error);
    CHECK(o.error.find("already holds rank") != std::string::npos);
  }
}
