// launch/rank_env.h — who am I? Reads a process's rank, world size and rendezvous address from
// the environment a launcher left behind, and decides whether a program must start ranks itself.
//
// Three conventions are understood, first match wins (a launcher started inside another one's
// allocation sets its own variables, and those describe the processes that really exist):
//   1. torchrun / zero-launch: RANK, WORLD_SIZE, LOCAL_RANK (MASTER_ADDR, MASTER_PORT, and from
//      zero-launch ZT_LAUNCHER_STORE: the address of the TCP store the launcher itself serves)
//   2. OpenMPI's mpirun:       OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//   3. Slurm's srun:           SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
// It only reads and validates; it starts nothing (launch/spawn.h) and connects to nothing
// (launch/store_spec.h picks the rendezvous store).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace zt::launch {

/// Which convention the rank variables came from.
enum class RankSource {
  kNone,      ///< no launcher variables: a single process (or one about to spawn its ranks)
  kTorchrun,  ///< RANK / WORLD_SIZE / LOCAL_RANK (torchrun, zero-launch)
  kOpenMpi,   ///< OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK (mpirun)
  kSlurm      ///< SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID (srun)
};

/// This process's place in the job, as the environment describes it.
struct RankEnv {
  RankSource source = RankSource::kNone;  ///< where rank and world size came from
  int rank = 0;                           ///< global rank in [0, world_size)
  int world_size = 1;                     ///< number of ranks in the job
  int local_rank = 0;                     ///< rank among the processes on this machine
  std::string master_addr;                ///< MASTER_ADDR ("" when unset)
  uint16_t master_port = 0;               ///< MASTER_PORT (0 when unset)
  std::string store;                      ///< ZT_STORE verbatim ("" when unset)
  /// ZT_LAUNCHER_STORE verbatim ("" when unset): "HOST:PORT" of the TCP store the launcher serves
  /// (zero-launch, --world-size N); a rank whose store is at that address only connects to it.
  std::string launcher_store;
  /// @return true when a launcher started this process (it must never spawn ranks itself).
  bool launched() const { return source != RankSource::kNone; }
  /// @return e.g. "rank 1 of 4 (torchrun: RANK, WORLD_SIZE)".
  std::string describe() const;
};

/// Looks up one environment variable; std::nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment as an EnvLookup (getenv). @return the lookup.
EnvLookup process_env();
/// A fixed set of variables as an EnvLookup (for tests and for building a child's view).
/// @param vars name -> value. @return the lookup (it copies `vars`).
EnvLookup env_from_map(std::map<std::string, std::string> vars);

/// Read and validate the rank variables. Malformed values (RANK=abc, a rank outside
/// [0, world size), a world size below 1, RANK without WORLD_SIZE, a port outside 1..65535) are a
/// zt::Error naming the variable.
/// @param env where to read variables from. @return the description.
RankEnv parse_rank_env(const EnvLookup& env);

/// What a program should do about ranks, given its --world-size flag and its environment.
struct LaunchDecision {
  /// How the program's ranks come to exist.
  enum class Mode {
    kSingle,   ///< world size 1, no launcher: just run
    kSpawn,    ///< no launcher, flag asks for N > 1: start N ranks (launch/spawn.h), then wait
    kLaunched  ///< a launcher started this process as one rank: never spawn
  };
  Mode mode = Mode::kSingle;  ///< the decision
  int world_size = 1;         ///< the job's world size
};

/// Reconcile a world size given by a flag with the environment. Both given and different is a
/// zt::Error (never a silent preference); a flag below 1 is a zt::Error.
/// @param flag_world_size the flag's value, std::nullopt when the flag was not given.
/// @param env the environment's description (parse_rank_env).
/// @return the decision.
LaunchDecision decide_launch(std::optional<int64_t> flag_world_size, const RankEnv& env);

}  // namespace zt::launch
