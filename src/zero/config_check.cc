// zero/config_check.cc — the start-up agreement of every rank on its settings (see config_check.h).
#include "zero/config_check.h"

#include <string>
#include <vector>

#include "core/check.h"
#include "core/error_report.h"
#include "train/train_flags.h"

namespace zt::zero {

using train::RunOptions;

/// Exchange config hashes: every rank learns whether all agree, and fails with the same message.
void check_same_config(const RunOptions& c, Collective& coll) {
  if (coll.size() == 1) return;
  const uint64_t h = train::config_hash(c);
  // two 32-bit halves as floats would lose bits: send 4 exact 16-bit pieces as floats
  std::vector<float> mine(4), all(4 * static_cast<std::size_t>(coll.size()));
  for (int k = 0; k < 4; ++k) mine[static_cast<std::size_t>(k)] = static_cast<float>((h >> (16 * k)) & 0xffff);
  coll.all_gather(std::span<const float>(mine), std::span<float>(all));
  auto same_as_rank0 = [&](int q) {
    for (int k = 0; k < 4; ++k)
      if (all[static_cast<std::size_t>(4 * q + k)] != all[static_cast<std::size_t>(k)]) return false;
    return true;
  };
  for (int q = 0; q < coll.size(); ++q) {
    if (same_as_rank0(q)) continue;
    // Rank 0's settings are the reference: a rank that differs from them is the cause (its own
    // error), the ranks that agree with rank 0 stop because of it (zt::PeerFailed).
    const std::string msg = concat("configuration mismatch: rank ", q,
                                   "'s settings differ from rank 0's (config hash "
                                   "exchange at start-up); start every rank with the same flags");
    if (!same_as_rank0(coll.rank())) throw Error(msg);
    throw PeerFailed(msg);
  }
}

void check_job_config(const train::RunOptions& config, Collective& dp, Collective* mp, Collective* pp) {
  ZT_CHECK(config.dp_size() == dp.size(), "--world-size ", config.world_size, " / (--mp-size ", config.mp_size,
           " x --pp-size ", config.pp_size, ") = ", config.dp_size(), " data-parallel ranks, but the group has ",
           dp.size());
  ZT_CHECK(config.mp_size == (mp ? mp->size() : 1), "--mp-size ", config.mp_size,
           " differs from the model-parallel group's ", mp ? mp->size() : 1, " ranks");
  ZT_CHECK(config.pp_size == (pp ? pp->size() : 1), "--pp-size ", config.pp_size, " differs from the pipeline group's ",
           pp ? pp->size() : 1, " ranks");
  check_same_config(config, dp);
  if (mp) check_same_config(config, *mp);
  if (pp) check_same_config(config, *pp);
}

}  // namespace zt::zero
