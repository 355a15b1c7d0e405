// memory/model_states.h — how many bytes of model state a rank holds: the paper's formula and the
// exact count, both from one sharding description.
//
// Model states (ZeRO paper, Sec. 3.1) are the parameters, their gradients and the optimizer
// state. With mixed-precision Adam a parameter costs 2 (fp16 param) + 2 (fp16 grad) + 12 (fp32
// master, m, v) = 16 bytes, "16ψ". ZeRO-DP shards some of them over the N data-parallel ranks
// (Sec. 5); with S_p, S_g, S_o in {0, 1} saying which, the per-rank bytes are
//     M = 2ψ(1 − S_p + S_p/N) + 2ψ(1 − S_g + S_g/N) + Kψ(1 − S_o + S_o/N),
// K = 12 for Adam/AdamW (master, m, v), 8 for SGD with momentum (master, momentum).
// Stage 0 shards nothing, stage 1 (P_os) S_o, stage 2 (P_os+g) S_o and S_g, stage 3 all three.
//
// ShardSpec and ShardingDescription are the one source of truth that the ZeRO step (chapter 6) and the
// memory prediction both read. This file computes; it allocates nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace zt {

/// Which model states are sharded over the data-parallel ranks, and over how many.
struct ShardSpec {
  bool params = false;         ///< S_p: 16-bit (or fp32-precision) parameters sharded
  bool grads = false;          ///< S_g: gradient storage sharded
  bool optimizer = false;      ///< S_o: FP32 master and optimizer state sharded
  std::size_t world_size = 1;  ///< N, the data-parallel degree
};

/// The sharding of a ZeRO stage: 0 none, 1 S_o, 2 S_o+S_g, 3 all (zt::Error otherwise).
/// @param stage 0..3. @param world_size N (>= 1). @return the spec.
ShardSpec shard_spec_for_stage(int stage, std::size_t world_size);

/// Optimizer state bytes per parameter in the paper's sense, K (master copy included).
/// @param optimizer "adam", "adamw" or "sgd" (zt::Error otherwise). @return 12, 12 or 8.
int optimizer_k(const std::string& optimizer);

/// The paper's formula split into its three terms, in bytes (doubles: ψ may be 10^12).
struct PaperModelStates {
  double params = 0;     ///< 2ψ(1 − S_p + S_p/N)
  double grads = 0;      ///< 2ψ(1 − S_g + S_g/N)
  double optimizer = 0;  ///< Kψ(1 − S_o + S_o/N)
  double total = 0;      ///< the sum, M
};

/// Per-rank model-state bytes by the paper's formula (mixed precision, 16-bit gradients).
/// @param psi number of parameters ψ. @param k optimizer bytes per parameter K.
/// @param spec which states are sharded over how many ranks. @return the terms and M.
PaperModelStates paper_model_states(double psi, int k, const ShardSpec& spec);

/// Element counts of one flat unit (a transformer block, the embeddings, ...).
/// A rank holds `full_numel` elements of a state that is not sharded and `shard_numel` of one
/// that is; both include padding, which sits only at the unit's end or the shard's end.
struct UnitElements {
  std::string name;             ///< the unit's name (for reports)
  std::size_t numel = 0;        ///< real elements (no padding)
  std::size_t shard_numel = 0;  ///< elements of one rank's shard, padding included
  std::size_t full_numel = 0;   ///< elements of the unsharded flat unit, padding included
  /// A per-unit choice of what is sharded (e.g. stage 3 for a large unit, stage 2 for a small
  /// one); empty means the description's spec. Its world_size must equal the description's.
  std::optional<ShardSpec> spec;
};

/// The default layout: each of N shards has ceil(numel / N) elements rounded up to a multiple of
/// `block` (the gradient-norm block, so no shard boundary cuts a block), and the flat unit is the
/// N shards end to end (full_numel = N · shard_numel), so a reduce-scatter splits it evenly.
/// @param name unit name. @param numel real elements (> 0). @param world_size N (>= 1).
/// @param block padding granule in elements (>= 1). @return the counts.
UnitElements unit_elements(std::string name, std::size_t numel, std::size_t world_size, std::size_t block);

/// Everything needed to predict a rank's model-state memory: the spec and the units.
struct ShardingDescription {
  ShardSpec spec;                   ///< which states are sharded, and N
  std::vector<UnitElements> units;  ///< the flat units in canonical order
};

/// The paper's formula summed over units, each with its own spec where it has one (a per-unit
/// choice such as stage 3 for large units and stage 2 for small ones):
///     M = Σ_u [2ψ_u(1 − S_p,u + S_p,u/N) + 2ψ_u(1 − S_g,u + S_g,u/N) + Kψ_u(1 − S_o,u + S_o,u/N)],
/// ψ_u the unit's real elements (padding is not in the formula). With one spec for all units it
/// equals paper_model_states(Σ ψ_u, k, spec) up to rounding.
/// @param desc the sharding description. @param k optimizer bytes per parameter K.
/// @return the terms and M.
PaperModelStates paper_model_states(const ShardingDescription& desc, int k);

/// Bytes per element of each model state (the widths the issue fixes).
struct StateWidths {
  std::size_t param = 2;      ///< compute copy: 2 for fp16/bf16, 4 for fp32 precision
  std::size_t grad = 4;       ///< gradient storage s_g: 2 (reduce in compute dtype) or 4
  std::size_t master = 4;     ///< FP32 master: 4, or 0 when the parameters are the master (fp32)
  std::size_t optimizer = 8;  ///< optimizer state beyond the master: K − 4
};

/// Widths for a run. Mixed precision: 2, s_g, 4, K − 4. FP32 precision: the parameters are the
/// master, so 4, 4, 0, K − 4 (s_g is then 4 whatever is asked).
/// @param fp32_precision true for --precision fp32. @param grad_width s_g, 2 or 4.
/// @param k optimizer bytes per parameter K (12 or 8). @return the widths.
StateWidths state_widths(bool fp32_precision, std::size_t grad_width, int k);

/// Exact per-rank model-state bytes, broken down like the ledger's categories.
struct ModelStateBytes {
  std::size_t params = 0;     ///< compute-copy (or fp32) parameters
  std::size_t grads = 0;      ///< gradient storage
  std::size_t master = 0;     ///< FP32 master copy
  std::size_t optimizer = 0;  ///< optimizer state (m and v, or momentum)
  std::size_t total = 0;      ///< the sum: model_states_bytes
  std::size_t padding = 0;    ///< how many of those bytes hold padding elements on this rank
};

/// Model-state bytes that rank `rank` holds under `desc`: each state takes its width times the
/// elements the rank holds of every unit (shard_numel if that state is sharded, else full_numel),
/// with each unit's own spec where it has one.
/// @param desc the sharding description. @param widths bytes per element of each state.
/// @param rank which rank (padding differs: the last shards hold the padding).
/// @return the breakdown.
ModelStateBytes model_states_bytes(const ShardingDescription& desc, const StateWidths& widths, std::size_t rank);

}  // namespace zt
