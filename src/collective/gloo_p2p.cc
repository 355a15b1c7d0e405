// collective/gloo_p2p.cc — point-to-point batches of GlooCollective: sends and receives between
// two ranks of the group over Gloo's unbound buffers, with the header check, the timeout and the
// dead-peer errors of the collectives (gloo_collective.h).
//
// One transfer from a to b is two messages, both tagged with the pair's message number k (the
// k-th message a sends to b; b counts the same when receiving): the 48-byte header (count, dtype,
// k, sender), then the payload. The receiver posts the payload's receive only after it has read
// and checked the header, so a size or type mismatch is an error naming both sides, never a write
// past the buffer. Bytes counted (stats.h, kind point_to_point): the payloads, S per send on the
// sender and S per receive on the receiver; headers go to call_check.
// A peer that dies in the middle of a payload: Gloo's TCP pair notices the closed connection and
// fails every operation it has queued, but not the receive it is reading into at that moment
// (taken off the queue when its first bytes arrived), whose wait would last the whole timeout.
// So each peer's pair carries one receive that never completes (a "probe" on a slot nobody sends
// to, posted at the first transfer with that peer): it stays queued, so the pair's failure
// reaches it. While a batch waits, one watcher thread per peer waits on that probe; when the
// pair fails the watcher ends the batch's waits on it at once, and when the batch is done the
// batch ends the watcher's wait. tests/collective/test_processes.cc kills a process while it
// sends 64 MiB.
// Not here: which ranks talk (a pipeline schedule decides), any reduction.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include "collective/gloo_call_header.h"
#include "collective/gloo_collective.h"
#include "core/error_report.h"
#include "store/socket.h"

namespace zt {

namespace {

using Clock = std::chrono::steady_clock;

// One transfer of the batch and the Gloo buffers that carry it.
struct Transfer {
  const P2pOp* op = nullptr;
  uint64_t number = 0;  // the pair's message number k
  gloo_wire::Header header{};
  std::unique_ptr<gloo::transport::UnboundBuffer> header_buffer, payload_buffer;
};

// Watches the pairs of a batch's peers while the batch waits (file comment): one thread per peer
// waits on that peer's probe; a failed pair aborts the waits of the batch's buffers with that peer
// and keeps the pair's error for the message.
class PairWatch {
 public:
  PairWatch(const std::map<int, gloo::transport::UnboundBuffer*>& probes, std::vector<Transfer>& transfers,
            std::chrono::milliseconds longest)
      : probes_(probes), transfers_(transfers) {
    for (const auto& [peer, probe] : probes_)
      threads_.emplace_back([this, peer = peer, probe = probe, longest] { watch(peer, probe, longest); });
  }
  ~PairWatch() {
    for (const auto& [peer, probe] : probes_) probe->abortWaitRecv();  // the batch is over
    for (auto& t : threads_) t.join();
  }
  // The error that ended the waits on this peer's pair ("" while it is healthy).
  std::string failure(int peer) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = failed_.find(peer);
    return it == failed_.end() ? "" : it->second;
  }

 private:
  void watch(int peer, gloo::transport::UnboundBuffer* probe, std::chrono::milliseconds longest) {
    try {
      probe->waitRecv(longest);  // returns (false) only when the batch ends it: nothing ever arrives
    } catch (const std::exception& e) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        failed_[peer] = e.what();
      }
      for (Transfer& t : transfers_)
        if (t.op->peer == peer)
          for (auto* b : {t.header_buffer.get(), t.payload_buffer.get()})
            if (b) t.op->dir == P2pOp::Dir::send ? b->abortWaitSend() : b->abortWaitRecv();
    }
  }

  const std::map<int, gloo::transport::UnboundBuffer*>& probes_;
  std::vector<Transfer>& transfers_;
  std::mutex mutex_;
  std::map<int, std::string> failed_;
  std::vector<std::thread> threads_;
};

// One transfer's buffers: its header and its payload; a send's header filled in. `numbers` is the
// per-peer message counter of its direction. In place: the header buffer points at t.header.
void prepare_transfer(Transfer& t, gloo::Context& context, const P2pOp& op, std::vector<uint64_t>& numbers, int rank) {
  t.op = &op;
  t.number = numbers[static_cast<std::size_t>(op.peer)]++;
  if (op.dir == P2pOp::Dir::send)
    t.header = {t.number,
                op.count,
                0,
                static_cast<uint32_t>(CollKind::point_to_point),
                static_cast<uint32_t>(op.dtype),
                0,
                rank,
                gloo_wire::kMagic,
                0};
  t.header_buffer = context.createUnboundBuffer(&t.header, sizeof t.header);
  if (op.count) t.payload_buffer = context.createUnboundBuffer(op.data, op.bytes());
}

// A send's header and payload posted, or a receive's first message (its header).
void post(Transfer& t) {
  const P2pOp& op = *t.op;
  if (op.dir == P2pOp::Dir::send) {
    t.header_buffer->send(op.peer, gloo_wire::slot(gloo_wire::kP2pHeaderSlot, t.number));
    if (t.payload_buffer) t.payload_buffer->send(op.peer, gloo_wire::slot(gloo_wire::kP2pPayloadSlot, t.number));
  } else {
    t.header_buffer->recv(op.peer, gloo_wire::slot(gloo_wire::kP2pHeaderSlot, t.number));
  }
}

