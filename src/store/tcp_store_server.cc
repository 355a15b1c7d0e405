// store/tcp_store_server.cc — accept loop, per-client loop, and the three requests.
#include "store/tcp_store_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>

#include "core/check.h"

namespace zt::store {
namespace {

std::string peer_name(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  }
  return format_address(host, port);
}

}  // namespace

TcpStoreServer::TcpStoreServer(const std::string& bind_addr, uint16_t port)
    : TcpStoreServer(bind_tcp(bind_addr, port)) {}

TcpStoreServer::TcpStoreServer(Fd bound) : listener_(listen_tcp(std::move(bound))), port_(local_port(listener_.get())) {
  ZT_CHECK(::pipe2(wake_pipe_, O_CLOEXEC) == 0, "TCP store: pipe: ", std::strerror(errno));
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    // shutdown() (not close()) wakes a worker blocked in poll/recv on that socket; the worker
    // closes it itself, so no descriptor number is reused under its feet.
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  state_.stop();
  char byte = 1;
  while (::write(wake_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
  }
  acceptor_.join();
  // No new workers can start once the acceptor has returned.
  for (auto& w : workers_) w.join();
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
}

void TcpStoreServer::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    int rc = ::poll(fds, 2, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;  // e.g. the client gave up already; keep serving the others
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_fds_.insert(fd);
    workers_.emplace_back([this, fd, peer = peer_name(ss)] { serve(fd, peer); });
  }
}

void TcpStoreServer::serve(int fd, std::string peer) {
  try {
    for (;;) {
      Message request;
      if (receive_message(fd, Deadline::max(), peer, request) != ReadStatus::kOk) break;
      send_message(fd, state_.handle(parse_request(request)), peer);
    }
  } catch (const std::exception&) {
    // A malformed request or a broken connection ends this client only. The client side
    // reports the problem to its user; the server has nobody to tell.
  }
  std::lock_guard<std::mutex> lock(mu_);
  open_fds_.erase(fd);
  ::close(fd);
}

}  // namespace zt::store
