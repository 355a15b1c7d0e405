// memory/model_states.cc — the paper's formula and the exact count (see model_states.h).
#include "memory/model_states.h"

#include <algorithm>

#include "core/check.h"

namespace zt {

ShardSpec shard_spec_for_stage(int stage, std::size_t world_size) {
  ZT_CHECK(stage >= 0 && stage <= 3, "ZeRO stage must be 0, 1, 2 or 3, not ", stage);
  ZT_CHECK(world_size >= 1, "world size must be at least 1");
  return ShardSpec{stage >= 3, stage >= 2, stage >= 1, world_size};
}

int optimizer_k(const std::string& optimizer) {
  if (optimizer == "adam" || optimizer == "adamw") return 12;  // master + m + v, 4 bytes each
  if (optimizer == "sgd") return 8;                            // master + momentum
  ZT_FAIL("unknown optimizer '", optimizer, "' (adam, adamw or sgd)");
}

PaperModelStates paper_model_states(double psi, int k, const ShardSpec& spec) {
  ZT_CHECK(spec.world_size >= 1, "world size must be at least 1");
  const double n = static_cast<double>(spec.world_size);
  // (1 − S + S/N) is 1 for a replicated state and 1/N for a sharded one.
  auto share = [n](bool sharded) { return sharded ? 1.0 / n : 1.0; };
  PaperModelStates m;
  m.params = 2.0 * psi * share(spec.params);
  m.grads = 2.0 * psi * share(spec.grads);
  m.optimizer = static_cast<double>(k) * psi * share(spec.optimizer);
  m.total = m.params + m.grads + m.optimizer;
  return m;
}

PaperModelStates paper_model_states(const ShardingDescription& desc, int k) {
  PaperModelStates m;
  for (const UnitElements& u : desc.units) {
    const PaperModelStates one = paper_model_states(static_cast<double>(u.numel), k, u.spec ? *u.spec : desc.spec);
    m.params += one.params;
    m.grads += one.grads;
    m.optimizer += one.optimizer;
  }
  m.total = m.params + m.grads + m.optimizer;
  return m;
}

UnitElements unit_elements(std::string name, std::size_t numel, std::size_t world_size, std::size_t block) {
  ZT_CHECK(numel > 0, "unit '", name, "' has no elements");
  ZT_CHECK(world_size >= 1 && block >= 1, "unit '", name, "': world size and block must be >= 1");
  const std::size_t per_rank = (numel + world_size - 1) / world_size;
  const std::size_t shard = (per_rank + block - 1) / block * block;
  return UnitElements{std::move(name), numel, shard, shard * world_size, std::nullopt};
}

StateWidths state_widths(bool fp32_precision, std::size_t grad_width, int k) {
  ZT_CHECK(grad_width == 2 || grad_width == 4, "gradient width must be 2 or 4 bytes, not ", grad_width);
  ZT_CHECK(k == 12 || k == 8, "K must be 12 (Adam) or 8 (SGD-momentum), not ", k);
  const std::size_t opt = static_cast<std::size_t>(k) - 4;
  if (fp32_precision) return StateWidths{4, 4, 0, opt};
  return StateWidths{2, grad_width, 4, opt};
}

ModelStateBytes model_states_bytes(const ShardingDescription& desc, const StateWidths& widths, std::size_t rank) {
  ZT_CHECK(rank < desc.spec.world_size, "rank ", rank, " outside world of ", desc.spec.world_size);
  ModelStateBytes b;
  for (const UnitElements& u : desc.units) {
    const ShardSpec& s = u.spec ? *u.spec : desc.spec;
    ZT_CHECK(s.world_size == desc.spec.world_size, "unit '", u.name, "': its spec has world size ", s.world_size,
             ", the description ", desc.spec.world_size);
    ZT_CHECK(u.shard_numel * s.world_size <= u.full_numel || !(s.params || s.grads || s.optimizer), "unit '", u.name,
             "': ", s.world_size, " shards of ", u.shard_numel, " elements do not fit its flat size ", u.full_numel);
    ZT_CHECK(u.numel <= u.full_numel, "unit '", u.name, "': padding cannot be negative");
    // Real elements in this rank's shard: the shards tile [0, N·shard) in rank order.
    const std::size_t first = rank * u.shard_numel;
    const std::size_t real_shard = u.numel > first ? std::min(u.numel - first, u.shard_numel) : 0;
    auto held = [&](bool sharded) { return sharded ? u.shard_numel : u.full_numel; };
    auto pad = [&](bool sharded) { return sharded ? u.shard_numel - real_shard : u.full_numel - u.numel; };
    b.params += widths.param * held(s.params);
    b.grads += widths.grad * held(s.grads);
    b.master += widths.master * held(s.optimizer);
    b.optimizer += widths.optimizer * held(s.optimizer);
    b.padding += widths.param * pad(s.params) + widths.grad * pad(s.grads) +
                 (widths.master + widths.optimizer) * pad(s.optimizer);
  }
  b.total = b.params + b.grads + b.master + b.optimizer;
  return b;
}

}  // namespace zt
