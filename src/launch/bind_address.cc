// launch/bind_address.cc — see bind_address.h.
#include "launch/bind_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "core/check.h"
#include "store/socket.h"

namespace zt::launch {
namespace {

std::string numeric(const sockaddr* sa) {
  char host[NI_MAXHOST];
  const socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  const int rc = ::getnameinfo(sa, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
  ZT_CHECK(rc == 0, "cannot print a socket address: ", gai_strerror(rc));
  std::string s = host;
  if (const auto pct = s.find('%'); pct != std::string::npos) s.resize(pct);  // fe80::1%eth0
  return s;
}

// Every interface with an address, for error messages ("lo, eth0, veth1").
std::string interface_list() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "(getifaddrs failed)";
  std::set<std::string> names;
  for (ifaddrs* i = list; i; i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
      names.insert(i->ifa_name);
  ::freeifaddrs(list);
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// The local address the kernel picks as the source when talking to `host`: a UDP socket is
// "connected" there, which sends nothing, and its local address is read back.
std::string address_toward(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), "9", &hints, &res);
  ZT_CHECK(rc == 0, "cannot resolve '", host, "' to choose the local address that reaches it: ", gai_strerror(rc));
  std::string error = "no address";
  std::string found;
  for (addrinfo* a = res; a && found.empty(); a = a->ai_next) {
    store::Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0));
    if (fd.get() < 0 || ::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      error = std::strerror(errno);
      continue;
    }
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) {
      error = std::strerror(errno);
      continue;
    }
    found = numeric(reinterpret_cast<const sockaddr*>(&local));
  }
  ::freeaddrinfo(res);
  ZT_CHECK(!found.empty(), "no route from this machine to '", host, "' (", error,
           "): set GLOO_SOCKET_IFNAME or --local-addr to the interface the job's machines share");
  return found;
}

// The first IPv4 address of a network interface (else its first IPv6 address); a zt::Error
// listing the interfaces that exist when it has none or does not exist.
std::string interface_address(const std::string& ifname) {
  ifaddrs* list = nullptr;
  ZT_CHECK(::getifaddrs(&list) == 0, "getifaddrs: ", std::strerror(errno));
  std::string v4, v6;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || ifname != i->ifa_name) continue;
    if (i->ifa_addr->sa_family == AF_INET && v4.empty()) v4 = numeric(i->ifa_addr);
    if (i->ifa_addr->sa_family == AF_INET6 && v6.empty()) v6 = numeric(i->ifa_addr);
  }
  ::freeifaddrs(list);
  ZT_CHECK(!v4.empty() || !v6.empty(), "network interface '", ifname,
           "' does not exist or has no address (interfaces with an address: ", interface_list(), ")");
  return v4.empty() ? v6 : v4;
}

// The name of the interface that holds a local (numeric) address; "" if none does.
std::string interface_of(const std::string& address) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* i = list; i && name.empty(); i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6) &&
        numeric(i->ifa_addr) == address)
      name = i->ifa_name;
  ::freeifaddrs(list);
  return name;
}

}  // namespace

BindChoice choose_bind_address(const std::string& local_addr, const std::string& ifname, const std::string& env_ifname,
                               const std::string& meeting_host) {
  if (!local_addr.empty()) return {local_addr, "--local-addr " + local_addr};
  const std::string name = !ifname.empty() ? ifname : env_ifname;
  if (!name.empty()) {
    // PyTorch accepts a comma-separated list (one Gloo device per interface); a rank here has one.
    ZT_CHECK(name.find(',') == std::string::npos, "GLOO_SOCKET_IFNAME/--socket-ifname names several interfaces ('",
             name, "'); a rank of this project binds one: name one");
    const std::string how = !ifname.empty() ? "--socket-ifname " : "GLOO_SOCKET_IFNAME=";
    return {interface_address(name), how + name};
  }
  if (meeting_host.empty()) return {"127.0.0.1", "loopback (no MASTER_ADDR: one machine)"};
  const std::string addr = address_toward(meeting_host);
  const std::string dev = interface_of(addr);
  return {addr, "the route to " + meeting_host + (dev.empty() ? "" : " (interface " + dev + ")")};
}

}  // namespace zt::launch
