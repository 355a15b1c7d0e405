// collective/peer_probe.cc — see peer_probe.h. One thread answers greetings (and, during the
// start-up check, records who has greeted) while the calling thread greets the peers, so no pair
// of ranks waits on the other's order.
#include "collective/peer_probe.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <set>

#include "core/check.h"
#include "core/cli.h"
#include "core/error_report.h"

namespace zt {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kMagic = 0x5A545243u;  // "ZTRC"

struct Greeting {
  uint32_t magic, from, to, tag;
};

uint32_t tag_hash(const std::string& tag) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64, folded
  for (unsigned char c : tag) h = (h ^ c) * 1099511628211ull;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace

struct PeerProbe::Greeted {
  std::mutex mu;
  std::condition_variable cv;
  std::set<int> ranks;
};

PeerProbe::PeerProbe(gloo::rendezvous::Store& store, const std::string& tag, int rank, int size,
                     std::string bind_address, std::string how, std::chrono::milliseconds timeout)
    : rank_(rank),
      size_(size),
      tag_(tag_hash(tag)),
      bind_address_(std::move(bind_address)),
      how_(std::move(how)),
      peers_(static_cast<std::size_t>(size)),
      greeted_(std::make_unique<Greeted>()) {
  const auto deadline = Clock::now() + timeout;
  listener_ = store::listen_tcp(bind_address_, 0);
  const uint16_t port = store::local_port(listener_.get());
  stop_ = store::Fd(::eventfd(0, EFD_CLOEXEC));
  ZT_CHECK(stop_.get() >= 0, "eventfd: ", std::strerror(errno));
  answering_ = std::thread([this] { answer_loop(); });
  try {
    const std::string mine = bind_address_ + " " + std::to_string(port) + " " + how_;
    store.set("probe/" + std::to_string(rank), std::vector<char>(mine.begin(), mine.end()));
    peers_[static_cast<std::size_t>(rank)] = {bind_address_, how_, port};
    for (int q = 0; q < size; ++q) {
      if (q == rank) continue;
      const std::string key = "probe/" + std::to_string(q);
      try {
        store.wait({key}, store::ms_left(deadline));
      } catch (const std::exception&) {
        throw PeerFailed(concat("rendezvous: rank ", q, " of ", size, " did not publish its address within ",
                                timeout.count(), " ms (did it start, with the same store and world size?)"));
      }
      const auto bytes = store.get(key);
      const std::string text(bytes.begin(), bytes.end());  // "host port how": a numeric host has no space
      const auto a = text.find(' '), b = a == std::string::npos ? a : text.find(' ', a + 1);
      ZT_CHECK(b != std::string::npos, "rendezvous: rank ", q, "'s published address is malformed: '", text, "'");
      Peer& p = peers_[static_cast<std::size_t>(q)];
      p.host = text.substr(0, a);
      const int64_t port_number =
          parse_int_strict(text.substr(a + 1, b - a - 1), "rank " + std::to_string(q) + "'s port");
      ZT_CHECK(port_number > 0 && port_number < 65536, "rendezvous: rank ", q, " published port ", port_number);
      p.port = static_cast<uint16_t>(port_number);
      p.how = text.substr(b + 1);
    }
    std::string unreachable;
    for (int q = 0; q < size; ++q) {
      if (q == rank) continue;
      const std::string why = greet(q, deadline);
      if (!why.empty()) unreachable += concat(unreachable.empty() ? "" : "; ", why);
    }
    // Even when a peer cannot be reached, keep answering until every peer has greeted this rank
    // (or the deadline): leaving at once would make the peers that reach this rank fail with a
    // misleading "refused", and this rank's message would miss the other direction.
    std::unique_lock<std::mutex> lock(greeted_->mu);
    greeted_->cv.wait_until(lock, deadline, [&] { return static_cast<int>(greeted_->ranks.size()) == size - 1; });
    std::string missing;
    for (int q = 0; q < size; ++q)
      if (q != rank && !greeted_->ranks.count(q)) missing += concat(missing.empty() ? "" : ", ", q);
    lock.unlock();
    std::string problem;
    if (!unreachable.empty()) problem = concat("rank ", rank, " cannot reach ", unreachable);
    if (!missing.empty())
      problem +=
          concat(problem.empty() ? "" : "; and ", "rank(s) ", missing, " did not reach rank ", rank, " at ",
                 store::format_address(bind_address_, port), " (bound to ", how_, ") within ", timeout.count(), " ms");
    ZT_CHECK(problem.empty(), "rendezvous: ", problem,
             ". A rank binds the address that routes to MASTER_ADDR unless GLOO_SOCKET_IFNAME or --local-addr "
             "names another: each rank's must be reachable from every other machine of the job");
  } catch (...) {
    stop();  // a failed constructor runs no destructor: the thread must end before the members do
    throw;
  }
}

PeerProbe::~PeerProbe() { stop(); }

void PeerProbe::stop() {
  if (!answering_.joinable()) return;
  const uint64_t one = 1;
  if (::write(stop_.get(), &one, sizeof one) < 0) {
    // cannot fail for an eventfd below its maximum count
  }
  answering_.join();
}

void PeerProbe::answer_loop() {
  for (;;) {
    pollfd pfd[2] = {{listener_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    const int rc = ::poll(pfd, 2, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || pfd[1].revents) return;
    store::Fd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (conn.get() < 0) continue;
    // A connection that does not greet properly (a foreign client, a port scanner) is closed
    // and ignored; one that sends nothing holds this thread for at most a second.
    try {
      Greeting g{};
      const auto deadline = Clock::now() + std::chrono::seconds(1);
      if (store::read_all(conn.get(), &g, sizeof g, deadline, "a peer") != store::ReadStatus::kOk) continue;
      if (g.magic != kMagic || g.tag != tag_ || g.to != static_cast<uint32_t>(rank_) ||
          g.from >= static_cast<uint32_t>(size_))
        continue;
      const Greeting reply{kMagic, static_cast<uint32_t>(rank_), g.from, tag_};
      store::write_all(conn.get(), &reply, sizeof reply, "a peer");
      std::lock_guard<std::mutex> lock(greeted_->mu);
      greeted_->ranks.insert(static_cast<int>(g.from));
      greeted_->cv.notify_all();
    } catch (const std::exception&) {
      // a peer that vanished mid-greeting: its own side, or the missing set, reports it
    }
  }
}

std::string PeerProbe::greet(int q, store::Deadline deadline) const {
  const Peer& p = peers_[static_cast<std::size_t>(q)];
  const std::string where = store::format_address(p.host, p.port);
  const std::string who = concat("rank ", q, " at ", where, " (bound to ", p.how, "): ");
  std::string error;
  store::Fd fd = store::connect_tcp_once(p.host, p.port, deadline, error);
  if (fd.get() < 0)
    return who + error +
           (error == std::strerror(ECONNREFUSED)
                ? " (nothing listens there: the rank is gone, or the address is not on its machine)"
                : "");
  try {
    const Greeting hello{kMagic, static_cast<uint32_t>(rank_), static_cast<uint32_t>(q), tag_};
    store::write_all(fd.get(), &hello, sizeof hello, where);
    Greeting reply{};
    const auto st = store::read_all(fd.get(), &reply, sizeof reply, deadline, where);
    if (st == store::ReadStatus::kClosed) return who + "closed the connection without answering";
    if (st != store::ReadStatus::kOk) return who + "accepts connections but does not answer (stalled?)";
    if (reply.magic != kMagic || reply.tag != tag_ || reply.from != static_cast<uint32_t>(q))
      return who + "something else answers there (not rank " + std::to_string(q) + " of this job)";
  } catch (const std::exception& e) {
    return who + "the connection broke during the greeting (" + e.what() + ")";
  }
  return "";
}

std::string PeerProbe::diagnose(const std::vector<int>& peers, std::chrono::milliseconds budget) const {
  const auto deadline = Clock::now() + budget;
  std::vector<std::future<std::string>> answers;
  for (int q : peers)
    answers.push_back(std::async(std::launch::async, [this, q, deadline] { return greet(q, deadline); }));
  std::string out, fine;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const std::string why = answers[i].get();
    if (why.empty())
      fine += concat(fine.empty() ? "" : ", ", peers[i]);
    else
      out += concat(out.empty() ? "" : "; ", why);
  }
  if (out.empty()) return "every peer answers the probe (" + fine + ")";
  return fine.empty() ? out : out + "; rank(s) " + fine + " answer";
}

}  // namespace zt
