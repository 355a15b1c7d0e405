// store/tcp_store_server.h — the key-value server behind TcpStore, run as threads inside rank 0.
//
// One accept thread, one thread per connected client (a job has a handful of ranks, so threads
// are the simplest correct design). A GET or WAIT for a key that is not there yet is parked on a
// condition variable until another client sets it or the request's own timeout passes; the reply
// then says which key was missing. Destroying the server closes every connection and joins every
// thread; clients see "connection closed". It keeps everything in memory and is not persistent.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/protocol.h"
#include "store/socket.h"

namespace zt::store {

/// In-memory key-value server speaking the protocol of store/protocol.h.
class TcpStoreServer {
 public:
  /// Start listening and serving at once.
  /// @param bind_addr address to listen on ("" = all interfaces).
  /// @param port port to listen on; 0 lets the kernel choose (see port()).
  TcpStoreServer(const std::string& bind_addr, uint16_t port);
  /// Stops serving: closes the listener and all client connections, joins all threads.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  /// @return the port actually listened on.
  uint16_t port() const { return port_; }

 private:
  void accept_loop();
  void serve(int fd, std::string peer);
  Message handle(const Message& request);
  // Wait until every key exists or the deadline passes; returns the first missing key ("" if
  // none). Caller holds `lock`.
  std::string wait_for(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                       Deadline deadline);

  Fd listener_;
  uint16_t port_ = 0;
  int wake_pipe_[2] = {-1, -1};  // written once by the destructor to stop accept_loop
  std::thread acceptor_;

  std::mutex mu_;  // guards everything below
  std::condition_variable changed_;
  std::map<std::string, std::string> data_;
  bool stopping_ = false;
  std::set<int> open_fds_;  // client sockets still open (shut down by the destructor)
  std::vector<std::thread> workers_;
};

}  // namespace zt::store
