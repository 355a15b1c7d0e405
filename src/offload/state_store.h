// offload/state_store.h — where a rank's optimizer states live (S_o's storage: the FP32 master and
// the moments of its owned elements), behind one interface chosen once at set-up.
//
// The ZeRO step does not ask where the states are: per unit it calls update(u, owned) with the
// slice of u it owns (step/owned_slice.h), and the store runs protocol steps 4-6 wherever the
// states are. Three places, one choice made when the engine is built:
//   device  zero::ArenaStates (zero/arena_states.h): two arrays in the rank's own arena, the run
//           without offload, beside the engine;
//   host    OptimizerTier (offload/optimizer_tier.h): arrays in the host tier, the gradient copied
//           down and the refreshed compute copy copied up (ZeRO-Offload);
//   file    OptimizerTier over a FileTier: records streamed through a bounded ring (ZeRO-Infinity).
// Every store updates through step::apply_update, the very per-element code of the reference
// loop, so where the states live changes no bit. Readers and writers of the whole state (dumps,
// --verify, checkpoints) reach a unit's states between steps through with_owned_state, always in
// host memory (a device's states are copied down for the visitor and back if it changes them).
// It does not reduce, gather or decide a step (zero/train_zero.cc does).
#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "memory/arena.h"
#include "memory/buffer.h"
#include "offload/tier.h"
#include "optim/grad_norm.h"
#include "step/categories.h"
#include "step/element_optimizer.h"
#include "step/owned_slice.h"
#include "step_device/loop_ops.h"
#include "step_device/step_ops.h"

namespace zt::offload {

/// A rank's optimizer states; T is the compute type.
template <typename T>
class StateStore {
 public:
  /// Visits one unit's owned states; returns whether it changed them (then written back).
  using Visit = std::function<bool(const StateView&)>;

  virtual ~StateStore() = default;
  /// Write unit u's initial master (units in order 0, 1, ...; the moments start at zero).
  /// @param u the unit. @param fill called with the e_u FP32 values to fill.
  virtual void initialise(std::size_t u, const std::function<void(float*)>& fill) = 0;
  /// Protocol steps 4-6 on unit u's owned elements. @param u the unit (0, 1, ... within a step).
  /// @param owned the rank's slice of u: its compute copy (where the refreshed values go), its
  /// reduced gradient, its index in the S_o-extent state; its master pointer is the store's.
  /// @param inv_scale 1/S. @param clip the step's clipping. @param opt the step's optimizer; its
  /// state arrays are the store's.
  virtual void update(std::size_t u, const step::OwnedSlice<T>& owned, float inv_scale, const ClipDecision& clip,
                      step::ElementOptimizer opt) = 0;
  /// Between steps: unit u's owned master and moments in memory. @param u the unit.
  /// @param fn the visitor (dumps, --verify, checkpoints).
  virtual void with_owned_state(std::size_t u, const Visit& fn) = 0;
  /// @return the file I/O so far (zeros unless the states are in a file).
  virtual TransferStats file_stats() const { return {}; }
};

}  // namespace zt::offload
