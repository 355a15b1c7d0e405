// offload/param_file_tier.h — ZeRO-Infinity's parameter tier (--offload-params file:DIR): stage 3's
// compute-dtype parameter shards of a rank kept in one file and streamed through a bounded ring
// of buffers, read ahead of each unit's all-gather and written back after the update.
//
// The file DIR/rank-<5 digits>.params holds unit u's shard (shard_u values of the compute type,
// padding included) at a fixed offset; a unit whose parameters are not in the file (a persistent
// unit of --persist-below-mb) has an empty record. The file is a TierFile (offload/file_tier.h):
// created, locked, removed on exit, on error and on SIGINT/SIGTERM/SIGHUP, like the optimizer's.
//
// A pass visits records in a known order (a list of units; a unit may come more than once):
// the gathers of one micro-batch in the acquire order (zero/step_interpreter.h), or the update of
// every sharded unit. Visit k sits in buffer k mod R; get(k) returns it once read, put(k) frees
// it (queueing its write-back for the update pass). Reads are queued as soon as a buffer is free:
// while visit k is in use (gathered, or updated), the reads of the visits up to k + R − 1 that
// are not in use run on the I/O thread (offload/transfer_thread.h). FIFO order means a buffer's next
// read never overtakes the write of its previous visit. A pass starts with no read ahead (so each
// step's I/O is exactly its closed form: every visit one read of its record, every update one
// write), and records touched between passes (with_record: initialisation, checkpoints, dumps)
// are read and written synchronously. RAM held: R buffers of the largest record, one allocation
// in the arena given (ledger category `offload_param_buffers`), however large the model.
//
// On a device (ZeRO-Infinity's path, NVMe → pinned host memory → GPU) the ring is the device
// arena's memory, as it is the host arena's without one, so every reader of a shard (the gathers,
// the update) reads device memory and runs unchanged. A file cannot be read into device memory,
// so each record goes through one pinned bounce buffer of the largest record in the host arena
// given (category `offload_param_staging`): a read is the file into the bounce, then a copy up
// into the visit's buffer; a write-back a copy down into the bounce, then the file. The copies
// run on the I/O thread, on a stream of the tier's own ("parameter tier"), and each first waits
// for an event the compute stream recorded when the buffer was put back, so a buffer is never
// overwritten or written out before the compute stream's work on it (the gather that read it, the
// update that wrote it) has run. The FIFO keeps one job at a time in the bounce. Between passes
// the visitor gets the bounce itself: host memory, as with_record promises.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "device/runtime.h"
#include "memory/arena.h"
#include "offload/file_tier.h"
#include "offload/transfer_thread.h"

namespace zt::offload {

/// Ledger category of the parameter tier's ring of shard buffers.
inline constexpr const char* kParamBuffersCategory = "offload_param_buffers";
/// Ledger category (the host arena's, on a device) of the record between the file and the ring.
inline constexpr const char* kParamStagingCategory = "offload_param_staging";

/// Where the ring is when the arena is a device's (see the file comment); no runtime: the host.
struct ParamTierDevice {
  device::Runtime* runtime = nullptr;  ///< the device, or null: the ring is host memory
  device::Stream compute;              ///< the stream that reads and updates the shards
  Arena* host = nullptr;               ///< pinned host memory for the bounce record
};

/// One rank's parameter shards in a file, streamed through a ring of buffers.
class ParamFileTier {
 public:
  /// Create (or take over) and size the file, allocate the ring.
  /// @param dir DIR (must exist and be writable). @param world_rank the rank (names the file).
  /// @param record_bytes per unit: the bytes of its shard (0: not in the file).
  /// @param buffers R, the ring's buffers (>= 1). @param arena where the ring is allocated.
  /// @param device on a device: its runtime, compute stream and host arena (default: the host).
  ParamFileTier(const std::string& dir, int world_rank, std::vector<std::size_t> record_bytes, std::size_t buffers,
                Arena& arena, ParamTierDevice device = {});
  /// Waits for every queued job (an error is no longer reported), closes and removes the file.
  ~ParamFileTier();
  ParamFileTier(const ParamFileTier&) = delete;
  ParamFileTier& operator=(const ParamFileTier&) = delete;

  /// Start a pass over `visits` (units with records); a pass left unfinished (an exception) is
  /// abandoned. Queues the reads of the first R visits. @param visits the units in visit order.
  void start_pass(std::vector<std::size_t> visits);
  /// Visit k of the pass (the next one), read. @param k the visit. @return its record (valid until put(k)).
  std::byte* get(std::size_t k);
  /// Visit k is done (visits are put in order); its buffer is free for visit k + R.
  /// @param k the visit. @param write queue the write-back of its record first.
  void put(std::size_t k, bool write);

  /// Between passes: unit u's record in a buffer; fn(std::byte*) returns whether it changed it,
  /// which is then written back (both synchronously). @param u the unit. @param fresh true: a
  /// zeroed buffer to fill, no read. @param fn the visitor.
  template <typename Fn>
  void with_record(std::size_t u, bool fresh, Fn fn) {
    std::byte* r = load(u, fresh);
    store(u, fn(r));
  }

  /// Wait for every queued read and write-back (and, on a device, its copy): the end of an update
  /// pass, so that a step's copies and I/O are all its own.
  void drain();

  /// @return the I/O counters so far.
  TransferStats stats() const { return io_->stats(); }

 private:
  std::size_t slot(std::size_t k) const { return k % slots_; }
  std::byte* buffer(std::size_t s) { return ring_.data() + s * slot_bytes_; }
  off_t offset(std::size_t u) const { return static_cast<off_t>(offsets_[u]); }
  void read_through();  // queue the reads of visits [issued_, min(size, freed_ + R))
  std::byte* load(std::size_t u, bool fresh);
  void store(std::size_t u, bool modified);
  // on a device, run on the I/O thread: the bounce up into buffer s (`up`), or buffer s down into
  // it, after the compute stream's work on s up to `released`
  void bounce_copy(std::size_t s, std::size_t bytes, device::Event released, bool up);

  std::vector<std::size_t> records_, offsets_;  // per unit: bytes, and where in the file
  std::size_t slots_ = 1, slot_bytes_ = 0;
  ArenaAllocation ring_;                 // R buffers of the largest record (declared before the thread)
  ParamTierDevice device_;               // the runtime, or none
  device::Stream copies_;                // on a device: the tier's copy stream
  ArenaAllocation bounce_;               // on a device: the record between the file and the ring
  std::vector<device::Event> released_;  // on a device, per buffer: the compute stream at its last put()
  TierFile file_;                        // closed and removed after the thread has stopped
  std::unique_ptr<TransferThread> io_;   // destroyed first: every queued job has run
  std::vector<TransferHandle> last_;     // per buffer: the last job queued on it
  std::vector<std::size_t> visits_;
  std::size_t next_ = 0;    // the visit get() hands out next
  std::size_t freed_ = 0;   // visits put back: [0, freed_)
  std::size_t issued_ = 0;  // visits whose reads are queued: [0, issued_)
};

}  // namespace zt::offload
