// store/tcp_store.h — a Gloo rendezvous store over TCP: every rank is a client of one small
// server (the torchrun MASTER_ADDR:MASTER_PORT convention, which Debian's Gloo cannot serve: it
// ships only Hash, File, Prefix and Redis stores). The server runs as threads either inside the
// launcher (zero-launch and --world-size N bind it before any rank starts, so every rank only
// connects) or, when no launcher serves it, inside rank 0 (TcpStoreOptions::serve).
//
// get() and wait() block until the keys exist or the timeout passes; connecting retries until the
// timeout, so ranks may start in any order. It is not a general database: values live only as
// long as the server, so a serving rank 0 must keep its TcpStore alive until every rank has
// finished rendezvous (the usual way: the Collective that used it for rendezvous owns it for its
// whole life).
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/socket.h"
#include "store/tcp_store_server.h"

namespace zt::store {

/// How to reach (and, for rank 0, serve) a TCP store.
struct TcpStoreOptions {
  std::string host = "127.0.0.1";  ///< address clients connect to, and the server listens on (MASTER_ADDR)
  uint16_t port = 0;               ///< port (MASTER_PORT); 0 only with serve=true: any free port
  bool serve = false;              ///< true on exactly one rank (rank 0): run the server here
  /// Limit for connecting and the default limit for get()/wait() (Gloo's own default is 30 s).
  std::chrono::milliseconds timeout{30000};
  /// Called after each failed connection attempt while connecting (may be empty).
  ConnectRetryHook on_connect_retry;
};

/// gloo::rendezvous::Store implementation backed by TcpStoreServer.
class TcpStore : public gloo::rendezvous::Store {
 public:
  /// Start the server (if options.serve) and connect to it. Throws zt::Error if the port is
  /// taken (server) or nothing answers within options.timeout (client).
  /// @param options where the store is and whether to serve it.
  explicit TcpStore(TcpStoreOptions options);
  /// Disconnects; on the serving rank also stops the server (other ranks' later calls then fail
  /// with "connection closed").
  ~TcpStore() override;

  /// Set a key (overwrites an existing value). @param key the key. @param data its value.
  void set(const std::string& key, const std::vector<char>& data) override;
  /// Value of a key, waiting up to the default timeout for it to be set; a zt::Error naming the
  /// key and the address otherwise. @param key the key. @return its value.
  std::vector<char> get(const std::string& key) override;
  /// Wait until every key exists, up to the default timeout. @param keys the keys.
  void wait(const std::vector<std::string>& keys) override;
  /// Wait until every key exists; a zt::Error naming a missing key after `timeout`.
  /// @param keys the keys. @param timeout the limit for this call.
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  /// Value of a key with an explicit limit. @param key the key. @param timeout the limit.
  /// @return its value.
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout);

  /// @return the port the store is reached at (the chosen one when port 0 was asked for).
  uint16_t port() const { return port_; }
  /// The server this object runs (a zt::Error unless options.serve was set). @return the server.
  TcpStoreServer& server();

 private:
  Message call(const Message& request, std::chrono::milliseconds timeout, const char* what);

  TcpStoreOptions options_;
  std::unique_ptr<TcpStoreServer> server_;
  uint16_t port_ = 0;
  std::string address_;
  Fd conn_;
  std::mutex call_mu_;  // one request/reply in flight per connection
};

}  // namespace zt::store
