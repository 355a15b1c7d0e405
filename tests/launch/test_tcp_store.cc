// TCP store: set/get/wait between threads, timeouts that name the key, clients that start before
// the server, a taken port, a server that goes away, a malformed client, and Gloo's own
// rendezvous (connectFullMesh) running over it. Cross-process use is in test_zero_launch.cc.
// Every server binds port 0 (or a socket bound beforehand and held), never a port picked while
// free; steps are ordered by the server's own state (TcpStoreServer::wait_parked), a connection
// refusal or a promise, never by sleeping. Upper bounds on wall time only catch a hang.
#include <catch2/catch.hpp>

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/check.h"
#include "store/protocol.h"
#include "store/socket.h"
#include "store/tcp_store.h"
#include "store/tcp_store_server.h"
#include "store_bytes.h"

using Catch::Matchers::Contains;
using zt::store::TcpStore;
using zt::store::TcpStoreOptions;
using Clock = std::chrono::steady_clock;
using ms = std::chrono::milliseconds;
using zt_test::bytes;
using zt_test::kHang;
using zt_test::text;

namespace {
TcpStoreOptions server_options(uint16_t port = 0, ms timeout = ms(5000)) {
  TcpStoreOptions o;
  o.port = port;
  o.serve = true;
  o.timeout = timeout;
  return o;
}
TcpStoreOptions client_options(uint16_t port, ms timeout = ms(5000)) {
  TcpStoreOptions o;
  o.port = port;
  o.timeout = timeout;
  return o;
}
// "k" + number spelled with append: GCC 12 warns falsely (-Wrestrict) on "literal" + string.
std::string key(int i) { return std::string("k").append(std::to_string(i)); }
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
constexpr double kHangSeconds = 60.0;  // kHang in seconds
}  // namespace

TEST_CASE("protocol frames round-trip and reject truncation", "[ch5][store]") {
  zt::store::Message m{'S', {"key", std::string("\0bin\xff", 5), ""}};
  std::string frame = zt::store::encode(m);
  REQUIRE(frame.size() == 4 + 1 + (4 + 3) + (4 + 5) + 4);
  auto back = zt::store::decode(frame.substr(4));
  CHECK(back.op == 'S');
  CHECK(back.fields == m.fields);
  const std::string payload = frame.substr(4);
  // Drop the last (empty) field and the last 2 bytes of the 5-byte value before it.
  CHECK_THROWS_WITH(zt::store::decode(payload.substr(0, payload.size() - 6)), Contains("runs past the message"));
  CHECK_THROWS_WITH(zt::store::decode(payload.substr(0, payload.size() - 2)), Contains("truncated field size"));
}

TEST_CASE("set, get and wait between threads", "[ch5][store]") {
  TcpStore server(server_options());
  const int n = 4;
  std::vector<std::future<std::string>> results;
  for (int r = 0; r < n; ++r)
    results.push_back(std::async(std::launch::async, [r, n, port = server.port()] {
      TcpStore c(client_options(port));
      c.set(key(r), bytes(std::string("value ").append(std::to_string(r))));
      std::string all;
      for (int q = 0; q < n; ++q) all.append(text(c.get(key(q)))).append(";");
      return all;
    }));
  for (auto& f : results) CHECK(f.get() == "value 0;value 1;value 2;value 3;");
  // Binary values survive, and set overwrites.
  server.set("bin", std::vector<char>{'\0', 'a', '\xff'});
  CHECK(server.get("bin") == std::vector<char>{'\0', 'a', '\xff'});
  server.set("bin", bytes("new"));
  CHECK(text(server.get("bin")) == "new");
}

TEST_CASE("wait blocks until every key is set", "[ch5][store]") {
  TcpStore server(server_options(0, kHang));
  TcpStore client(client_options(server.port(), kHang));
  std::atomic<bool> b_set{false};
  auto waiter = std::async(std::launch::async, [&] {
    client.wait({"a", "b"}, kHang);
    return b_set.load();  // true: it returned only after "b" was set
  });
  auto& s = server.server();
  REQUIRE(s.wait_parked(1, kHang));  // the wait is blocked in the server on "a"
  server.set("a", bytes("1"));
  REQUIRE(s.wait_parked(2, kHang));  // it saw "a" and blocked again, on "b"
  CHECK(waiter.wait_for(ms(0)) != std::future_status::ready);
  b_set = true;
  server.set("b", bytes("2"));
  CHECK(waiter.get());
  CHECK(text(client.get("b")) == "2");
}

TEST_CASE("a GET with the largest timeout a client can send waits until the key is set", "[ch5][store]") {
  // 2^63 - 1 ms overflows the clock's nanoseconds: the server must take it as "no deadline", not
  // as a deadline in the past (an immediate 'T') or undefined behaviour.
  TcpStore server(server_options(0, kHang));
  zt::store::Fd raw = zt::store::connect_tcp_retry("127.0.0.1", server.port(), kHang);
  zt::store::send_message(raw.get(), {'G', {"9223372036854775807", "late"}}, "server");
  REQUIRE(server.server().wait_parked(1, kHang));  // parked: it did not time out at once
  server.set("late", bytes("here"));
  zt::store::Message reply;
  REQUIRE(zt::store::receive_message(raw.get(), zt::store::Deadline::max(), "server", reply) ==
          zt::store::ReadStatus::kOk);
  CHECK(reply.op == 'V');
  CHECK(reply.fields == std::vector<std::string>{"here"});
}

