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
// What an operation may touch: exactly the device ranges it names (a copy's device side, a
// kernel's read and written spans), rounded out to whole pages, and only while it runs. So a
// kernel body that reads or writes device memory outside the spans it declared is caught too,
// and named as such: the race checker (device/hazard_clock.h) trusts those spans, and a span
// that is too small would hide a race. Pages are opened with a count per page, so operations on
// concurrent streams that share a page open it once and the last to finish closes it.
//
// Limitation: this machine has no memory protection keys, so the protection is per process, not
// per thread. While an operation runs on a stream's thread, the pages of its spans are open to
// every thread, and a host access to those pages at that moment is not caught. Accesses to any
// other page, and every access between operations, are. Behind each allocation lies one guard
// page that is never opened.
//
// A fresh allocation holds 0xFF bytes (a NaN in every float format the project uses), as device
// memory holds whatever was there before: a kernel that reads bytes nothing wrote gets NaN, not
// a plausible zero. The fill happens to each page the first time an operation opens it, so an
// arena's large slab costs host memory only for the pages the run uses.
// Not here: streams, ordering, copies (device/emulated_runtime.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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

  /// Map a new device allocation, closed (its pages get their 0xFF fill when first opened).
  /// @param bytes its size (> 0). @param name what it holds, for messages.
  /// @return its first byte.
  std::byte* allocate(std::size_t bytes, const std::string& name);
  /// Unmap an allocation. @param ptr what allocate() returned. @return what it was (zt::Error if
  /// ptr is not the start of a live allocation).
  DeviceAllocation release(std::byte* ptr);

  /// The allocation whose mapping (guard page included) holds a byte, if any.
  /// @param ptr any address. @return a copy of the allocation, or empty for host memory.
  std::optional<DeviceAllocation> find(const void* ptr) const;

  /// A device range an operation touches.
  struct Range {
    const void* ptr = nullptr;  ///< its first byte, inside a live allocation
    std::size_t bytes = 0;      ///< its length
  };
  /// Open the pages of these ranges for reading and writing while a device operation runs (a
  /// first open of a page fills it with 0xFF); counted per page, so nested and concurrent opens
  /// of one page close it only at the last close. @param ranges inside live allocations.
  void open(const std::vector<Range>& ranges);
  /// End one open() of the same ranges; a page whose count reaches zero is closed again.
  /// @param ranges what open() was given.
  void close(const std::vector<Range>& ranges) noexcept;

  /// An open() for the lifetime of a scope, on the thread that runs the operation: a fault on
  /// that thread inside a device buffer is then reported as the operation's, not the host's.
  class OpenScope {
   public:
    /// @param memory the memory. @param ranges the operation's device ranges.
    /// @param operation its name, for the fault message (must outlive the scope).
    OpenScope(ProtectedMemory& memory, std::vector<Range> ranges, const char* operation);
    /// Ends the scope's open().
    ~OpenScope();
    OpenScope(const OpenScope&) = delete;
    OpenScope& operator=(const OpenScope&) = delete;

   private:
    ProtectedMemory& memory_;
    std::vector<Range> ranges_;
  };

 private:
  // The pages of a live allocation: how many running operations hold each open, and whether
  // each has been given its 0xFF fill.
  struct Pages {
    std::vector<uint32_t> opens;
    std::vector<uint8_t> filled;
  };
  // Apply f(allocation, pages, first page, end page) to each range's pages. Caller holds mutex_.
  template <typename F>
  void for_pages(const std::vector<Range>& ranges, F&& f);

  mutable std::mutex mutex_;
  std::map<std::uintptr_t, DeviceAllocation> live_;  // by first byte
  std::map<std::uintptr_t, Pages> pages_;            // by first byte, as live_
};

}  // namespace zt::device
