// tests/support/redis_server.cc — see redis_server.h.
#include "support/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace zt::test {
namespace {

// A loopback port the kernel handed out just now (bound to port 0, read, closed): only a
// candidate, since it is free again once closed.
uint16_t candidate_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("RedisServer: socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("RedisServer: cannot get a loopback port from the kernel");
  return ntohs(a.sin_port);
}

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

}  // namespace

bool RedisServer::installed() { return ::access(kPath, X_OK) == 0; }

RedisServer::RedisServer() {
  std::string last;
  for (int attempt = 0; attempt < 20; ++attempt) {
    const uint16_t port = candidate_port();
    auto process = std::make_unique<BackgroundProgram>(
        std::vector<std::string>{kPath, "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--loglevel", "notice"});
    if (process->wait_for_output([](const std::string& out) { return has(out, "Ready to accept connections"); })) {
      process_ = std::move(process);
      port_ = port;
      return;
    }
    process->stop();
    last = process->output();
    if (!has(last, "Address already in use")) break;  // not a port clash: retrying will not help
  }
  throw std::runtime_error("redis-server did not start; its last output:\n" + last);
}

RedisServer::~RedisServer() {
  if (process_) process_->stop();
}

}  // namespace zt::test
