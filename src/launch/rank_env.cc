// launch/rank_env.cc — parsing and validating the launcher conventions (see rank_env.h).
#include "launch/rank_env.h"

#include <cstdlib>

#include "core/check.h"
#include "core/cli.h"

namespace zt::launch {
namespace {

// The variable names of one convention, in the order rank, size, local rank.
struct Convention {
  RankSource source;
  const char* rank;
  const char* size;
  const char* local;
};

constexpr Convention kConventions[] = {
    {RankSource::kTorchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {RankSource::kOpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {RankSource::kSlurm, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

const Convention& convention(RankSource s) {
  for (const auto& c : kConventions)
    if (c.source == s) return c;
  return kConventions[0];
}

int read_int(const std::string& name, const std::string& text, int64_t min) {
  int64_t v = parse_int_strict(text, name);
  ZT_CHECK(v >= min && v <= (1 << 30), name, "=", text, " is out of range (must be >= ", min, ")");
  return static_cast<int>(v);
}

// Short name of a source, for messages ("torchrun", "openmpi", "slurm", "none").
const char* source_name(RankSource source) {
  switch (source) {
    case RankSource::kTorchrun:
      return "torchrun";
    case RankSource::kOpenMpi:
      return "openmpi";
    case RankSource::kSlurm:
      return "slurm";
    case RankSource::kNone:
      break;
  }
  return "none";
}

}  // namespace

std::string RankEnv::describe() const {
  if (!launched()) return concat("rank ", rank, " of ", world_size, " (no launcher)");
  const Convention& c = convention(source);
  return concat("rank ", rank, " of ", world_size, " (", source_name(source), ": ", c.rank, ", ", c.size, ")");
}

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

EnvLookup env_from_map(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

RankEnv parse_rank_env(const EnvLookup& env) {
  RankEnv out;
  for (const auto& c : kConventions) {
    auto rank = env(c.rank), size = env(c.size), local = env(c.local);
    if (!rank && !size) continue;
    ZT_CHECK(rank && size, c.rank, " and ", c.size, " must be set together (", source_name(c.source),
             " convention), but only ", rank ? c.rank : c.size, " is set");
    out.source = c.source;
    out.world_size = read_int(c.size, *size, 1);
    out.rank = read_int(c.rank, *rank, 0);
    ZT_CHECK(out.rank < out.world_size, c.rank, "=", out.rank, " is not below ", c.size, "=", out.world_size);
    // Without a local rank, assume every rank is on this machine (the single-node case).
    out.local_rank = local ? read_int(c.local, *local, 0) : out.rank;
    ZT_CHECK(out.local_rank < out.world_size, c.local, "=", out.local_rank, " is not below ", c.size, "=",
             out.world_size);
    break;
  }
  if (auto addr = env("MASTER_ADDR")) {
    ZT_CHECK(!addr->empty(), "MASTER_ADDR is set but empty");
    out.master_addr = *addr;
  }
  if (auto port = env("MASTER_PORT")) {
    int64_t p = parse_int_strict(*port, "MASTER_PORT");
    ZT_CHECK(p >= 1 && p <= 65535, "MASTER_PORT=", *port, " is not a TCP port (1..65535)");
    out.master_port = static_cast<uint16_t>(p);
  }
  if (auto store = env("ZT_STORE")) out.store = *store;
  if (auto served = env("ZT_LAUNCHER_STORE")) out.launcher_store = *served;
  return out;
}

LaunchDecision decide_launch(std::optional<int64_t> flag_world_size, const RankEnv& env) {
  if (flag_world_size) ZT_CHECK(*flag_world_size >= 1, "--world-size must be at least 1, got ", *flag_world_size);
  LaunchDecision d;
  if (env.launched()) {
    const Convention& c = convention(env.source);
    ZT_CHECK(!flag_world_size || *flag_world_size == env.world_size, "--world-size ", flag_world_size.value_or(0),
             " disagrees with the launcher's ", c.size, "=", env.world_size, " (", source_name(env.source),
             " convention); drop the flag or make the two equal");
    d.mode = LaunchDecision::Mode::kLaunched;
    d.world_size = env.world_size;
    return d;
  }
  d.world_size = static_cast<int>(flag_world_size.value_or(1));
  ZT_CHECK(d.world_size <= 4096, "--world-size ", d.world_size, " is too large to spawn locally");
  d.mode = d.world_size > 1 ? LaunchDecision::Mode::kSpawn : LaunchDecision::Mode::kSingle;
  return d;
}

}  // namespace zt::launch
