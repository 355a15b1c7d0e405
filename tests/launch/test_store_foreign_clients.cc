// TCP store with foreign clients: sockets that are not ranks connect beside real TcpStore clients
// and send garbage, a 4 GiB length, a truncated frame, nothing at all, or simply come in great
// numbers. The ranks' set/get/wait must keep working, the server's memory must follow the bytes
// it received rather than the sizes it was told, its threads must not pile up, and destroying it
// must end every connection, idle ones included. Every step is ordered by what the server reports
// (TcpStoreServer::stats, wait_until, wait_parked) or by a blocking read, never by sleeping; the
// limits given to those waits only turn a hang into a failure.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <cstdint>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/check.h"
#include "store/protocol.h"
#include "store/socket.h"
#include "store/tcp_store.h"
#include "store/tcp_store_server.h"
#include "store_bytes.h"

using Catch::Matchers::Contains;
using zt::store::Fd;
using zt::store::ServerStats;
using zt::store::TcpStore;
using zt::store::TcpStoreOptions;
using zt::store::TcpStoreServer;
using ms = std::chrono::milliseconds;
using zt_test::bytes;
using zt_test::kHang;
using zt_test::text;

namespace {

TcpStoreOptions client_of(uint16_t port) {
  TcpStoreOptions o;
  o.port = port;
  o.timeout = kHang;
  return o;
}

// A raw socket to the server, as a program that is not a rank would open it. Reads give up
// after kHang, so a server that never closes it fails the test instead of hanging it.
Fd foreign(uint16_t port) {
  Fd fd = zt::store::connect_tcp_retry("127.0.0.1", port, kHang);
  timeval limit{static_cast<time_t>(kHang.count() / 1000), 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

void send_bytes(const Fd& fd, const std::string& b) { zt::store::write_all(fd.get(), b.data(), b.size(), "server"); }

// Block until the server has closed the connection: true for an orderly close or a reset (a
// close with our bytes unread), false if the read timed out or data came instead.
bool closed_by_server(const Fd& fd) {
  char c;
  const ssize_t n = ::recv(fd.get(), &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

std::string u32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// Peak resident memory of this process so far (VmHWM), in bytes.
std::size_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  std::size_t kib = 0;
  while (status >> key)
    if (key == "VmHWM:") {
      status >> kib;
      break;
    }
  return kib * 1024;
}

}  // namespace

TEST_CASE("receive_message: memory follows the bytes that arrive, not the size announced", "[ch5][store]") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  Fd reader(pair[0]), writer(pair[1]);
  // 200 MiB announced (under the 256 MiB limit, so the size itself is not refused), 10 sent.
  send_bytes(writer, u32(200u << 20) + "S123456789");
  ::shutdown(writer.get(), SHUT_WR);
  const std::size_t before = peak_rss_bytes();
  zt::store::Message m;
  CHECK_THROWS_WITH(zt::store::receive_message(reader.get(), zt::store::Deadline::max(), "peer", m),
                    Contains("closed in the middle of a message"));
  // Reading 200 MiB into a buffer sized up front would have raised the peak by 200 MiB.
  CHECK(peak_rss_bytes() - before < (std::size_t{32} << 20));
}

TEST_CASE("foreign clients sending garbage, a 4 GiB length, half a frame or nothing leave the ranks served",
          "[ch5][store]") {
  auto server = std::make_unique<TcpStore>([] {
    TcpStoreOptions o;
    o.serve = true;
    o.timeout = kHang;
    return o;
  }());
  const uint16_t port = server->port();
  TcpStoreServer& s = server->server();

  Fd silent = foreign(port);  // connects and never sends a byte
  Fd garbage = foreign(port);
  send_bytes(garbage, u32(5) + "Zzzzz");  // a well-framed message with an unknown op
  Fd huge = foreign(port);
  send_bytes(huge, "\xff\xff\xff\xff");  // announces 4 GiB
  Fd cut = foreign(port);
  send_bytes(cut, u32(100) + "S012345678");  // 10 of 100 bytes, then the end of the stream
  ::shutdown(cut.get(), SHUT_WR);
  Fd hanging = foreign(port);
  send_bytes(hanging, u32(200u << 20) + "S012345678");  // 10 of 200 MiB, and the socket stays open

  // The three whose stream is over or wrong are dropped; the silent and the hanging one are kept.
  CHECK(closed_by_server(garbage));
  CHECK(closed_by_server(huge));
  CHECK(closed_by_server(cut));
  REQUIRE(s.wait_until([](const ServerStats& st) { return st.finished >= 3; }, kHang));

  // The ranks meanwhile: set, get, and a wait that parks until another rank sets its key.
  {
    TcpStore a(client_of(port)), b(client_of(port));
    a.set("rank/0", bytes("addr-0"));
    CHECK(text(b.get("rank/0")) == "addr-0");
    auto waiting = std::async(std::launch::async, [&] {
      a.wait({"rank/1"}, kHang);
      return text(a.get("rank/1"));
    });
    REQUIRE(s.wait_parked(1, kHang));
    b.set("rank/1", bytes("addr-1"));
    CHECK(waiting.get() == "addr-1");
  }
  // the three dropped and the two ranks, which have left
  REQUIRE(s.wait_until([](const ServerStats& t) { return t.finished == 5; }, kHang));
  const ServerStats st = s.stats();
  CHECK(st.open == 3);  // the silent one, the hanging one, and the serving TcpStore's own
  CHECK(st.evicted == 0);
  CHECK(st.refused == 0);

  // Destroying the server does not wait for the two that never finish: it shuts them down.
  server.reset();
  CHECK(closed_by_server(silent));
  CHECK(closed_by_server(hanging));
}

TEST_CASE("many connections: finished ones are reaped, and past the cap silent ones make room for ranks",
          "[ch5][store]") {
  TcpStoreServer server("127.0.0.1", 0, 4);
  const uint16_t port = server.port();

  // 50 clients in a row, each dropped for a bad frame: every accept joins the threads of the
  // connections finished before it, so threads do not pile up.
  for (int i = 0; i < 50; ++i) {
    Fd junk = foreign(port);
    send_bytes(junk, u32(1) + "?");
    REQUIRE(closed_by_server(junk));
  }
  TcpStore a(client_of(port));
  a.set("a", bytes("1"));  // a's request was answered, so its connection was accepted
  ServerStats st = server.stats();
  CHECK(st.accepted == 51);
  CHECK(st.finished == 50);
  CHECK(st.open == 1);
  CHECK(st.threads == 1);  // a's own: the 50 finished ones have been joined

  // Cap 4: a and three silent sockets fill it.
  std::vector<Fd> silent;
  for (int i = 0; i < 3; ++i) silent.push_back(foreign(port));
  REQUIRE(server.wait_until([](const ServerStats& t) { return t.accepted == 54; }, kHang));
  // A fourth silent socket evicts the oldest silent one, never a, which has sent a request.
  silent.push_back(foreign(port));
  CHECK(closed_by_server(silent[0]));
  REQUIRE(server.wait_until([](const ServerStats& t) { return t.evicted == 1 && t.accepted == 55; }, kHang));
  // Ranks coming in evict the silent ones in turn, and stay once they have sent a request.
  TcpStore b(client_of(port));
  b.set("b", bytes("2"));
  CHECK(closed_by_server(silent[1]));
  TcpStore c(client_of(port));
  c.set("c", bytes("3"));
  CHECK(closed_by_server(silent[2]));
  TcpStore d(client_of(port));
  d.set("d", bytes("4"));
  CHECK(closed_by_server(silent[3]));
  // Now every connection has spoken the protocol: a fifth one is refused, the four keep working.
  Fd late = foreign(port);
  CHECK(closed_by_server(late));
  // an evicted socket is closed before its thread has finished: wait for the last one's
  REQUIRE(server.wait_until([](const ServerStats& t) { return t.finished == 54; }, kHang));
  st = server.stats();
  CHECK(st.evicted == 4);
  CHECK(st.refused == 1);
  CHECK(st.open == 4);
  CHECK(text(a.get("d")) == "4");
  CHECK(text(d.get("a")) == "1");
  CHECK(text(b.get("c")) == "3");
}

TEST_CASE("a server that serves nobody refuses a cap of zero", "[ch5][store]") {
  CHECK_THROWS_WITH(TcpStoreServer("127.0.0.1", 0, 0), Contains("max_connections must be at least 1"));
}
