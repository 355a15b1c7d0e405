// launch/open_store.cc — ZT_STORE / MASTER_ADDR selection to an open Gloo store (open_store.h).
#include "launch/open_store.h"

#include <string>

#include "collective/store.h"
#include "core/check.h"
#include "launch/store_spec.h"

namespace zt::launch {

std::shared_ptr<gloo::rendezvous::Store> open_store(const RankEnv& env, std::chrono::milliseconds timeout) {
  const StoreSpec spec = select_store(env);
  using Kind = StoreSpec::Kind;
  switch (spec.kind) {
    // File and Redis through make_store: it creates the file store's directory, and its Redis
    // store does not leak a reply per refused key as Gloo's own does (collective/store.cc)
    case Kind::kFile:
      return make_store("file:" + spec.path);
    case Kind::kRedis:
      return make_store("redis:" + spec.host + ":" + std::to_string(spec.port));
    case Kind::kTcp:
      return std::shared_ptr<gloo::rendezvous::Store>(open_tcp_store(spec, env.rank, timeout));
    case Kind::kNone:
      break;
  }
  ZT_FAIL("rank ", env.rank, " of ", env.world_size,
          ": no rendezvous store (set MASTER_ADDR and MASTER_PORT, or ZT_STORE=file:DIR|redis:HOST:PORT|tcp)");
}

}  // namespace zt::launch
