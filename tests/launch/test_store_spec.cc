// Store selection: the ZT_STORE forms, the MASTER_ADDR/MASTER_PORT default, who serves a TCP
// store (the launcher, named by ZT_LAUNCHER_STORE, or rank 0), and bad settings.
#include <catch2/catch.hpp>

#include "core/check.h"
#include "launch/store_spec.h"

using zt::launch::env_from_map;
using zt::launch::parse_rank_env;
using zt::launch::select_store;
using Kind = zt::launch::StoreSpec::Kind;
using Catch::Matchers::Contains;

namespace {
zt::launch::StoreSpec select(std::map<std::string, std::string> vars) {
  return select_store(parse_rank_env(env_from_map(std::move(vars))));
}
}  // namespace

TEST_CASE("ZT_STORE forms", "[ch5][launch]") {
  auto f = select({{"ZT_STORE", "file:/shared/job42"}});
  CHECK(f.kind == Kind::kFile);
  CHECK(f.path == "/shared/job42");
  auto r = select({{"ZT_STORE", "redis:db.example:6380"}});
  CHECK(r.kind == Kind::kRedis);
  CHECK(r.host == "db.example");
  CHECK(r.port == 6380);
  CHECK(select({{"ZT_STORE", "redis:localhost"}}).port == 6379);
  auto v6 = select({{"ZT_STORE", "redis:[::1]:7000"}});
  CHECK(v6.host == "::1");
  CHECK(v6.port == 7000);
  CHECK(v6.text() == "redis:[::1]:7000");
  auto t = select({{"ZT_STORE", "tcp"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}});
  CHECK(t.kind == Kind::kTcp);
  CHECK(t.host == "node0");
  CHECK(t.port == 29500);
  auto te = select({{"ZT_STORE", "tcp:10.1.2.3:1234"}});
  CHECK(te.kind == Kind::kTcp);
  CHECK(te.text() == "tcp:10.1.2.3:1234");
}

TEST_CASE("default store from MASTER_ADDR and MASTER_PORT", "[ch5][launch]") {
  CHECK(select({}).kind == Kind::kNone);
  auto t = select({{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "4000"}});
  CHECK(t.kind == Kind::kTcp);
  CHECK(t.text() == "tcp:127.0.0.1:4000");
  // An explicit ZT_STORE wins over the MASTER_ variables.
  CHECK(select({{"ZT_STORE", "file:/tmp/x"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}}).kind == Kind::kFile);
}

TEST_CASE("bad store settings are clear errors", "[ch5][launch]") {
  CHECK_THROWS_WITH(select({{"MASTER_ADDR", "127.0.0.1"}}), Contains("MASTER_ADDR is set but MASTER_PORT is not"));
  CHECK_THROWS_WITH(select({{"MASTER_PORT", "4000"}}), Contains("MASTER_PORT is set but MASTER_ADDR is not"));
  CHECK_THROWS_WITH(select({{"ZT_STORE", "tcp"}}), Contains("needs MASTER_ADDR and MASTER_PORT"));
  CHECK_THROWS_WITH(select({{"ZT_STORE", "etcd:x"}}), Contains("is not understood"));
  CHECK_THROWS_WITH(select({{"ZT_STORE", "file:"}}), Contains("directory is empty"));
  CHECK_THROWS_WITH(select({{"ZT_STORE", "redis::80"}}), Contains("empty host"));
  CHECK_THROWS_WITH(select({{"ZT_STORE", "redis:h:0"}}), Contains("not a TCP port"));
  CHECK_THROWS_WITH(select({{"ZT_STORE", "tcp:hostonly"}}), Contains("needs HOST:PORT"));
}

TEST_CASE("a TCP store the launcher serves is only connected to, rank 0 included", "[ch5][launch]") {
  const std::map<std::string, std::string> zero_launch = {{"RANK", "0"},
                                                          {"WORLD_SIZE", "2"},
                                                          {"MASTER_ADDR", "127.0.0.1"},
                                                          {"MASTER_PORT", "4000"},
                                                          {"ZT_LAUNCHER_STORE", "127.0.0.1:4000"}};
  CHECK(parse_rank_env(env_from_map(zero_launch)).launcher_store == "127.0.0.1:4000");
  CHECK(select(zero_launch).launcher_serves);
  auto explicit_same = zero_launch;
  explicit_same["ZT_STORE"] = "tcp:127.0.0.1:4000";
  CHECK(select(explicit_same).launcher_serves);
  // another address: rank 0 serves that one, as without a launcher
  auto elsewhere = zero_launch;
  elsewhere["ZT_STORE"] = "tcp:127.0.0.1:4001";
  CHECK_FALSE(select(elsewhere).launcher_serves);
  // torchrun, mpirun, srun: no ZT_LAUNCHER_STORE, so rank 0 serves
  CHECK_FALSE(select({{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "4000"}}).launcher_serves);
  // the flag never applies to other kinds of store
  auto file = zero_launch;
  file["ZT_STORE"] = "file:/tmp/x";
  CHECK_FALSE(select(file).launcher_serves);
}