TEST_CASE("a missing key times out with a message naming key and address", "[ch5][store]") {
  TcpStore server(server_options(0, ms(300)));
  TcpStore client(client_options(server.port(), ms(300)));
  std::string where = "127.0.0.1:" + std::to_string(server.port());
  auto start = Clock::now();
  CHECK_THROWS_WITH(client.get("never/set"), Contains("key 'never/set'") && Contains(where) && Contains("300 ms"));
  double waited = since(start);
  CHECK(waited >= 0.29);         // it did wait the timeout
  CHECK(waited < kHangSeconds);  // only guards against a hang
  CHECK_THROWS_WITH(client.wait({"a", "missing"}, ms(100)), Contains("key 'a'"));
  server.set("a", bytes("x"));
  CHECK_THROWS_WITH(client.wait({"a", "missing"}, ms(100)), Contains("key 'missing'"));
  // The connection is still usable after timeouts.
  CHECK(text(client.get("a")) == "x");
}

TEST_CASE("clients may start before the server", "[ch5][store]") {
  // The port is held from the start by a bound socket that does not listen yet, so the client's
  // attempts are refused (as with no server) and nothing else can take the port meanwhile.
  zt::store::Fd reserved = zt::store::bind_tcp("127.0.0.1", 0);
  const uint16_t port = zt::store::local_port(reserved.get());
  std::promise<void> refused;
  std::once_flag once;
  auto client = std::async(std::launch::async, [&] {
    TcpStoreOptions o = client_options(port, kHang);
    o.on_connect_retry = [&](const std::string&) { std::call_once(once, [&] { refused.set_value(); }); };
    TcpStore c(o);
    return text(c.get("from-server"));
  });
  // The client has been refused at least once: only now does the server start (on that socket).
  REQUIRE(refused.get_future().wait_for(kHang) == std::future_status::ready);
  zt::store::TcpStoreServer server(std::move(reserved));
  TcpStore setter(client_options(port));
  setter.set("from-server", bytes("hello"));
  CHECK(client.get() == "hello");
}

TEST_CASE("no server: connecting gives up after the timeout", "[ch5][store]") {
  // A bound socket that never listens: every connection is refused, and the port stays ours.
  zt::store::Fd nobody = zt::store::bind_tcp("127.0.0.1", 0);
  const uint16_t port = zt::store::local_port(nobody.get());
  auto start = Clock::now();
  CHECK_THROWS_WITH(TcpStore(client_options(port, ms(300))),
                    Contains("could not connect to 127.0.0.1:" + std::to_string(port)) && Contains("300 ms"));
  CHECK(since(start) < kHangSeconds);  // only guards against a hang
}

TEST_CASE("a port in use is a clear error", "[ch5][store]") {
  zt::store::Fd taken = zt::store::listen_tcp("127.0.0.1", 0);
  uint16_t port = zt::store::local_port(taken.get());
  CHECK_THROWS_WITH(TcpStore(server_options(port)),
                    Contains("127.0.0.1:" + std::to_string(port)) && Contains("already in use"));
}

TEST_CASE("destroying the server fails the clients cleanly", "[ch5][store]") {
  auto server = std::make_unique<TcpStore>(server_options());
  TcpStore client(client_options(server->port()));
  auto waiting = std::async(std::launch::async, [&] {
    try {
      client.get("never", kHang);
      return std::string("no error");
    } catch (const zt::Error& e) {
      return std::string(e.what());
    }
  });
  REQUIRE(server->server().wait_parked(1, kHang));  // the get is parked in the server
  auto start = Clock::now();
  server.reset();                      // must not hang on the parked get
  CHECK(since(start) < kHangSeconds);  // only guards against a hang
  CHECK_THAT(waiting.get(), Contains("closed the connection"));
  CHECK_THROWS_WITH(client.set("k", bytes("v")), Contains("TCP store"));
}

TEST_CASE("a malformed client does not disturb the others", "[ch5][store]") {
  TcpStore server(server_options());
  {
    zt::store::Fd junk = zt::store::connect_tcp_retry("127.0.0.1", server.port(), ms(2000));
    const char garbage[] = "\xff\xff\xff\xffGET / HTTP/1.0\r\n\r\n";
    zt::store::write_all(junk.get(), garbage, sizeof garbage - 1, "server");
    char c;
    // The server drops the connection (a close, or a reset since it left bytes unread) rather
    // than trying to allocate 4 GiB.
    CHECK(::recv(junk.get(), &c, 1, 0) <= 0);
  }
  TcpStore client(client_options(server.port()));
  client.set("still", bytes("works"));
  CHECK(text(server.get("still")) == "works");
}

TEST_CASE("Gloo's rendezvous runs over the TCP store", "[ch5][store]") {
  const int n = 3;
  // Rank 0 serves on port 0 and hands the port it got to the others.
  std::promise<uint16_t> served;
  std::shared_future<uint16_t> port = served.get_future().share();
  std::vector<std::future<float>> sums;
  for (int r = 0; r < n; ++r)
    sums.push_back(std::async(std::launch::async, [r, n, port, &served] {
      std::unique_ptr<TcpStore> store;
      if (r == 0) {
        try {
          store = std::make_unique<TcpStore>(server_options(0));
        } catch (...) {
          served.set_exception(std::current_exception());
          throw;
        }
        served.set_value(store->port());
      } else {
        store = std::make_unique<TcpStore>(client_options(port.get()));
      }
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      auto device = gloo::transport::tcp::CreateDevice(attr);
      auto ctx = std::make_shared<gloo::rendezvous::Context>(r, n);
      ctx->setTimeout(kHang);
      ctx->connectFullMesh(*store, device);
      float v = static_cast<float>(r + 1);
      gloo::AllreduceOptions opts(ctx);
      opts.setOutput(&v, 1);
      opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      gloo::allreduce(opts);
      return v;
    }));
  for (auto& s : sums) CHECK(s.get() == 6.0f);  // 1 + 2 + 3, exact in fp32
}
