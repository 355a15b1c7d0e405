// collective/nccl/nccl_collective.cc — rendezvous and communicator creation, the device check,
// the call queue with its timeout and abort, sub-groups by ncclCommSplit, and shutdown of
// NcclCollective. The data movements themselves are in nccl_ops.cc.
#include "collective/nccl/nccl_collective.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <thread>

#include "collective/nccl/nccl_util.h"
#include "collective/store.h"
#include "store/socket.h"

namespace zt {

using nccl::check_cuda;
using nccl::nccl_text;
using store::ms_left;
using Clock = std::chrono::steady_clock;

namespace nccl {

ncclResult_t wait_while_in_progress(ncclComm_t comm, Clock::time_point deadline) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t got = ncclCommGetAsyncError(comm, &state);
    if (got != ncclSuccess) return got;
    if (state != ncclInProgress) return state;
    if (Clock::now() >= deadline) return ncclInProgress;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace nccl

namespace {

// Which GPU a rank resolved to, as peers see it: the UUID decides (it is unique across machines),
// the rest is for the message.
struct DeviceIdentity {
  std::string uuid;  // 32 hex digits
  std::string text;  // "GPU 0 (PCI 0000:1b:00.0) on host n1"
};

DeviceIdentity identify(int device) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), concat("cudaGetDeviceProperties(", device, ")"));
  static const char* hex = "0123456789abcdef";
  DeviceIdentity id;
  for (int i = 0; i < 16; ++i) {
    const auto b = static_cast<unsigned char>(prop.uuid.bytes[i]);
    id.uuid += hex[b >> 4];
    id.uuid += hex[b & 15];
  }
  char pci[32] = {0};
  if (cudaDeviceGetPCIBusId(pci, sizeof pci, device) != cudaSuccess) std::strcpy(pci, "?");
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  id.text = concat("GPU ", device, " (PCI ", pci, ") on host ", host);
  return id;
}

std::vector<char> bytes_of(const std::string& s) { return std::vector<char>(s.begin(), s.end()); }

// Wait for every key until the deadline; return the indices of the keys still missing then.
std::vector<int> wait_keys(gloo::rendezvous::Store& store, const std::vector<std::string>& keys,
                           Clock::time_point deadline) {
  std::vector<int> missing;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    try {
      store.wait({keys[i]}, ms_left(deadline));
    } catch (const std::exception&) {
      missing.push_back(static_cast<int>(i));
    }
  }
  return missing;
}

std::string list_text(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += concat(i ? ", " : "", v[i]);
  return s;
}

// What a timeout means, for the messages: NCCL itself would wait for the peer forever.
constexpr const char* kPeerMissing =
    ": a peer stalled, skipped this call, or died, and NCCL waits for it without limit; the NCCL communicator "
    "was aborted";

ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // creation returns at once: we poll, so a missing peer becomes a timeout
  return config;
}

// NCCL does not support two ranks of one communicator on one GPU (its docs: "not supported and
// may lead to hangs"); say so before it is tried, on every rank, naming the pair. `keys` hold each
// rank's "uuid|description".
void refuse_shared_gpus(OwningPrefixStore& store, const std::vector<std::string>& keys, const std::string& who) {
  const std::size_t n = keys.size();
  std::vector<std::string> uuid(n), text(n);
  for (std::size_t q = 0; q < n; ++q) {
    const auto v = store.get(keys[q]);
    const std::string s(v.begin(), v.end());
    const auto bar = s.find('|');
    uuid[q] = s.substr(0, bar);
    text[q] = bar == std::string::npos ? s : s.substr(bar + 1);
  }
  std::string shared;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b)
      if (uuid[a] == uuid[b]) shared += concat(shared.empty() ? "" : "; ", "ranks ", a, " and ", b, " on ", text[a]);
  ZT_CHECK(shared.empty(), who, ": two ranks of one NCCL communicator resolved to the same GPU (", shared,
           "): NCCL needs one device per rank; use the Gloo backend with host staging for ranks sharing a GPU, or "
           "give each rank its own device (NcclOptions::local_rank)");
}

}  // namespace

