// collective/store.h — rendezvous stores: where ranks publish and find each other's addresses.
//
// make_store(spec) turns a one-line spec into a Gloo store:
//   hash              in-memory (ranks are threads of one process; share the one instance)
//   file:DIR          files in DIR (ranks are processes on one machine, or on machines sharing
//                     DIR over a network filesystem); DIR is created if missing. Use a fresh
//                     directory (or a unique key prefix) per job: keys left by an earlier job
//                     make rendezvous fail with a clear error, never connect to stale peers.
//   redis:HOST:PORT   a redis-server reachable by every rank (ranks on different machines)
// Other schemes are added with register_store_scheme (src/launch adds tcp:HOST:PORT, a store
// served by rank 0 or by zero-launch, for the MASTER_ADDR/MASTER_PORT convention). An unknown
// scheme is an error.
// This file does not connect any ranks; GlooCollective does (gloo_collective.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <gloo/rendezvous/store.h>

namespace zt {

/// A function building a store from the part of the spec after "scheme:".
using StoreFactory = std::function<std::shared_ptr<gloo::rendezvous::Store>(const std::string& argument)>;

/// Build a store from a spec (see the file comment). @param spec e.g. "hash", "file:/tmp/job1",
/// "redis:127.0.0.1:6379". @return the store; throws zt::Error for a malformed or unknown spec.
std::shared_ptr<gloo::rendezvous::Store> make_store(const std::string& spec);

/// Add (or replace) a scheme for make_store; call before the first make_store that uses it.
/// @param scheme the name before ':' (letters only). @param factory builds the store.
void register_store_scheme(const std::string& scheme, StoreFactory factory);

/// A store that prepends "prefix/" to every key of a shared inner store and keeps it alive
/// (Gloo's PrefixStore holds only a reference). Lets several groups or jobs share one store.
/// Every wait, and every get (which waits for its key first), uses this store's timeout, so a
/// rank that never joins fails rendezvous after that timeout, not after Gloo's default 30 s.
class OwningPrefixStore : public gloo::rendezvous::Store {
 public:
  /// @param prefix key prefix (non-empty). @param inner the store to wrap.
  /// @param timeout the longest any wait or get blocks.
  OwningPrefixStore(std::string prefix, std::shared_ptr<gloo::rendezvous::Store> inner,
                    std::chrono::milliseconds timeout = gloo::rendezvous::Store::kDefaultTimeout);
  /// Set a key. @param key the key. @param data the value.
  void set(const std::string& key, const std::vector<char>& data) override;
  /// Get a key (waits for it like the inner store). @param key the key. @return the value.
  std::vector<char> get(const std::string& key) override;
  /// Wait for keys with this store's timeout. @param keys the keys.
  void wait(const std::vector<std::string>& keys) override;
  /// Wait for keys. @param keys the keys. @param timeout how long at most.
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::string join(const std::string& key) const { return prefix_ + "/" + key; }
  std::string prefix_;
  std::shared_ptr<gloo::rendezvous::Store> inner_;
  std::chrono::milliseconds timeout_;
};

}  // namespace zt
