// device/protected_memory.h — the emulated device's memory: host memory that host code cannot
// touch. Each allocation is its own page-aligned mmap region, kept PROT_NONE while host code runs
// and opened (read and write) only while one of the emulated device's own operations, a copy or a
// kernel, executes. Host code that reads or writes it at any other time takes a SIGSEGV, which a
// handler turns into one line naming the buffer and the byte, then exits with status 3:
//   emulated device: host code touched device buffer 'params' at byte 0 of 4096 (device memory
//   is not host memory; copy it to the host first)
//
// Why: on a GPU, a host pointer dereference of device memory crashes or reads garbage; on the
// host, device memory "works" and the bug stays hidden until the engine meets a real device. The
// protection makes the host path fail exactly where the device path would.
//
// Limitation: this machine has no memory protection keys, so the protection is per process, not
// per thread. While any device operation executes (on any stream's thread) every device buffer
// is open, and a host access made at that moment is not caught. Accesses between device
// operations, the common bug, always are. Behind each region lies one guard page that is never
// opened, so a kernel that runs past a buffer's last page is caught too (one that stays inside it
// is not: the checker of device/hazard_clock.h bounds the spans it is told about, not the
// accesses a kernel body makes).
//
// New allocations are filled with 0xFF bytes (a NaN in every float format the project uses), as
// device memory holds whatever was there before: a kernel that reads bytes nothing wrote gets NaN,
// not a plausible zero. Not here: streams, ordering, copies (device/emulated_runtime.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace zt::device {

/// One live device allocation of the emulated device.
struct DeviceAllocation {
  int64_t id = 0;              ///< unique per process, never reused (keys the access history)
  std::byte* begin = nullptr;  ///< its first byte (page-aligned)
  std::size_t bytes = 0;       ///< its size, as asked for
  std::size_t mapped = 0;      ///< bytes mapped: bytes rounded up to pages, plus the guard page
  std::string name;            ///< what it holds, for messages
};

/// The device allocations of one emulated device, their protection and the SIGSEGV report.
/// Thread-safe: allocate/release/find from host threads, open/close from stream threads.
class ProtectedMemory {
 public:
  ProtectedMemory() = default;
  /// Unmaps every allocation still live (the runtime has drained its streams before).
  ~ProtectedMemory();
  ProtectedMemory(const ProtectedMemory&) = delete;
  ProtectedMemory& operator=(const ProtectedMemory&) = delete;

  /// Map a new device allocation, filled with 0xFF, closed unless an operation is running.
  /// @param bytes its size (> 0). @param name what it holds, for messages.
  /// @return its first byte.
  std::byte* allocate(std::size_t bytes, const std::string& name);
  /// Unmap an allocation. @param ptr what allocate() returned. @return what it was (zt::Error if
  /// ptr is not the start of a live allocation).
  DeviceAllocation release(std::byte* ptr);

  /// The allocation whose mapping (guard page included) holds a byte, if any.
  /// @param ptr any address. @return a copy of the allocation, or empty for host memory.
  std::optional<DeviceAllocation> find(const void* ptr) const;

  /// Open every allocation for reading and writing while a device operation runs; nested and
  /// concurrent opens are counted, the first one changes the protection.
  void open();
  /// End one open(); the last one closes every allocation again.
  void close() noexcept;

  /// An open() for the lifetime of a scope.
  class OpenScope {
   public:
    /// @param memory the memory to open now and close at the end of the scope.
    explicit OpenScope(ProtectedMemory& memory) : memory_(memory) { memory_.open(); }
    /// Ends the scope's open().
    ~OpenScope() { memory_.close(); }
    OpenScope(const OpenScope&) = delete;
    OpenScope& operator=(const OpenScope&) = delete;

   private:
    ProtectedMemory& memory_;
  };

 private:
  void protect_all(int prot) noexcept;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, DeviceAllocation> live_;  // by first byte
  int open_count_ = 0;                               // operations running now, on any stream
};

}  // namespace zt::device
