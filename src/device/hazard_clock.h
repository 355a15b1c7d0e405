// device/hazard_clock.h — the emulated device's race detector: a happens-before checker with
// vector clocks that finds missing stream synchronisation when work is *enqueued*, so it never
// depends on which stream's thread happened to run first.
//
// The model is CUDA's: operations on one stream are ordered; an event recorded on stream A and
// waited for by stream B orders A's earlier operations before B's later ones; a host synchronize
// orders the synced work before everything enqueued afterwards, on any stream. Each stream keeps a
// vector clock (entry t: how many of stream t's operations are ordered before its next one); each
// operation gets the next sequence number of its stream; an event carries a copy of its stream's
// clock; waiting merges that copy into the waiter's clock; a host synchronize merges into a host
// clock that every later enqueue inherits. An earlier operation (stream t, number q) is ordered
// before a new one on stream s exactly when s's clock has entry t >= q.
//
// For each device allocation the checker keeps the recent accesses (byte range, stream, number,
// read or write, the operation's name). A new operation that reads bytes another stream wrote, or
// writes bytes another stream read or wrote, without that access being ordered before it, is
// rejected with one zt::Error naming both operations, both streams, the buffer and the bytes.
// Accesses that every stream (and the host) has ordered before its future work can never race
// again and are dropped, as is an access covered by a later one that any racer would race with
// too; so the history stays about as large as the work in flight.
//
// Not thread-safe: the runtime calls it under its own lock. Not here: running the work
// (device/emulated_runtime.h), which bytes are device memory (device/protected_memory.h), and the
// host's own accesses to device-to-host destinations (only device memory is tracked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace zt::device {

/// For each stream (by index), how many of its operations are ordered before a point.
using VectorClock = std::vector<uint64_t>;

/// An operation as messages name it.
struct OpName {
  std::string what;  ///< e.g. "kernel 'gelu'", "copy host_to_device"
  std::string kind;  ///< "kernel" or "copy", for the advice at the end of a message
};

/// Bytes [begin, end) of one device allocation that an operation reads or writes.
struct TrackedAccess {
  int64_t buffer = 0;     ///< the allocation's id (DeviceAllocation::id)
  std::size_t begin = 0;  ///< first byte, from the allocation's start
  std::size_t end = 0;    ///< one past the last byte
  bool write = false;     ///< written (else read)
};

/// The happens-before checker of one emulated device (see the file comment).
class HazardClock {
 public:
  /// Start tracking a stream. @param name its name, for messages. @return its index (0, 1, ...).
  int add_stream(const std::string& name);
  /// Start tracking a device allocation. @param buffer its id. @param name its name.
  void add_buffer(int64_t buffer, const std::string& name);
  /// Forget an allocation and its accesses (it was freed). @param buffer its id.
  void remove_buffer(int64_t buffer);

  /// Check a new operation against every recorded access and, if no access races with it, record
  /// its own. Throws zt::Error on a race and then records nothing.
  /// @param stream its stream's index. @param op its name. @param accesses what it reads and
  /// writes (buffers added before). @return its number on its stream (1, 2, ...).
  uint64_t enqueue(int stream, const OpName& op, const std::vector<TrackedAccess>& accesses);

  /// @param stream a stream's index. @return its clock now, host synchronisation included: what
  /// an event recorded now carries, and what a host synchronize of it now orders.
  VectorClock clock_of(int stream) const;
  /// Order a stream's later operations after an event. @param stream the waiter's index.
  /// @param event the clock the event carries (clock_of its stream when it was recorded).
  void wait(int stream, const VectorClock& event);
  /// The host has seen work complete: order everything enqueued from now on after it, and drop
  /// the accesses that can no longer race. @param synced the clock of the synced point.
  void host_synchronized(const VectorClock& synced);

  /// @return the accesses recorded now, over all buffers (the history's size).
  std::size_t tracked() const;

 private:
  struct Record {
    std::size_t begin = 0, end = 0;
    int stream = 0;
    uint64_t seq = 0;
    bool write = false;
    std::shared_ptr<const OpName> op;
  };
  struct Buffer {
    std::string name;
    std::vector<Record> records;
    std::size_t prune_at = 64;  // prune when the history reaches this size
  };
  void add(Buffer& buffer, const Record& record, const VectorClock& clock);
  void prune(Buffer& buffer) const;
  [[noreturn]] void report(const OpName& op, int stream, uint64_t seq, const TrackedAccess& access,
                           const Buffer& buffer, const Record& earlier) const;

  std::vector<std::string> stream_names_;
  std::vector<VectorClock> stream_clocks_;  // without the host clock merged in
  VectorClock host_clock_;
  std::unordered_map<int64_t, Buffer> buffers_;
};

}  // namespace zt::device
