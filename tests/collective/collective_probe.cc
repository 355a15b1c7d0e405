// zt-collective-probe — one rank of a process test started by zero-launch: meets its peers
// through the launcher's environment (ZT_STORE or MASTER_ADDR/MASTER_PORT), runs every
// collective of all_cases.h in both modes and all three dtypes, and compares its own results
// bitwise with the expected ones computed locally. Prints one line per mismatch; exit 1 if any.
#include <cstdio>

#include "all_cases.h"
#include "collective/gloo_collective.h"
#include "core/cli.h"
#include "launch/rank_env.h"
#include "launch/store_spec.h"

int main(int argc, char** argv) {
  return zt::run_main("zt-collective-probe", [&] {
    int64_t timeout_ms = 20000;
    zt::ArgParser p("zt-collective-probe", "Check every collective across launched processes.");
    p.add_int("timeout-ms", &timeout_ms, "rendezvous and collective timeout", 100, 600000);
    if (!p.parse(argc, argv)) return 0;
    const auto env = zt::launch::parse_rank_env(zt::launch::process_env());
    ZT_CHECK(env.launched(), "not started by a launcher (no RANK/WORLD_SIZE)");
    const std::chrono::milliseconds timeout(timeout_ms);
    auto store = zt::launch::open_store(env, timeout);
    int mismatches = 0, calls = 0;
    int group = 0;
    for (auto [mode, acc] : {std::pair{zt::ReduceMode::deterministic, zt::Accumulation::fp32},
                             std::pair{zt::ReduceMode::deterministic, zt::Accumulation::storage},
                             std::pair{zt::ReduceMode::fast, zt::Accumulation::fp32}}) {
      zt::GlooOptions o;
      o.rank = env.rank;
      o.size = env.world_size;
      o.store = store;
      o.prefix = "probe" + std::to_string(group++);
      o.mode = mode;
      o.accumulation = acc;
      o.timeout = timeout;
      zt::GlooCollective coll(o);
      for (const auto& c : zt_test::all_cases(env.world_size, mode, acc)) {
        ++calls;
        if (c.run(coll, env.rank) != c.expect(env.rank)) {
          ++mismatches;
          std::printf("MISMATCH %s\n", c.name.c_str());
        }
      }
      coll.barrier();  // if rank 0 serves a tcp store (no launcher does), nobody leaves early
    }
    std::printf("rank %d of %d: %d collective calls, %d mismatches\n", env.rank, env.world_size, calls, mismatches);
    return mismatches == 0 ? 0 : 1;
  });
}
