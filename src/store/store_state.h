// store/store_state.h — the TCP store's keys and values and what its three requests do to them,
// without any socket: TcpStoreServer keeps one and calls handle() from each client's thread; the
// request fuzzer (tests/fuzz) calls it directly. A GET or WAIT for a key that is not there yet
// parks on a condition variable until another request sets it or the request's own timeout
// passes; the reply then names the missing key. Not the wire format (protocol.h) and not the
// connections (tcp_store_server.h); everything is in memory, nothing is persistent.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "store/protocol.h"
#include "store/socket.h"

namespace zt::store {

/// The store's data and the effect of one request on it.
class StoreState {
 public:
  /// The reply to one request: 'K' for SET and a WAIT that saw every key, 'V' value for a GET,
  /// 'T' key when the timeout passed with that key missing. Blocks up to the request's timeout;
  /// after stop() a parked request fails with a zt::Error. @param r a checked request.
  /// @return the reply.
  Message handle(const Request& r);

  /// Block until GET/WAIT requests have parked at least `n` times in all, waiting for a key that
  /// was missing (a parked request that wakes and still misses a key parks again and counts
  /// again), or `timeout` passes. It lets a caller act only once a request is known to be
  /// blocked (tests do, instead of sleeping). @param n the count to reach.
  /// @param timeout how long to wait. @return true if the count was reached.
  bool wait_parked(uint64_t n, std::chrono::milliseconds timeout);

  /// Wake every parked request and make it, and any later one that would park, fail.
  void stop();

 private:
  // Wait until every key exists or the deadline passes; returns the first missing key ("" if
  // none). Caller holds `lock`.
  std::string wait_for(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys, Deadline deadline);

  std::mutex mu_;  // guards everything below
  std::condition_variable changed_;
  std::condition_variable parked_cv_;  // signalled when parked_ grows
  uint64_t parked_ = 0;                // times a GET/WAIT started waiting for a missing key
  std::map<std::string, std::string> data_;
  bool stopping_ = false;
};

}  // namespace zt::store
