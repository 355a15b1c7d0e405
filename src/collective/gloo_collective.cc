// collective/gloo_collective.cc — rendezvous, the call queue, call checking and error wrapping
// of GlooCollective. The data movements themselves are in gloo_ops.cc.
#include "collective/gloo_collective.h"

#include <csignal>
#include <cstring>
#include <exception>

#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include "collective/gloo_call_header.h"
#include "collective/peer_probe.h"
#include "collective/store.h"
#include "core/error_report.h"
#include "store/socket.h"

namespace zt {

// What one call is: the fields every rank must agree on, sent as the call-check header.
struct GlooCollective::Call {
  CollKind kind = CollKind::barrier;
  const char* name = "barrier";
  uint64_t seq = 0;
  uint64_t count = 0;        // total elements of the full buffer
  uint64_t counts_hash = 0;  // FNV-1a of the per-rank counts (v variants), else 0
  uint32_t dtype = 0;
  uint32_t op = 0;
  int32_t root = -1;
};

namespace {

using gloo_wire::Header;
using gloo_wire::kMagic;
constexpr int32_t kShutdownRoot = -2;  // a barrier with this root is the destructor's

void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) std::signal(SIGPIPE, SIG_IGN);
  });
}

uint64_t hash_counts(const std::vector<std::size_t>& counts) {
  uint64_t h = 1469598103934665603ull;
  for (std::size_t c : counts) {
    for (int b = 0; b < 8; ++b) {
      h ^= (static_cast<uint64_t>(c) >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

std::string describe(const Header& h) {
  if (h.kind == static_cast<uint32_t>(CollKind::barrier) && h.root == kShutdownRoot)
    return concat("call #", h.seq,
                  " shutdown (the rank is closing its connections: it finished, or failed "
                  "outside a collective)");
  const char* name = coll_kind_name(static_cast<CollKind>(h.kind % kCollKinds));
  std::string s =
      concat("call #", h.seq, " ", name, "(", dtype_name(static_cast<DType>(h.dtype % 3)), ", ", h.count, " elements");
  if (h.counts_hash) s += concat(", counts hash ", h.counts_hash % 100000);
  if (h.root >= 0) s += concat(", root ", h.root);
  if (h.kind == static_cast<uint32_t>(CollKind::all_reduce) ||
      h.kind == static_cast<uint32_t>(CollKind::reduce_scatter))
    s += concat(", ", reduce_op_name(static_cast<ReduceOp>(h.op % 2)));
  return s + ")";
}

}  // namespace

GlooCollective::GlooCollective(GlooOptions options) : options_(std::move(options)) {
  const int n = options_.size, r = options_.rank;
  check_rendezvous_options("GlooCollective", r, n, options_.timeout);
  if (n > 1) {
    ignore_sigpipe_once();
    ZT_CHECK(options_.store != nullptr, "GlooCollective: rank ", r, " of ", n, " has no rendezvous store");
    gloo::transport::tcp::attr attr;
    attr.hostname = options_.hostname;
    std::shared_ptr<gloo::transport::Device> device;
    try {
      device = gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception& e) {
      ZT_FAIL("GlooCollective rank ", r, ": cannot create a TCP device on host ", options_.hostname, ": ", e.what());
    }
    auto store = std::make_shared<OwningPrefixStore>(options_.prefix, options_.store, options_.timeout);
    claim_rendezvous_key(*store, "zt_joined_" + std::to_string(r), r, options_.prefix);
    if (options_.check_reachability) {
      options_.probe = std::make_shared<const PeerProbe>(
          *store, options_.prefix, r, n, options_.hostname,
          options_.bind_reason.empty() ? "host " + options_.hostname : options_.bind_reason, options_.timeout);
      options_.probe_ranks.clear();
    }
    auto context = std::make_shared<gloo::rendezvous::Context>(r, n);
    context->setTimeout(options_.timeout);
    try {
      context->connectFullMesh(*store, device);
    } catch (const std::exception& e) {
      // Another rank is the cause: it never started, failed before rendezvous, or cannot be
      // reached at the address it published.
      throw PeerFailed(concat("rendezvous failed for rank ", r, " of ", n, " (prefix '", options_.prefix, "', timeout ",
                              options_.timeout.count(), " ms; did every rank start?): ", e.what()));
    }
    context_ = context;
  }
  thread_ = std::make_unique<JobThread>();
}

GlooCollective::~GlooCollective() {
  // The shutdown barrier (file comment of the header), for a rank that finished normally. One
  // that is unwinding an exception closes at once instead: its peers should fail within
  // milliseconds, and a barrier here could wait on a peer stuck in a call on another Collective
  // that only this rank's leaving would end. A broken instance fails the barrier at once; a peer
  // that is gone or in another call makes it fail: nothing to report, this rank leaves anyway.
  if (context_ && std::uncaught_exceptions() == 0) {
    try {
      Call c{CollKind::barrier, "shutdown", 0, 0, 0, 0, 0, kShutdownRoot};
      submit(c, [this] { gloo_barrier(); }).wait();
    } catch (...) {
    }
  }
  thread_.reset();  // run what is queued, then stop, before the context goes away
}

CommStats GlooCollective::stats() const { return stats_.snapshot(); }

// Every member must arrive at the same key prefix without talking to the others. The parent's
// prefix is unique in the store; the name and member list are the same on every member by
// contract; and so is the number of times this rank created that same group on this parent
// before, since every creation involves all its members. That count makes a group created again
// meet on fresh keys: HashStore and FileStore refuse to overwrite a key, and a store that does
// overwrite would hand out the addresses of the earlier group's (closed) connections.
std::unique_ptr<Collective> GlooCollective::make_subgroup(const std::vector<int>& members, const std::string& name) {
  const std::string label = group_label(name, members);
  const int made_before = groups_made_[label]++;
  GlooOptions o = options_;
  o.size = static_cast<int>(members.size());
  o.rank = 0;
  while (members[o.rank] != rank()) ++o.rank;  // subgroup() checked that this rank is a member
  o.prefix = concat(options_.prefix, "/", label, "#", made_before);
  o.check_reachability = false;  // every pair of the world group reached each other already
  o.probe_ranks.clear();         // the members' ranks in the probe's group
  for (int m : members) o.probe_ranks.push_back(options_.probe_ranks.empty() ? m : options_.probe_ranks[m]);
  o.group = options_.group.empty() ? label : concat(options_.group, "/", label);
  return std::make_unique<GlooCollective>(std::move(o));
}

std::string GlooCollective::probe_peers() const {
  if (!options_.probe) return "";
  std::vector<int> peers;
  for (int q = 0; q < size(); ++q)
    if (q != rank()) peers.push_back(options_.probe_ranks.empty() ? q : options_.probe_ranks[q]);
  // a short look: the peers that answer at all answer within milliseconds
  const auto budget = std::min(options_.timeout, std::chrono::milliseconds(3000));
  try {
    return " [probing the peers: " + options_.probe->diagnose(peers, budget) + "]";
  } catch (const std::exception& e) {
    return concat(" [probing the peers failed: ", e.what(), "]");
  }
}

std::string GlooCollective::peer_hint(const std::string& gloo_message) const {
  if (gloo_message.find("imed out") != std::string::npos)
    return concat(" [a peer did not take part within ", options_.timeout.count(),
                  " ms: it stalled, skipped this call, or died]");
  if (gloo_message.find("losed") != std::string::npos || gloo_message.find("reset") != std::string::npos)
    return " [a peer closed its connection: it exited, crashed or failed]";
  return "";
}

std::string GlooCollective::where(const Call& call) const {
  return concat(call.name, " #", call.seq, " on rank ", rank(), " of ", size(),
                options_.group.empty() ? "" : " in group ", options_.group);
}

void* GlooCollective::scratch(std::size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

Work GlooCollective::submit(Call call, std::function<void()> body) {
  // Point-to-point batches involve only some ranks: they are numbered apart, so the group's call
  // sequence (which every rank's collectives must agree on) does not move.
  call.seq = call.kind == CollKind::point_to_point ? next_p2p_seq_++ : next_seq_++;
  return thread_->submit([this, call, body = std::move(body)] { run_checked(call, body); });
}

void GlooCollective::run_checked(const Call& call, const std::function<void()>& body) {
  const std::string at = where(call);
  if (broken_) {
    const std::string msg =
        concat(at, ": this Collective failed earlier and cannot be used again (", broken_reason_, ")");
    if (broken_by_peer_) throw PeerFailed(msg);
    throw Error(msg);
  }
  try {
    if (size() > 1 && call.kind != CollKind::point_to_point) exchange_headers(call);
    body();
  } catch (const zt::Error& e) {
    broken_ = true;
    broken_by_peer_ = dynamic_cast<const PeerFailed*>(&e) != nullptr;
    broken_reason_ = e.what();
    throw;
  } catch (const std::exception& e) {
    // Gloo's own errors (an IoException) all come from the wire: a peer that timed out, closed
    // or reset its connection. This rank did nothing wrong; the cause is elsewhere.
    const std::string msg = e.what();
    const std::string hint = peer_hint(msg);
    broken_ = true;
    broken_by_peer_ = true;
    broken_reason_ = concat(at, ": ", msg);
    throw PeerFailed(concat(at, ": ", msg, hint, probe_peers()));
  }
  stats_.add_call(call.kind);
}

void GlooCollective::exchange_headers(const Call& call) {
  const int n = size(), r = rank();
  Header mine{call.seq, call.count, call.counts_hash, static_cast<uint32_t>(call.kind), call.dtype, call.op, call.root,
              kMagic,   0};
  std::vector<Header> all(n);
  all[r] = mine;
  // One receive buffer per peer: a shared one reports only the last sender after several
  // completions, and we want to name exactly the peers that did not arrive.
  auto send = context_->createUnboundBuffer(&mine, sizeof(Header));
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> recv(n);
  const uint64_t slot = gloo_wire::slot(gloo_wire::kCallSlot, 0);
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    recv[q] = context_->createUnboundBuffer(&all[q], sizeof(Header));
    send->send(q, slot);
    recv[q]->recv(q, slot);
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  std::string missing, reason;
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    try {
      recv[q]->waitRecv(store::ms_left(deadline));
    } catch (const std::exception& e) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(q);
      if (reason.empty()) reason = e.what();
    }
  }
  if (!missing.empty())
    throw PeerFailed(concat(where(call), ": peer rank(s) ", missing, " did not reach this call (timeout ",
                            options_.timeout.count(), " ms; stalled, skipped it, or died): ", reason, probe_peers()));
  for (int i = 0; i < n - 1; ++i) send->waitSend(options_.timeout);
  stats_.add_bytes(CollKind::call_check, sizeof(Header) * (n - 1), sizeof(Header) * (n - 1));
  bool same = true;
  for (int q = 0; q < n; ++q) {
    const Header& h = all[q];
    same = same && h.magic == kMagic && h.seq == mine.seq && h.kind == mine.kind && h.dtype == mine.dtype &&
           h.op == mine.op && h.count == mine.count && h.counts_hash == mine.counts_hash && h.root == mine.root;
  }
  if (!same) {
    std::string list;
    for (int q = 0; q < n; ++q)
      list += concat(q ? "; " : "", "rank ", q, ": ", all[q].magic == kMagic ? describe(all[q]) : "garbled header");
    ZT_FAIL(where(call),
            ": ranks disagree on the call (every rank must issue the same collectives, with the "
            "same sizes, in the same order): ",
            list);
  }
}

Work GlooCollective::start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
  Call c{CollKind::all_reduce, "all_reduce", 0, count, 0, static_cast<uint32_t>(dtype), static_cast<uint32_t>(op), -1};
  return submit(c, [=, this] {
    if (count == 0 || size() == 1) return;
    if (options_.mode == ReduceMode::fast) return fast_all_reduce(data, count, dtype, op, CollKind::all_reduce);
    const auto counts = balanced_counts(count, size());
    const std::size_t offset = offsets_of(counts)[rank()] * dtype_size(dtype);
    unsigned char* mine = static_cast<unsigned char*>(data) + offset;
    det_reduce_scatter_v(data, mine, counts, dtype, op, CollKind::all_reduce);
    ring_all_gather_v(mine, data, counts, dtype, CollKind::all_reduce);
  });
}

Work GlooCollective::start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                            DType dtype, ReduceOp op) {
  const uint64_t total = total_of(counts);
  ZT_CHECK(total == 0 || input, "reduce_scatter: null input with ", total, " elements");
  ZT_CHECK(counts[rank()] == 0 || output, "reduce_scatter: null output with ", counts[rank()], " elements");
  Call c{CollKind::reduce_scatter,     "reduce_scatter",          0, total, hash_counts(counts),
         static_cast<uint32_t>(dtype), static_cast<uint32_t>(op), -1};
  return submit(c, [=, this] {
    if (total == 0) return;
    if (size() == 1) {
      if (output != input) std::memmove(output, input, total * dtype_size(dtype));
      return;
    }
    if (options_.mode == ReduceMode::fast) return fast_reduce_scatter_v(input, output, counts, dtype, op);
    det_reduce_scatter_v(input, output, counts, dtype, op, CollKind::reduce_scatter);
  });
}

