// store/tcp_store_server.cc — the accept loop, each client's loop, and the bookkeeping that keeps
// connections, threads and descriptors bounded (see tcp_store_server.h).
#include "store/tcp_store_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <system_error>

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

TcpStoreServer::TcpStoreServer(const std::string& bind_addr, uint16_t port, std::size_t max_connections)
    : TcpStoreServer(bind_tcp(bind_addr, port), max_connections) {}

TcpStoreServer::TcpStoreServer(Fd bound, std::size_t max_connections)
    : listener_(listen_tcp(std::move(bound))), port_(local_port(listener_.get())), max_connections_(max_connections) {
  ZT_CHECK(max_connections_ >= 1, "TCP store: max_connections must be at least 1");
  ZT_CHECK(::pipe2(wake_pipe_, O_CLOEXEC) == 0, "TCP store: pipe: ", std::strerror(errno));
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    // shutdown() (not close()) wakes a worker blocked in poll/recv/send on that socket; the
    // worker closes it itself, so no descriptor number is reused under its feet. Idle clients
    // are shut down too: a socket that never speaks must not keep the job from ending.
    for (auto& c : connections_)
      if (!c.finished) ::shutdown(c.fd, SHUT_RDWR);
  }
  state_.stop();
  changed_.notify_all();
  char byte = 1;
  while (::write(wake_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
  }
  acceptor_.join();
  // No connection is added or removed once the acceptor has returned.
  for (auto& c : connections_) c.worker.join();
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
}

ServerStats TcpStoreServer::stats_locked() const {
  ServerStats s = counts_;
  s.open = 0;
  for (const auto& c : connections_) s.open += !c.finished;
  s.threads = connections_.size();
  return s;
}

ServerStats TcpStoreServer::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_locked();
}

bool TcpStoreServer::wait_until(const std::function<bool(const ServerStats&)>& reached,
                                std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return reached(stats_locked()); });
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
    if (fd >= 0) {
      admit(fd, peer_name(ss));
    } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // Out of descriptors (or memory): the connection stays in the backlog and poll would report
      // it again at once, a busy loop. Make room as at the cap, then wait until a connection has
      // finished (or the server stops) before accepting again.
      std::unique_lock<std::mutex> lock(mu_);
      evict_one();
      const uint64_t finished = counts_.finished;
      changed_.wait(lock, [&] { return stopping_ || counts_.finished != finished; });
      if (stopping_) return;
    }
    // any other failure (e.g. the client gave up already) concerns that client only
  }
}

void TcpStoreServer::admit(int fd, std::string peer) {
  std::list<Connection> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done = take_finished();
    std::size_t served = 0;  // an evicted connection is on its way out: it does not count
    for (const auto& c : connections_) served += !c.finished && !c.evicted;
    if (stopping_) {
      ::close(fd);
    } else if (served >= max_connections_ && !evict_one()) {
      // every connection open has sent a well-formed request: keep them, turn the newcomer away
      ::close(fd);
      ++counts_.refused;
    } else {
      Connection& c = connections_.emplace_back();
      c.fd = fd;
      c.peer = std::move(peer);
      try {
        c.worker = std::thread([this, &c] { serve(c); });
        ++counts_.accepted;
      } catch (const std::system_error&) {  // no thread to be had: as if the server were full
        connections_.pop_back();
        ::close(fd);
        ++counts_.refused;
      }
    }
    changed_.notify_all();
  }
  for (auto& c : done) c.worker.join();  // finished already: each join only waits for the return
}

bool TcpStoreServer::evict_one() {
  for (auto& c : connections_)
    if (!c.finished && !c.evicted && !c.proven) {
      c.evicted = true;
      ::shutdown(c.fd, SHUT_RDWR);  // its worker wakes, sees the end of the stream and finishes
      ++counts_.evicted;
      changed_.notify_all();
      return true;
    }
  return false;
}

std::list<TcpStoreServer::Connection> TcpStoreServer::take_finished() {
  std::list<Connection> done;
  for (auto it = connections_.begin(); it != connections_.end();) {
    const auto next = std::next(it);
    if (it->finished) done.splice(done.end(), connections_, it);
    it = next;
  }
  return done;
}

void TcpStoreServer::serve(Connection& c) {
  // c.fd and c.peer are set before this thread starts and change only below, under mu_.
  bool proven = false;
  try {
    for (;;) {
      Message message;
      if (receive_message(c.fd, Deadline::max(), c.peer, message) != ReadStatus::kOk) break;
      const Request request = parse_request(message);
      if (!proven) {  // from now on this client is never evicted to make room
        proven = true;
        std::lock_guard<std::mutex> lock(mu_);
        c.proven = true;
      }
      send_message(c.fd, state_.handle(request), c.peer);
    }
  } catch (const std::exception&) {
    // A malformed request or a broken connection ends this client only. The client side
    // reports the problem to its user; the server has nobody to tell.
  }
  std::lock_guard<std::mutex> lock(mu_);
  ::close(c.fd);
  c.fd = -1;
  c.finished = true;  // the last touch of c: take_finished may move it from here on
  ++counts_.finished;
  changed_.notify_all();
}

}  // namespace zt::store
