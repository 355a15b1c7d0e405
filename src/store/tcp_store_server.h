// store/tcp_store_server.h — the key-value server behind TcpStore, run as threads inside rank 0
// or, under zero-launch, inside the launcher (launch/spawn.h).
//
// One accept thread, one thread per connected client (a job has one connection per rank, so
// threads are the simplest correct design). What the requests do (and how GET and WAIT park) is
// store_state.h. Anyone who can reach the port can connect, so the server also keeps a client
// that is not a rank from harming the job:
//   - a malformed frame or request ends that connection only (protocol.h); a message's buffer
//     grows with the bytes that arrive, not with the size the peer announces;
//   - a finished connection's thread is joined (reaped) at the next accept, so threads and
//     descriptors follow the connections that are open, not all that ever were;
//   - at most max_connections are served at once. A new connection beyond that evicts the
//     oldest one that has not yet sent a well-formed request (a rank sends one as soon as it
//     connects; a silent or garbled socket never does); if every open connection has, the new
//     one is closed at once (refused). The same happens when the process runs out of
//     descriptors, instead of accept failing in a loop.
// It does not authenticate: a client that speaks the protocol is served like a rank, may
// overwrite any key and may hold connections open. Bind it only where the job's own hosts can
// reach it (src/launch/README.md). Destroying the server shuts every connection down (idle ones
// included), so it never waits for a client; clients see "connection closed". It keeps
// everything in memory and is not persistent.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include "store/protocol.h"
#include "store/socket.h"
#include "store/store_state.h"

namespace zt::store {

/// Connections served at once by default: zero-launch and zero-train start at most 4096 ranks,
/// each holding one connection, and twice that leaves room for tools. A thread's stack is
/// reserved, not committed, so the cap costs nothing until connections exist.
inline constexpr std::size_t kDefaultMaxConnections = 8192;

/// What a server has done with its connections (counts since it started).
struct ServerStats {
  std::size_t open = 0;     ///< connections being served now (their thread has not finished)
  std::size_t threads = 0;  ///< connection threads not yet joined (open ones and finished, unreaped ones)
  uint64_t accepted = 0;    ///< connections accepted and given a thread
  uint64_t finished = 0;    ///< connections whose thread has finished (the peer left, or was dropped)
  uint64_t evicted = 0;     ///< connections shut down to make room: none had sent a well-formed request
  uint64_t refused = 0;     ///< connections closed at once: full, and every open one had sent a request
};

/// In-memory key-value server speaking the protocol of store/protocol.h.
class TcpStoreServer {
 public:
  /// Start listening and serving at once.
  /// @param bind_addr address to listen on ("" = all interfaces).
  /// @param port port to listen on; 0 lets the kernel choose (see port()).
  /// @param max_connections connections served at once (see the file comment), at least 1.
  TcpStoreServer(const std::string& bind_addr, uint16_t port, std::size_t max_connections = kDefaultMaxConnections);
  /// Start listening on an already bound socket (store/socket.h bind_tcp) and serve at once: the
  /// port stays held from the bind on, so nothing else can take it in between.
  /// @param bound a bound (or listening) stream socket.
  /// @param max_connections connections served at once (see the file comment), at least 1.
  explicit TcpStoreServer(Fd bound, std::size_t max_connections = kDefaultMaxConnections);
  /// Stops serving: closes the listener and all client connections, joins all threads.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  /// @return the port actually listened on.
  uint16_t port() const { return port_; }

  /// Block until GET/WAIT requests have parked at least `n` times in all (StoreState::wait_parked).
  /// @param n the count to reach. @param timeout how long to wait. @return true if it was reached.
  bool wait_parked(uint64_t n, std::chrono::milliseconds timeout) { return state_.wait_parked(n, timeout); }

  /// @return the connection counts now.
  ServerStats stats();

  /// Block until `reached` holds for the counts, or `timeout` passes; it is checked after every
  /// change (an accept, an eviction, a refusal, a finished connection), so tests act on what the
  /// server did instead of sleeping. @param reached the condition. @param timeout how long to wait.
  /// @return true if it held.
  bool wait_until(const std::function<bool(const ServerStats&)>& reached, std::chrono::milliseconds timeout);

 private:
  struct Connection {
    int fd = -1;            // closed (and -1) once finished
    std::string peer;       // for errors
    bool proven = false;    // has sent a well-formed request
    bool evicted = false;   // shut down to make room
    bool finished = false;  // its thread is done with it
    std::thread worker;
  };

  void accept_loop();
  void admit(int fd, std::string peer);
  void serve(Connection& c);
  // Shut the oldest unproven connection down; false if there is none. Caller holds mu_.
  bool evict_one();
  // Take the finished connections out of the list; their threads are joined by the caller,
  // outside mu_. Caller holds mu_.
  std::list<Connection> take_finished();
  ServerStats stats_locked() const;

  Fd listener_;
  uint16_t port_ = 0;
  std::size_t max_connections_;
  int wake_pipe_[2] = {-1, -1};  // written once by the destructor to stop accept_loop
  std::thread acceptor_;
  StoreState state_;

  std::mutex mu_;                    // guards everything below
  std::condition_variable changed_;  // signalled whenever a count in ServerStats changes
  bool stopping_ = false;
  std::list<Connection> connections_;  // in accept order; stable addresses for the threads
  ServerStats counts_;                 // accepted, finished, evicted, refused (open, threads computed)
};

}  // namespace zt::store
