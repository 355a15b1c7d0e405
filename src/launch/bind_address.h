// launch/bind_address.h — which local address a rank's transport binds, so that its peers can
// reach it.
//
// Gloo's TCP transport advertises (through the rendezvous store) the address its device is bound
// to, and every peer connects there. Bound to 127.0.0.1, a rank tells a peer on another machine
// to connect to *that peer's own* loopback: "connect [127.0.0.1]:PORT: Connection refused". So the
// default is the address the kernel would use to reach the job's meeting point (MASTER_ADDR, or
// the store's host): the interface that routes there, which is loopback exactly when the meeting
// point is on this machine. The ecosystem's overrides win, in this order: an explicit address
// (zero-train --local-addr, torchrun's name for it), an interface name (--socket-ifname, then
// the GLOO_SOCKET_IFNAME variable PyTorch reads), then the route.
// This file only chooses; the transport is collective/gloo_collective.h.
#pragma once

#include <string>

namespace zt::launch {

/// The chosen address and how it was chosen (quoted in rendezvous errors).
struct BindChoice {
  std::string address;  ///< numeric IPv4 or IPv6 address to bind
  std::string reason;   ///< e.g. "the route to MASTER_ADDR 10.0.0.1 (interface veth1)"
};

/// Decide the bind address (see the file comment for the order).
/// @param local_addr an explicit address ("" if none). @param ifname an interface name ("" if
/// none). @param env_ifname the value of GLOO_SOCKET_IFNAME ("" if unset).
/// @param meeting_host the host every rank reaches (MASTER_ADDR or the store's), "" if none:
/// then the job is on one machine and the address is loopback.
/// @return the choice.
BindChoice choose_bind_address(const std::string& local_addr, const std::string& ifname, const std::string& env_ifname,
                               const std::string& meeting_host);

}  // namespace zt::launch
