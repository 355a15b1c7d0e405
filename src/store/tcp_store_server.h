// store/tcp_store_server.h — the key-value server behind TcpStore, run as threads inside rank 0.
//
// One accept thread, one thread per connected client (a job has a handful of ranks, so threads
// are the simplest correct design). What the requests do (and how GET and WAIT park) is
// store_state.h. Destroying the server closes every connection and joins every thread; clients
// see "connection closed". It keeps everything in memory and is not persistent.
// Runs inside rank 0 or, under zero-launch, inside the launcher (launch/spawn.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/protocol.h"
#include "store/socket.h"
#include "store/store_state.h"

namespace zt::store {

/// In-memory key-value server speaking the protocol of store/protocol.h.
class TcpStoreServer {
 public:
  /// Start listening and serving at once.
  /// @param bind_addr address to listen on ("" = all interfaces).
  /// @param port port to listen on; 0 lets the kernel choose (see port()).
  TcpStoreServer(const std::string& bind_addr, uint16_t port);
  /// Start listening on an already bound socket (store/socket.h bind_tcp) and serve at once: the
  /// port stays held from the bind on, so nothing else can take it in between.
  /// @param bound a bound (or listening) stream socket.
  explicit TcpStoreServer(Fd bound);
  /// Stops serving: closes the listener and all client connections, joins all threads.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  /// @return the port actually listened on.
  uint16_t port() const { return port_; }

  /// Block until GET/WAIT requests have parked at least `n` times in all, waiting for a key that
  /// was missing (a parked request that wakes and still misses a key parks again and counts
  /// again), or `timeout` passes. It lets a caller act only once a request is known to be
  /// blocked in the server (tests do, instead of sleeping). @param n the count to reach.
  /// @param timeout how long to wait. @return true if the count was reached.
  bool wait_parked(uint64_t n, std::chrono::milliseconds timeout) { return state_.wait_parked(n, timeout); }

 private:
  void accept_loop();
  void serve(int fd, std::string peer);

  Fd listener_;
  uint16_t port_ = 0;
  int wake_pipe_[2] = {-1, -1};  // written once by the destructor to stop accept_loop
  std::thread acceptor_;

  StoreState state_;

  std::mutex mu_;  // guards everything below
  bool stopping_ = false;
  std::set<int> open_fds_;  // client sockets still open (shut down by the destructor)
  std::vector<std::thread> workers_;
};

}  // namespace zt::store