NcclCollective::NcclCollective(NcclOptions options) : options_(std::move(options)) {
  const int n = options_.size, r = options_.rank;
  check_rendezvous_options("NcclCollective", r, n, options_.timeout);
  const std::string who = concat("NcclCollective rank ", r, " of ", n);
  int devices = 0;
  const cudaError_t counted = cudaGetDeviceCount(&devices);
  ZT_CHECK(counted == cudaSuccess && devices > 0, who, ": no usable CUDA device (",
           counted == cudaSuccess ? std::string("0 devices") : std::string(cudaGetErrorString(counted)),
           "): the NCCL backend needs one GPU per rank; use the Gloo backend");
  device_ = options_.local_rank >= 0 ? options_.local_rank : r;
  ZT_CHECK(device_ < devices, who, ": local rank ", device_, " has no GPU of its own (", devices,
           " visible): NCCL needs one device per rank; use the Gloo backend with host staging for ranks sharing a GPU");
  check_cuda(cudaSetDevice(device_), concat(who, ": cudaSetDevice(", device_, ")"));

  ncclUniqueId id{};
  const auto deadline = Clock::now() + options_.timeout;
  if (n == 1) {
    const ncclResult_t got = ncclGetUniqueId(&id);
    ZT_CHECK(got == ncclSuccess, who, ": ncclGetUniqueId: ", nccl_text(got, nullptr));
  } else {
    ZT_CHECK(options_.store != nullptr, who, " has no rendezvous store");
    OwningPrefixStore store(options_.prefix, options_.store, options_.timeout);
    claim_rendezvous_key(store, concat("zt_nccl_joined_", r), r, options_.prefix);
    const DeviceIdentity mine = identify(device_);
    store.set(concat("nccl_device_", r), bytes_of(mine.uuid + "|" + mine.text));
    if (r == 0) {
      const ncclResult_t got = ncclGetUniqueId(&id);
      ZT_CHECK(got == ncclSuccess, who, ": ncclGetUniqueId: ", nccl_text(got, nullptr));
      store.set("nccl_id", std::vector<char>(id.internal, id.internal + sizeof id.internal));
    }
    std::vector<std::string> keys;
    for (int q = 0; q < n; ++q) keys.push_back(concat("nccl_device_", q));
    const auto missing = wait_keys(store, keys, deadline);
    ZT_CHECK(missing.empty(), "rendezvous failed for ", who, " (prefix '", options_.prefix, "', timeout ",
             options_.timeout.count(), " ms): rank(s) ", list_text(missing), " did not join; did every rank start?");
    refuse_shared_gpus(store, keys, who);
    if (r != 0) {
      ZT_CHECK(wait_keys(store, {"nccl_id"}, deadline).empty(), "rendezvous failed for ", who,
               ": rank 0 did not publish the NCCL unique id within ", options_.timeout.count(), " ms");
      const auto v = store.get("nccl_id");
      ZT_CHECK(v.size() == sizeof id.internal, who, ": NCCL unique id of ", v.size(), " bytes in the store");
      std::memcpy(id.internal, v.data(), v.size());
    }
  }
  ncclConfig_t config = nonblocking_config();
  const ncclResult_t started = ncclCommInitRankConfig(&comm_, n, id, r, &config);
  ncclResult_t state = started;
  if (started == ncclSuccess || started == ncclInProgress) state = nccl::wait_while_in_progress(comm_, deadline);
  if (state != ncclSuccess) {
    const std::string detail = state == ncclInProgress ? concat("not complete after ", options_.timeout.count(),
                                                                " ms (timeout; did every rank create it?)")
                                                       : nccl_text(state, comm_);
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    ZT_FAIL(who, ": ncclCommInitRankConfig on GPU ", device_, ": ", detail);
  }
  start_streams();
}

// A split's child: the communicator exists; only this instance's stream, event and thread are new.
NcclCollective::NcclCollective(NcclOptions options, int device, ncclComm_t comm)
    : options_(std::move(options)), device_(device), comm_(comm) {
  check_cuda(cudaSetDevice(device_), concat("subgroup ", options_.group, ": cudaSetDevice(", device_, ")"));
  start_streams();
}

void NcclCollective::start_streams() {
  try {
    const std::string at = concat("NcclCollective rank ", rank(), " of ", size(), " on GPU ", device_);
    // Non-blocking: no implicit synchronisation with the legacy default stream, whose work may
    // itself wait for this rank's peers.
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), at + ": cudaStreamCreate");
    check_cuda(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), at + ": cudaEventCreate");
    check_cuda(cudaMalloc(&barrier_word_, sizeof(float)), at + ": cudaMalloc");
    check_cuda(cudaMemset(barrier_word_, 0, sizeof(float)), at + ": cudaMemset");
  } catch (...) {
    close_communicator(true);
    throw;
  }
  thread_ = std::make_unique<JobThread>();
}

NcclCollective::~NcclCollective() {
  thread_.reset();  // run what is queued, then stop: nothing else touches the communicator now
  int previous = -1;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  // A rank unwinding an exception aborts at once (its peers then fail by their timeout); a rank
  // that finished normally flushes its communicator (bounded by the timeout, then aborted).
  close_communicator(broken_ || std::uncaught_exceptions() > 0);
  if (scratch_) cudaFree(scratch_);
  if (barrier_word_) cudaFree(barrier_word_);
  if (done_) cudaEventDestroy(done_);
  if (stream_) cudaStreamDestroy(stream_);
  if (previous >= 0) cudaSetDevice(previous);
}

