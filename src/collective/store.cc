// collective/store.cc — make_store's schemes, the backends' first rendezvous steps and
// OwningPrefixStore (see store.h).
#include "collective/store.h"

#include <filesystem>

#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/hash_store.h>
// Debian installs hiredis.h under hiredis/; Gloo's header includes it either way with this macro.
#define HIREDIS_NESTED_INCLUDE 1
#include <gloo/rendezvous/redis_store.h>

#include "core/check.h"

namespace zt {
namespace {

std::shared_ptr<gloo::rendezvous::Store> make_file_store(const std::string& dir) {
  ZT_CHECK(!dir.empty(), "store spec file:DIR needs a directory");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  ZT_CHECK(!ec, "store directory ", dir, ": ", ec.message());
  return std::make_shared<gloo::rendezvous::FileStore>(dir);
}

// Gloo's RedisStore::set throws "already set" before it frees hiredis's reply, so every refused
// key leaks that reply. A refused key is not rare here: it is how the backends' rendezvous
// recognises the keys of an earlier job (claim_rendezvous_key), on purpose. Asking first keeps
// that refusal off Gloo's leaking path; a key set by someone else between the two requests still
// reaches it, and is still refused.
class RefusingRedisStore : public gloo::rendezvous::RedisStore {
 public:
  using RedisStore::RedisStore;
  void set(const std::string& key, const std::vector<char>& data) override {
    ZT_CHECK(!check({key}), "Key '", key, "' already set");
    RedisStore::set(key, data);
  }
};

std::shared_ptr<gloo::rendezvous::Store> make_redis_store(const std::string& hostport) {
  const auto colon = hostport.rfind(':');
  ZT_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < hostport.size(),
           "store spec redis:HOST:PORT expected, got redis:", hostport);
  const std::string host = hostport.substr(0, colon);
  int port = 0;
  try {
    std::size_t used = 0;
    port = std::stoi(hostport.substr(colon + 1), &used);
    ZT_CHECK(used == hostport.size() - colon - 1, "");
  } catch (const std::exception&) {
    ZT_FAIL("store spec redis:HOST:PORT: bad port '", hostport.substr(colon + 1), "'");
  }
  ZT_CHECK(port > 0 && port < 65536, "store spec redis: port ", port, " out of range");
  try {
    return std::make_shared<RefusingRedisStore>(host, port);
  } catch (const std::exception& e) {
    ZT_FAIL("cannot connect to redis store at ", host, ":", port, ": ", e.what());
  }
}

}  // namespace

std::shared_ptr<gloo::rendezvous::Store> make_store(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string scheme = spec.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (scheme == "hash") return std::make_shared<gloo::rendezvous::HashStore>();
  if (scheme == "file") return make_file_store(argument);
  if (scheme == "redis") return make_redis_store(argument);
  ZT_FAIL("unknown store spec '", spec, "' (schemes: file, hash, redis)");
}

void check_rendezvous_options(const char* backend, int rank, int size, std::chrono::milliseconds timeout) {
  ZT_CHECK(size >= 1, backend, ": world size must be >= 1, got ", size);
  ZT_CHECK(rank >= 0 && rank < size, backend, ": rank ", rank, " out of range for world size ", size);
  ZT_CHECK(timeout.count() > 0, backend, ": timeout must be positive, got ", timeout.count(), " ms");
}

void claim_rendezvous_key(gloo::rendezvous::Store& store, const std::string& key, int rank, const std::string& prefix) {
  const std::string who = std::to_string(rank);
  try {
    store.set(key, std::vector<char>(who.begin(), who.end()));
  } catch (const std::exception& e) {
    ZT_FAIL("rendezvous: the store already holds rank ", rank, "'s keys under prefix '", prefix,
            "' (left by an earlier job?): use a fresh store directory or a unique prefix [", e.what(), "]");
  }
}

OwningPrefixStore::OwningPrefixStore(std::string prefix, std::shared_ptr<gloo::rendezvous::Store> inner,
                                     std::chrono::milliseconds timeout)
    : prefix_(std::move(prefix)), inner_(std::move(inner)), timeout_(timeout) {
  ZT_CHECK(!prefix_.empty(), "OwningPrefixStore: empty prefix");
  ZT_CHECK(inner_ != nullptr, "OwningPrefixStore: no inner store");
}

void OwningPrefixStore::set(const std::string& key, const std::vector<char>& data) { inner_->set(join(key), data); }

std::vector<char> OwningPrefixStore::get(const std::string& key) {
  inner_->wait({join(key)}, timeout_);
  return inner_->get(join(key));
}

void OwningPrefixStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void OwningPrefixStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  std::vector<std::string> joined;
  joined.reserve(keys.size());
  for (const auto& k : keys) joined.push_back(join(k));
  inner_->wait(joined, timeout);
}

}  // namespace zt
