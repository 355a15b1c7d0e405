// launch/open_store.cc — ZT_STORE / MASTER_ADDR selection to an open Gloo store (open_store.h).
#include "launch/open_store.h"

#include <filesystem>

#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/redis_store.h>

#include "core/check.h"
#include "launch/store_spec.h"

namespace zt::launch {

std::shared_ptr<gloo::rendezvous::Store> open_store(const RankEnv& env, std::chrono::milliseconds timeout) {
  const StoreSpec spec = select_store(env);
  using Kind = StoreSpec::Kind;
  switch (spec.kind) {
    case Kind::kFile: {
      // Gloo's FileStore needs the directory to exist; every rank may race to create it
      std::error_code ec;
      std::filesystem::create_directories(spec.path, ec);
      ZT_CHECK(std::filesystem::is_directory(spec.path), "store directory ", spec.path,
               " cannot be created: ", ec.message());
      return std::make_shared<gloo::rendezvous::FileStore>(spec.path);
    }
    case Kind::kRedis:
      return std::make_shared<gloo::rendezvous::RedisStore>(spec.host, spec.port);
    case Kind::kTcp:
      return std::shared_ptr<gloo::rendezvous::Store>(open_tcp_store(spec, env.rank, timeout));
    case Kind::kNone:
      break;
  }
  ZT_FAIL("no rendezvous store: set ZT_STORE=file:DIR|redis:HOST:PORT|tcp, or MASTER_ADDR and MASTER_PORT");
}

}  // namespace zt::launch
