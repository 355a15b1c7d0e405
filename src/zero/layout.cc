// zero/layout.cc — offsets of the padded flat units (see layout.h).
#include "zero/layout.h"

#include "core/check.h"
#include "optim/grad_norm.h"

namespace zt::zero {

std::size_t Layout::shard_real(std::size_t u, std::size_t q) const {
  return shard_real_elements(units[u].numel, q * units[u].shard, units[u].shard);
}

Layout make_layout(const model::Manifest& manifest, std::size_t world_size, std::size_t rank, std::size_t block,
                   const std::vector<bool>& held) {
  Layout l;
  l.world_size = world_size;
  l.rank = rank;
  l.block = block;
  for (std::size_t k = 0; k < manifest.units.size(); ++k) {
    const auto& mu = manifest.units[k];
    const bool here = held.empty() || held[k];
    UnitLayout u;
    u.name = mu.name;
    if (here) {  // a unit another pipeline stage holds takes no room here
      const UnitElements e = unit_elements(mu.name, static_cast<std::size_t>(mu.numel), world_size, block);
      u.numel = e.numel;
      u.shard = e.shard_numel;
      u.full = e.full_numel;
    }
    u.dense_offset = static_cast<std::size_t>(mu.offset);
    u.full_offset = l.full_total;
    u.shard_offset = l.shard_total;
    l.full_total += u.full;
    l.shard_total += u.shard;
    l.psi += u.numel;
    l.units.push_back(u);
  }
  return l;
}

StateLayout state_layout(const Layout& layout, const std::vector<bool>& sharded) {
  ZT_CHECK(sharded.size() == layout.units.size(), "state layout: ", sharded.size(), " flags for ", layout.units.size(),
           " units");
  StateLayout s;
  s.sharded = sharded;
  for (std::size_t u = 0; u < layout.units.size(); ++u) {
    s.offsets.push_back(s.total);
    s.total += layout.extent(u, sharded[u]);
  }
  return s;
}

ShardingDescription sharding_description(const Layout& layout, const ShardSpec& spec,
                                         const std::vector<ShardSpec>& unit_specs) {
  ZT_CHECK(unit_specs.size() == layout.units.size(), "sharding description: ", unit_specs.size(), " unit specs for ",
           layout.units.size(), " units");
  ShardingDescription d{spec, {}};
  for (std::size_t u = 0; u < layout.units.size(); ++u) {
    const auto& ul = layout.units[u];
    const ShardSpec& s = unit_specs[u];
    const bool same = s.params == spec.params && s.grads == spec.grads && s.optimizer == spec.optimizer &&
                      s.world_size == spec.world_size;
    d.units.push_back({ul.name, ul.numel, ul.shard, ul.full, same ? std::nullopt : std::optional<ShardSpec>(s)});
  }
  return d;
}

}  // namespace zt::zero
