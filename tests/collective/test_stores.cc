// Rendezvous stores: make_store specs, the extension point, a reused FileStore directory, and a
// real redis-server (started here on a free loopback port when the binary exists).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gloo/rendezvous/hash_store.h>

#include "collective/store.h"
#include "collective/thread_ranks.h"

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

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

bool port_open(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

}  // namespace

TEST_CASE("store specs: known schemes, errors, extension point", "[ch4][collective][store]") {
  CHECK(make_store("hash") != nullptr);
  CHECK_THROWS_WITH(make_store("zookeeper:somewhere"),
                    Catch::Contains("unknown store spec 'zookeeper:somewhere'") && Catch::Contains("file, hash, redis"));
  CHECK_THROWS_WITH(make_store("redis:localhost"), Catch::Contains("redis:HOST:PORT expected"));
  CHECK_THROWS_WITH(make_store("redis:127.0.0.1:http"), Catch::Contains("bad port 'http'"));
  CHECK_THROWS_WITH(make_store("file:"), Catch::Contains("needs a directory"));
  // The launcher adds its own scheme the same way (tcp:HOST:PORT in src/launch).
  auto shared = std::make_shared<gloo::rendezvous::HashStore>();
  register_store_scheme("shared", [shared](const std::string&) { return shared; });
  CHECK(make_store("shared:anything") == shared);
  const auto out = sum_over("shared:", 3, std::chrono::milliseconds(10000));
  for (const auto& o : out) CHECK(o.value.value_or(-1) == 6.0f);
}

TEST_CASE("file store: a job, then a clear error when its directory is reused", "[ch4][collective][store]") {
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

TEST_CASE("redis store against a real redis-server", "[ch4][collective][store]") {
  const char* server = "/usr/bin/redis-server";
  if (access(server, X_OK) != 0) {
    WARN("redis-server not installed: redis store test skipped");
    return;
  }
  const int port = free_loopback_port();
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string p = std::to_string(port);
    const int devnull = open("/dev/null", O_WRONLY);  // keep the server's banner out of test logs
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(server, server, "--port", p.c_str(), "--bind", "127.0.0.1", "--save", "", "--appendonly",
          "no", "--loglevel", "warning", static_cast<char*>(nullptr));
    _exit(127);
  }
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = port_open(port);
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string spec = "redis:127.0.0.1:" + std::to_string(port);
  std::vector<RankOutcome<float>> out, again;
  if (up) {
    out = sum_over(spec, 3, std::chrono::milliseconds(5000));
    again = sum_over(spec, 3, std::chrono::milliseconds(1500));  // same keys: a previous job
  }
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  REQUIRE(up);
  for (const auto& o : out) {
    INFO(o.error);
    CHECK(o.value.value_or(-1) == 6.0f);
  }
  for (const auto& o : again) {
    INFO(o.error);
    CHECK(o.error.find("already holds rank") != std::string::npos);
  }
}
