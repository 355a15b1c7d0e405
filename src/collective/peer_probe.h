// collective/peer_probe.h — can every rank reach every other one, and when a collective fails,
// which peer is gone?
//
// Two questions that Gloo's own errors do not answer well:
//  - at start-up: Gloo's connectFullMesh publishes each rank's bound address and connects the
//    pairs; when an address cannot be reached from a peer (a rank bound to loopback on a
//    multi-machine job, a firewall), one side gets "connect [...]: Connection refused" and the
//    other, in the Gloo build Debian ships, waits past its own timeout;
//  - during the job: a collective that times out inside Gloo says "Timed out waiting ... for recv
//    operation", not which peer stopped answering (a partitioned network, a dead machine, a
//    stalled process all look the same).
// A PeerProbe answers both with a side channel of its own. Every rank listens on its bind
// address, publishes "address port how-it-was-chosen" in the rendezvous store, greets every peer
// (a 16-byte hello: magic, from, to, a tag of the job's key prefix, so that a stray service on a
// wrong address is not mistaken for a peer) and waits for every peer's greeting: any failure is
// one line naming the peer, the address and the reason, within the timeout. Then a thread keeps
// answering greetings for the life of the probe, so that after a failed collective, diagnose()
// greets the peers again, all at once with a short deadline, and tells "answers" from "refused"
// (the process is gone), "no answer" (unreachable: a partition or a dead machine) and "accepts but
// does not answer" (stalled).
// It is not a transport and carries no data: Gloo's connections are separate.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "store/socket.h"

namespace zt {

/// The start-up reachability check and the failure-time diagnosis (see the file comment).
class PeerProbe {
 public:
  /// Run the reachability check with the group's rendezvous store (already prefixed), then keep
  /// answering. A peer that never publishes its address is a zt::PeerFailed; a peer that cannot
  /// be reached, or never reaches this rank, a zt::Error naming it.
  /// @param store the rendezvous store. @param tag text every rank of the job shares (its key
  /// prefix). @param rank this rank. @param size the group size. @param bind_address the address
  /// this rank's transport binds. @param how how that address was chosen (for messages).
  /// @param timeout the check's deadline.
  PeerProbe(gloo::rendezvous::Store& store, const std::string& tag, int rank, int size, std::string bind_address,
            std::string how, std::chrono::milliseconds timeout);
  ~PeerProbe();
  PeerProbe(const PeerProbe&) = delete;
  PeerProbe& operator=(const PeerProbe&) = delete;

  /// Greet `peers` again, in parallel, each within `budget`, and describe the ones that do not
  /// answer: "rank 2 at 10.0.0.2:41000: no answer within 3000 ms (unreachable: ...)"; the ones
  /// that answer are listed together at the end.
  /// @param peers ranks of this probe's group. @param budget the longest wait.
  /// @return one line.
  std::string diagnose(const std::vector<int>& peers, std::chrono::milliseconds budget) const;

 private:
  struct Peer {
    std::string host, how;
    uint16_t port = 0;
  };
  void answer_loop();
  void stop();
  std::string greet(int peer, store::Deadline deadline) const;  // "" when the peer answers

  int rank_, size_;
  uint32_t tag_;
  std::string bind_address_, how_;
  std::vector<Peer> peers_;  // indexed by rank; this rank's own entry too
  store::Fd listener_, stop_;
  struct Greeted;  // the greetings received while the check waits for them
  std::unique_ptr<Greeted> greeted_;
  std::thread answering_;
};

}  // namespace zt
