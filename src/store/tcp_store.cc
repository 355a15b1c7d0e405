// store/tcp_store.cc — the client side of the TCP store (see tcp_store.h, protocol.h).
#include "store/tcp_store.h"

#include "core/check.h"

namespace zt::store {
namespace {

// How long past its own timeout a request may wait for the server's reply: the server answers
// 'T' at the deadline, so this margin only matters if the server itself is stuck.
constexpr std::chrono::milliseconds kReplyMargin{5000};

}  // namespace

TcpStore::TcpStore(TcpStoreOptions options) : options_(std::move(options)) {
  ZT_CHECK(options_.timeout.count() > 0, "TCP store: timeout must be positive");
  ZT_CHECK(options_.serve || options_.port != 0, "TCP store: port 0 is only meaningful on the serving rank");
  if (options_.serve) {
    server_ = std::make_unique<TcpStoreServer>(options_.host, options_.port);
    port_ = server_->port();
  } else {
    port_ = options_.port;
  }
  address_ = format_address(options_.host, port_);
  conn_ = connect_tcp_retry(options_.host, port_, options_.timeout, options_.on_connect_retry);
}

TcpStoreServer& TcpStore::server() {
  ZT_CHECK(server_ != nullptr, "TCP store at ", address_, ": this rank does not serve it");
  return *server_;
}

TcpStore::~TcpStore() {
  conn_.reset();
  server_.reset();
}

Message TcpStore::call(const Message& request, std::chrono::milliseconds timeout, const char* what) {
  std::lock_guard<std::mutex> lock(call_mu_);
  ZT_CHECK(conn_.get() >= 0, what, ": the connection to the TCP store at ", address_,
           " was dropped after an earlier failure");
  Message reply;
  ReadStatus st;
  try {
    send_message(conn_.get(), request, address_);
    st = receive_message(conn_.get(), deadline_after(timeout + kReplyMargin), address_, reply);
  } catch (const Error& e) {
    conn_.reset();  // the stream may hold half a message now: never reuse it
    ZT_FAIL(what, " failed: ", e.what(), " (did the rank or launcher serving the store exit?)");
  }
  if (st != ReadStatus::kOk) conn_.reset();
  ZT_CHECK(st != ReadStatus::kClosed, what, ": the TCP store at ", address_,
           " closed the connection (did the rank or launcher serving the store exit?)");
  ZT_CHECK(st != ReadStatus::kTimedOut, what, ": no reply from the TCP store at ", address_, " within ",
           (timeout + kReplyMargin).count(), " ms");
  return reply;
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  std::string what = "TCP store set('" + key + "')";
  Message reply = call({'S', {key, std::string(data.begin(), data.end())}}, options_.timeout, what.c_str());
  ZT_CHECK(reply.op == 'K', what, ": unexpected reply from ", address_);
}

std::vector<char> TcpStore::get(const std::string& key) { return get(key, options_.timeout); }

std::vector<char> TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  std::string what = "TCP store get('" + key + "')";
  Message reply = call({'G', {std::to_string(timeout.count()), key}}, timeout, what.c_str());
  ZT_CHECK(reply.op != 'T', "TCP store at ", address_, ": key '", key, "' was not set within ", timeout.count(), " ms");
  ZT_CHECK(reply.op == 'V' && reply.fields.size() == 1, what, ": unexpected reply from ", address_);
  return std::vector<char>(reply.fields[0].begin(), reply.fields[0].end());
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, options_.timeout); }

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  Message request{'W', {std::to_string(timeout.count())}};
  request.fields.insert(request.fields.end(), keys.begin(), keys.end());
  Message reply = call(request, timeout, "TCP store wait");
  ZT_CHECK(reply.op != 'T' || reply.fields.size() == 1, "TCP store wait: unexpected reply");
  ZT_CHECK(reply.op != 'T', "TCP store at ", address_, ": key '", reply.fields[0], "' was not set within ",
           timeout.count(), " ms");
  ZT_CHECK(reply.op == 'K', "TCP store wait: unexpected reply from ", address_);
}

}  // namespace zt::store
