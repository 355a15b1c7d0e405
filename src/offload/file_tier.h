// offload/file_tier.h — ZeRO-Infinity's file tier: a rank's per-unit records (FP32 master and
// optimizer state) kept in one file and streamed through a bounded ring of buffers in RAM.
//
// The file DIR/rank-<5 digits>.offload holds unit u's record at a fixed offset. An update pass
// visits the units in order 0, 1, ..., U−1: begin(u) hands out unit u's record in a buffer, end(u)
// writes it back. The ring has B = min(--offload-buffers, U) buffers, unit u in buffer u mod B;
// with read-ahead the reads of units u+1 .. u+B−1 are queued while unit u is updated, and when a
// pass ends the first B units of the next pass are read already (they arrive while forward and
// backward run). Writes go behind: end(u) queues the write and returns. One reader/writer thread
// runs the jobs in submission order (offload/transfer_thread.h), so a buffer's read never overtakes the
// write of its previous unit — nothing else needs to wait. RAM held: B buffers of the largest
// record, one arena allocation (ledger category `offload_buffers`), however large the model.
//
// The file is created at construction (a stale one left by a killed run is taken over: the lock
// below is released when its process dies), locked (flock, so two live runs sharing DIR fail with
// a clear error instead of corrupting each other), and removed by the destructor — on a normal
// exit and when an exception unwinds the run. SIGINT, SIGTERM and SIGHUP (Ctrl-C, or a launcher
// stopping the other ranks after one failed) end a process without unwinding, so while a file
// tier exists a handler for them — installed only where the signal's action is the default —
// removes every live tier file of the process, then lets the signal end it as before. Only a
// SIGKILL (or a crash) leaves a file behind.
// Records are not fsynced: they are scratch state of one run, never a checkpoint (checkpoint/).
// Not the optimizer (offload/optimizer_tier.h), not the page cache: the kernel may keep the
// file's pages in memory; the bound here is on what this process holds.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "offload/tier.h"
#include "offload/transfer_thread.h"

namespace zt::offload {

/// The file of one rank. @param dir DIR. @param world_rank the rank. @param kind the file's
/// extension. @return DIR/rank-<5 digits>.<kind> (the optimizer's records: `.offload`).
std::string file_tier_path(const std::string& dir, int world_rank, const std::string& kind = "offload");

/// Where records laid end to end start. @param sizes per record. @return offsets (0 first).
std::vector<std::size_t> prefix_sums(const std::vector<std::size_t>& sizes);
/// @param sizes per record. @return their sum.
std::size_t total(const std::vector<std::size_t>& sizes);

/// A tier's open, locked file: created (or taken over from a killed run) and sized, flock'ed,
/// registered for the signal handler; closed and removed when destroyed.
struct TierFile {
  std::string path;      ///< its name
  int fd = -1;           ///< the open descriptor
  std::size_t slot = 0;  ///< where the signal handler finds the path (file_tier.cc)
  /// @param p the path. @param bytes its size.
  TierFile(std::string p, std::size_t bytes);
  ~TierFile();
  TierFile(const TierFile&) = delete;
  TierFile& operator=(const TierFile&) = delete;
};

/// One rank's records in a file, streamed through a ring of buffers.
class FileTier {
 public:
  /// Create (or take over) and size the file, allocate the ring.
  /// @param dir DIR (must exist and be writable). @param world_rank the rank (names the file).
  /// @param record_floats per unit: the floats of its record. @param buffers B asked for (>= 1;
  /// min(B, units) are allocated). @param read_ahead queue reads ahead of use (else each read
  /// starts when its unit is begun). @param host the arena the ring is allocated in.
  FileTier(const std::string& dir, int world_rank, std::vector<std::size_t> record_floats, std::size_t buffers,
           bool read_ahead, Arena& host);
  /// Waits for every queued job (an error is no longer reported), closes and removes the file.
  ~FileTier();
  FileTier(const FileTier&) = delete;
  FileTier& operator=(const FileTier&) = delete;

  /// Unit u's record, for a pass that visits units in order (u must be the pass's next unit).
  /// @param u the unit. @param fresh true: a zeroed buffer to fill (the initial records), no read.
  /// @return the record's floats (valid until end(u)).
  float* begin(std::size_t u, bool fresh = false);
  /// Queue the write-back of unit u's record (begun last); after the last unit the pass ends and,
  /// with read-ahead, the next pass's first reads are queued. @param u the unit.
  void end(std::size_t u);
  /// Between passes: unit u's record in its buffer; fn(float* record) returns whether it changed
  /// the record, which is then written back. What was read ahead stays valid: a unit already
  /// read ahead is visited in place, and a unit read ahead in the buffer u borrows is read again
  /// (outside any step, so a step's I/O stays its closed form). @param u the unit. @param fn the visitor.
  template <typename Fn>
  void with_record(std::size_t u, Fn fn) {
    float* r = load(u);
    bool modified = false;
    try {
      modified = fn(r);
    } catch (...) {
      issued_ = 0;  // the buffer's contents are unknown now: the next pass reads every unit again
      throw;
    }
    store(u, modified);
  }

  /// @return the I/O counters so far.
  TransferStats stats() const { return io_->stats(); }
  /// @return the file's path.
  const std::string& path() const { return file_.path; }
  /// @return buffers in the ring (min(B, units)).
  std::size_t buffers() const { return slots_; }

 private:
  std::size_t units() const { return records_.size(); }
  std::size_t slot(std::size_t u) const { return u % slots_; }
  float* buffer(std::size_t s) { return ring_.data() + s * slot_floats_; }
  std::size_t bytes(std::size_t u) const { return records_[u] * sizeof(float); }
  off_t offset(std::size_t u) const { return static_cast<off_t>(offsets_[u] * sizeof(float)); }
  void read_through(std::size_t last);  // queue the reads of this pass's units up to `last`
  float* load(std::size_t u);           // with_record: unit u in its buffer, between passes
  void store(std::size_t u, bool modified);

  std::vector<std::size_t> records_, offsets_;  // per unit: floats, and where in the file (floats)
  std::size_t slots_ = 1, slot_floats_ = 0, depth_ = 0;
  bool read_ahead_ = true;
  TypedBuffer<float> ring_;             // B buffers of the largest record (declared before the thread)
  TierFile file_;                       // closed and removed after the thread has stopped
  std::unique_ptr<TransferThread> io_;  // destroyed first: every queued job has run
  std::vector<TransferHandle> last_;    // per buffer: the last job queued on it
  std::size_t next_ = 0;                // the unit this pass begins next
  std::size_t issued_ = 0;              // this pass's units whose reads are queued: [0, issued_)
};

}  // namespace zt::offload