void NcclCollective::close_communicator(bool abort) {
  if (!comm_) return;
  if (!abort) {
    const ncclResult_t started = ncclCommFinalize(comm_);
    const ncclResult_t state = started == ncclSuccess || started == ncclInProgress
                                   ? nccl::wait_while_in_progress(comm_, Clock::now() + options_.timeout)
                                   : started;
    abort = state != ncclSuccess;
  }
  if (abort) {
    ncclCommAbort(comm_);
  } else {
    ncclCommDestroy(comm_);
  }
  comm_ = nullptr;
}

CommStats NcclCollective::stats() const { return stats_.snapshot(); }

void* NcclCollective::scratch(std::size_t bytes) {
  if (scratch_bytes_ < bytes) {
    // The previous call has completed (each call waits for its stream), so the old one is idle.
    if (scratch_) check_cuda(cudaFree(scratch_), "scratch cudaFree");
    scratch_ = nullptr;
    scratch_bytes_ = 0;
    check_cuda(cudaMalloc(&scratch_, bytes), concat("scratch cudaMalloc(", bytes, " bytes) on GPU ", device_));
    scratch_bytes_ = bytes;
  }
  return scratch_;
}

std::string NcclCollective::where(const Call& call) const {
  return concat(call.name, " #", call.seq, " on rank ", rank(), " of ", size(),
                options_.group.empty() ? "" : " in group ", options_.group, " (NCCL, GPU ", device_, ")");
}

void NcclCollective::check_device_pointer(const void* p, std::size_t bytes, const char* what) const {
  if (bytes == 0) return;
  cudaPointerAttributes attr{};
  const cudaError_t got = cudaPointerGetAttributes(&attr, p);
  if (got != cudaSuccess) cudaGetLastError();  // clear the error this query left behind
  const bool device_memory =
      got == cudaSuccess && (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged);
  ZT_CHECK(device_memory, what, " on rank ", rank(), ": buffer ", p,
           " is not CUDA device memory; the NCCL backend moves device buffers (use the Gloo backend for host memory)");
  ZT_CHECK(attr.device == device_, what, " on rank ", rank(), ": buffer ", p, " lives on GPU ", attr.device,
           ", this rank's GPU is ", device_);
}

Work NcclCollective::submit(Call call, std::function<void()> body) {
  call.seq = next_seq_++;
  // The inputs are ready once the work queued so far on the caller's stream has run: record that
  // point now, on the caller's thread, so later work on that stream cannot be mistaken for it.
  check_cuda(cudaSetDevice(device_), concat(call.name, ": cudaSetDevice(", device_, ")"));
  cudaEvent_t ready = nullptr;
  check_cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), concat(call.name, ": cudaEventCreate"));
  const cudaError_t recorded = cudaEventRecord(ready, options_.user_stream);
  if (recorded != cudaSuccess) {
    cudaEventDestroy(ready);
    check_cuda(recorded, concat(call.name, ": cudaEventRecord on the caller's stream"));
  }
  return thread_->submit([this, call, ready, body = std::move(body)] { run_call(call, ready, body); });
}

void NcclCollective::run_call(const Call& call, cudaEvent_t inputs_ready, const std::function<void()>& body) {
  current_at_ = where(call);
  deadline_ = Clock::now() + options_.timeout;
  if (broken_) {
    cudaEventDestroy(inputs_ready);
    ZT_FAIL(current_at_, ": this Collective failed earlier and cannot be used again (", broken_reason_, ")");
  }
  try {
    check_cuda(cudaSetDevice(device_), current_at_ + ": cudaSetDevice");
    const cudaError_t waited = cudaStreamWaitEvent(stream_, inputs_ready, 0);
    cudaEventDestroy(inputs_ready);  // safe: destruction is deferred until the event completes
    check_cuda(waited, current_at_ + ": cudaStreamWaitEvent");
    body();
    wait_stream();
  } catch (const zt::Error& e) {
    if (!broken_) {
      broken_ = true;
      broken_reason_ = e.what();
      if (comm_) ncclCommAbort(comm_);  // the stream may hold half a collective: peers must not wait on it
      comm_ = nullptr;
    }
    throw;
  }
  stats_.add_call(call.kind);
}

void NcclCollective::abort_and_fail(const std::string& why) {
  broken_ = true;
  broken_reason_ = concat(current_at_, ": ", why);
  if (comm_) ncclCommAbort(comm_);  // also stops this rank's NCCL kernels that wait for peers
  comm_ = nullptr;
  ZT_FAIL(broken_reason_);
}

