// device/protected_memory.cc — mmap'd device allocations, their protection, and the SIGSEGV
// handler that names the buffer host code touched (see protected_memory.h).
#include "device/protected_memory.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/check.h"

namespace zt::device {
namespace {

// ---- the table the signal handler reads ------------------------------------------------------
// A signal handler may not lock a mutex or touch a std::map, so every live allocation of every
// emulated device in the process is also published here: a fixed array of slots, each claimed
// under a mutex by allocate() and read lock-free by the handler. A slot is published by storing
// its `begin` last (release) and withdrawn by clearing `begin` first.
constexpr std::size_t kSlots = 1024;
constexpr std::size_t kNameChars = 64;
struct Slot {
  std::atomic<std::uintptr_t> begin{0};  // 0: free
  std::atomic<std::uintptr_t> end{0};    // end of the mapping, guard page included
  std::atomic<std::size_t> bytes{0};
  char name[kNameChars] = {};
};
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free, "the SIGSEGV handler needs lock-free atomics");
std::array<Slot, kSlots> g_slots;
std::mutex g_slots_mutex;               // claims, releases and the handler's installation
struct sigaction g_previous = {};       // the SIGSEGV disposition before ours
volatile sig_atomic_t g_passed_on = 0;  // the handler has given one signal back since installed
std::atomic<int64_t> g_next_id{1};

// The device operation this thread is running (set by OpenScope), or null on a host thread's
// own code: the handler reads it to tell a kernel's undeclared access from a host access.
thread_local const char* t_operation = nullptr;

// Async-signal-safe output: write(2) of a string, of a decimal number.
void put(const char* text) {
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}
void put_number(std::size_t value) {
  char digits[24];
  char* p = digits + sizeof(digits);
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  put(p);
}

void on_segv(int sig, siginfo_t* info, void*) {
  // si_code > 0: the kernel reports a fault at si_addr; <= 0: someone sent the signal (kill,
  // raise), and si_addr means nothing.
  if (info->si_code > 0) {
    const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (Slot& slot : g_slots) {
      const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
      if (begin == 0 || addr < begin || addr >= slot.end.load(std::memory_order_acquire)) continue;
      const std::size_t offset = addr - begin, bytes = slot.bytes.load(std::memory_order_acquire);
      // one line in three forms: a kernel outside its spans, host code, an access past the end
      const bool inside = offset < bytes;
      const char* operation = t_operation;
      put("emulated device: ");
      if (inside) {
        put(operation != nullptr ? operation : "host code");
        put(" touched");
      } else {
        put("an access ran past the end of");
      }
      put(" device buffer '");
      put(slot.name);
      put(inside ? "' at byte " : "' (byte ");
      put_number(offset);
      put(" of ");
      put_number(bytes);
      if (!inside)
        put(")\n");
      else if (operation != nullptr)
        put(", outside the spans it declared (name every device range an operation reads or writes)\n");
      else
        put(" (device memory is not host memory; copy it to the host first)\n");
      ::_exit(3);
    }
  }
  // Not a device buffer: give the signal back to whoever handled it before us. A fault re-runs
  // the access when this handler returns and lands in the restored handler (or the default
  // action); a sent signal is sent again (it stays pending until we return). A second signal
  // after that means the previous handler handed it back to us (a handler that restores its own
  // predecessor, which is us, and raises again): the default action then ends the ping-pong.
  if (g_passed_on != 0) {
    struct sigaction fallback = {};
    fallback.sa_handler = SIG_DFL;
    ::sigaction(SIGSEGV, &fallback, nullptr);
  } else {
    g_passed_on = 1;
    ::sigaction(SIGSEGV, &g_previous, nullptr);
  }
  if (info->si_code <= 0) ::raise(sig);
}

// Make sure our handler is the one installed. Checked at every allocation, not once: a test
// framework or a sanitizer may install its own handler after ours, and a handler that found no
// device buffer has uninstalled itself. Caller holds g_slots_mutex.
void ensure_handler_installed() {
  struct sigaction current = {};
  ::sigaction(SIGSEGV, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == &on_segv) return;
  g_previous = current;
  g_passed_on = 0;
  struct sigaction ours = {};
  ours.sa_sigaction = &on_segv;
  ours.sa_flags = SA_SIGINFO;
  sigemptyset(&ours.sa_mask);
  ZT_CHECK(::sigaction(SIGSEGV, &ours, nullptr) == 0,
           "emulated device: cannot install the SIGSEGV handler: ", std::strerror(errno));
}

void publish(const DeviceAllocation& a) {
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  ensure_handler_installed();
  for (Slot& slot : g_slots) {
    if (slot.begin.load(std::memory_order_relaxed) != 0) continue;
    std::size_t n = 0;
    for (; n + 1 < kNameChars && n < a.name.size(); ++n) slot.name[n] = a.name[n];
    slot.name[n] = '\0';
    slot.bytes.store(a.bytes, std::memory_order_relaxed);
    slot.end.store(reinterpret_cast<std::uintptr_t>(a.begin) + a.mapped, std::memory_order_relaxed);
    slot.begin.store(reinterpret_cast<std::uintptr_t>(a.begin), std::memory_order_release);
    return;
  }
  ZT_FAIL("emulated device: more than ", kSlots, " device allocations are live at once (allocating '", a.name,
          "'); allocate fewer, larger buffers");
}

void withdraw(const std::byte* begin) {
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  for (Slot& slot : g_slots)
    if (slot.begin.load(std::memory_order_relaxed) == reinterpret_cast<std::uintptr_t>(begin))
      slot.begin.store(0, std::memory_order_release);
}

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
std::size_t data_pages_bytes(const DeviceAllocation& a) { return a.mapped - page_size(); }

}  // namespace

