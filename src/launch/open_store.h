// launch/open_store.h — the rendezvous store a launched rank should use, opened from its
// environment: ZT_STORE=file:DIR | redis:HOST:PORT | tcp (MASTER_ADDR:MASTER_PORT, served by
// the launcher, or by rank 0 when no launcher does). One function so that every program and probe meets its peers the
// same way; it is not a store implementation (Gloo's FileStore/RedisStore and store/tcp_store.h are).
#pragma once

#include <chrono>
#include <memory>

#include <gloo/rendezvous/store.h>

#include "launch/rank_env.h"

namespace zt::launch {

/// Open the store select_store(env) names. zt::Error when none is configured.
/// @param env this rank's environment. @param timeout connect and get/wait limit (tcp store).
/// @return the store (for tcp on rank 0 with no launcher serving it, it also serves: keep it
/// alive until every rank is done).
std::shared_ptr<gloo::rendezvous::Store> open_store(const RankEnv& env, std::chrono::milliseconds timeout);

}  // namespace zt::launch