void NcclCollective::settle(ncclResult_t result, const char* nccl_call) {
  if (result == ncclInProgress) result = nccl::wait_while_in_progress(comm_, deadline_);
  if (result == ncclSuccess) return;
  if (result == ncclInProgress)
    abort_and_fail(
        concat(nccl_call, " still in progress after ", options_.timeout.count(), " ms (timeout)", kPeerMissing));
  abort_and_fail(concat(nccl_call, ": ", nccl_text(result, comm_), "; the NCCL communicator was aborted"));
}

// The call's work is on the stream; its completion is an event. NCCL's kernels wait for peers
// without limit, so the limit is here: poll the event and NCCL's asynchronous error state until
// the deadline, then abort the communicator (ncclCommAbort stops its kernels) and fail.
void NcclCollective::wait_stream() {
  check_cuda(cudaEventRecord(done_, stream_), current_at_ + ": cudaEventRecord");
  for (;;) {
    const cudaError_t q = cudaEventQuery(done_);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady)
      abort_and_fail(concat("CUDA error on the communication stream: ", cudaGetErrorString(q)));
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    if (async != ncclSuccess && async != ncclInProgress)
      abort_and_fail(concat("NCCL reported ", nccl_text(async, comm_), "; the NCCL communicator was aborted"));
    if (Clock::now() >= deadline_)
      abort_and_fail(concat("not complete after ", options_.timeout.count(), " ms (timeout)", kPeerMissing));
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// ncclCommSplit is collective over this (parent) communicator, so every parent rank takes part
// in every split; the store first shows that they all arrived at split #k and that the members of
// this group agree on it, so a mistake is a clear error rather than a split that never returns.
std::unique_ptr<Collective> NcclCollective::make_subgroup(const std::vector<int>& members, const std::string& name) {
  const std::string label = group_label(name, members);
  const int made_before = groups_made_[label]++;
  const int split = splits_made_++;
  int new_rank = 0;
  while (members[new_rank] != rank()) ++new_rank;  // subgroup() checked that this rank is a member
  const std::string at = concat("subgroup ", label, " on rank ", rank(), " of ", size(),
                                options_.group.empty() ? "" : " in group ", options_.group, " (split #", split, ")");
  const auto deadline = Clock::now() + options_.timeout;
  if (size() > 1) {
    OwningPrefixStore store(options_.prefix, options_.store, options_.timeout);
    store.set(concat("nccl_split", split, "_", rank()), bytes_of(label));
    std::vector<std::string> keys;
    for (int q = 0; q < size(); ++q) keys.push_back(concat("nccl_split", split, "_", q));
    const auto missing = wait_keys(store, keys, deadline);
    ZT_CHECK(missing.empty(), at, ": parent rank(s) ", list_text(missing),
             " did not create a group at this step within ", options_.timeout.count(),
             " ms. On the NCCL backend subgroup() is collective over the parent (ncclCommSplit): every parent rank "
             "creates its own group at the same step, the member lists partitioning the ranks, as make_grid does");
    for (int m : members) {
      const auto v = store.get(keys[m]);
      const std::string theirs(v.begin(), v.end());
      ZT_CHECK(theirs == label, at, ": member rank ", m, " is creating ", theirs,
               " at this step; all members must pass the same list and name");
    }
  }
  const int color = *std::min_element(members.begin(), members.end());  // one per group of a partition
  ncclComm_t child = nullptr;
  thread_
      ->submit([&] {
        ZT_CHECK(!broken_ && comm_, at, ": the parent group failed earlier (", broken_reason_, ")");
        check_cuda(cudaSetDevice(device_), at + ": cudaSetDevice");
        ncclConfig_t config = nonblocking_config();
        const ncclResult_t started = ncclCommSplit(comm_, color, new_rank, &child, &config);
        ncclResult_t state = started;
        if (started == ncclInProgress || started == ncclSuccess)
          state = nccl::wait_while_in_progress(child ? child : comm_, deadline);
        if (state != ncclSuccess) {
          if (child) ncclCommAbort(child);
          child = nullptr;
          ZT_FAIL(at, ": ncclCommSplit: ",
                  state == ncclInProgress ? concat("not complete after ", options_.timeout.count(), " ms (timeout)")
                                          : nccl_text(state, comm_));
        }
      })
      .wait();
  NcclOptions o = options_;
  o.size = static_cast<int>(members.size());
  o.rank = new_rank;
  o.local_rank = device_;
  o.prefix = concat(options_.prefix, "/", label, "#", made_before);
  o.group = options_.group.empty() ? label : concat(options_.group, "/", label);
  return std::unique_ptr<Collective>(new NcclCollective(std::move(o), device_, child));
}

}  // namespace zt
