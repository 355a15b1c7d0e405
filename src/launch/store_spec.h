// launch/store_spec.h — which rendezvous store a job uses (the ZT_STORE setting, or the TCP store
// at MASTER_ADDR:MASTER_PORT by default), and the one open_store every program and probe opens it
// with, so that all of them meet their peers the same way.
//
//   ZT_STORE=file:DIR            Gloo FileStore in DIR (one machine, or a shared filesystem)
//   ZT_STORE=redis:HOST[:PORT]   Gloo RedisStore against a redis-server (port 6379 by default)
//   ZT_STORE=tcp                 the TCP store (store/tcp_store.h) at MASTER_ADDR:MASTER_PORT
//   ZT_STORE=tcp:HOST:PORT       the TCP store at an explicit address
// Unset: tcp when MASTER_ADDR and MASTER_PORT are both set, otherwise no store (enough for a
// world of one). Who serves a TCP store: the launcher, when ZT_LAUNCHER_STORE names the same
// address (zero-launch serves MASTER_ADDR:MASTER_PORT itself), otherwise rank 0. This file is not
// a store implementation (Gloo's FileStore/RedisStore through collective/store.h's make_store, and
// store/tcp_store.h, are).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <gloo/rendezvous/store.h>

#include "launch/rank_env.h"

namespace zt::launch {

/// A parsed store selection.
struct StoreSpec {
  /// Which kind of store.
  enum class Kind {
    kNone,   ///< no store configured
    kFile,   ///< gloo::rendezvous::FileStore(path)
    kRedis,  ///< gloo::rendezvous::RedisStore(host, port)
    kTcp     ///< zt::store::TcpStore at host:port, served by the launcher or by rank 0
  };
  Kind kind = Kind::kNone;  ///< the kind
  std::string path;         ///< directory (kFile)
  std::string host;         ///< server host (kRedis, kTcp)
  uint16_t port = 0;        ///< server port (kRedis, kTcp)
  /// kTcp: the launcher already serves this address (ZT_LAUNCHER_STORE), so no rank serves it.
  bool launcher_serves = false;
  /// @return the selection written back in ZT_STORE syntax ("none" for kNone).
  std::string text() const;
};

/// Parse a ZT_STORE value; `tcp` alone takes MASTER_ADDR/MASTER_PORT from `env` (both must be
/// set). A TCP address equal to env.launcher_store is marked launcher_serves. Anything else is a
/// zt::Error listing the accepted forms.
/// @param text the ZT_STORE value. @param env provides MASTER_ADDR and MASTER_PORT.
/// @return the selection.
StoreSpec parse_store_spec(const std::string& text, const RankEnv& env);

/// The job's store: parse_store_spec(env.store) when ZT_STORE is set, else tcp when MASTER_ADDR
/// and MASTER_PORT are both set, else kNone. Only one of the two MASTER_ variables is a zt::Error.
/// @param env the environment's description. @return the selection.
StoreSpec select_store(const RankEnv& env);

/// Open the store select_store(env) names; zt::Error when none is configured. A TCP store is
/// connected to by every rank, rank 0 included; rank 0 also serves it (binding host:port) unless
/// the launcher does (StoreSpec::launcher_serves).
/// @param env this rank's environment. @param timeout connect and get/wait limit (tcp store).
/// @return the store (for tcp on rank 0 with no launcher serving it, it also serves: keep it
/// alive until every rank is done).
std::shared_ptr<gloo::rendezvous::Store> open_store(const RankEnv& env, std::chrono::milliseconds timeout);

}  // namespace zt::launch
