// Rank environment: the three launcher conventions, their precedence, malformed values, and the
// reconciliation of a --world-size flag with a launcher.
#include <catch2/catch.hpp>

#include "core/check.h"
#include "launch/rank_env.h"

using Catch::Matchers::Contains;
using zt::launch::decide_launch;
using zt::launch::env_from_map;
using zt::launch::LaunchDecision;
using zt::launch::parse_rank_env;
using zt::launch::RankSource;

namespace {
zt::launch::RankEnv parse(std::map<std::string, std::string> vars) {
  return parse_rank_env(env_from_map(std::move(vars)));
}
}  // namespace

TEST_CASE("no launcher variables: a single process", "[ch5][launch]") {
  auto e = parse({{"HOME", "/root"}});
  CHECK(e.source == RankSource::kNone);
  CHECK_FALSE(e.launched());
  CHECK(e.rank == 0);
  CHECK(e.world_size == 1);
  CHECK(e.master_addr.empty());
  CHECK(e.master_port == 0);
}

TEST_CASE("torchrun convention", "[ch5][launch]") {
  auto e = parse({{"RANK", "2"},
                  {"WORLD_SIZE", "4"},
                  {"LOCAL_RANK", "0"},
                  {"MASTER_ADDR", "10.0.0.1"},
                  {"MASTER_PORT", "29500"},
                  {"ZT_STORE", "tcp"}});
  CHECK(e.source == RankSource::kTorchrun);
  CHECK(e.launched());
  CHECK(e.rank == 2);
  CHECK(e.world_size == 4);
  CHECK(e.local_rank == 0);
  CHECK(e.master_addr == "10.0.0.1");
  CHECK(e.master_port == 29500);
  CHECK(e.store == "tcp");
  CHECK(e.describe() == "rank 2 of 4 (torchrun: RANK, WORLD_SIZE)");
  // Without LOCAL_RANK every rank is assumed to be on this machine.
  CHECK(parse({{"RANK", "3"}, {"WORLD_SIZE", "4"}}).local_rank == 3);
}

TEST_CASE("OpenMPI convention", "[ch5][launch]") {
  auto e = parse({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  CHECK(e.source == RankSource::kOpenMpi);
  CHECK(e.rank == 1);
  CHECK(e.world_size == 3);
  CHECK(e.local_rank == 1);
}

TEST_CASE("Slurm convention", "[ch5][launch]") {
  auto e = parse({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}});
  CHECK(e.source == RankSource::kSlurm);
  CHECK(e.rank == 5);
  CHECK(e.world_size == 8);
  CHECK(e.local_rank == 1);
}

TEST_CASE("torchrun variables win over an enclosing allocation's", "[ch5][launch]") {
  // zero-launch inside an srun step: the Slurm variables describe the launcher, not the ranks.
  auto e = parse({{"RANK", "1"},
                  {"WORLD_SIZE", "2"},
                  {"SLURM_PROCID", "0"},
                  {"SLURM_NTASKS", "1"},
                  {"OMPI_COMM_WORLD_RANK", "0"},
                  {"OMPI_COMM_WORLD_SIZE", "1"}});
  CHECK(e.source == RankSource::kTorchrun);
  CHECK(e.rank == 1);
  CHECK(e.world_size == 2);
  auto m = parse(
      {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}});
  CHECK(m.source == RankSource::kOpenMpi);
  CHECK(m.rank == 2);
}

TEST_CASE("malformed rank variables are clear errors", "[ch5][launch]") {
  CHECK_THROWS_WITH(parse({{"RANK", "abc"}, {"WORLD_SIZE", "4"}}),
                    Contains("RANK") && Contains("'abc' is not an integer"));
  CHECK_THROWS_WITH(parse({{"RANK", "4"}, {"WORLD_SIZE", "4"}}), Contains("RANK=4 is not below WORLD_SIZE=4"));
  CHECK_THROWS_WITH(parse({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), Contains("WORLD_SIZE=0") && Contains(">= 1"));
  CHECK_THROWS_WITH(parse({{"RANK", "-1"}, {"WORLD_SIZE", "2"}}), Contains("RANK=-1"));
  CHECK_THROWS_WITH(parse({{"RANK", ""}, {"WORLD_SIZE", "2"}}), Contains("not an integer"));
  CHECK_THROWS_WITH(parse({{"RANK", "1"}}), Contains("only RANK is set"));
  CHECK_THROWS_WITH(parse({{"WORLD_SIZE", "2"}}), Contains("only WORLD_SIZE is set"));
  CHECK_THROWS_WITH(parse({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "2"}}),
                    Contains("SLURM_LOCALID=2 is not below SLURM_NTASKS=2"));
  CHECK_THROWS_WITH(parse({{"OMPI_COMM_WORLD_RANK", "1x"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
                    Contains("OMPI_COMM_WORLD_RANK"));
  CHECK_THROWS_WITH(parse({{"MASTER_PORT", "70000"}}), Contains("MASTER_PORT=70000"));
  CHECK_THROWS_WITH(parse({{"MASTER_PORT", "http"}}), Contains("MASTER_PORT"));
  CHECK_THROWS_WITH(parse({{"MASTER_ADDR", ""}}), Contains("MASTER_ADDR is set but empty"));
}

TEST_CASE("world size flag reconciled with the environment", "[ch5][launch]") {
  using Mode = LaunchDecision::Mode;
  auto none = parse({});
  CHECK(decide_launch(std::nullopt, none).mode == Mode::kSingle);
  CHECK(decide_launch(1, none).mode == Mode::kSingle);
  auto spawn = decide_launch(4, none);
  CHECK(spawn.mode == Mode::kSpawn);
  CHECK(spawn.world_size == 4);
  CHECK_THROWS_WITH(decide_launch(0, none), Contains("--world-size must be at least 1"));

  auto launched = parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  auto d = decide_launch(std::nullopt, launched);
  CHECK(d.mode == Mode::kLaunched);  // started by a launcher: never spawn
  CHECK(d.world_size == 2);
  CHECK(decide_launch(2, launched).mode == Mode::kLaunched);
  CHECK_THROWS_WITH(decide_launch(4, launched), Contains("--world-size 4") && Contains("WORLD_SIZE=2"));
  auto slurm = parse({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}});
  CHECK_THROWS_WITH(decide_launch(2, slurm), Contains("SLURM_NTASKS=3"));
  // A launched world of one is still launched: the flag must not make it spawn.
  auto one = parse({{"RANK", "0"}, {"WORLD_SIZE", "1"}});
  CHECK_THROWS(decide_launch(2, one));
  CHECK(decide_launch(std::nullopt, one).mode == Mode::kLaunched);
}
