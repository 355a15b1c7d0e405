// schedule/gather_window.h — stage 3's prefetch rule (ZeRO paper Sec. 5.3, parameter partitioning
// P_p with prefetch) as data: which all-gathers a rank has issued by each acquire of a micro-batch.
//
// The rule, written once: the acquire order is fixed by the model; at the i-th acquire the gathers
// of this use and of the next --prefetch *sharded* uses must have been issued; a persistent unit
// (--persist-below-mb: parameters whole on every rank) is never gathered, so prefetch looks past it
// to the next sharded use; gathers do not cross micro-batches (the list ends with the order).
//
// zero/step_program.cc writes a step's all-gathers and waits along this window (run by
// zero/step_interpreter.h), predict/zero_trace.cc walks that program as arena tokens, and the
// chapter's closed form (the gathered window's peak) is computed from it. It allocates nothing and
// knows nothing of collectives, units' contents or the arena.
#pragma once

#include <cstddef>
#include <vector>

namespace zt::schedule {

/// The gathers of one micro-batch's acquire order and how far ahead of each acquire they run.
struct GatherWindow {
  /// The unit of each gather, in issue order: the sharded positions of the acquire order.
  std::vector<std::size_t> units;
  /// Per acquire position: gathers at earlier positions (the index of this position's own gather
  /// when it gathers).
  std::vector<std::size_t> gathers_before;
  /// Per acquire position: whether it gathers (its unit is sharded).
  std::vector<bool> gathers;
  /// Per acquire position: how many gathers must have been issued once it is acquired — its own
  /// and up to --prefetch more.
  std::vector<std::size_t> issued;
};

/// The prefetch window over an acquire order.
/// @param acquire_order units in the order one micro-batch acquires them.
/// @param sharded per unit: S_p (its parameters are shards, gathered at each use).
/// @param prefetch gathers issued ahead of the one in use (--prefetch).
/// @return the window.
GatherWindow gather_window(const std::vector<std::size_t>& acquire_order, const std::vector<bool>& sharded,
                           std::size_t prefetch);

/// The chapter's closed form of the gathered window (stage 3's `gathered_params`): at an acquire the
/// units still in use and the gathers issued ahead are live together; the peak is the largest such
/// sum. Units acquired together (a split block's units, held until all are released) are all in use.
/// @param w the window. @param held_from per acquire position: the first position whose unit is
/// still held when this one is acquired (the position itself when every earlier unit was released).
/// @param unit_elements per unit: elements of a gathered (full) unit.
/// @return the peak in elements (times the compute width for bytes).
std::size_t gathered_window_peak(const GatherWindow& w, const std::vector<std::size_t>& held_from,
                                 const std::vector<std::size_t>& unit_elements);

}  // namespace zt::schedule
