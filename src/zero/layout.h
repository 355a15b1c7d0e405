// zero/layout.h — the flat, padded, sharded parameter space of a data-parallel run.
//
// Every unit u of the model (embeddings, each block, ln_f) is a flat array of numel_u real
// elements padded to full_u = N · shard_u, shard_u = ceil(numel_u / N) rounded up to the
// gradient-norm block b (memory/model_states.h, unit_elements), so no shard boundary cuts a norm
// block and a reduce-scatter splits the unit evenly. Rank r owns [r · shard_u, (r+1) · shard_u)
// of every unit. A rank keeps a state either whole (full_u per unit, "full" extent) or as its
// shard (shard_u per unit) — which one, per state, is the ShardSpec of the stage (S_p, S_g, S_o).
// A state whose choice differs per unit (stage 3 parameters with --persist-below-mb: small units
// whole, large ones sharded) has its own offsets, a StateLayout.
// This file computes offsets; it owns no memory and does no communication.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memory/model_states.h"
#include "model/manifest.h"

namespace zt::zero {

/// One unit in the padded flat space.
struct UnitLayout {
  std::string name;              ///< the manifest unit's name
  std::size_t numel = 0;         ///< real elements
  std::size_t shard = 0;         ///< elements per rank (multiple of b)
  std::size_t full = 0;          ///< N · shard (padded unit)
  std::size_t dense_offset = 0;  ///< first element in the dense canonical layout (no padding)
  std::size_t full_offset = 0;   ///< first element in the concatenation of padded units
  std::size_t shard_offset = 0;  ///< first element in the concatenation of this rank's shards
};

/// The layout of all units for N ranks and this rank.
struct Layout {
  std::vector<UnitLayout> units;  ///< canonical order
  std::size_t world_size = 1;     ///< N
  std::size_t rank = 0;           ///< this rank
  std::size_t block = 256;        ///< b
  std::size_t psi = 0;            ///< real elements in all
  std::size_t full_total = 0;     ///< Σ full_u
  std::size_t shard_total = 0;    ///< Σ shard_u

  /// Elements a rank holds of unit u for a state that is (sharded) or is not sharded.
  /// @param u unit. @param sharded whether the state is sharded. @return shard_u or full_u.
  std::size_t extent(std::size_t u, bool sharded) const { return sharded ? units[u].shard : units[u].full; }
  /// Offset of unit u in a state's per-rank storage. @param u unit. @param sharded as above.
  /// @return shard_offset or full_offset.
  std::size_t offset(std::size_t u, bool sharded) const {
    return sharded ? units[u].shard_offset : units[u].full_offset;
  }
  /// Total per-rank elements of a state. @param sharded as above. @return shard_total or full_total.
  std::size_t total(bool sharded) const { return sharded ? shard_total : full_total; }
  /// Real (non-padding) elements of rank q's shard of unit u. @param u unit. @param q rank.
  /// @return the count.
  std::size_t shard_real(std::size_t u, std::size_t q) const;
};

/// Offsets of one state whose extent is chosen unit by unit: unit u takes shard_u elements when
/// sharded[u], else full_u, and the units sit end to end in canonical order.
struct StateLayout {
  std::vector<bool> sharded;         ///< per unit: held as this rank's shard
  std::vector<std::size_t> offsets;  ///< per unit: first element in the rank's storage
  std::size_t total = 0;             ///< Σ over units of shard_u or full_u

  /// Elements a rank holds of unit u. @param layout the units. @param u unit. @return shard_u or full_u.
  std::size_t extent(const Layout& layout, std::size_t u) const { return layout.extent(u, sharded[u]); }
};

/// The StateLayout of a per-unit choice. @param layout the units.
/// @param sharded one flag per unit. @return offsets and total.
StateLayout state_layout(const Layout& layout, const std::vector<bool>& sharded);

/// Build the layout. @param manifest the model. @param world_size N. @param rank this rank.
/// @param block b (a power of two). @param held per unit, whether this rank's pipeline stage holds
/// it (empty: every unit); a unit it does not hold keeps its place with 0 elements.
/// @return the layout.
Layout make_layout(const model::Manifest& manifest, std::size_t world_size, std::size_t rank, std::size_t block,
                   const std::vector<bool>& held = {});

/// The sharding description with a spec per unit; a unit whose spec equals `spec` carries none.
/// @param layout the layout. @param spec the description's spec.
/// @param unit_specs one spec per unit. @return the description.
ShardingDescription sharding_description(const Layout& layout, const ShardSpec& spec,
                                         const std::vector<ShardSpec>& unit_specs);

}  // namespace zt::zero
