// collective/store.h — rendezvous stores: where ranks publish and find each other's addresses.
//
// make_store(spec) turns a one-line spec into a Gloo store:
//   hash              in-memory (ranks are threads of one process; share the one instance)
//   file:DIR          files in DIR (ranks are processes on one machine, or on machines sharing
//                     DIR over a network filesystem); DIR is created if missing. Use a fresh
//                     directory (or a unique key prefix) per job: keys left by an earlier job
//                     make rendezvous fail with a clear error, never connect to stale peers.
//   redis:HOST:PORT   a redis-server reachable by every rank (ranks on different machines)
// An unknown scheme is an error. (The TCP store of the MASTER_ADDR/MASTER_PORT convention is
// not a scheme here: src/launch opens it itself, launch/store_spec.h.)
// Also here: the checks and the first key with which both backends (GlooCollective,
// NcclCollective) begin their rendezvous, so that both say the same. This file does not connect
// any ranks; the backends do (gloo_collective.h, nccl/nccl_collective.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <gloo/rendezvous/store.h>

namespace zt {

/// Build a store from a spec (see the file comment). @param spec e.g. "hash", "file:/tmp/job1",
/// "redis:127.0.0.1:6379". @return the store; throws zt::Error for a malformed or unknown spec.
std::shared_ptr<gloo::rendezvous::Store> make_store(const std::string& spec);

/// A backend's checks of its options before rendezvous: size >= 1, rank in [0, size), a positive
/// timeout; a zt::Error starting "backend: " otherwise. @param backend the class, for messages.
/// @param rank this rank. @param size the group size. @param timeout the group's timeout.
void check_rendezvous_options(const char* backend, int rank, int size, std::chrono::milliseconds timeout);

/// A backend's first step of rendezvous: set this rank's own key. A store that holds it already
/// belongs to an earlier job (FileStore and RedisStore refuse to overwrite), whose stale addresses
/// no rank may meet: a zt::Error saying so. @param store the group's prefixed store.
/// @param key this rank's key. @param rank this rank. @param prefix the group's key prefix.
void claim_rendezvous_key(gloo::rendezvous::Store& store, const std::string& key, int rank, const std::string& prefix);

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
