// offload/file_tier.cc — the file and the ring of a file tier (see file_tier.h).
#include "offload/file_tier.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <csignal>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "core/check.h"

namespace zt::offload {

std::string file_tier_path(const std::string& dir, int world_rank, const std::string& kind) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.", world_rank);
  return dir + "/" + name + kind;
}

namespace {

// The live tier files of this process, for the signal handler: fixed slots of plain characters
// (nothing a handler may not touch), each published by its flag. A process with more live tiers
// than slots (thread ranks beyond 64) still removes every file on exit and on error; only the
// ones without a slot survive a signal.
constexpr std::size_t kSlots = 64;
char g_paths[kSlots][PATH_MAX];
std::atomic<bool> g_live[kSlots];

void remove_files_and_die(int signo) {
  for (std::size_t i = 0; i < kSlots; ++i)
    if (g_live[i].load(std::memory_order_acquire)) ::unlink(g_paths[i]);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(signo, &dfl, nullptr);
  ::raise(signo);  // ends the process as the signal would have
}

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int signo : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(signo, nullptr, &old);
      if (old.sa_handler != SIG_DFL) continue;  // the program handles it: leave it alone
      struct sigaction sa {};
      sa.sa_handler = remove_files_and_die;
      ::sigemptyset(&sa.sa_mask);
      ::sigaction(signo, &sa, nullptr);
    }
  });
}

/// A slot for the signal handler, or kSlots when none is free (or the path does not fit).
std::size_t publish(const std::string& path) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (path.size() >= PATH_MAX) return kSlots;
  for (std::size_t i = 0; i < kSlots; ++i)
    if (!g_live[i].load(std::memory_order_acquire)) {
      std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
      g_live[i].store(true, std::memory_order_release);
      return i;
    }
  return kSlots;
}

}  // namespace

TierFile::TierFile(std::string p, std::size_t bytes) : path(std::move(p)) {
  fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);  // never through a planted link
  ZT_CHECK(fd >= 0, "offload file ", path, ": cannot create it: ", std::strerror(errno));
  // a live run holds the lock; a killed one's lock died with it, and its file is taken over
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);  // not ours to remove
    ZT_FAIL("offload file ", path, ": ",
            e == EWOULDBLOCK ? "in use by another running job (give each job its own DIR)" : std::strerror(e));
  }
  if (::ftruncate(fd, 0) != 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    ::unlink(path.c_str());
    ::close(fd);
    ZT_FAIL("offload file ", path, ": cannot size it to ", bytes, " bytes: ", std::strerror(e));
  }
  install_signal_handlers();
  slot = publish(path);
}

TierFile::~TierFile() {
  if (slot < kSlots) g_live[slot].store(false, std::memory_order_release);
  ::unlink(path.c_str());  // while still locked: no other job can have taken it over
  ::close(fd);
}

std::vector<std::size_t> prefix_sums(const std::vector<std::size_t>& v) {
  std::vector<std::size_t> out(v.size(), 0);
  for (std::size_t u = 1; u < v.size(); ++u) out[u] = out[u - 1] + v[u - 1];
  return out;
}

std::size_t total(const std::vector<std::size_t>& v) { return v.empty() ? 0 : prefix_sums(v).back() + v.back(); }

FileTier::FileTier(const std::string& dir, int world_rank, std::vector<std::size_t> record_floats, std::size_t buffers,
                   bool read_ahead, Arena& host)
    : records_(std::move(record_floats)),
      offsets_(prefix_sums(records_)),
      slots_(std::max<std::size_t>(1, std::min(buffers, records_.size()))),
      slot_floats_(records_.empty() ? 0 : *std::max_element(records_.begin(), records_.end())),
      depth_(read_ahead ? slots_ - 1 : 0),
      read_ahead_(read_ahead),
      ring_(make_buffer<float>(host, slots_ * slot_floats_, category::buffers)),
      file_(file_tier_path(dir, world_rank), total(records_) * sizeof(float)),
      io_(std::make_unique<TransferThread>(file_.fd, file_.path)),
      last_(slots_) {
  ZT_CHECK(buffers >= 1, "the file tier needs at least one buffer");
}

FileTier::~FileTier() {
  for (auto& h : last_) {
    try {
      h.wait();
    } catch (...) {  // the run is failing already (or its result is in); the file goes anyway
    }
  }
}

void FileTier::read_through(std::size_t last) {
  for (; issued_ <= last && issued_ < units(); ++issued_)
    last_[slot(issued_)] = io_->read(buffer(slot(issued_)), bytes(issued_), offset(issued_));
}

float* FileTier::begin(std::size_t u, bool fresh) {
  ZT_CHECK(u == next_, "file tier: unit ", u, " begun out of order (expected unit ", next_, ")");
  const std::size_t s = slot(u);
  if (fresh) {
    last_[s].wait();  // the buffer's previous write has taken its bytes
    std::memset(buffer(s), 0, bytes(u));
    return buffer(s);
  }
  read_through(u + depth_);  // unit u itself when it was not read ahead, and the next ones
  last_[s].wait();
  return buffer(s);
}

void FileTier::end(std::size_t u) {
  ZT_CHECK(u == next_, "file tier: unit ", u, " ended out of order (expected unit ", next_, ")");
  last_[slot(u)] = io_->write(buffer(slot(u)), bytes(u), offset(u));
  if (++next_ < units()) return;
  next_ = issued_ = 0;  // the pass is over; the next one's first B units come while the step computes
  if (read_ahead_) read_through(depth_);
}

// Between passes the units read ahead, [0, issued_), sit in buffers 0 .. issued_ − 1 (issued_ <= B).
float* FileTier::load(std::size_t u) {
  ZT_CHECK(next_ == 0, "file tier: unit ", u, "'s record visited in the middle of a pass (unit ", next_, " is next)");
  const std::size_t s = slot(u);
  last_[s].wait();
  if (u >= issued_) {  // not read ahead: bring it into its buffer now
    last_[s] = io_->read(buffer(s), bytes(u), offset(u));
    last_[s].wait();
  }
  return buffer(s);
}

void FileTier::store(std::size_t u, bool modified) {
  const std::size_t s = slot(u);
  if (modified) last_[s] = io_->write(buffer(s), bytes(u), offset(u));
  // the buffer held unit s, read ahead for the next pass: read it again (after the write: FIFO)
  if (u >= issued_ && s < issued_) last_[s] = io_->read(buffer(s), bytes(s), offset(s));
}

}  // namespace zt::offload
