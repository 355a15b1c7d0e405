// tests/support/redis_server.h — a private redis-server on a loopback port, for the store tests.
//
// Redis cannot bind port 0 and report the port it got, so a port is only a candidate (one the
// kernel handed out a moment ago); if redis reports "Address already in use" (someone took it in
// between), another candidate is tried. The server counts as up when it prints "Ready to accept
// connections", never after a sleep or a connection poll. Stopped (SIGTERM) by the destructor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "support/run_program.h"

namespace zt::test {

/// One redis-server for the life of the object.
class RedisServer {
 public:
  /// Where Debian installs it.
  static constexpr const char* kPath = "/usr/bin/redis-server";
  /// @return true if redis-server is installed (tests skip otherwise).
  static bool installed();
  /// Start it on 127.0.0.1 and wait until it is ready; throws std::runtime_error with its
  /// output when it cannot start.
  RedisServer();
  /// Stops it.
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// @return the port it listens on (127.0.0.1).
  uint16_t port() const { return port_; }
  /// @return everything it has logged so far.
  std::string output() const { return process_->output(); }

 private:
  std::unique_ptr<BackgroundProgram> process_;
  uint16_t port_ = 0;
};

}  // namespace zt::test