// Each receive's header read and compared with what the receive expects, then its payload's
// receive posted. @return the header bytes received.
template <typename Wait, typename Fail>
uint64_t check_headers(const std::string& at, std::vector<Transfer>& transfers, Wait& wait, Fail& fail) {
  uint64_t received = 0;
  for (Transfer& t : transfers) {
    if (t.op->dir != P2pOp::Dir::recv) continue;
    wait(t, t.header_buffer.get());
    received += sizeof t.header;
    const gloo_wire::Header& h = t.header;
    const bool same = h.magic == gloo_wire::kMagic && h.kind == static_cast<uint32_t>(CollKind::point_to_point) &&
                      h.seq == t.number && h.root == t.op->peer && h.count == t.op->count &&
                      h.dtype == static_cast<uint32_t>(t.op->dtype);
    if (!same)
      ZT_FAIL(at, ": recv of message #", t.number, " from rank ", t.op->peer, " expects ", t.op->count, " ",
              dtype_name(t.op->dtype), ", but rank ", t.op->peer, "'s send #", h.seq, " carries ", h.count, " ",
              dtype_name(static_cast<DType>(h.dtype % 3)), h.magic == gloo_wire::kMagic ? "" : " (garbled header)",
              " (the two sides must issue matching sends and receives in the same order)");
    if (!t.payload_buffer) continue;
    try {
      t.payload_buffer->recv(t.op->peer, gloo_wire::slot(gloo_wire::kP2pPayloadSlot, t.number));
    } catch (const std::exception& e) {
      fail(t, "recv", e.what());
    }
  }
  return received;
}

}  // namespace

void GlooCollective::p2p_batch(const std::string& at, const std::vector<P2pOp>& ops) {
  if (sent_to_.empty()) sent_to_.assign(size(), 0), received_from_.assign(size(), 0);
  std::vector<Transfer> transfers(ops.size());
  uint64_t sent = 0, received = 0, headers_sent = 0;
  // Turn a Gloo failure into an error that names the transfer and its peer.
  auto fail = [&](const Transfer& t, const char* what, const std::string& gloo_message) {
    const bool is_send = t.op->dir == P2pOp::Dir::send;
    std::string hint = peer_hint(gloo_message);
    if (hint.empty() || gloo_message.find("imed out") != std::string::npos)
      hint =
          concat(" [rank ", t.op->peer, " did not ", is_send ? "post the matching recv" : "send it", " within ",
                 options_.timeout.count(), " ms: it stalled, died, or is itself ",
                 is_send ? "sending to this rank outside one batch with this send" : "waiting for something else", "]");
    throw PeerFailed(concat(at, ": ", what, " of message #", t.number, is_send ? " to" : " from", " rank ", t.op->peer,
                            " (", t.op->count, " ", dtype_name(t.op->dtype), "): ", gloo_message, hint, probe_peers()));
  };
  // Every buffer first (the watcher below reads them), then every send and every receive's first
  // message: no transfer of the batch waits for another, so two ranks that send to each other in
  // one batch cannot block each other.
  for (std::size_t i = 0; i < ops.size(); ++i)
    prepare_transfer(transfers[i], *context_, ops[i], ops[i].dir == P2pOp::Dir::send ? sent_to_ : received_from_,
                     rank());
  for (Transfer& t : transfers) {
    try {
      post(t);
    } catch (const std::exception& e) {  // the pair had failed already
      fail(t, t.op->dir == P2pOp::Dir::send ? "send" : "recv", e.what());
    }
    if (t.op->dir == P2pOp::Dir::send) headers_sent += sizeof t.header, sent += t.op->bytes();
  }
  // each peer's probe, posted at the first transfer with it (file comment)
  std::map<int, gloo::transport::UnboundBuffer*> probes;
  for (Transfer& t : transfers) {
    auto& probe = watch_probes_[t.op->peer];
    if (!probe) {
      probe = context_->createUnboundBuffer(&watch_byte_, 1);
      try {
        probe->recv(t.op->peer, gloo_wire::slot(gloo_wire::kWatchSlot, 0));
      } catch (const std::exception& e) {
        fail(t, t.op->dir == P2pOp::Dir::send ? "send" : "recv", e.what());
      }
    }
    probes[t.op->peer] = probe.get();
  }
  const auto deadline = Clock::now() + options_.timeout;
  // the probes' waits must never time out themselves (a timed-out wait closes every pair of the
  // context, in Gloo): the batch ends them long before
  PairWatch watch(probes, transfers, 4 * options_.timeout + std::chrono::minutes(1));
  // Wait for one buffer's side of a transfer; an abort by the watcher is the pair's failure.
  auto wait = [&](Transfer& t, gloo::transport::UnboundBuffer* b) {
    const bool is_send = t.op->dir == P2pOp::Dir::send;
    bool done = false;
    try {
      done = is_send ? b->waitSend(store::ms_left(deadline)) : b->waitRecv(store::ms_left(deadline));
    } catch (const std::exception& e) {
      fail(t, is_send ? "send" : "recv", e.what());
    }
    if (!done) fail(t, is_send ? "send" : "recv", watch.failure(t.op->peer));
  };
  // Receives: read and check each header, then post the payload's receive.
  const uint64_t headers_received = check_headers(at, transfers, wait, fail);
  for (Transfer& t : transfers)
    if (t.op->dir == P2pOp::Dir::recv && t.payload_buffer) {
      wait(t, t.payload_buffer.get());
      received += t.op->bytes();
    }
  for (Transfer& t : transfers)
    if (t.op->dir == P2pOp::Dir::send)
      for (auto* b : {t.header_buffer.get(), t.payload_buffer.get()})
        if (b) wait(t, b);
  stats_.add_bytes(CollKind::point_to_point, sent, received);
  stats_.add_bytes(CollKind::call_check, headers_sent, headers_received);
}

}  // namespace zt