ProtectedMemory::~ProtectedMemory() {
  for (auto& [begin, a] : live_) {
    withdraw(a.begin);
    ::munmap(a.begin, a.mapped);
  }
}

std::byte* ProtectedMemory::allocate(std::size_t bytes, const std::string& name) {
  ZT_CHECK(bytes > 0, "emulated device: allocate 0 bytes for '", name, "' (device allocations have a size)");
  const std::size_t page = page_size();
  DeviceAllocation a;
  a.id = g_next_id.fetch_add(1);
  a.bytes = bytes;
  a.mapped = (bytes + page - 1) / page * page + page;
  a.name = name;
  void* p = ::mmap(nullptr, a.mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ZT_CHECK(p != MAP_FAILED, "emulated device: cannot map ", bytes, " bytes for device buffer '", name,
           "': ", std::strerror(errno));
  a.begin = static_cast<std::byte*>(p);
  std::lock_guard<std::mutex> lock(mutex_);
  const bool ok = ::mprotect(a.begin, a.mapped, PROT_NONE) == 0;  // its 0xFF fill comes at first open
  if (ok) {
    try {
      publish(a);
    } catch (...) {
      ::munmap(a.begin, a.mapped);
      throw;
    }
  } else {
    const int error = errno;
    ::munmap(a.begin, a.mapped);
    ZT_FAIL("emulated device: cannot protect device buffer '", name, "': ", std::strerror(error));
  }
  const std::size_t data_pages = data_pages_bytes(a) / page;
  pages_.emplace(reinterpret_cast<std::uintptr_t>(a.begin),
                 Pages{std::vector<uint32_t>(data_pages, 0), std::vector<uint8_t>(data_pages, 0)});
  live_.emplace(reinterpret_cast<std::uintptr_t>(a.begin), a);
  return a.begin;
}

DeviceAllocation ProtectedMemory::release(std::byte* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = live_.find(reinterpret_cast<std::uintptr_t>(ptr));
  ZT_CHECK(it != live_.end(), "emulated device: release of ", static_cast<const void*>(ptr),
           ", which is not the start of a live device allocation");
  DeviceAllocation a = std::move(it->second);
  live_.erase(it);
  pages_.erase(reinterpret_cast<std::uintptr_t>(a.begin));
  withdraw(a.begin);
  ::munmap(a.begin, a.mapped);
  return a;
}

std::optional<DeviceAllocation> ProtectedMemory::find(const void* ptr) const {
  const auto addr = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.upper_bound(addr);  // the first allocation that starts after addr
  if (it == live_.begin()) return std::nullopt;
  --it;
  if (addr - it->first >= it->second.mapped) return std::nullopt;
  return it->second;
}

template <typename F>
void ProtectedMemory::for_pages(const std::vector<Range>& ranges, F&& f) {
  const std::size_t page = page_size();
  for (const Range& r : ranges) {
    if (r.bytes == 0) continue;
    const auto addr = reinterpret_cast<std::uintptr_t>(r.ptr);
    auto it = live_.upper_bound(addr);
    if (it == live_.begin()) continue;  // the runtime checked every range before enqueueing it
    --it;
    const DeviceAllocation& a = it->second;
    const std::size_t offset = addr - it->first;
    if (offset >= a.bytes) continue;
    const std::size_t first = offset / page, end = (std::min(offset + r.bytes, a.bytes) + page - 1) / page;
    f(a, pages_.at(it->first), first, end);
  }
}

void ProtectedMemory::open(const std::vector<Range>& ranges) {
  const std::size_t page = page_size();
  std::lock_guard<std::mutex> lock(mutex_);
  for_pages(ranges, [&](const DeviceAllocation& a, Pages& pages, std::size_t first, std::size_t end) {
    // open each run of pages that nobody holds open yet with one mprotect
    std::size_t k = first;
    while (k < end) {
      if (pages.opens[k]++ > 0) {
        ++k;
        continue;
      }
      std::size_t run_end = k + 1;
      while (run_end < end && pages.opens[run_end] == 0) ++pages.opens[run_end++];
      if (::mprotect(a.begin + k * page, (run_end - k) * page, PROT_READ | PROT_WRITE) != 0) {
        // the protection is the point of this class: a device that cannot enforce it must not go
        // on pretending to
        put("emulated device: mprotect failed on a device buffer; stopping\n");
        std::abort();
      }
      for (std::size_t q = k; q < run_end; ++q)
        if (!pages.filled[q]) {
          std::memset(a.begin + q * page, 0xFF, page);  // what a fresh device buffer holds: not zeros
          pages.filled[q] = 1;
        }
      k = run_end;
    }
  });
}

void ProtectedMemory::close(const std::vector<Range>& ranges) noexcept {
  const std::size_t page = page_size();
  std::lock_guard<std::mutex> lock(mutex_);
  for_pages(ranges, [&](const DeviceAllocation& a, Pages& pages, std::size_t first, std::size_t end) {
    std::size_t k = first;
    while (k < end) {
      if (--pages.opens[k] > 0) {
        ++k;
        continue;
      }
      std::size_t run_end = k + 1;
      while (run_end < end && pages.opens[run_end] == 1) --pages.opens[run_end++];
      if (::mprotect(a.begin + k * page, (run_end - k) * page, PROT_NONE) != 0) {
        put("emulated device: mprotect failed on a device buffer; stopping\n");
        std::abort();
      }
      k = run_end;
    }
  });
}

ProtectedMemory::OpenScope::OpenScope(ProtectedMemory& memory, std::vector<Range> ranges, const char* operation)
    : memory_(memory), ranges_(std::move(ranges)) {
  memory_.open(ranges_);
  t_operation = operation;
}

ProtectedMemory::OpenScope::~OpenScope() {
  t_operation = nullptr;
  memory_.close(ranges_);
}

}  // namespace zt::device
