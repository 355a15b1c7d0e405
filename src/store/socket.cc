// store/socket.cc — blocking TCP helpers (see socket.h).
#include "store/socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/check.h"

namespace zt::store {
namespace {

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

// getaddrinfo for a stream socket; `passive` with an empty host means "all interfaces".
void resolve(const std::string& host, uint16_t port, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &out.list);
  ZT_CHECK(rc == 0, "cannot resolve '", host, "': ", gai_strerror(rc));
}

// Milliseconds left until the deadline for poll(): -1 (forever) for the far future, 0 if past.
int poll_ms(Deadline deadline) {
  if (deadline == Deadline::max()) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 1 << 30));
}

// connect() that gives up at the deadline. A blocking connect to a host that drops packets (a
// partition, a firewall) waits for the kernel's SYN retries, about two minutes, whatever
// timeout the caller was promised; a non-blocking one polled until the deadline keeps it.
// @return 0 on success, else the errno (ETIMEDOUT at the deadline).
int connect_until(int fd, const sockaddr* addr, socklen_t len, Deadline deadline) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return errno;
  int err = 0;
  if (::connect(fd, addr, len) != 0) {
    err = errno;
    while (err == EINPROGRESS || err == EINTR) {
      pollfd pfd{fd, POLLOUT, 0};
      const int rc = ::poll(&pfd, 1, poll_ms(deadline));
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) return errno;
      if (rc == 0) return ETIMEDOUT;
      socklen_t size = sizeof err;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &size) != 0) return errno;
    }
  }
  if (err == 0 && ::fcntl(fd, F_SETFL, flags) != 0) return errno;  // blocking again for the callers
  return err;
}

}  // namespace

Deadline deadline_after(std::chrono::milliseconds timeout) {
  // A client may ask for any timeout up to 2^63 - 1 ms, which overflows once converted to the
  // clock's nanoseconds: a deadline beyond the clock's range is "never" (compared in ms, exactly).
  const auto now = std::chrono::steady_clock::now();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(Deadline::max() - now);
  return timeout >= left ? Deadline::max() : now + std::max(timeout, std::chrono::milliseconds(0));
}

std::chrono::milliseconds ms_left(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string format_address(const std::string& host, uint16_t port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Fd bind_tcp(const std::string& addr, uint16_t port) {
  AddrInfo ai;
  resolve(addr, port, true, ai);
  std::string where = format_address(addr.empty() ? "*" : addr, port);
  int last_errno = 0;
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (fd.get() < 0) {
      last_errno = errno;
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      last_errno = errno;
      if (last_errno == EADDRINUSE)
        ZT_FAIL("TCP store: cannot listen on ", where,
                ": port already in use (another job or program holds it; pick another "
                "MASTER_PORT)");
      continue;
    }
    return fd;
  }
  ZT_FAIL("TCP store: cannot listen on ", where, ": ", std::strerror(last_errno));
}

Fd listen_tcp(Fd bound) {
  if (::listen(bound.get(), 128) != 0) {
    const int e = errno;
    ZT_FAIL("TCP store: cannot listen on port ", local_port(bound.get()), ": ", std::strerror(e));
  }
  return bound;
}

Fd listen_tcp(const std::string& addr, uint16_t port) { return listen_tcp(bind_tcp(addr, port)); }

uint16_t local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ZT_CHECK(::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0, "getsockname: ", std::strerror(errno));
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

Fd connect_tcp_retry(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                     const ConnectRetryHook& on_retry) {
  const auto deadline = deadline_after(timeout);
  std::string where = format_address(host, port);
  std::string last_error = "no attempt made";
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    // A name that does not resolve may be DNS not ready yet, but usually it is a typo: keep
    // retrying until the deadline, then report the resolver's message.
    Fd fd = connect_tcp_once(host, port, deadline, last_error);
    if (fd.get() >= 0) return fd;
    if (on_retry) on_retry(last_error);
    if (std::chrono::steady_clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
  ZT_FAIL("TCP store: could not connect to ", where, " within ", timeout.count(), " ms (last error: ", last_error,
          "); is rank 0 running and MASTER_ADDR/MASTER_PORT right?");
}

void write_all(int fd, const void* data, std::size_t size, const std::string& peer) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    ZT_CHECK(n > 0, "TCP store: sending to ", peer, " failed: ", std::strerror(errno));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

ReadStatus read_all(int fd, void* data, std::size_t size, Deadline deadline, const std::string& peer) {
  char* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < size) {
    pollfd pfd{fd, POLLIN, 0};
    int rc = ::poll(&pfd, 1, poll_ms(deadline));
    if (rc < 0 && errno == EINTR) continue;
    ZT_CHECK(rc >= 0, "TCP store: poll on ", peer, " failed: ", std::strerror(errno));
    if (rc == 0) {
      if (std::chrono::steady_clock::now() >= deadline) return ReadStatus::kTimedOut;
      continue;
    }
    ssize_t n = ::recv(fd, p + got, size - got, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 0 && got == 0) return ReadStatus::kClosed;
    ZT_CHECK(n > 0, "TCP store: connection to ", peer, " ",
             n == 0 ? std::string("closed in the middle of a message") : std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  return ReadStatus::kOk;
}

Fd connect_tcp_once(const std::string& host, uint16_t port, Deadline deadline, std::string& error) {
  AddrInfo ai;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai.list);
  if (rc != 0) {
    error = gai_strerror(rc);
    return Fd();
  }
  error = "no address";
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (fd.get() < 0) {
      error = std::strerror(errno);
      continue;
    }
    const int err = connect_until(fd.get(), a->ai_addr, a->ai_addrlen, deadline);
    if (err == 0) {
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      error.clear();
      return fd;
    }
    error = err == ETIMEDOUT ? "no answer before the deadline (unreachable: a network partition, a firewall, or "
                               "its machine is down)"
                             : std::strerror(err);
  }
  return Fd();
}

}  // namespace zt::store
