// device/block_launch.h — the launch model of a kernel whose threads cooperate inside a block: a
// block op is written once as phases separated by block barriers, and the host executes it exactly
// as the barriers allow, each phase for every thread of the block, then the next phase.
//
// Why phases: a row reduction in shared memory (LayerNorm's mean, a softmax's denominator) needs
// threads that wait for each other, and the item model (device/item_grid.h) cannot express that.
// A barrier splits a block's program into phases; inside a phase the threads are independent, so
// running them one after another in thread order is one legal schedule of the GPU's, and between
// phases every write of the earlier phase is visible, as after __syncthreads(). So the host runs
// the very code the GPU runs and a test checks its bits without a GPU.
//
// A block op is a small struct of pointers and sizes with these members (all but the last ZT_HD):
//   int64_t blocks() const            how many blocks (one per row, per tile, ...)
//   std::size_t shared_floats() const  floats of shared memory one block uses (dynamic, <= 12,288)
//   template <class Block> void operator()(Block& blk, int64_t b) const   block b's program
// The program calls blk.each([&](uint32_t t) { ... }) for each phase: the lambda is thread t's part
// of the phase, and each() returns after the barrier that closes it. Code outside each() must give
// every thread the same values (it runs once per thread on a GPU, once on the host): it reads
// shared memory written before the last barrier, the op's arguments and its own locals.
// blk.sync() is a barrier alone; blk.shared() is the block's shared memory; blk.threads() is
// kBlockThreads.
// Not here: what an op computes (ops/), the CUDA launcher (device/cuda/block_launch.cuh), and
// warps: no op may rely on them (no shuffles, no implicit warp synchrony).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/check.h"
#include "fp/hd.h"

namespace zt::device {

/// Threads per block of every block op: four warps, enough threads to cover a row of a few
/// thousand elements in a few strides, few enough that the per-thread partials fit in shared memory.
inline constexpr uint32_t kBlockThreads = 128;

/// The most shared memory a block op may ask for: 48 KiB, what every CUDA GPU gives a block
/// without an opt-in.
inline constexpr std::size_t kMaxSharedFloats = 12288;

/// A block as the host executes it: each() runs a phase for thread 0, 1, ..., kBlockThreads-1.
class HostBlock {
 public:
  /// @param shared the block's shared memory (shared_floats() floats).
  explicit HostBlock(float* shared) : shared_(shared) {}
  /// Run one phase: part(t) for every thread t in order; returning is the barrier.
  /// @param part the phase's per-thread work, callable with the thread index.
  template <typename Part>
  void each(const Part& part) {
    for (uint32_t t = 0; t < kBlockThreads; ++t) part(t);
    ++phases_;
  }
  /// A barrier with no work before it (a GPU's threads wait for each other; the host has nothing
  /// to wait for): what an op calls before reusing shared memory that threads may still read.
  void sync() {}
  /// @return the block's shared memory.
  float* shared() const { return shared_; }
  /// @return the threads of the block (kBlockThreads).
  static constexpr uint32_t threads() { return kBlockThreads; }
  /// @return the phases run so far (a test's view of the barriers).
  int64_t phases() const { return phases_; }

 private:
  float* shared_;
  int64_t phases_ = 0;
};

/// Run blocks [first, last) of a block op on the host, one after another (blocks are independent: a
/// GPU runs them in any order). Shared memory starts as NaN bytes, so a read of a slot no phase
/// wrote shows. @param op the op, its pointers into host memory. @param first the first block.
/// @param last one past the last. @return the phases the last block ran.
template <typename Op>
int64_t run_blocks_on_host(const Op& op, int64_t first, int64_t last) {
  const std::size_t floats = op.shared_floats();
  ZT_CHECK(floats <= kMaxSharedFloats, "block op: ", floats, " floats of shared memory (at most ", kMaxSharedFloats,
           ")");
  std::vector<float> shared(floats > 0 ? floats : 1);
  int64_t phases = 0;
  for (int64_t b = first; b < last; ++b) {
    for (float& f : shared) f = bit_cast_hd<float>(0x7fc0deadu);
    HostBlock blk(shared.data());
    op(blk, b);
    phases = blk.phases();
  }
  return phases;
}

/// Run a block op's every block on the host (run_blocks_on_host over [0, blocks())).
/// @param op the op, its pointers into host memory. @return the phases the last block ran.
template <typename Op>
int64_t run_blocks_on_host(const Op& op) {
  return run_blocks_on_host(op, 0, op.blocks());
}

}  // namespace zt::device
