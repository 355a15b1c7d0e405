// launch/store_spec.cc — ZT_STORE / MASTER_ADDR parsing and the opening of the selected store
// (see store_spec.h).
#include "launch/store_spec.h"

#include "collective/store.h"
#include "core/check.h"
#include "core/cli.h"
#include "store/tcp_store.h"

namespace zt::launch {
namespace {

constexpr const char* kForms = "file:DIR, redis:HOST[:PORT], tcp or tcp:HOST:PORT";

uint16_t parse_port(const std::string& text, const std::string& what) {
  int64_t p = parse_int_strict(text, what);
  ZT_CHECK(p >= 1 && p <= 65535, what, ": ", text, " is not a TCP port (1..65535)");
  return static_cast<uint16_t>(p);
}

// "HOST:PORT" (the port after the last colon; an IPv6 literal goes in brackets).
void split_host_port(const std::string& text, const std::string& what, std::string& host, uint16_t& port,
                     std::optional<uint16_t> default_port) {
  auto colon = text.rfind(':');
  bool bracketed = !text.empty() && text[0] == '[';
  if (colon == std::string::npos || (bracketed && text.back() == ']')) {
    ZT_CHECK(default_port, what, ": '", text, "' needs HOST:PORT");
    host = text;
    port = *default_port;
  } else {
    host = text.substr(0, colon);
    port = parse_port(text.substr(colon + 1), what);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  ZT_CHECK(!host.empty(), what, ": '", text, "' has an empty host");
}

}  // namespace

std::string StoreSpec::text() const {
  switch (kind) {
    case Kind::kFile:
      return "file:" + path;
    case Kind::kRedis:
      return "redis:" + store::format_address(host, port);
    case Kind::kTcp:
      return "tcp:" + store::format_address(host, port);
    case Kind::kNone:
      break;
  }
  return "none";
}

StoreSpec parse_store_spec(const std::string& text, const RankEnv& env) {
  StoreSpec s;
  const std::string what = "ZT_STORE=" + text;
  if (text.rfind("file:", 0) == 0) {
    s.kind = StoreSpec::Kind::kFile;
    s.path = text.substr(5);
    ZT_CHECK(!s.path.empty(), what, ": the directory is empty");
  } else if (text.rfind("redis:", 0) == 0) {
    s.kind = StoreSpec::Kind::kRedis;
    split_host_port(text.substr(6), what, s.host, s.port, uint16_t{6379});
  } else if (text == "tcp") {
    s.kind = StoreSpec::Kind::kTcp;
    ZT_CHECK(!env.master_addr.empty() && env.master_port != 0, what, " needs MASTER_ADDR and MASTER_PORT (set ",
             env.master_addr.empty() ? "MASTER_ADDR" : "",
             env.master_addr.empty() && env.master_port == 0 ? " and " : "", env.master_port == 0 ? "MASTER_PORT" : "",
             ")");
    s.host = env.master_addr;
    s.port = env.master_port;
  } else if (text.rfind("tcp:", 0) == 0) {
    s.kind = StoreSpec::Kind::kTcp;
    split_host_port(text.substr(4), what, s.host, s.port, std::nullopt);
  } else {
    ZT_FAIL(what, " is not understood; use one of ", kForms);
  }
  if (s.kind == StoreSpec::Kind::kTcp)
    s.launcher_serves = !env.launcher_store.empty() && env.launcher_store == store::format_address(s.host, s.port);
  return s;
}

StoreSpec select_store(const RankEnv& env) {
  if (!env.store.empty()) return parse_store_spec(env.store, env);
  bool has_addr = !env.master_addr.empty(), has_port = env.master_port != 0;
  ZT_CHECK(has_addr == has_port, has_addr ? "MASTER_ADDR" : "MASTER_PORT", " is set but ",
           has_addr ? "MASTER_PORT" : "MASTER_ADDR",
           " is not; the TCP store needs both (or choose a store with ZT_STORE)");
  if (!has_addr) return {};
  return parse_store_spec("tcp", env);
}

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
    case Kind::kTcp: {
      store::TcpStoreOptions o;
      o.host = spec.host;
      o.port = spec.port;
      o.serve = env.rank == 0 && !spec.launcher_serves;
      o.timeout = timeout;
      return std::make_shared<store::TcpStore>(o);
    }
    case Kind::kNone:
      break;
  }
  ZT_FAIL("rank ", env.rank, " of ", env.world_size,
          ": no rendezvous store (set MASTER_ADDR and MASTER_PORT, or ZT_STORE=file:DIR|redis:HOST:PORT|tcp)");
}

}  // namespace zt::launch