Work GlooCollective::start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                        DType dtype) {
  const uint64_t total = total_of(counts);
  ZT_CHECK(total == 0 || output, "all_gather: null output with ", total, " elements");
  ZT_CHECK(counts[rank()] == 0 || input, "all_gather: null input with ", counts[rank()], " elements");
  Call c{CollKind::all_gather, "all_gather", 0, total, hash_counts(counts), static_cast<uint32_t>(dtype), 0, -1};
  return submit(c, [=, this] {
    if (total == 0) return;
    if (size() == 1) {
      if (output != input) std::memmove(output, input, total * dtype_size(dtype));
      return;
    }
    ring_all_gather_v(input, output, counts, dtype, CollKind::all_gather);
  });
}

Work GlooCollective::start_broadcast(void* data, std::size_t count, DType dtype, int root) {
  Call c{CollKind::broadcast, "broadcast", 0, count, 0, static_cast<uint32_t>(dtype), 0, root};
  return submit(c, [=, this] {
    if (count == 0 || size() == 1) return;
    tree_broadcast(data, count, dtype, root);
  });
}

Work GlooCollective::start_barrier() {
  Call c{CollKind::barrier, "barrier", 0, 0, 0, 0, 0, -1};
  return submit(c, [this] {
    if (size() > 1) gloo_barrier();
  });
}

Work GlooCollective::start_p2p(std::vector<P2pOp> ops) {
  uint64_t count = 0;
  for (const P2pOp& op : ops) count += op.count;
  Call c{CollKind::point_to_point, "p2p", 0, count, 0, 0, 0, -1};
  c.seq = next_p2p_seq_;  // the number submit() gives it, for the body's messages
  return submit(c, [this, c, ops = std::move(ops)] { p2p_batch(where(c), ops); });
}

}  // namespace zt
