// store/socket.h — the few blocking TCP socket operations the store needs, each failing with one
// zt::Error line that names the address.
//
// It is not a networking library: IPv4/IPv6 stream sockets only, no TLS, no non-blocking API
// beyond "wait until a deadline" (for readability, and for a connection to be accepted).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace zt::store {

/// A monotonic deadline; every blocking call below stops at one.
using Deadline = std::chrono::steady_clock::time_point;

/// The deadline `timeout` from now; Deadline::max() (never) when that lies beyond the clock's
/// range, now for a negative timeout. @param timeout any duration. @return the deadline.
Deadline deadline_after(std::chrono::milliseconds timeout);

/// What is left until a deadline, in whole milliseconds and at least 1, for the waits that take a
/// timeout rather than a deadline: a deadline already past still gets one short try that fails by
/// its own timeout, never 0 or a negative value (Gloo reads -1 ms as "its default timeout").
/// @param deadline the deadline. @return the time left, >= 1 ms.
std::chrono::milliseconds ms_left(Deadline deadline);

/// Owns one file descriptor and closes it on destruction.
class Fd {
 public:
  Fd() = default;
  /// @param fd descriptor to own (-1 for none).
  explicit Fd(int fd) : fd_(fd) {}
  /// Closes the descriptor, if any.
  ~Fd() { reset(); }
  /// Move-construct, leaving `other` empty. @param other descriptor to take over.
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  /// Move-assign, closing the current descriptor. @param other descriptor to take over.
  /// @return *this.
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  /// @return the raw descriptor (-1 if none).
  int get() const { return fd_; }
  /// Give up ownership without closing. @return the raw descriptor.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  /// Close the descriptor now (no-op if none).
  void reset();

 private:
  int fd_ = -1;
};

/// "host:port", with brackets around an IPv6 literal.
/// @param host host name or address. @param port TCP port.
/// @return the printable address.
std::string format_address(const std::string& host, uint16_t port);

/// Bind addr:port (SO_REUSEADDR) without listening yet. An empty addr means all interfaces; port 0
/// lets the kernel choose (read it with local_port). A port already in use is a zt::Error saying
/// so. Until listen_tcp(Fd) is called on it, the port is held but connections to it are refused.
/// @param addr numeric address or host name to bind. @param port port, 0 for any free one.
/// @return the bound socket.
Fd bind_tcp(const std::string& addr, uint16_t port);

/// Start listening on a socket from bind_tcp (harmless if it already listens).
/// @param bound the bound socket. @return the same socket, now listening.
Fd listen_tcp(Fd bound);

/// Bind and listen on addr:port in one call: listen_tcp(bind_tcp(addr, port)).
/// @param addr numeric address or host name to bind. @param port port, 0 for any free one.
/// @return the listening socket.
Fd listen_tcp(const std::string& addr, uint16_t port);

/// The local port a socket is bound to. @param fd a bound socket. @return its port.
uint16_t local_port(int fd);

/// Called after each failed connection attempt with its error text (progress messages, tests).
using ConnectRetryHook = std::function<void(const std::string& error)>;

/// Connect to host:port, retrying refused/unreachable attempts (the server may not be up yet)
/// until `timeout` has passed; then a zt::Error naming the address and the last failure.
/// @param host host name or address. @param port TCP port. @param timeout total time allowed.
/// @param on_retry called after every failed attempt, before the pause (may be empty).
/// @return the connected socket (TCP_NODELAY set).
Fd connect_tcp_retry(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                     const ConnectRetryHook& on_retry = {});

/// Connect to host:port once, giving up at the deadline (a peer that drops packets does not hold
/// the caller for the kernel's two-minute SYN retries).
/// @param host host name or address. @param port TCP port. @param deadline when to give up.
/// @param error set to the reason when the connection fails.
/// @return the connected socket (TCP_NODELAY set), or an empty Fd on failure.
Fd connect_tcp_once(const std::string& host, uint16_t port, Deadline deadline, std::string& error);

/// Write all `size` bytes (no SIGPIPE); a zt::Error on failure.
/// @param fd connected socket. @param data bytes to send. @param size how many.
/// @param peer address used in error messages.
void write_all(int fd, const void* data, std::size_t size, const std::string& peer);

/// Result of read_all.
enum class ReadStatus {
  kOk,       ///< all bytes were read
  kClosed,   ///< the peer closed the connection before the first byte
  kTimedOut  ///< the deadline passed
};

/// Read exactly `size` bytes or stop at the deadline. A connection closed in the middle of the
/// bytes, or a socket error, is a zt::Error.
/// @param fd connected socket. @param data destination. @param size how many bytes.
/// @param deadline when to give up. @param peer address used in error messages.
/// @return whether the bytes arrived, the peer closed first, or time ran out.
ReadStatus read_all(int fd, void* data, std::size_t size, Deadline deadline, const std::string& peer);

}  // namespace zt::store
