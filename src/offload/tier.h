// offload/tier.h — the words of an optimizer tier (ZeRO-Offload): where it keeps the FP32 master
// and the optimizer state, which elements it holds, how a unit's state is seen, and the host
// tier's ledger categories.
//
// Plain data shared by the tier (offload/optimizer_tier.h), the engine's plan and the memory and
// traffic predictions (zero/zero_plan.h, predict/zero_memory.h, predict/zero_comm.h), so those need
// not include the tier itself. It allocates and moves nothing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace zt::offload {

/// Ledger categories of the host tier that only offload allocates (its master and optimizer
/// state use the usual `master` and `optimizer`).
namespace category {
inline constexpr const char* grads = "offload_grads";      ///< one unit's owned gradient, copied down
inline constexpr const char* params = "offload_params";    ///< one unit's refreshed 16-bit values, copied up
inline constexpr const char* buffers = "offload_buffers";  ///< the file tier's ring of unit records
}  // namespace category

/// Where the optimizer tier keeps master and state.
enum class TierKind { host, file };

/// The settings of an optimizer tier.
struct TierSettings {
  TierKind kind = TierKind::host;  ///< host arrays, or a file
  std::string dir;                 ///< file: the directory
  std::size_t buffers = 3;         ///< file: the ring's buffers B
  bool read_ahead = true;          ///< file: read units ahead of use
  int world_rank = 0;              ///< file: names the file
};

/// The owned elements of every unit, as the engine lays out its S_o-extent state.
struct TierShape {
  std::vector<std::size_t> extents;  ///< per unit: e_u, owned elements with padding (shard_u or full_u)
  std::vector<std::size_t> counts;   ///< per unit: owned real elements (what is updated and copied)
  std::size_t moments = 2;           ///< optimizer floats per element besides the master: (K − 4) / 4
  bool grad_16bit = false;           ///< the gradient storage is the compute type (s_g = 2)
};

/// One unit's owned FP32 state, wherever it lives: element k's master is master[k], its optimizer
/// moment j (Adam: 0 = m, 1 = v; SGD: 0 = momentum) is state[j · n + index + k].
struct StateView {
  float* master = nullptr;  ///< e_u FP32 master values
  float* state = nullptr;   ///< the moments' array (see above)
  std::size_t index = 0;    ///< element 0's index in the moments
  std::size_t n = 0;        ///< elements per moment in `state`
  std::size_t extent = 0;   ///< e_u
  /// @param j the moment. @return its e_u values.
  float* moment(std::size_t j) const { return state + j * n + index; }
};

}  // namespace zt::offload
